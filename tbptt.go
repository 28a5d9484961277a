package volt

import (
	"fmt"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
)

// TBPTTStepper is implemented by recurrent modules trained with truncated
// back-propagation through time (Config.TruncatedBPTTSteps > 0). Each batch is
// split along its time axis; the step is traced like TrainingStep for one
// split and returns the split's loss and the hidden state to carry on.
// hiddens is nil for the first split of a batch and otherwise the previous
// split's newHiddens, given as graph inputs: values flow forward, gradients
// do not flow back across splits. Each split is one optimization step.
type TBPTTStepper interface {
	TBPTTTrainingStep(s *Step, b Batch, hiddens []*Node) (loss *Node, newHiddens []*Node)
}

// TBPTTSplitter overrides how a batch is cut into time splits (Lightning's
// tbptt_split_batch). The default, SplitAlongTime, cuts every input and label
// of rank >= 2 along axis 1 into chunks of splitSize.
type TBPTTSplitter interface {
	TBPTTSplitBatch(b *data.Batch, splitSize int) ([]*data.Batch, error)
}

// SplitAlongTime cuts each input and label of rank >= 2 along axis 1 (time)
// into consecutive chunks of splitSize steps (the last may be shorter);
// tensors of rank < 2 are repeated in every split. All time axes must agree.
func SplitAlongTime(b *data.Batch, splitSize int) ([]*data.Batch, error) {
	steps := -1
	for _, t := range append(append([]*tensors.Tensor{}, b.Inputs...), b.Labels...) {
		if t.Shape().Rank() < 2 {
			continue
		}
		if n := t.Shape().Dimensions[1]; steps >= 0 && n != steps {
			return nil, fmt.Errorf("SplitAlongTime: time axes differ (%d and %d steps)", steps, n)
		} else {
			steps = n
		}
	}
	if steps < 0 {
		return nil, fmt.Errorf("SplitAlongTime: no input or label has a time axis (rank >= 2)")
	}
	var splits []*data.Batch
	for start := 0; start < steps; start += splitSize {
		end := min(start+splitSize, steps)
		split := &data.Batch{Size: b.Size}
		for _, t := range b.Inputs {
			split.Inputs = append(split.Inputs, sliceTime(t, start, end))
		}
		for _, t := range b.Labels {
			split.Labels = append(split.Labels, sliceTime(t, start, end))
		}
		splits = append(splits, split)
	}
	return splits, nil
}

// sliceTime copies steps [start, end) of axis 1 of t (t itself when rank < 2).
func sliceTime(t *tensors.Tensor, start, end int) *tensors.Tensor {
	sh := t.Shape()
	if sh.Rank() < 2 {
		return t
	}
	dims := append([]int{}, sh.Dimensions...)
	inner := sh.DType.Size()
	for _, d := range dims[2:] {
		inner *= d
	}
	steps := dims[1]
	dims[1] = end - start
	out := tensors.FromShape(shapes.Make(sh.DType, dims...))
	_ = t.ConstBytes(func(src []byte) {
		_ = out.MutableBytes(func(dst []byte) {
			n := (end - start) * inner
			for b := range dims[0] {
				copy(dst[b*n:(b+1)*n], src[(b*steps+start)*inner:(b*steps+end)*inner])
			}
		})
	})
	return out
}

// tbptt runs the splits of a batch, carrying the hidden state.
type tbptt struct {
	c          *compiledSteps
	stepper    TBPTTStepper
	prog       *trainProgram
	numHiddens int
}

// runTBPTT trains on one batch split in time and returns the last split's
// loss and the number of optimization steps (one per split).
func (c *compiledSteps) runTBPTT(b *data.Batch) (*tensors.Tensor, int, error) {
	t := c.t
	if c.tbptt == nil {
		if c.syncBatchNorm() {
			return nil, 0, fmt.Errorf("Config.SyncBatchNorm is not supported with Config.TruncatedBPTTSteps=%d; "+
				"leave one of them off", t.cfg.TruncatedBPTTSteps)
		}
		st, ok := t.module.(TBPTTStepper)
		if !ok {
			return nil, 0, fmt.Errorf("volt: Config.TruncatedBPTTSteps=%d needs a module with TBPTTTrainingStep; %T has none", t.cfg.TruncatedBPTTSteps, t.module)
		}
		c.tbptt = &tbptt{c: c, stepper: st}
	}
	tb := c.tbptt
	split := SplitAlongTime
	if s, ok := t.module.(TBPTTSplitter); ok {
		split = s.TBPTTSplitBatch
	}
	splits, err := split(b, t.cfg.TruncatedBPTTSteps)
	if err != nil {
		return nil, 0, err
	}
	var hiddens []*tensors.Tensor
	var loss *tensors.Tensor
	for _, sb := range splits {
		in := &data.Batch{Inputs: append(append([]*tensors.Tensor{}, sb.Inputs...), hiddens...), Labels: sb.Labels, Size: sb.Size}
		tb.numHiddens = len(hiddens)
		tp, err := tb.program()
		if err != nil {
			return nil, 0, err
		}
		out, err := c.run(tp, in)
		if err == nil {
			err = c.take(out, in.Size)
		}
		// Under Devices with TerminateOnNaN the ranks agree after every
		// split, not only after the batch: a rank whose split found a
		// non-finite value (a loss term without a gradient stays its own)
		// must not leave while the others go on to the next split's
		// all-reduce.
		if err = t.agreeNonFinite(err); err != nil {
			return nil, 0, err
		}
		loss, hiddens = out.loss, out.hidden
	}
	return loss, len(splits), nil
}

// program returns the compiled split step (one executor; GoMLX traces it once
// per shape, i.e. for the first split without hiddens and for the others).
func (tb *tbptt) program() (*trainProgram, error) {
	if tb.prog != nil {
		return tb.prog, nil
	}
	c, t := tb.c, tb.c.t
	tp := &trainProgram{infos: map[graph.GraphId]*traceInfo{}}
	var err error
	tp.step, err = t.eng.CompileTrainStep("TBPTTTrainingStep", engine.ApplyAtOnce, func(scope *model.Scope, inputs, labels []*graph.Node) engine.Forward {
		n := len(inputs) - tb.numHiddens
		var hiddens []*graph.Node
		if tb.numHiddens > 0 {
			hiddens = inputs[n:]
		}
		s := &Step{scope: scope, graph: graphOf(inputs, labels), stage: RunningTrain, trainer: t, metrics: t.logs.trainMetrics,
			checksLabels: t.cfg.DetectAnomaly}
		loss, newHiddens := tb.stepper.TBPTTTrainingStep(s, Batch{Inputs: inputs[:n], Labels: labels}, hiddens)
		trailing := make([]*graph.Node, len(newHiddens))
		for i, h := range newHiddens {
			trailing[i] = graph.StopGradient(h)
		}
		return c.forward(tp, s, loss, trailing)
	}, c.updateFn(tp, 0), c.reduce)
	if err != nil {
		return nil, err
	}
	tp.step.SetCarry(t.logs.trainMetrics.carry)
	tb.prog = tp
	return tp, nil
}
