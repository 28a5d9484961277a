package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/voltml/volt"
)

// backendModes are the Go backend's execution modes compared by
// BenchmarkBackendModes: GoMLX's default (independent ops run side by side
// when one graph executes alone) and ops_sequential (ops one after the
// other, each big op using every core).
var backendModes = []struct{ name, config string }{
	{"default", "go"},
	{"sequential", "go:ops_sequential"},
}

// BenchmarkBackendModes helped decide engine.DefaultBackend (with
// BenchmarkZooBackendModes in examples/internal/speedtable): volt's fit loop on
// each execution mode of the Go backend, for the MNIST MLP, the logistic
// regression and a small CNN (conv 3×3 32 + ReLU, 2×2 max-pool, conv 3×3
// 64 + ReLU, 2×2 max-pool, dense 128, dense 10; batch 64).
//
// One Fit per mode runs in its own goroutine, and the fits take turns step
// by step (lockstep), so that load from other processes hits every mode
// alike. One iteration is one step of each mode (ns/op is their sum, the
// compilation and warm-up steps excluded); it reports each mode's
// median step time (default-ns/step, sequential-ns/step) and the median of
// the per-turn ratios sequential/default (below 1: ops_sequential is
// faster). The CNN step takes ~1 s on 2 cores: run it with -benchtime 5x,
// the others with -benchtime 200x.
func BenchmarkBackendModes(b *testing.B) {
	for _, m := range []struct {
		name    string
		net     net
		batches int // distinct batches cycled
		warmup  int // untimed steps per mode, the first compiling
	}{
		{"mlp", mlp, numBatches, warmup},
		{"logreg", logReg, numBatches, warmup},
		{"cnn", cnn, 2, 1},
	} {
		b.Run("model="+m.name, func(b *testing.B) {
			runners := make([]runner, len(backendModes))
			for i, mode := range backendModes {
				runners[i] = runner{config: mode.config}
			}
			times := lockstepFits(b, m.net, runners, m.batches, m.warmup, b.N)
			ratios := make([]float64, b.N)
			for i := range ratios {
				ratios[i] = times[1][i] / times[0][i]
			}
			for i, mode := range backendModes {
				b.ReportMetric(median(times[i]), mode.name+"-ns/step")
			}
			b.ReportMetric(median(ratios), "sequential/default")
		})
	}
}

// runner is one of the fits lockstepFits runs: its backend config
// (Config.Backend) and callbacks, and what to do when its timed steps start
// (nil: nothing).
type runner struct {
	config    string
	callbacks []volt.Callback
	timed     func()
}

// lockstepFits runs one Fit of n per runner, each on its own trainer, model
// and copy of the first numBatches batches, the fits taking turns batch by
// batch in runner order. After warmup untimed steps each, it times steps
// more steps of each and returns their durations in ns (times[runner][step]):
// from a batch handed to the fit to the fit's next request, which spans one
// step and everything volt does around it.
func lockstepFits(b *testing.B, n net, runners []runner, numBatches, warmup, steps int) [][]float64 {
	b.StopTimer() // compilation and warm-up are not timed
	defer b.StopTimer()
	turns := newTurns(len(runners))
	times := make([][]float64, len(runners))
	errs := make([]error, len(runners))
	trainers := make([]*volt.Trainer, len(runners))
	for i, r := range runners {
		t, err := newTrainerOn(r.config, 0, r.callbacks...)
		if err != nil {
			b.Fatal(err)
		}
		trainers[i] = t
	}
	var wg sync.WaitGroup
	for i := range runners {
		t := trainers[i]
		var handed time.Time
		done := 0 // batches handed out
		l := &loader{batches: batches()[:numBatches], more: func() bool {
			// The fit loop fetches a batch ahead: between handing batch d-1
			// and the request for batch d, it trains on batch d-2.
			if done >= warmup+2 {
				times[i] = append(times[i], float64(time.Since(handed)))
			}
			if done == warmup+steps+1 {
				t.Stop("benchmark done")
				return false
			}
			turns.pass(i)
			if done == warmup+1 { // the timed steps start
				if runners[i].timed != nil {
					runners[i].timed()
				}
				if i == 0 {
					b.StartTimer()
				}
			}
			done++
			handed = time.Now()
			return true
		}}
		wg.Go(func() {
			defer turns.leave(i)
			turns.wait(i)
			errs[i] = t.Fit(context.Background(), &module{net: n}, volt.Loaders{Train: l})
			// Every batch handed out is trained on, the last one included.
			if errs[i] == nil && t.GlobalStep() != int64(warmup+steps+1) {
				b.Errorf("runner %d: volt ran %d steps, want %d", i, t.GlobalStep(), warmup+steps+1)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			b.Fatalf("runner %d: %v", i, err)
		}
	}
	return times
}

// turns lets goroutines 0..n-1 take turns in a ring; a goroutine that left
// is skipped.
type turns struct {
	mu      sync.Mutex
	changed *sync.Cond
	turn    int
	left    []bool
}

func newTurns(n int) *turns {
	t := &turns{left: make([]bool, n)}
	t.changed = sync.NewCond(&t.mu)
	return t
}

// wait blocks until it is i's turn.
func (t *turns) wait(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.turn != i {
		t.changed.Wait()
	}
}

// pass gives the turn from i (the holder, after its first call to wait) to
// the next goroutine that has not left, and waits until it is i's turn
// again.
func (t *turns) pass(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.advance()
	for t.turn != i {
		t.changed.Wait()
	}
}

// leave takes i out of the ring, passing the turn on if i holds it.
func (t *turns) leave(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.left[i] = true
	if t.turn == i {
		t.advance()
	}
}

// advance moves the turn to the next goroutine that has not left (or keeps
// it when every other one left); callers hold mu.
func (t *turns) advance() {
	for k := 1; k <= len(t.left); k++ {
		if next := (t.turn + k) % len(t.left); !t.left[next] {
			t.turn = next
			break
		}
	}
	t.changed.Broadcast()
}
