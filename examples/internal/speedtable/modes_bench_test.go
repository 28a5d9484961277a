package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/internal/zoo"
)

// zooBackendModes are the Go backend configurations BenchmarkZooBackendModes
// compares: one op at a time with each big op on every core, GoMLX's
// default (independent ops side by side when one graph runs alone), and
// volt's default, which chooses per graph (golower's
// ChooseOpsModePerGraph).
// The last two also tile shifted convolutions (internal/engine's
// loweringFor).
var zooBackendModes = []backendMode{
	{"sequential", "go:ops_sequential"},
	{"parallel", "go"},
	{"bygraph", "go:ops_by_graph"},
}

// backendMode is one backend configuration BenchmarkZooBackendModes times.
type backendMode struct{ name, config string }

// modesFlag replaces zooBackendModes for one run of the benchmark, to
// compare other configurations (a Go backend option, a worker count)
// the same way:
//
//	go test ./examples/internal/speedtable -run '^$' -bench 'ZooBackendModes/chargpt' -benchtime 40x -cpu 2 \
//		-modes 'bygraph=go:ops_by_graph;p1=go:ops_by_graph,parallelism=1'
var modesFlag = flag.String("modes", "",
	`backend configurations to compare instead of the default ones: "name=config;name=config…", the first the baseline of the ratios`)

// backendModes returns the configurations BenchmarkZooBackendModes
// compares: those of -modes, or zooBackendModes.
func backendModes() ([]backendMode, error) {
	if *modesFlag == "" {
		return zooBackendModes, nil
	}
	var modes []backendMode
	for _, pair := range strings.Split(*modesFlag, ";") {
		name, config, ok := strings.Cut(pair, "=")
		if !ok || name == "" || config == "" {
			return nil, fmt.Errorf("-modes: %q is not name=config (e.g. bygraph=go:ops_by_graph)", pair)
		}
		if slices.ContainsFunc(modes, func(m backendMode) bool { return m.name == name }) {
			return nil, fmt.Errorf("-modes: the name %q is used twice", name)
		}
		modes = append(modes, backendMode{name, config})
	}
	if len(modes) < 2 {
		return nil, fmt.Errorf("-modes: %q names %d configuration; give at least two to compare", *modesFlag, len(modes))
	}
	return modes, nil
}

// BenchmarkZooBackendModes times every zoo model's training step under
// each of zooBackendModes (or -modes) in one process: one Fit per mode, each on its
// own trainer, model and copy of the data, the fits taking turns step by
// step so that load from other processes hits all alike. It reports each
// mode's median step (sequential-ms, …) and, for the others, the median
// of the per-turn ratios to sequential (parallel/sequential, …): below 1,
// the mode is faster than one op at a time for that model. One op is one
// step of each mode after 3 untimed ones (the first compiles).
//
//	GOEXPERIMENT=simd go test ./examples/internal/speedtable -run '^$' -bench ZooBackendModes -benchtime 20x -cpu 2
//
// Run one -cpu value per process: a backend is created once per process
// and configuration, and sizes its worker pool and executors by the
// GOMAXPROCS of that moment (see oneGOMAXPROCS).
func BenchmarkZooBackendModes(b *testing.B) {
	const warmup = 3
	modes, err := backendModes()
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range zoo.Models {
		b.Run(m.Name, func(b *testing.B) {
			oneGOMAXPROCS(b)
			steps := warmup + b.N
			turns := make([]chan struct{}, len(modes))
			for i := range turns {
				turns[i] = make(chan struct{}, steps+2) // a send never blocks
			}
			clocks := make([]*turnClock, len(modes))
			trainers := make([]*volt.Trainer, len(modes))
			for i, mode := range modes {
				clocks[i] = &turnClock{mine: turns[i], next: turns[(i+1)%len(turns)]}
				cfg := m.QuietConfig()
				cfg.Backend, cfg.Callbacks = mode.config, []volt.Callback{clocks[i]}
				t, err := volt.NewTrainer(cfg)
				if err != nil {
					b.Fatal(err)
				}
				trainers[i] = t
			}
			turns[0] <- struct{}{}
			errs := make([]error, len(trainers))
			var wg sync.WaitGroup
			for i, t := range trainers {
				train := m.Loader(steps, rand.New(rand.NewPCG(1, 2)))
				wg.Go(func() {
					errs[i] = t.Fit(context.Background(), m.Module(), volt.Loaders{Train: train})
					if errs[i] != nil { // stop the others, which may be waiting for a turn
						for j, other := range trainers {
							if j != i {
								other.Stop("the other fit failed")
								turns[j] <- struct{}{}
							}
						}
					}
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					b.Fatalf("%s: %v", modes[i].config, err)
				}
			}
			b.ReportMetric(0, "ns/op")
			base := clocks[0].steps[warmup:]
			for i, mode := range modes {
				steps := clocks[i].steps[warmup:]
				b.ReportMetric(medianOf(steps)/1e6, mode.name+"-ms")
				if i == 0 {
					continue
				}
				ratios := make([]float64, len(steps))
				for j := range steps {
					ratios[j] = steps[j] / base[j]
				}
				b.ReportMetric(medianOf(ratios), mode.name+"/"+modes[0].name)
			}
		})
	}
}

// turnClock makes its fit wait for its turn before each training batch,
// times the batch, and passes the turn on after it.
type turnClock struct {
	mine, next chan struct{}
	start      time.Time
	steps      []float64 // ns per batch
}

// OnTrainBatchStart implements volt.OnTrainBatchStart.
func (c *turnClock) OnTrainBatchStart(*volt.Trainer, *data.Batch, int) error {
	<-c.mine
	c.start = time.Now()
	return nil
}

// OnTrainBatchEnd implements volt.OnTrainBatchEnd.
func (c *turnClock) OnTrainBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int) error {
	c.steps = append(c.steps, float64(time.Since(c.start)))
	c.next <- struct{}{}
	return nil
}

var (
	_ volt.OnTrainBatchStart = (*turnClock)(nil)
	_ volt.OnTrainBatchEnd   = (*turnClock)(nil)
)

// backendsProcs is the GOMAXPROCS under which this process first ran a
// benchmark that creates backends.
var backendsProcs procsGuard

// procsGuard remembers the first GOMAXPROCS it is shown (0: none yet).
type procsGuard int

// check returns an error when procs differs from the first GOMAXPROCS g
// was shown.
func (g *procsGuard) check(procs int) error {
	if *g == 0 {
		*g = procsGuard(procs)
	}
	if procs != int(*g) {
		return fmt.Errorf("GOMAXPROCS %d, but this process created its backends at %d, which sized them: "+
			"run one -cpu value per process", procs, int(*g))
	}
	return nil
}

// oneGOMAXPROCS fails b when it runs at another GOMAXPROCS than this
// process's first such benchmark: volt's backends are created once per
// process and configuration, with a worker pool and executor goroutines
// sized by the GOMAXPROCS of that moment, so that under -cpu 1,2 the
// second value would time backends sized for the first (measured: the
// default backend created at one thread and timed at two read 1.10–1.21×
// the step of one created at two).
func oneGOMAXPROCS(b *testing.B) {
	if err := backendsProcs.check(runtime.GOMAXPROCS(0)); err != nil {
		b.Fatal(err)
	}
}
