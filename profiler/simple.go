package profiler

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// Simple records how often each action ran and for how long, and at the
// end of a run prints a table like Lightning's SimpleProfiler (extended):
// one row per action, by share of the run, after a Total row. It writes
// the table to <dir>/<stage>-profile.txt as well.
//
// Start allocates the first time it sees an action only, so timing every
// hook call costs two clock reads and a map lookup.
type Simple struct {
	// Out receives the table at Teardown; nil means os.Stderr.
	Out io.Writer

	clock   func() time.Duration // time since Setup (monotonic only: cheaper than time.Now); tests fix it
	stage   string
	dir     string
	zero    time.Duration // the clock at Setup
	elapsed time.Duration
	actions map[string]*record
	order   []*record // in first-start order
	files   []string
}

// record is one action's statistics.
type record struct {
	name   string
	calls  int
	total  time.Duration
	starts []time.Duration // of the calls still open (an action may nest in itself)
	stop   func()          // end, bound once
	owner  *Simple
}

// end closes the last open call of the action.
func (r *record) end() {
	n := len(r.starts)
	if n == 0 {
		return // ended at Teardown already
	}
	r.total += r.owner.clock() - r.starts[n-1]
	r.starts = r.starts[:n-1]
	r.calls++
}

// Row is one action's line of the table.
type Row struct {
	Action string
	Calls  int
	Mean   time.Duration
	Total  time.Duration
	// Percent is Total's share of the run.
	Percent float64
}

// Setup starts a run: it clears what an earlier run recorded.
func (s *Simple) Setup(stage, dir string) error {
	if s.clock == nil {
		start := time.Now()
		s.clock = func() time.Duration { return time.Since(start) }
	}
	s.stage, s.dir = stage, dir
	s.actions, s.order, s.files = map[string]*record{}, nil, nil
	s.elapsed = 0
	s.zero = s.clock()
	return nil
}

// Start starts timing a call of action.
func (s *Simple) Start(action string) func() {
	r, ok := s.actions[action]
	if !ok {
		r = &record{name: action, owner: s}
		r.stop = r.end
		s.actions[action] = r
		s.order = append(s.order, r)
	}
	r.starts = append(r.starts, s.clock())
	return r.stop
}

// Teardown drops the calls still open (a failed run's), prints the table
// and writes it to <dir>/<stage>-profile.txt.
func (s *Simple) Teardown() error {
	s.elapsed = s.clock() - s.zero
	for _, r := range s.order {
		r.starts = r.starts[:0]
	}
	table := s.Summary()
	out := s.Out
	if out == nil {
		out = os.Stderr
	}
	_, perr := io.WriteString(out, table)
	f, err := create(s.dir, s.stage, "profile.txt")
	if err != nil {
		return fmt.Errorf("simple profiler: %w", err)
	}
	_, err = io.WriteString(f, table)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("simple profiler: %w", err)
	}
	s.files = []string{f.Name()}
	if perr != nil {
		return fmt.Errorf("simple profiler: printing the table: %w", perr)
	}
	return nil
}

// Files returns the file the last Teardown wrote.
func (s *Simple) Files() []string { return s.files }

// Elapsed is the duration of the run, from Setup to Teardown (or to now
// while it runs).
func (s *Simple) Elapsed() time.Duration {
	if s.elapsed > 0 || s.clock == nil {
		return s.elapsed
	}
	return s.clock() - s.zero
}

// Report returns one row per action that completed at least one call, by
// total time, longest first.
func (s *Simple) Report() []Row {
	run := s.Elapsed()
	var rows []Row
	for _, r := range s.order {
		if r.calls == 0 {
			continue
		}
		row := Row{Action: r.name, Calls: r.calls, Total: r.total, Mean: r.total / time.Duration(r.calls)}
		if run > 0 {
			row.Percent = 100 * float64(r.total) / float64(run)
		}
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(a, b Row) int { return cmp.Compare(b.Total, a.Total) })
	return rows
}

// Summary returns the table, as Lightning's SimpleProfiler prints it:
//
//	FIT Profiler Report
//	-------------------------------------------------------------…
//	|  Action              |  Mean duration (s)  |  Num calls  |  Total time (s)  |  Percentage %  |
//	-------------------------------------------------------------…
//	|  Total               |  -                  |  1234       |  5.4321          |  100 %         |
//	-------------------------------------------------------------…
//	|  training_step       |  0.0012345          |  938        |  1.158           |  21.317        |
//	…
func (s *Simple) Summary() string {
	rows := s.Report()
	width := len("Action")
	calls := 0
	for _, r := range rows {
		width = max(width, len(r.Action))
		calls += r.Calls
	}
	line := func(action, mean, calls, total, percent string) string {
		return fmt.Sprintf("|  %-*s  |  %-17s  |  %-9s  |  %-14s  |  %-12s  |\n", width, action, mean, calls, total, percent)
	}
	header := line("Action", "Mean duration (s)", "Num calls", "Total time (s)", "Percentage %")
	sep := strings.Repeat("-", len(header)-1) + "\n"
	var b strings.Builder
	if s.stage != "" {
		b.WriteString(strings.ToUpper(s.stage) + " ")
	}
	b.WriteString("Profiler Report\n")
	b.WriteString(sep + header + sep)
	b.WriteString(line("Total", "-", fmt.Sprint(calls), seconds(s.Elapsed()), "100 %"))
	b.WriteString(sep)
	for _, r := range rows {
		b.WriteString(line(r.Action, seconds(r.Mean), fmt.Sprint(r.Calls), seconds(r.Total), fmt.Sprintf("%.5g", r.Percent)))
	}
	b.WriteString(sep)
	return b.String()
}

// seconds formats d in seconds with five significant digits.
func seconds(d time.Duration) string { return fmt.Sprintf("%.5g", d.Seconds()) }
