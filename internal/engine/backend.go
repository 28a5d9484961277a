package engine

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend"       // the pure-Go backend is always available.
	_ "github.com/voltml/volt/internal/convgrad" // GoMLX's convolution gradient, corrected for even kernels.
	"github.com/voltml/volt/internal/gokernels"
	"github.com/voltml/volt/internal/golower"
)

// BackendEnvVar names the environment variable that selects the backend when
// the configuration leaves it empty (GoMLX's own convention).
const BackendEnvVar = compute.ConfigEnvVar

// DefaultBackend is the backend used when neither the configuration nor the
// environment names one: GoMLX's pure-Go backend, whose execution mode volt
// chooses per graph (OpsByGraph): a graph with a convolution, or with
// matrix products of at least MinSideBySideMatmulMACs on average
// when GOMAXPROCS > 1, runs its independent ops side by side, on one
// executor goroutine per core (executors.go); any other one op at a time,
// each op using every core ("ops_sequential").
//
// Neither mode wins everywhere (ops_by_graph.go has the figures).
// Measured with volt's fit loop, the modes taking turns step by step in
// one process (BenchmarkZooBackendModes in
// examples/internal/speedtable, 2 runs of 20 steps, 2026-12-05, a 2-core
// AMD EPYC VM), the default's step was, of one op at a time's, at two
// threads: examples/resnet 0.81–0.84×, examples/mnist's MLP 0.77–0.80×,
// the autoencoder 0.82–0.88×, examples/cnn 0.93–0.97×, the transformer
// 0.98–1.00× and the LSTM 0.98–1.02×; at one thread 0.89–0.93× for the
// ResNet and 0.97–1.02× for the others. ops_sequential was volt's default
// until then: bench.BenchmarkBackendModes had measured a logistic
// regression at 0.75× one op at a time, and the LSTM loses up to 1.49×
// side by side.
// Config.Backend or $GOMLX_BACKEND ("go" for GoMLX's default mode,
// "go:ops_sequential", "go:ops_parallel") override it.
//
// Within an op, the Go backend splits only DotGeneral (and convolutions,
// large transposes, Where and some unary ops) over min(GOMAXPROCS, its
// worker pool of 2×GOMAXPROCS at creation) goroutines; elementwise binary
// ops (the optimizer's update), reductions, gathers and the generic
// transpose run on one core. At GOMAXPROCS=1 the matmul is ~52% of the
// MNIST MLP's step and ~30% of the small CNN's, so a second core can buy
// at most 1.35× and 1.18× one op at a time. Each split op waits for its slowest part: with
// the cores shared by other processes (load average 2.4–3.6 on 2 cores),
// bench.BenchmarkIntraOpParallelism at GOMAXPROCS=2 measured splitting
// 1.15–1.20× slower than one core per op on the MLP and ~1.08× on the CNN
// (0.88× on the MLP at load 1.3). "go:ops_sequential,parallelism=1" keeps
// every op on one core, for machines whose cores are busy anyway.
const DefaultBackend = "go:" + OpsByGraph

// ResolveBackendConfig returns the backend configuration volt will use:
// config if set, else $GOMLX_BACKEND, else DefaultBackend.
func ResolveBackendConfig(config string) string {
	if config != "" {
		return config
	}
	if env := os.Getenv(BackendEnvVar); env != "" {
		return env
	}
	return DefaultBackend
}

// CheckBackendConfig reports whether the backend named in config (a
// "name[:options]" string) is compiled into this program, listing the ones
// that are.
func CheckBackendConfig(config string) error {
	name, _, _ := strings.Cut(config, ":")
	available := compute.List()
	slices.Sort(available)
	if slices.Contains(available, name) {
		return nil
	}
	hint := ""
	if name == "xla" {
		hint = "; the XLA backend needs a PJRT plugin and a build with -tags xla"
	}
	return fmt.Errorf("backend %q is not compiled into this program; available: %s%s",
		name, strings.Join(available, ", "), hint)
}

var (
	backendsMu sync.Mutex
	backends   = map[string]compute.Backend{}
)

// Backend returns the backend for config, creating it once per process:
// backends hold thread pools and device handles, so trainers share them.
func Backend(config string) (compute.Backend, error) {
	config = ResolveBackendConfig(config)
	if err := CheckBackendConfig(config); err != nil {
		return nil, err
	}
	key := config
	if os.Getenv(RecycleEnvVar) == "off" {
		key += " " + RecycleEnvVar + "=off"
	}
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if b, ok := backends[key]; ok {
		return b, nil
	}
	gomlxConfig, byGraph, err := withoutOpsByGraph(config)
	if err != nil {
		return nil, err
	}
	if byGraph {
		gomlxConfig = withExecutorsPerCore(gomlxConfig, runtime.GOMAXPROCS(0))
	}
	name, _, _ := strings.Cut(config, ":")
	b, err := compute.NewWithConfig(gomlxConfig)
	if err != nil {
		if name == "go" && strings.Contains(err.Error(), "unknown configuration option") {
			// GoMLX lists its own options; volt's default adds one.
			return nil, fmt.Errorf("backend %q: %w; volt adds %s (its default: %q)", config, err, OpsByGraph, DefaultBackend)
		}
		return nil, fmt.Errorf("backend %q: %w", config, err)
	}
	if name == "go" {
		rules := golower.DefaultRules()
		if os.Getenv(FastConvEnvVar) == "off" {
			rules.Disabled = true // batch normalization is still lowered: the Go backend has none
		}
		wrapped := golower.WrapWith(b, rules, loweringFor(config)).(*golower.Backend)
		if byGraph {
			if err := chooseOpsModePerGraph(wrapped); err != nil {
				return nil, fmt.Errorf("backend %q: %w", config, err)
			}
		}
		b = wrapped
	}
	backends[key] = b
	return b, nil
}

// loweringFor returns golower's lowering for a Go backend configuration.
// Shifted convolutions are built in cache-sized tiles (golower's
// ShiftTileBytes) only where the backend runs independent ops side by
// side ("go", "go:ops_parallel", and OpsByGraph, which runs graphs with
// convolutions so), which runs the tiles on all cores: examples/resnet's step at
// GOMAXPROCS=2 took 0.81–1.02× (median 0.89×) as long with tiles under
// "go" and "go:ops_parallel" as without them under "go:ops_sequential"
// (8 paired processes on a 2-core AMD EPYC); under ops_sequential the
// tiles run one after the other, each split over the cores, and took
// 1.03–1.33× (median 1.18×, 10 pairs) as long at GOMAXPROCS=2 and about
// as long at 1.
func loweringFor(config string) golower.Lowering {
	var l golower.Lowering
	_, options, _ := strings.Cut(config, ":")
	if slices.Contains(strings.Split(options, ","), "ops_sequential") {
		l.ShiftTileBytes = -1
	}
	l.NoRecycle = os.Getenv(RecycleEnvVar) == "off"
	l.ConvKernel = gokernels.RunsConv
	l.PoolKernel = gokernels.RunsPooling
	return l
}

// RecycleEnvVar names the environment variable that, set to "off" when a
// backend is first created, makes the Go backend drop the host update's
// spent gradients as before instead of giving their buffers back to its
// pool (golower's recycle.go); a backend with and one without are
// separate, so one process can compare them.
const RecycleEnvVar = "VOLT_RECYCLE"

// FastConvEnvVar names the environment variable that, set to "off", keeps
// the Go backend's own convolution and pooling loops instead of
// internal/golower's lowering onto its matmul (14–19× faster on a small
// CNN; see that package). Batch normalization, which the Go backend lacks,
// is lowered by the same wrapper either way.
const FastConvEnvVar = "VOLT_FASTCONV"
