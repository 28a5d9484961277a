package volt_test

import (
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

func TestSplitAlongTime(t *testing.T) {
	// [2 batch, 5 time, 1] inputs; a rank-1 label is repeated in every split.
	x := tensors.FromValue([][][]float32{{{0}, {1}, {2}, {3}, {4}}, {{10}, {11}, {12}, {13}, {14}}})
	y := tensors.FromValue([]int32{7, 8})
	splits, err := volt.SplitAlongTime(&data.Batch{Inputs: []*tensors.Tensor{x}, Labels: []*tensors.Tensor{y}, Size: 2}, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{0, 1, 10, 11}, {2, 3, 12, 13}, {4, 14}}
	if len(splits) != len(want) {
		t.Fatalf("%d splits, want 3", len(splits))
	}
	for i, sp := range splits {
		if got := tensors.MustCopyFlatData[float32](sp.Inputs[0]); !slices.Equal(got, want[i]) {
			t.Errorf("split %d: %v, want %v", i, got, want[i])
		}
		if sp.Labels[0] != y || sp.Size != 2 {
			t.Errorf("split %d: label or size changed", i)
		}
	}
	if _, err := volt.SplitAlongTime(&data.Batch{Inputs: []*tensors.Tensor{y}}, 2); err == nil {
		t.Error("a batch without a time axis was split")
	}
}

// carry sums x·w over each split and carries the running sum as its hidden
// state; it records whether each trace received a hidden state.
type carry struct {
	boring
	gotHidden []bool
}

func (m *carry) TBPTTTrainingStep(s *volt.Step, b volt.Batch, hiddens []*graph.Node) (*graph.Node, []*graph.Node) {
	m.gotHidden = append(m.gotHidden, hiddens != nil)
	x := b.Input(0)                                                            // [batch, time, 1]
	out := graph.ReduceSum(layers.Dense(s.Scope().In("w"), x, false, 1), 1, 2) // [batch]
	if hiddens != nil {
		out = graph.Add(out, hiddens[0])
	}
	l := graph.ReduceAllMean(graph.Square(out))
	return l, []*graph.Node{out}
}

func sequences(n, steps int) data.Slice {
	ds := make(data.Slice, n)
	for i := range ds {
		v := make([]float32, steps)
		for j := range v {
			v[j] = float32(i+j) / 10
		}
		ds[i] = data.Example{Inputs: []data.Field{{Value: v, Shape: []int{steps, 1}}}, Labels: []data.Field{{Value: float32(0)}}}
	}
	return ds
}

func TestTBPTTStepsAndHiddenState(t *testing.T) {
	m := &carry{}
	// 8 sequences of 7 steps in batches of 4, splits of 3: 3 splits per batch.
	tr := fitBoring(t, volt.Config{MaxEpochs: 2, TruncatedBPTTSteps: 3}, loaderOf(sequences(8, 7), 4), m)
	if tr.GlobalStep() != 2*2*3 {
		t.Errorf("GlobalStep %d, want 12 (one per split)", tr.GlobalStep())
	}
	if tr.Progress().TrainBatch.Total.Completed != 4 {
		t.Errorf("%d batches, want 4", tr.Progress().TrainBatch.Total.Completed)
	}
	// Traced once without a hidden state (first split), once with it (3
	// steps), once more for the last, shorter split.
	if !slices.Equal(m.gotHidden, []bool{false, true, true}) {
		t.Errorf("traces received hidden states %v, want [false true true]", m.gotHidden)
	}
}
