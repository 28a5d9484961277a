package bench

import (
	"context"
	"math"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

func BenchmarkMLP(b *testing.B) { benchmarkLoops(b, mlp) }

func BenchmarkLogReg(b *testing.B) { benchmarkLoops(b, logReg) }

func benchmarkLoops(b *testing.B, n net) {
	bs := batches()
	b.Run("loop=handwritten", func(b *testing.B) { benchHandwritten(b, n, bs) })
	b.Run("loop=volt", func(b *testing.B) { benchVolt(b, n, bs) })
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
func benchVolt(b *testing.B, n net, bs []*data.Batch) {
	t, err := newTrainer(0)
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
