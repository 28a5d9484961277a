package bench

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

func BenchmarkMLP(b *testing.B) { benchmarkLoops(b, mlp) }

func BenchmarkLogReg(b *testing.B) { benchmarkLoops(b, logReg) }

// benchmarkLoops runs both loops, each on its own copy of the batches (a
// tensor keeps its backend buffer once it has been used).
func benchmarkLoops(b *testing.B, n net) {
	b.Run("loop=handwritten", func(b *testing.B) { benchHandwritten(b, n, batches()) })
	b.Run("loop=volt", func(b *testing.B) { benchVolt(b, n, batches()) })
	b.Run("loop=paired", func(b *testing.B) { benchPaired(b, n, batches(), batches()) })
}

// benchHandwritten times one step of the hand-written loop per iteration.
func benchHandwritten(b *testing.B, n net, bs []*data.Batch) {
	h, err := newHandLoop(n)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for ; i < warmup; i++ {
		if _, err := h.step(bs[i%len(bs)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	var sum float32
	for b.Loop() {
		l, err := h.step(bs[i%len(bs)])
		if err != nil {
			b.Fatal(err)
		}
		sum += l
		i++
	}
	reportStep(b, sum)
}

// benchVolt times one step of volt's fit loop per iteration: one Fit runs
// until b.Loop is done, the loader asking b.Loop before each batch after the
// warm-up ones, so the time between two batches (hooks, counters, logged
// values, epoch ends) is what is measured, together with the step itself.
func benchVolt(b *testing.B, n net, bs []*data.Batch, callbacks ...volt.Callback) {
	benchVoltConfig(b, n, bs, trainerConfig("", 0, callbacks...))
}

// benchVoltConfig is benchVolt with a trainer of configuration cfg.
func benchVoltConfig(b *testing.B, n net, bs []*data.Batch, cfg volt.Config) {
	t, err := volt.NewTrainer(cfg)
	if err != nil {
		b.Fatal(err)
	}
	left := warmup
	l := &loader{batches: bs, more: func() bool {
		if left > 0 {
			left--
			return true
		}
		if b.Loop() {
			return true
		}
		t.Stop("benchmark done")
		return false
	}}
	b.ReportAllocs()
	if err := t.Fit(context.Background(), &module{net: n}, volt.Loaders{Train: l}); err != nil {
		b.Fatal(err)
	}
	if want := int64(warmup + b.N); t.GlobalStep() != want {
		b.Fatalf("volt ran %d steps, want %d", t.GlobalStep(), want)
	}
	reportStep(b, float32(t.CallbackMetrics()["train_loss"]))
}

// reportStep adds ns/step (= ns/op: one iteration is one step) and checks
// the loss stayed finite.
func reportStep(b *testing.B, loss float32) {
	if math.IsNaN(float64(loss)) || math.IsInf(float64(loss), 0) {
		b.Fatalf("loss is %v", loss)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
}

// benchPaired alternates the two loops step by step inside one Fit: before
// each volt batch, the loader runs one hand-written step on its own model and
// data. Each iteration is one step of each; the time of each step is taken
// separately (volt's from one batch handed to volt to the next request for a
// batch, so it includes everything volt does per step), which makes load
// from other processes hit both loops alike. It reports the medians over the
// steps: hand-ns/step, volt-ns/step, and of the per-pair differences,
// overhead-ns/step and overhead-% (of the hand-written step).
func benchPaired(b *testing.B, n net, handBatches, voltBatches []*data.Batch) {
	h, err := newHandLoop(n)
	if err != nil {
		b.Fatal(err)
	}
	for i := range warmup {
		if _, err := h.step(handBatches[i%len(handBatches)]); err != nil {
			b.Fatal(err)
		}
	}
	t, err := newTrainer(0)
	if err != nil {
		b.Fatal(err)
	}
	var hand, vlt []float64
	var handed time.Time // when volt got its last batch
	left, i := warmup, warmup
	l := &loader{batches: voltBatches, more: func() bool {
		if left > 0 {
			left--
			handed = time.Now()
			return true
		}
		start := time.Now()
		if len(hand) > len(vlt) {
			vlt = append(vlt, float64(start.Sub(handed)))
		}
		if !b.Loop() {
			t.Stop("benchmark done")
			return false
		}
		if _, err := h.step(handBatches[i%len(handBatches)]); err != nil {
			b.Fatal(err)
		}
		i++
		handed = time.Now()
		hand = append(hand, float64(handed.Sub(start)))
		return true
	}}
	b.ReportAllocs()
	if err := t.Fit(context.Background(), &module{net: n}, volt.Loaders{Train: l}); err != nil {
		b.Fatal(err)
	}
	if len(hand) != len(vlt) || len(hand) != b.N {
		b.Fatalf("%d hand-written and %d volt steps timed, want %d", len(hand), len(vlt), b.N)
	}
	diff := make([]float64, len(hand))
	for i := range diff {
		diff[i] = vlt[i] - hand[i]
	}
	mh := median(hand)
	b.ReportMetric(mh, "hand-ns/step")
	b.ReportMetric(median(vlt), "volt-ns/step")
	b.ReportMetric(median(diff), "overhead-ns/step")
	b.ReportMetric(100*median(diff)/mh, "overhead-%")
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
