package volt

// This file reads a training step's outputs on the host: logged values,
// gradient norms, the loss-scaling and NaN flags.

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
)

// runTrainProgram runs one compiled training step, records its logged values
// and gradient norms, and applies the NaN policy. It returns the loss.
func (t *Trainer) runTrainProgram(tp *trainProgram, b *data.Batch) (*tensors.Tensor, *traceInfo, error) {
	stop := t.profile(actTrainingStep)
	outs, gid, update, err := tp.run(b)
	stop()
	if err != nil {
		return nil, nil, err
	}
	info, ok := tp.infos[gid]
	if !ok {
		info = tp.traced
		tp.traced, tp.tracing = nil, nil
		info.update = update
		if info.metrics, err = t.logs.trainRes.bind(info.logs, 0, 1); err != nil {
			return nil, nil, err
		}
		norms := defaultLogOptions(RunningTrain, true)
		for _, name := range info.update.NormNames {
			m, err := t.logs.trainRes.entry(name, norms)
			if err != nil {
				return nil, nil, err
			}
			info.normMetrics = append(info.normMetrics, m)
		}
		tp.infos[gid] = info
	}
	if info.numHidden > 0 {
		info.hiddenOut = outs[len(outs)-info.numHidden:]
		outs = outs[:len(outs)-info.numHidden]
	}
	rest := outs[1:]
	if n := len(info.labelChecks); n > 0 {
		if err := checkLabels(info.labelChecks, rest[len(info.metrics):len(info.metrics)+n]); err != nil {
			// Where, said only on failure (nothing formatted per step).
			return nil, nil, fmt.Errorf("%w at epoch %d, batch %d (global step %d)", err, t.CurrentEpoch(), t.progress.TrainBatch.Current.Ready-1, t.GlobalStep())
		}
		rest = append(rest[:len(info.metrics):len(info.metrics)], rest[len(info.metrics)+n:]...)
	}
	if err := t.recordOutputs(info.metrics, rest[:len(info.metrics)], b.Size); err != nil {
		return nil, nil, err
	}
	if err := t.logs.trainMetrics.record(gid, t.logs.trainRes, 0, 1); err != nil {
		return nil, nil, err
	}
	rest = rest[len(info.metrics):]
	if len(rest) == 0 {
		return outs[0], info, nil
	}
	if err := t.recordOutputs(info.normMetrics, rest[:len(info.normMetrics)], b.Size); err != nil {
		return nil, nil, err
	}
	rest = rest[len(info.normMetrics):]
	if info.update.Gate {
		finite := rest[len(rest)-1]
		rest = rest[:len(rest)-1]
		var ok bool
		tensors.MustConstFlatData(finite, func(v []bool) { ok = v[0] })
		t.scaler.Update(!ok)
		if err := t.setLossScale(); err != nil {
			return nil, nil, err
		}
	}
	if t.cfg.TerminateOnNaN {
		if err := t.checkFinite(outs[0], info, rest); err != nil {
			return nil, nil, err
		}
	}
	return outs[0], info, nil
}

// checkFinite implements TerminateOnNaN / DetectAnomaly.
func (t *Trainer) checkFinite(loss *tensors.Tensor, info *traceInfo, flags []*tensors.Tensor) error {
	where := fmt.Sprintf("at epoch %d, batch %d (global step %d)", t.CurrentEpoch(), t.progress.TrainBatch.Current.Ready-1, t.GlobalStep())
	if v, err := engine.Float64(loss); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return &NonFiniteError{What: "loss", Value: v, Where: where}
	}
	if info.update.GradFlags {
		if i := firstFalse(flags[0]); i >= 0 {
			return &NonFiniteError{What: "gradient of " + info.update.ParamPaths[i], Value: nan, Where: where}
		}
		flags = flags[1:]
	}
	if info.update.ParamFlags {
		if i := firstFalse(flags[0]); i >= 0 {
			return &NonFiniteError{What: "parameter " + info.update.ParamPaths[i] + " (after the optimizer step)", Value: nan, Where: where}
		}
	}
	return nil
}

// firstFalse returns the index of the first false in a bool vector, or -1.
func firstFalse(t *tensors.Tensor) int {
	idx := -1
	tensors.MustConstFlatData(t, func(flags []bool) {
		for i, ok := range flags {
			if !ok {
				idx = i
				return
			}
		}
	})
	return idx
}
