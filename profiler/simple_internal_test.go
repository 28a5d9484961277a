package profiler

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeClock advances by the durations the test asks for.
type fakeClock struct{ now time.Duration }

func (c *fakeClock) Now() time.Duration         { return c.now }
func (c *fakeClock) advance(ms int)             { c.now += time.Duration(ms) * time.Millisecond }
func newFakeClock() *fakeClock                  { return &fakeClock{now: time.Hour} }
func (s *Simple) useClock(c *fakeClock) *Simple { s.clock = c.Now; return s }

// TestSimpleReport runs actions of known durations, nested and repeated,
// and checks each row and the table.
func TestSimpleReport(t *testing.T) {
	clock := newFakeClock()
	var out bytes.Buffer
	dir := t.TempDir()
	s := (&Simple{Out: &out}).useClock(clock)
	if err := s.Setup("fit", dir); err != nil {
		t.Fatal(err)
	}
	// 1000 ms run: two batches of 300 ms, each with a 100 ms step and a
	// 50 ms hook, a 20 ms hook nested in a 30 ms call of itself, and a
	// call left open (a failed hook's) that is not counted.
	for range 2 {
		stopBatch := s.Start("run_training_batch")
		stopStep := s.Start("training_step")
		clock.advance(100)
		stopStep()
		stopHook := s.Start("[Callback]X.OnTrainBatchEnd")
		clock.advance(50)
		stopHook()
		clock.advance(150)
		stopBatch()
	}
	outer := s.Start("recursive")
	clock.advance(5)
	inner := s.Start("recursive")
	clock.advance(20)
	inner()
	clock.advance(5)
	outer()
	s.Start("open")
	clock.advance(370)
	if err := s.Teardown(); err != nil {
		t.Fatal(err)
	}

	want := []Row{
		{"run_training_batch", 2, 300 * time.Millisecond, 600 * time.Millisecond, 60},
		{"training_step", 2, 100 * time.Millisecond, 200 * time.Millisecond, 20},
		{"[Callback]X.OnTrainBatchEnd", 2, 50 * time.Millisecond, 100 * time.Millisecond, 10},
		{"recursive", 2, 25 * time.Millisecond, 50 * time.Millisecond, 5},
	}
	got := s.Report()
	if len(got) != len(want) {
		t.Fatalf("rows %+v, want %+v", got, want)
	}
	for i := range want {
		if g, w := got[i], want[i]; g.Action != w.Action || g.Calls != w.Calls || g.Mean != w.Mean || g.Total != w.Total || !near(g.Percent, w.Percent) {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
	}
	if s.Elapsed() != time.Second {
		t.Errorf("run lasted %v, want 1s", s.Elapsed())
	}

	table := out.String()
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	wantLines := []struct {
		line   int
		fields []string
	}{
		{0, []string{"FIT Profiler Report"}},
		{2, []string{"Action", "Mean duration (s)", "Num calls", "Total time (s)", "Percentage %"}},
		{4, []string{"Total", "-", "8", "1", "100 %"}},
		{6, []string{"run_training_batch", "0.3", "2", "0.6", "60"}},
		{9, []string{"recursive", "0.025", "2", "0.05", "5"}},
	}
	for _, w := range wantLines {
		if w.line >= len(lines) {
			t.Fatalf("table has %d lines:\n%s", len(lines), table)
		}
		if got := cells(lines[w.line]); strings.Join(got, "|") != strings.Join(w.fields, "|") {
			t.Errorf("line %d = %q, want cells %q", w.line, lines[w.line], w.fields)
		}
	}
	for _, l := range lines[1:] {
		if len(l) != len(lines[1]) {
			t.Errorf("line %q is %d wide, the rule %d", l, len(l), len(lines[1]))
		}
	}
	file, err := os.ReadFile(filepath.Join(dir, "fit-profile.txt"))
	if err != nil || string(file) != table {
		t.Errorf("fit-profile.txt = %q (%v), want the printed table", file, err)
	}
	if files := s.Files(); len(files) != 1 || files[0] != filepath.Join(dir, "fit-profile.txt") {
		t.Errorf("Files() = %v", files)
	}
}

// TestSimpleStartDoesNotAllocate: an action seen before costs no allocation.
func TestSimpleStartDoesNotAllocate(t *testing.T) {
	s := &Simple{Out: &bytes.Buffer{}}
	if err := s.Setup("fit", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	s.Start("a")()
	if n := testing.AllocsPerRun(100, func() { s.Start("a")() }); n != 0 {
		t.Errorf("Start/stop allocates %v times, want 0", n)
	}
}

// cells returns the trimmed cells of a table line ("|  a  |  b  |"), or
// the line itself when it has none.
func cells(line string) []string {
	if !strings.HasPrefix(line, "|") {
		return []string{line}
	}
	parts := strings.Split(strings.Trim(line, "|"), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
