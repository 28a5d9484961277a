package volt

import (
	"io"
	"testing"

	"github.com/voltml/volt/data"
	"github.com/voltml/volt/profiler"
)

// TestProfilingDoesNotAllocate: off, the timing sites cost no allocation;
// with the simple profiler on, neither does a hook call (after each
// action's first).
func TestProfilingDoesNotAllocate(t *testing.T) {
	batch, out := &data.Batch{Size: 4}, &StepOutput{}
	cases := []struct {
		name string
		prof profiler.Profiler
	}{
		{"off", nil},
		{"simple", &profiler.Simple{Out: io.Discard}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, a, _ := dispatchTrainer()
			if c.prof != nil {
				if err := c.prof.Setup("fit", t.TempDir()); err != nil {
					t.Fatal(err)
				}
				tr.prof = c.prof
			}
			run := func() {
				stop := tr.profile(actTrainingStep)
				if err := tr.emit(hookOnTrainBatchStart, hookArgs{batch: batch, batchIdx: 3}); err != nil {
					t.Fatal(err)
				}
				if err := tr.emit(hookOnTrainBatchEnd, hookArgs{out: out, batch: batch, batchIdx: 3}); err != nil {
					t.Fatal(err)
				}
				stop()
			}
			run()
			if allocs := testing.AllocsPerRun(100, run); allocs != 0 {
				t.Errorf("a profiled batch allocates %v times, want 0", allocs)
			}
			if a.starts != 102 {
				t.Errorf("hook called %d times, want 102", a.starts)
			}
			if s, ok := c.prof.(*profiler.Simple); ok {
				// The two callbacks are of one type: their calls share a row.
				want := map[string]int{actTrainingStep: 102, "[Callback]batchCounter.OnTrainBatchStart": 204, "[Callback]batchCounter.OnTrainBatchEnd": 204}
				rows := s.Report()
				for _, r := range rows {
					if want[r.Action] != r.Calls {
						t.Errorf("%s: %d calls, want %d", r.Action, r.Calls, want[r.Action])
					}
				}
				if len(rows) != len(want) {
					t.Errorf("profile rows %+v, want %d", rows, len(want))
				}
			}
		})
	}
}

// BenchmarkBatchDispatchProfiled is BenchmarkBatchDispatch with the batch
// timed as a step, profiler off and on: the cost of profiling a hook call.
func BenchmarkBatchDispatchProfiled(b *testing.B) {
	for _, name := range []string{"off", "simple", "advanced", "trace"} {
		b.Run("profiler="+name, func(b *testing.B) {
			tr, _, _ := dispatchTrainer()
			if name != "off" {
				p, err := profiler.New(name)
				if err != nil {
					b.Fatal(err)
				}
				if s, ok := p.(*profiler.Simple); ok {
					s.Out = io.Discard
				}
				if err := p.Setup("fit", b.TempDir()); err != nil {
					b.Fatal(err)
				}
				defer p.Teardown()
				tr.prof = p
			}
			batch, out := &data.Batch{Size: 4}, &StepOutput{}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				stop := tr.profile(actTrainingStep)
				if err := tr.emit(hookOnTrainBatchStart, hookArgs{batch: batch, batchIdx: i}); err != nil {
					b.Fatal(err)
				}
				if err := tr.emit(hookOnTrainBatchEnd, hookArgs{out: out, batch: batch, batchIdx: i}); err != nil {
					b.Fatal(err)
				}
				stop()
			}
		})
	}
}
