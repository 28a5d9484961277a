package main

import (
	"math"
	"slices"
	"testing"
)

// testMetricValueReduced: Trainer.MetricValue of a metric object covers
// every rank's shard, as the logged values do: UpdateMetric counts of the
// samples seen (9 validation samples; 22 training samples per epoch, 21
// padded to 11 per rank) are the whole set's on both ranks, and the logged
// val_mae's MetricValue equals its reduced logged value; a CatMetric of
// the validation sample indices holds every rank's rows, in rank order
// (rank 0's shard 0, 2, …, 8, then rank 1's 1, 3, 5, 7).
func testMetricValueReduced(t *testing.T, bin string) {
	res := runRanks(t, bin, 2, "-epochs", "2", "-metric-values")
	for _, r := range res {
		for _, tc := range []struct {
			name string
			want float64
		}{
			{"val_seen", 9},
			{"train_seen", 22},
			{"val_mae", r.Callback["val_mae"]},
		} {
			if got := r.MetricValues[tc.name]; math.Abs(got-tc.want) > 1e-12*math.Abs(tc.want) || tc.want == 0 {
				t.Errorf("rank %d: MetricValue(%q) = %v, want %v (every rank's shard)", r.Rank, tc.name, got, tc.want)
			}
		}
		want := []float64{0, 2, 4, 6, 8, 1, 3, 5, 7}
		if !slices.Equal(r.ValSamples, want) {
			t.Errorf("rank %d: MetricValue(\"val_samples\") = %v, want %v", r.Rank, r.ValSamples, want)
		}
	}
}
