package profiler_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
