package profiler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// Advanced writes a CPU profile of the run whose samples carry the pprof
// label action=<the innermost action running> (samples outside every
// action have none), to <dir>/<stage>-cpu.pprof, and a heap profile taken
// when the run ends, after a garbage collection, to <dir>/<stage>-heap.pprof:
//
//	go tool pprof -tagfocus action=training_step fit-cpu.pprof
//	go tool pprof -tags fit-cpu.pprof   # time per action
//
// Goroutines started inside an action (the Go backend's workers) inherit its
// label. Go has one CPU profile per process: when one already runs (go
// test -cpuprofile, say) the labels go into it and no <stage>-cpu.pprof is
// written. The trainer's goroutine has no labels after Teardown.
type Advanced struct {
	stage, dir string
	cpu        *os.File                   // nil when another CPU profile was running
	running    bool                       // between Setup and Teardown
	labelled   map[string]context.Context // per action, made once
	stack      []context.Context
	stop       func() // end, bound once
	files      []string
}

// Setup starts the CPU profile.
func (a *Advanced) Setup(stage, dir string) error {
	a.stage, a.dir, a.files = stage, dir, nil
	a.labelled, a.stack = map[string]context.Context{}, a.stack[:0]
	a.stop = a.end
	f, err := create(dir, stage, "cpu.pprof")
	if err != nil {
		return fmt.Errorf("advanced profiler: %w", err)
	}
	a.cpu, a.running = f, true
	// StartCPUProfile fails only when a profile is running already.
	if pprof.StartCPUProfile(f) != nil {
		a.cpu = nil
		f.Close()
		if err := os.Remove(f.Name()); err != nil {
			return fmt.Errorf("advanced profiler: %w", err)
		}
	}
	return nil
}

// Start labels the goroutine with action.
func (a *Advanced) Start(action string) func() {
	ctx, ok := a.labelled[action]
	if !ok {
		ctx = pprof.WithLabels(context.Background(), pprof.Labels("action", action))
		a.labelled[action] = ctx
	}
	a.stack = append(a.stack, ctx)
	pprof.SetGoroutineLabels(ctx)
	return a.stop
}

// end restores the labels of the enclosing action.
func (a *Advanced) end() {
	n := len(a.stack)
	if n == 0 {
		return
	}
	a.stack = a.stack[:n-1]
	if n > 1 {
		pprof.SetGoroutineLabels(a.stack[n-2])
	} else {
		pprof.SetGoroutineLabels(context.Background())
	}
}

// Teardown stops the CPU profile and writes the heap profile.
func (a *Advanced) Teardown() error {
	a.stack = a.stack[:0]
	pprof.SetGoroutineLabels(context.Background())
	if !a.running {
		return errors.New("advanced profiler: Teardown without Setup")
	}
	a.running = false
	var err error
	if a.cpu != nil {
		pprof.StopCPUProfile()
		err = a.cpu.Close()
		a.files = append(a.files, a.cpu.Name())
		a.cpu = nil
	}
	heap, herr := create(a.dir, a.stage, "heap.pprof")
	if herr == nil {
		runtime.GC()
		herr = pprof.Lookup("heap").WriteTo(heap, 0)
		if cerr := heap.Close(); herr == nil {
			herr = cerr
		}
		a.files = append(a.files, heap.Name())
	}
	if err = errors.Join(err, herr); err != nil {
		return fmt.Errorf("advanced profiler: %w", err)
	}
	return nil
}

// Files returns the profiles the last Teardown wrote.
func (a *Advanced) Files() []string { return a.files }
