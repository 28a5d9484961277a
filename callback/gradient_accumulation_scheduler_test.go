package callback_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
)

// stepsPerEpoch records the global step at each epoch end.
type stepsPerEpoch struct{ steps *[]int64 }

func (s stepsPerEpoch) OnTrainEpochEnd(t *volt.Trainer) error {
	*s.steps = append(*s.steps, t.GlobalStep())
	return nil
}

// accumulation records the trainer's setting at each batch.
type accumulation struct{ k *[]int }

func (a accumulation) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, _ int) error {
	*a.k = append(*a.k, t.AccumulateGradBatches())
	return nil
}

func TestGradientAccumulationScheduler(t *testing.T) {
	tests := []struct {
		name       string
		scheduling map[int]int
		trainerK   int
		want       []int64 // global step at each of 3 epoch ends, 4 batches each
	}{
		{"{0:1, 1:2}", map[int]int{0: 1, 1: 2}, 0, []int64{4, 6, 8}},
		{"{0:4}", map[int]int{0: 4}, 0, []int64{1, 2, 3}},
		{"first key later: 1 before it", map[int]int{2: 4}, 2, []int64{4, 8, 9}},
		{"{0:2, 2:3}: partial window steps", map[int]int{0: 2, 2: 3}, 0, []int64{2, 4, 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := callback.NewGradientAccumulationScheduler(callback.GradientAccumulationSchedulerConfig{Scheduling: tc.scheduling})
			var steps []int64
			tr, err := fit(t, quiet(volt.Config{MaxEpochs: 3, AccumulateGradBatches: tc.trainerK}), &boring{}, trainOnly(), s, stepsPerEpoch{&steps})
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) != 3 || steps[0] != tc.want[0] || steps[1] != tc.want[1] || steps[2] != tc.want[2] {
				t.Errorf("global steps at epoch ends %v, want %v", steps, tc.want)
			}
			if got, want := tr.AccumulateGradBatches(), max(tc.trainerK, 1); got != want {
				t.Errorf("AccumulateGradBatches after Fit = %d, want the configured %d", got, want)
			}
		})
	}
}

func TestGradientAccumulationSchedulerSeenByHooks(t *testing.T) {
	s := callback.NewGradientAccumulationScheduler(callback.GradientAccumulationSchedulerConfig{Scheduling: map[int]int{0: 1, 1: 2}})
	var k []int
	if _, err := fit(t, quiet(volt.Config{MaxEpochs: 2}), &boring{}, trainOnly(), s, accumulation{&k}); err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 1, 1, 1, 2, 2, 2, 2}; !slices.Equal(k, want) {
		t.Errorf("AccumulateGradBatches per batch %v, want %v", k, want)
	}
}

func TestGradientAccumulationSchedulerConfigErrors(t *testing.T) {
	tests := []struct {
		scheduling map[int]int
		want       string
	}{
		{nil, "Scheduling: must not be empty"},
		{map[int]int{-1: 2}, "epoch keys must be >= 0, got -1"},
		{map[int]int{0: 0}, "Scheduling[0]: the number of batches must be >= 1, got 0"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			err := callback.NewGradientAccumulationScheduler(callback.GradientAccumulationSchedulerConfig{Scheduling: tc.scheduling}).Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}
