package volt_test

import (
	"context"
	"log/slog"
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// randomStep is testutil.Boring whose training step also draws
// s.Scope().RandomNormal over 4096 values, as a VAE's reparameterisation
// does with torch.randn_like, and logs their mean, their standard
// deviation and the first value.
type randomStep struct{ testutil.Boring }

func (m *randomStep) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	eps := s.Scope().RandomNormal(s.Graph(), shapes.Make(dtypes.Float32, 4096))
	mean := graph.ReduceAllMean(eps)
	s.Log("mean", mean)
	s.Log("std", graph.Sqrt(graph.ReduceAllMean(graph.Square(graph.Sub(eps, mean)))))
	s.Log("first", graph.Reshape(graph.Slice(eps, graph.AxisRange(0, 1))))
	return m.Boring.TrainingStep(s, b)
}

// randomRecorder keeps what randomStep logged at each batch.
type randomRecorder struct{ means, stds, firsts []float64 }

func (r *randomRecorder) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	m := t.CallbackMetrics()
	r.means, r.stds, r.firsts = append(r.means, m["mean"]), append(r.stds, m["std"]), append(r.firsts, m["first"])
	return nil
}

// fitRandom fits randomStep for two batches with seed and returns what it
// logged.
func fitRandom(t *testing.T, seed uint64) *randomRecorder {
	t.Helper()
	rec := &randomRecorder{}
	tr, err := volt.NewTrainer(volt.Config{MaxEpochs: 1, LimitTrainBatches: volt.Batches(2), LimitValBatches: volt.Batches(0),
		DisableLoggers: true, DisableCheckpointing: true, DisableModelSummary: true, EnableProgressBar: volt.Ptr(false),
		Log: slog.New(slog.DiscardHandler), Seed: volt.Ptr(seed), Callbacks: []volt.Callback{rec}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Fit(context.Background(), &randomStep{}, testutil.NewBoringDataModule()); err != nil {
		t.Fatal(err)
	}
	if len(rec.firsts) != 2 {
		t.Fatalf("%d steps recorded, want 2", len(rec.firsts))
	}
	return rec
}

// TestStepRandomNormal: the Step doc's torch.randn_like,
// s.Scope().RandomNormal, is standard normal, draws new values at every
// step, and repeats with the same Config.Seed.
func TestStepRandomNormal(t *testing.T) {
	rec := fitRandom(t, 3)
	for i := range rec.means {
		if math.Abs(rec.means[i]) > 0.06 || math.Abs(rec.stds[i]-1) > 0.06 {
			t.Errorf("step %d: mean %.4f, std %.4f of 4096 draws; want about 0 and 1", i, rec.means[i], rec.stds[i])
		}
	}
	if rec.firsts[0] == rec.firsts[1] {
		t.Errorf("the two steps drew the same first value %v; want new values each step", rec.firsts[0])
	}
	if again := fitRandom(t, 3); again.firsts[0] != rec.firsts[0] || again.firsts[1] != rec.firsts[1] {
		t.Errorf("seed 3 drew %v, then %v; want the same values", rec.firsts, again.firsts)
	}
	if other := fitRandom(t, 4); other.firsts[0] == rec.firsts[0] {
		t.Errorf("seeds 3 and 4 drew the same first value %v", rec.firsts[0])
	}
}
