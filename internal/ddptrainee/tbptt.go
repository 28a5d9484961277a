package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// The -tbptt model: truncated back-propagation through time over
// seqCount sequences of seqSteps steps. Each split sums x·w over its steps
// on top of the carried sum; its loss is the mean square of that sum plus
// the mean of a marker input, through StopGradient: a NaN marker makes one
// rank's loss NaN while every gradient stays finite, so only that rank's
// check finds it (the others would go on to the next split's all-reduce
// without the agreement).
const (
	seqCount = 16
	seqSteps = 6
)

// seqModule is the -tbptt model; it records into res.
type seqModule struct{ res *result }

// TrainingStep implements volt.Module (TBPTT uses TBPTTTrainingStep).
func (m *seqModule) TrainingStep(*volt.Step, volt.Batch) *graph.Node {
	panic("ddptrainee: -tbptt trains through TBPTTTrainingStep")
}

// TBPTTTrainingStep implements volt.TBPTTStepper.
func (m *seqModule) TBPTTTrainingStep(s *volt.Step, b volt.Batch, hiddens []*graph.Node) (*graph.Node, []*graph.Node) {
	x, marker := b.Input(0), b.Input(1) // [batch, time, 1]
	w := s.Scope().In("seq").VariableWithValue("w", float32(0.5)).NodeValue(x.Graph())
	out := graph.ReduceSum(graph.Mul(x, w), 1, 2) // [batch]
	if hiddens != nil {
		out = graph.Add(out, hiddens[0])
	}
	l := graph.Add(graph.ReduceAllMean(graph.Square(out)), graph.StopGradient(graph.ReduceAllMean(marker)))
	return l, []*graph.Node{out}
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *seqModule) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(0.1)) }

// OnTrainBatchEnd records the batch's sample indices (its third input).
func (m *seqModule) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, b *data.Batch, _ int) error {
	var idx []int
	for _, v := range tensors.MustCopyFlatData[int32](b.Inputs[2]) {
		idx = append(idx, int(v))
	}
	e := t.CurrentEpoch()
	m.res.Batches[e] = append(m.res.Batches[e], idx)
	return nil
}

// sequences returns the -tbptt data: sample i's x at step j is (i+j)/100,
// its marker 0, except NaN at nan = [sample, time] when given; the third
// input is the sample index (a scalar: every split repeats it).
func sequences(nan []int) data.Slice {
	ds := make(data.Slice, seqCount)
	for i := range ds {
		x, marker := make([]float32, seqSteps), make([]float32, seqSteps)
		for j := range x {
			x[j] = float32(i+j) / 100
		}
		if nan != nil && nan[0] == i {
			marker[nan[1]] = float32(math.NaN())
		}
		ds[i] = data.Example{Inputs: []data.Field{
			{Value: x, Shape: []int{seqSteps, 1}}, {Value: marker, Shape: []int{seqSteps, 1}}, {Value: int32(i)},
		}}
	}
	return ds
}

// parseNaNAt reads -nan-at's sample:time.
func parseNaNAt(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	a, b, ok := strings.Cut(s, ":")
	sample, err1 := strconv.Atoi(a)
	step, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || sample < 0 || sample >= seqCount || step < 0 || step >= seqSteps {
		return nil, fmt.Errorf("-nan-at %q: want sample:time with sample in [0, %d) and time in [0, %d)", s, seqCount, seqSteps)
	}
	return []int{sample, step}, nil
}

// runTBPTT trains the -tbptt model in batches of -batch per rank, in
// order, and writes the rank's result.
func runTBPTT(o options) error {
	nan, err := parseNaNAt(o.nanAt)
	if err != nil {
		return err
	}
	res := &result{Batches: map[int][][]int{}}
	m := &seqModule{res: res}
	t, err := volt.NewTrainer(volt.Config{
		MaxEpochs: o.epochs, TruncatedBPTTSteps: o.tbptt, TerminateOnNaN: true, Devices: o.devices,
		NumSanityValSteps: volt.Ptr(0), DisableLoggers: true, DisableCheckpointing: true, DisableModelSummary: true,
		Seed: volt.Ptr(uint64(0)),
	})
	if err != nil {
		return err
	}
	defer volt.FinalizeDistributed()
	fitErr := t.Fit(context.Background(), m, volt.Loaders{Train: &data.DataLoader{Dataset: sequences(nan), BatchSize: o.batch}})
	res.Rank, res.World = t.GlobalRank(), t.WorldSize()
	res.GlobalStep, res.Epoch = t.GlobalStep(), t.CurrentEpoch()
	res.AllReduces = t.DistributedStats().AllReduces
	w, err := t.Store().GetVariable("/seq/w").Value()
	if err != nil {
		return err
	}
	for _, v := range tensors.MustCopyFlatData[float32](w) {
		res.WeightBits = append(res.WeightBits, fmt.Sprintf("%08x", math.Float32bits(v)))
	}
	if fitErr != nil {
		res.Err = fitErr.Error()
	}
	return finish(t, o, res, fitErr)
}
