package volt

// This file reads a training step's outputs on the host: the compiled step
// hands them over raw (trainOutputs), the logging object records the
// logged values and gradient norms, and the optimization checks the
// labels, updates the loss scale and applies the NaN policy (take).

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
)

// trainOutputs is what one run of a compiled training step returned, laid
// out by its trace (traceInfo) and not yet read: the loss, the logged
// values and gradient norms, the label checks' flags, the loss-scaling
// gate and the non-finite flags, and the hidden states of a TBPTT split.
type trainOutputs struct {
	info   *traceInfo
	gid    graph.GraphId // the graph that ran: its metric objects' state (metricTable.record)
	loss   *tensors.Tensor
	logged []*tensors.Tensor // info.logs'
	labels []*tensors.Tensor // info.labelChecks'
	// updated: the step returned the update's outputs, norms (by
	// info.update.NormNames), the gate's finite flag (when info.update.Gate)
	// and flags (TerminateOnNaN's).
	updated bool
	norms   []*tensors.Tensor
	finite  *tensors.Tensor
	flags   []*tensors.Tensor
	hidden  []*tensors.Tensor // TBPTT hidden states
}

// run runs one compiled training step on b and returns its outputs, valid
// until the next run (nothing is allocated per step).
func (c *compiledSteps) run(tp *trainProgram, b *data.Batch) (*trainOutputs, error) {
	stop := c.t.profile(actTrainingStep)
	outs, gid, update, err := tp.run(b)
	stop()
	if err != nil {
		return nil, err
	}
	info, ok := tp.infos[gid]
	if !ok { // the graph's first run: the layout of the last trace
		info = tp.traced
		tp.traced, tp.tracing = nil, nil
		info.update = update
		tp.infos[gid] = info
	}
	c.out = trainOutputs{info: info, gid: gid, loss: outs[0]}
	out := &c.out
	if info.numHidden > 0 {
		out.hidden = outs[len(outs)-info.numHidden:]
		outs = outs[:len(outs)-info.numHidden]
	}
	rest := outs[1:]
	out.logged, rest = rest[:len(info.logs)], rest[len(info.logs):]
	out.labels, rest = rest[:len(info.labelChecks)], rest[len(info.labelChecks):]
	if len(rest) == 0 {
		return out, nil
	}
	out.updated = true
	out.norms, rest = rest[:len(info.update.NormNames)], rest[len(info.update.NormNames):]
	if info.update.Gate {
		out.finite, rest = rest[len(rest)-1], rest[:len(rest)-1]
	}
	out.flags = rest
	return out, nil
}

// take reads the outputs of one run of a compiled training step on a batch
// (or TBPTT split) of batchSize examples: its label checks fail it before
// anything is recorded; the logging object records its logged values and
// gradient norms; the loss-scaling gate updates the scale for the next
// step; TerminateOnNaN checks the loss and the flags.
func (a *optimization) take(out *trainOutputs, batchSize int) error {
	if len(out.labels) > 0 {
		if err := checkLabels(out.info.labelChecks, out.labels); err != nil {
			// Where, said only on failure (nothing formatted per step).
			return fmt.Errorf("%w %s", err, stepWhere(a.progress))
		}
	}
	if err := a.logs.recordTrainStep(out, batchSize); err != nil {
		return err
	}
	if !out.updated {
		return nil
	}
	if out.finite != nil {
		var ok bool
		tensors.MustConstFlatData(out.finite, func(v []bool) { ok = v[0] })
		a.scaler.Update(!ok)
		if err := engine.SetLossScale(a.store, a.scaler.Scale()); err != nil {
			return err
		}
	}
	if a.cfg.TerminateOnNaN {
		return checkFinite(out.loss, out.info, out.flags, a.progress)
	}
	return nil
}

// stepWhere says which training step failed: at epoch E, batch B (global
// step S).
func stepWhere(p *Progress) string {
	return fmt.Sprintf("at epoch %d, batch %d (global step %d)", p.Epoch.Total.Completed, p.TrainBatch.Current.Ready-1, p.OptimizerSteps)
}

// checkFinite implements TerminateOnNaN / DetectAnomaly.
func checkFinite(loss *tensors.Tensor, info *traceInfo, flags []*tensors.Tensor, p *Progress) error {
	if v, err := engine.Float64(loss); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return &NonFiniteError{What: "loss", Value: v, Where: stepWhere(p)}
	}
	if info.update.GradFlags {
		if i := firstFalse(flags[0]); i >= 0 {
			return &NonFiniteError{What: "gradient of " + info.update.ParamPaths[i], Value: nan, Where: stepWhere(p)}
		}
		flags = flags[1:]
	}
	if info.update.ParamFlags {
		if i := firstFalse(flags[0]); i >= 0 {
			return &NonFiniteError{What: "parameter " + info.update.ParamPaths[i] + " (after the optimizer step)", Value: nan, Where: stepWhere(p)}
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
