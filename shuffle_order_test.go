package volt_test

import (
	"reflect"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// batchOrder records, at each training batch, the dataset indices of its
// examples (found by their first input).
type batchOrder struct {
	first   map[float32]int
	batches [][]int
}

func (r *batchOrder) OnTrainBatchStart(_ *volt.Trainer, b *data.Batch, _ int) error {
	x := tensors.MustCopyFlatData[float32](b.Inputs[0])
	width := len(x) / b.Size
	var idx []int
	for i := range b.Size {
		idx = append(idx, r.first[x[i*width]])
	}
	r.batches = append(r.batches, idx)
	return nil
}

// TestSeededSamplerTrainsInLightningsOrder: a training loader over a
// data.RandomSampler with a seed gives Fit the batches Lightning 2.2.5's
// fit loop reads from DataLoader(sampler=RandomSampler(ds,
// generator=torch.Generator().manual_seed(7))), epoch after epoch. torch
// draws the sampler's permutations lazily and Lightning stops reading at
// the loader's length (or limit), so from the second epoch on that order
// is not the one a loop read to the sampler's end gets. The wanted batches
// were recorded from Lightning (the generated conformance test checks
// them in its scenarios too).
func TestSeededSamplerTrainsInLightningsOrder(t *testing.T) {
	tests := []struct {
		name      string
		n, batch  int
		limit     volt.BatchLimit
		wantEpoch [][][]int
	}{
		{"12 in batches of 4", 12, 4, nil, [][][]int{
			{{3, 4, 0, 5}, {7, 9, 11, 6}, {8, 1, 10, 2}},
			{{7, 6, 9, 5}, {1, 3, 10, 4}, {0, 2, 8, 11}},
			{{11, 8, 10, 5}, {7, 1, 6, 2}, {0, 4, 9, 3}}}},
		{"10 in batches of 3", 10, 3, nil, [][][]int{
			{{5, 0, 3}, {4, 1, 7}, {9, 6, 8}, {2}},
			{{3, 7, 6}, {2, 9, 0}, {5, 4, 1}, {8}},
			{{6, 0, 7}, {1, 5, 3}, {4, 9, 8}, {2}}}},
		{"10 in batches of 3, limit 2", 10, 3, volt.Batches(2), [][][]int{
			{{5, 0, 3}, {4, 1, 7}}, {{1, 8, 9}, {5, 7, 4}}, {{3, 7, 6}, {2, 9, 0}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := regression(tc.n, 1)
			rec := &batchOrder{first: map[float32]int{}}
			for i, e := range ds {
				rec.first[e.Inputs[0].Value.([]float32)[0]] = i
			}
			seed := uint64(7)
			train := &data.DataLoader{Dataset: ds, BatchSize: tc.batch, Sampler: data.RandomSampler{Seed: &seed}}
			cfg := quiet(volt.Config{MaxEpochs: 3, LimitTrainBatches: tc.limit, Callbacks: []volt.Callback{rec}})
			fitBoring(t, cfg, volt.Loaders{Train: train}, &boring{})
			var want [][]int
			for _, e := range tc.wantEpoch {
				want = append(want, e...)
			}
			if !reflect.DeepEqual(rec.batches, want) {
				t.Errorf("batches %v\nwant Lightning's %v", rec.batches, want)
			}
		})
	}
}
