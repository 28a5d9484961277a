package volt_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/optim"
)

// hostUpdateModule is a two-layer regression model whose optimizer setup a
// seed draws: the kind, its options, a parameter group with its own
// learning-rate scale and weight decay, and a scheduler.
type hostUpdateModule struct {
	setup volt.Optimizers
}

func (m *hostUpdateModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	h := graph.Tanh(layers.DenseWithBias(s.Scope().In("hidden"), b.Input(0), 6))
	pred := layers.DenseWithBias(s.Scope().In("out"), h, 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (m *hostUpdateModule) ConfigureOptimizers() volt.Optimizers { return m.setup }

// drawOptimizers returns a seeded optimizer setup and its description.
func drawOptimizers(r *rand.Rand) (volt.Optimizers, string) {
	lr := []float64{0.1, 0.01, 3e-3}[r.IntN(3)]
	var o *optim.Optimizer
	switch r.IntN(5) {
	case 0:
		o = optim.SGD(lr)
	case 1:
		o = optim.SGD(lr).WithMomentum(0.9).WithDampening([]float64{0, 0.1}[r.IntN(2)])
	case 2:
		o = optim.SGD(lr).WithMomentum(0.8).WithNesterov()
	case 3:
		o = optim.Adam(lr).WithBetas(0.9, []float64{0.999, 0.95}[r.IntN(2)])
	default:
		o = optim.AdamW(lr).WithBetas(0.9, 0.99)
	}
	if r.IntN(2) == 0 {
		o = o.WithWeightDecay([]float64{1e-4, 0.1}[r.IntN(2)])
	}
	setup := volt.OptimizerSetup{Optimizer: o}
	if r.IntN(2) == 0 {
		wd := []float64{0, 0.05}[r.IntN(2)]
		setup.Groups = []volt.ParamGroup{{Params: []string{"/out"}, LRScale: []float64{0.1, 2}[r.IntN(2)], WeightDecay: &wd}}
	}
	if r.IntN(2) == 0 {
		setup.Scheduler = optim.NewStepLR(2, 0.5)
	}
	return volt.Optimizers{setup}, fmt.Sprintf("%s lr=%g momentum=%g nesterov=%v wd=%g groups=%d scheduler=%v",
		o.Kind, o.LR, o.Momentum, o.Nesterov, o.WeightDecay, len(setup.Groups), setup.Scheduler != nil)
}

// TestHostUpdateEqualsTracedUpdate trains seeded configurations (optimizer
// kind and options, a parameter group, a scheduler, accumulation, clipping,
// partial batches) twice on the pure-Go backend, with the optimizer step on
// the host (the default) and traced (VOLT_HOST_UPDATE=off), and requires
// every variable, optimizer state included, and every logged loss to be
// bitwise equal.
func TestHostUpdateEqualsTracedUpdate(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 38))
		opts, about := drawOptimizers(r)
		cfg := volt.Config{MaxEpochs: 3, AccumulateGradBatches: 1 + r.IntN(2)}
		if r.IntN(2) == 0 {
			cfg.GradientClipVal = 0.5
			cfg.GradientClipAlgorithm = []volt.ClipAlgorithm{volt.ClipNorm, volt.ClipValue}[r.IntN(2)]
		}
		about += fmt.Sprintf(" accumulate=%d clip=%g/%s", cfg.AccumulateGradBatches, cfg.GradientClipVal, cfg.GradientClipAlgorithm)
		t.Run(strconv.Itoa(seed), func(t *testing.T) {
			t.Logf("%s", about)
			run := func(hostUpdate string) (map[string][]float64, []float64) {
				t.Setenv(engine.HostUpdateEnvVar, hostUpdate)
				recorder := &lossRecorder{}
				c := cfg
				c.Callbacks = []volt.Callback{recorder}
				tr := fitBoring(t, c, loaderOf(regression(22, uint64(seed)), 4), &hostUpdateModule{setup: opts})
				return storeValues(t, tr), recorder.values
			}
			hostVars, hostLosses := run("")
			tracedVars, tracedLosses := run("off")
			if len(hostVars) != len(tracedVars) {
				t.Fatalf("host update left %d variables, traced %d", len(hostVars), len(tracedVars))
			}
			for path, want := range tracedVars {
				got, ok := hostVars[path]
				if !ok {
					t.Fatalf("variable %s missing after the host update", path)
				}
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("%s[%d]: host %v, traced %v", path, i, got[i], want[i])
					}
				}
			}
			if fmt.Sprint(hostLosses) != fmt.Sprint(tracedLosses) {
				t.Fatalf("losses differ:\nhost   %v\ntraced %v", hostLosses, tracedLosses)
			}
		})
	}
}

// lossRecorder records each training batch's loss.
type lossRecorder struct{ values []float64 }

func (l *lossRecorder) OnTrainBatchEnd(_ *volt.Trainer, out *volt.StepOutput, _ *data.Batch, _ int) error {
	l.values = append(l.values, out.Loss())
	return nil
}

// storeValues returns every variable of tr's store as float64s, by path.
func storeValues(t *testing.T, tr *volt.Trainer) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	for v := range tr.Store().IterVariables() {
		val, err := v.Value()
		if err != nil {
			t.Fatalf("reading %s: %v", v.Path(), err)
		}
		var flat []float64
		val.ConstFlatData(func(f any) {
			switch f := f.(type) {
			case []float32:
				for _, x := range f {
					flat = append(flat, float64(x))
				}
			case []float64:
				flat = append(flat, f...)
			case []int64:
				for _, x := range f {
					flat = append(flat, float64(x))
				}
			}
		})
		out[v.Path()] = flat
	}
	return out
}
