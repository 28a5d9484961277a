package bench

import (
	"context"
	"math"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// lossRecorder records the loss of every training step.
type lossRecorder struct{ losses []float32 }

func (r *lossRecorder) OnTrainBatchEnd(t *volt.Trainer, out *volt.StepOutput, b *data.Batch, batchIdx int) error {
	r.losses = append(r.losses, float32(out.Loss()))
	return nil
}

// TestBenchLoopsAgree checks that both benchmarked loops run the same step
// on the same data from the same weights: their losses match bitwise.
func TestBenchLoopsAgree(t *testing.T) {
	const steps = 6
	bs := batches()
	for _, tc := range []struct {
		name string
		net  net
	}{{"MLP", mlp}, {"LogReg", logReg}} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := newHandLoop(tc.net)
			if err != nil {
				t.Fatal(err)
			}
			var hand []float32
			for i := range steps {
				l, err := h.step(bs[i%len(bs)])
				if err != nil {
					t.Fatal(err)
				}
				hand = append(hand, l)
			}

			rec := &lossRecorder{}
			tr, err := newTrainer(steps, rec)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Fit(context.Background(), &module{net: tc.net}, volt.Loaders{Train: &loader{batches: bs}}); err != nil {
				t.Fatal(err)
			}
			if len(rec.losses) != steps {
				t.Fatalf("volt ran %d steps, want %d", len(rec.losses), steps)
			}
			for i := range steps {
				if math.Float32bits(hand[i]) != math.Float32bits(rec.losses[i]) {
					t.Errorf("step %d: hand-written loss %v, volt loss %v", i, hand[i], rec.losses[i])
				}
			}
			if hand[steps-1] >= hand[0] {
				t.Logf("losses did not decrease: %v", hand)
			}
			t.Logf("losses: %v", hand)
		})
	}
}
