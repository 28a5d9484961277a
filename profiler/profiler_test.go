package profiler_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"testing"

	"github.com/voltml/volt/profiler"
)

func TestNew(t *testing.T) {
	cases := []struct {
		name    string
		wantErr string
		want    any
	}{
		{"simple", "", &profiler.Simple{}},
		{"advanced", "", &profiler.Advanced{}},
		{"trace", "", &profiler.Trace{}},
		{"Simple", `unknown profiler "Simple"; valid: "advanced", "simple", "trace" (or "" for none)`, nil},
		{"pytorch", `unknown profiler "pytorch"; valid: "advanced", "simple", "trace"`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := profiler.New(c.name)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("New(%q) error = %v, want %q", c.name, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprintf("%T", p), fmt.Sprintf("%T", c.want); got != want {
				t.Errorf("New(%q) = %s, want %s", c.name, got, want)
			}
		})
	}
}

// TestTraceEndsOpenSpans leaves spans open (a failed run's) and names one
// with characters JSON escapes: the file still parses, every B has its E.
func TestTraceEndsOpenSpans(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("an execution trace is running (go test -trace)")
	}
	dir := t.TempDir()
	p := &profiler.Trace{}
	if err := p.Setup("test", dir); err != nil {
		t.Fatal(err)
	}
	weird := "[Callback]X{a=\"b\"\n}.OnTestEnd"
	p.Start("outer")
	p.Start(weird)()
	p.Start(weird)
	if err := p.Teardown(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "test-trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		TraceEvents []struct{ Name, Ph string } `json:"traceEvents"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("%v in\n%s", err, raw)
	}
	var got []string
	for _, e := range file.TraceEvents {
		if e.Ph != "M" {
			got = append(got, e.Ph+" "+e.Name)
		}
	}
	want := []string{"B outer", "B " + weird, "E " + weird, "B " + weird, "E " + weird, "E outer"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, want %q", got, want)
	}
	if files := p.Files(); len(files) != 2 {
		t.Errorf("Files() = %v, want the .out and the .json", files)
	}
}

// TestAdvancedInsideAnotherCPUProfile: with a CPU profile already running,
// the advanced profiler labels into it and writes the heap profile only.
func TestAdvancedInsideAnotherCPUProfile(t *testing.T) {
	dir := t.TempDir()
	outer, err := os.Create(filepath.Join(dir, "outer.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Close()
	if err := pprof.StartCPUProfile(outer); err != nil {
		t.Skipf("a CPU profile is running already: %v", err)
	}
	defer pprof.StopCPUProfile()
	a := &profiler.Advanced{}
	if err := a.Setup("fit", dir); err != nil {
		t.Fatal(err)
	}
	a.Start("training_step")()
	if err := a.Teardown(); err != nil {
		t.Fatal(err)
	}
	if files := a.Files(); len(files) != 1 || filepath.Base(files[0]) != "fit-heap.pprof" {
		t.Errorf("Files() = %v, want the heap profile only", files)
	}
	if _, err := os.Stat(filepath.Join(dir, "fit-cpu.pprof")); !os.IsNotExist(err) {
		t.Errorf("fit-cpu.pprof: %v, want it absent", err)
	}
	if err := a.Teardown(); err == nil {
		t.Errorf("a second Teardown succeeded")
	}
}
