package profiler

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/trace"
	"strconv"
	"time"
)

// Trace records a Go execution trace of the run, with a task named
// "volt <stage>" and a region per action (the "User-defined regions" of
// go tool trace <dir>/<stage>-trace.out), and the same spans as Chrome
// trace events, one "B" and one "E" per action, in
// <dir>/<stage>-trace.json (open it in Perfetto or chrome://tracing).
//
// When an execution trace is already running (go test -trace), the task
// and regions go into it and no <stage>-trace.out is written. Spans a
// panic left open (a failed run's) end in the Chrome trace when an
// enclosing span ends, or at Teardown; their regions stay open.
type Trace struct {
	stage, dir string
	traceFile  *os.File // nil when another trace was running
	task       *trace.Task
	ctx        context.Context
	start      time.Time
	stack      []span
	names      map[string][]byte
	json       *os.File
	w          *bufio.Writer
	buf        []byte
	first      bool
	files      []string
}

// span is an open action.
type span struct {
	name   []byte // JSON-quoted
	region *trace.Region
}

// Setup starts the execution trace and the JSON file.
func (t *Trace) Setup(stage, dir string) error {
	t.stage, t.dir, t.files = stage, dir, nil
	t.names, t.stack = map[string][]byte{}, t.stack[:0]
	js, err := create(dir, stage, "trace.json")
	if err != nil {
		return fmt.Errorf("trace profiler: %w", err)
	}
	t.json, t.w, t.first = js, bufio.NewWriter(js), true
	t.w.WriteString(`{"displayTimeUnit":"ms","traceEvents":[`)
	t.traceFile = nil
	if !trace.IsEnabled() {
		f, err := create(dir, stage, "trace.out")
		if err == nil {
			if err = trace.Start(f); err != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
		if err != nil {
			js.Close()
			return fmt.Errorf("trace profiler: %w", err)
		}
		t.traceFile = f
	}
	t.ctx, t.task = trace.NewTask(context.Background(), "volt "+stage)
	t.start = time.Now()
	t.event(`{"name":"process_name","ph":"M","pid":1,"tid":1,"args":{"name":` + strconv.Quote("volt "+stage) + `}}`)
	return nil
}

// Start opens a region and writes a "B" event.
func (t *Trace) Start(action string) func() {
	name, ok := t.names[action]
	if !ok {
		name, _ = json.Marshal(action)
		t.names[action] = name
	}
	t.stack = append(t.stack, span{name: name, region: trace.StartRegion(t.ctx, action)})
	t.spanEvent('B', name)
	depth := len(t.stack)
	return func() { t.end(depth) }
}

// end closes the span at depth (1 is the outermost) and writes its "E"
// event. Spans still open inside it were left by a panic that skipped their
// stops: they are abandoned first.
func (t *Trace) end(depth int) {
	if len(t.stack) < depth {
		return // abandoned already
	}
	for len(t.stack) > depth {
		t.abandon()
	}
	s := t.stack[depth-1]
	t.stack = t.stack[:depth-1]
	s.region.End()
	t.spanEvent('E', s.name)
}

// abandon ends the innermost span in the Chrome trace only: its region may
// have begun on another goroutine (the loader's iterator), where alone it
// may end, so the execution trace leaves it open.
func (t *Trace) abandon() {
	n := len(t.stack)
	s := t.stack[n-1]
	t.stack = t.stack[:n-1]
	t.spanEvent('E', s.name)
}

// spanEvent writes a "B" or "E" event of the span named name, now.
func (t *Trace) spanEvent(phase byte, name []byte) {
	b := append(t.buf[:0], `{"name":`...)
	b = append(b, name...)
	b = append(b, `,"cat":"volt","ph":"`...)
	b = append(b, phase)
	b = append(b, `","ts":`...)
	b = strconv.AppendFloat(b, float64(time.Since(t.start).Nanoseconds())/1e3, 'f', 3, 64)
	b = append(b, `,"pid":1,"tid":1}`...)
	t.buf = b
	t.eventBytes(b)
}

// event writes one JSON event.
func (t *Trace) event(e string) {
	t.buf = append(t.buf[:0], e...)
	t.eventBytes(t.buf)
}

// eventBytes writes one JSON event, comma-separated from the previous one.
func (t *Trace) eventBytes(e []byte) {
	if !t.first {
		t.w.WriteString(",\n")
	}
	t.first = false
	t.w.Write(e)
}

// Teardown ends the open spans, the task and the trace, and closes the files.
func (t *Trace) Teardown() error {
	if t.json == nil {
		return errors.New("trace profiler: Teardown without Setup")
	}
	for len(t.stack) > 0 {
		t.abandon()
	}
	t.task.End()
	var errs []error
	if t.traceFile != nil {
		trace.Stop()
		errs = append(errs, t.traceFile.Close())
		t.files = append(t.files, t.traceFile.Name())
		t.traceFile = nil
	}
	t.w.WriteString("]}\n")
	errs = append(errs, t.w.Flush(), t.json.Close())
	t.files = append(t.files, t.json.Name())
	t.json = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("trace profiler: %w", err)
	}
	return nil
}

// Files returns the traces the last Teardown wrote.
func (t *Trace) Files() []string { return t.files }
