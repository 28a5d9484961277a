package volt_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"path/filepath"
	rtrace "runtime/trace"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	exptrace "golang.org/x/exp/trace"
)

// panickingLoader panics when asked for its third batch.
type panickingLoader struct{ data.Loader }

func (p panickingLoader) Batches(ctx context.Context, epoch, skip int) iter.Seq2[*data.Batch, error] {
	return func(yield func(*data.Batch, error) bool) {
		n := 0
		for b, err := range p.Loader.Batches(ctx, epoch, skip) {
			if n == 2 {
				panic("loader failed")
			}
			n++
			if !yield(b, err) {
				return
			}
		}
	}
}

// failsAtEpochEnd fails the run in OnTrainEpochEnd.
type failsAtEpochEnd struct{}

func (failsAtEpochEnd) OnTrainEpochEnd(*volt.Trainer) error { return errors.New("boom") }

// chromeSpans checks that every "B" event of a Chrome trace-event file has
// its "E", properly nested, and returns the number of spans per name.
func chromeSpans(t *testing.T, path string) map[string]int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		TraceEvents []struct {
			Name string  `json:"name"`
			Ph   string  `json:"ph"`
			Ts   float64 `json:"ts"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	spans := map[string]int{}
	var open []string
	last := 0.0
	for i, e := range file.TraceEvents {
		switch e.Ph {
		case "B":
			open = append(open, e.Name)
			spans[e.Name]++
		case "E":
			if len(open) == 0 || open[len(open)-1] != e.Name {
				t.Fatalf("event %d ends %q while %v are open", i, e.Name, open)
			}
			open = open[:len(open)-1]
		case "M":
			continue
		default:
			t.Fatalf("event %d has phase %q", i, e.Ph)
		}
		if e.Ts < last {
			t.Fatalf("event %d at %vµs is before the previous one (%vµs)", i, e.Ts, last)
		}
		last = e.Ts
	}
	if len(open) > 0 {
		t.Fatalf("spans never ended: %v", open)
	}
	return spans
}

// traceRegions reads a Go execution trace with golang.org/x/exp/trace (the
// reader go tool trace is built on) and returns its tasks' names and the
// number of regions per name, and of those that ended.
func traceRegions(t *testing.T, path string) (tasks []string, regions, ended map[string]int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := exptrace.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	regions, ended = map[string]int{}, map[string]int{}
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch ev.Kind() {
		case exptrace.EventTaskBegin:
			tasks = append(tasks, ev.Task().Type)
		case exptrace.EventRegionBegin:
			regions[ev.Region().Type]++
		case exptrace.EventRegionEnd:
			ended[ev.Region().Type]++
		}
	}
	return tasks, regions, ended
}

// TestTraceProfilerFiles runs Fit with the trace profiler, to the end and
// failing in a hook: the Chrome trace has balanced spans, and the Go
// execution trace parses, has the run's task and one region per span.
func TestTraceProfilerFiles(t *testing.T) {
	if rtrace.IsEnabled() {
		t.Skip("an execution trace is running (go test -trace): the profiler writes into it")
	}
	cases := []struct {
		name      string
		callbacks []volt.Callback
		loader    func(data.Loader) data.Loader
		fails     bool
		// the regions a panic leaves open: begun on the loader's
		// iterator's goroutine, they may only end there
		open map[string]int
	}{
		{"finished", nil, nil, false, nil},
		{"failed in a hook", []volt.Callback{failsAtEpochEnd{}}, nil, true, nil},
		{"loader panicked", nil, func(l data.Loader) data.Loader { return panickingLoader{l} }, true,
			map[string]int{"[TrainingEpochLoop].train_dataloader_next": 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2, Profiler: "trace", DefaultRootDir: dir, Callbacks: c.callbacks}))
			dm := boringData()
			if c.loader != nil {
				dm.Train = c.loader(dm.Train)
			}
			if err := tr.Fit(t.Context(), &boring{}, dm); (err != nil) != c.fails {
				t.Fatalf("Fit error = %v, want failure %v", err, c.fails)
			}
			spans := chromeSpans(t, filepath.Join(dir, "fit-trace.json"))
			tasks, regions, ended := traceRegions(t, filepath.Join(dir, "fit-trace.out"))
			for name, n := range c.open {
				ended[name] += n
			}
			if !maps.Equal(regions, ended) {
				t.Errorf("regions begun %v, ended %v (want all but %v)", regions, ended, c.open)
			}
			if !slices.Equal(tasks, []string{"volt fit"}) {
				t.Errorf("tasks %v, want [volt fit]", tasks)
			}
			if !maps.Equal(spans, regions) {
				t.Errorf("Chrome spans and execution-trace regions differ:\n spans   %v\n regions %v", spans, regions)
			}
			for _, action := range []string{"training_step", "validation_step", "run_training_batch", "[TrainingEpochLoop].train_dataloader_next"} {
				if spans[action] == 0 {
					t.Errorf("no %s span in %v", action, spans)
				}
			}
			if len(c.callbacks) > 0 && spans["[Callback]failsAtEpochEnd.OnTrainEpochEnd"] != 1 {
				t.Errorf("the failing hook has %d spans, want 1", spans["[Callback]failsAtEpochEnd.OnTrainEpochEnd"])
			}
		})
	}
}

// burner spins the CPU in OnTrainEpochEnd, so that the CPU profile has
// samples inside a known action.
type burner struct{ d time.Duration }

func (b burner) OnTrainEpochEnd(*volt.Trainer) error {
	x := 0
	for start := time.Now(); time.Since(start) < b.d; {
		for i := range 1000 {
			x += i * i
		}
	}
	if x == 42 {
		fmt.Print("")
	}
	return nil
}

// TestAdvancedProfilerLabels checks that the CPU profile's samples inside
// the burner's hook carry its action label, and that the heap profile
// parses.
func TestAdvancedProfilerLabels(t *testing.T) {
	if f := flag.Lookup("test.cpuprofile"); f != nil && f.Value.String() != "" {
		t.Skip("a CPU profile is running (go test -cpuprofile): the profiler labels into it")
	}
	dir := t.TempDir()
	const hook = "[Callback]burner.OnTrainEpochEnd"
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, Profiler: "advanced", DefaultRootDir: dir,
		Callbacks: []volt.Callback{burner{300 * time.Millisecond}}}))
	if err := tr.Fit(t.Context(), &boring{}, boringData()); err != nil {
		t.Fatal(err)
	}
	cpu := readProfile(t, filepath.Join(dir, "fit-cpu.pprof"))
	inHook, labelled := 0, map[string]int{}
	for _, s := range cpu.Sample {
		action := strings.Join(s.Label["action"], ",")
		labelled[action]++
		if !inFunction(s, "burner.OnTrainEpochEnd") {
			continue
		}
		inHook++
		if action != hook {
			t.Errorf("a sample in burner.OnTrainEpochEnd has action=%q, want %q", action, hook)
		}
	}
	if inHook == 0 {
		t.Fatalf("no CPU sample in burner.OnTrainEpochEnd; samples per action: %v", labelled)
	}
	t.Logf("CPU samples per action: %v", labelled)
	heap := readProfile(t, filepath.Join(dir, "fit-heap.pprof"))
	if len(heap.SampleType) == 0 {
		t.Errorf("heap profile has no sample types")
	}
}

// readProfile parses a pprof file.
func readProfile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

// inFunction reports whether a sample's stack has a function whose name
// ends with name.
func inFunction(s *profile.Sample, name string) bool {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function != nil && strings.HasSuffix(line.Function.Name, name) {
				return true
			}
		}
	}
	return false
}
