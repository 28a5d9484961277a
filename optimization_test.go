package volt_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// floats returns every float64 variable's values, keyed by path.
func floats(t *testing.T, tr *volt.Trainer, prefix string) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	for v := range tr.Store().IterVariables() {
		if !strings.HasPrefix(v.Path(), prefix) || v.DType() != dtypes.Float64 {
			continue
		}
		val, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		out[v.Path()] = tensors.MustCopyFlatData[float64](val)
	}
	return out
}

func fitBoring(t *testing.T, cfg volt.Config, dm volt.DataModule, m volt.Module) *volt.Trainer {
	t.Helper()
	volt.SeedEverything(3)
	t.Cleanup(func() { volt.SeedEverything(0) })
	tr := testutil.Fit(t, quiet(cfg), m, dm)
	return tr
}

func loaderOf(ds data.Dataset, batch int) volt.Loaders {
	return volt.Loaders{Train: &data.DataLoader{Dataset: ds, BatchSize: batch}}
}

func TestAccumulationEqualsLargeBatch(t *testing.T) {
	ds := regression(24, 5)
	for _, k := range []int{2, 3, 6} {
		small := fitBoring(t, volt.Config{MaxEpochs: 3, Precision: "64-true", AccumulateGradBatches: k}, loaderOf(ds, 24/k), &boring{})
		large := fitBoring(t, volt.Config{MaxEpochs: 3, Precision: "64-true"}, loaderOf(ds, 24), &boring{})
		if small.GlobalStep() != 3 || large.GlobalStep() != 3 {
			t.Fatalf("K=%d: global steps %d and %d, want 3 (one per epoch)", k, small.GlobalStep(), large.GlobalStep())
		}
		a, b := floats(t, small, "/dense"), floats(t, large, "/dense")
		for path, va := range a {
			for i := range va {
				if d := math.Abs(va[i] - b[path][i]); d > 1e-12 {
					t.Errorf("K=%d %s[%d]: accumulated %v vs large batch %v (diff %g)", k, path, i, va[i], b[path][i], d)
				}
			}
		}
	}
}

func TestAccumulationPartialWindowSteps(t *testing.T) {
	// 5 batches per epoch with K=3: windows {0,1,2} and {3,4}: 2 steps per epoch.
	tr := fitBoring(t, volt.Config{MaxEpochs: 2, AccumulateGradBatches: 3}, loaderOf(regression(20, 1), 4), &boring{})
	if tr.GlobalStep() != 4 {
		t.Errorf("GlobalStep = %d, want 4", tr.GlobalStep())
	}
	if got := tr.Progress().TrainBatch.Total.Completed; got != 10 {
		t.Errorf("batches = %d, want 10", got)
	}
}

// delta returns the per-element change of /dense/weights after one SGD(lr=1) step.
func deltaAfterOneStep(t *testing.T, cfg volt.Config) []float64 {
	t.Helper()
	cfg.MaxSteps = 1
	cfg.Precision = "64-true"
	before := fitBoring(t, volt.Config{MaxSteps: 1, Precision: "64-true", GradientClipVal: 1e-300}, loaderOf(regression(16, 4), 16), &boring{LR: 1e-300})
	after := fitBoring(t, cfg, loaderOf(regression(16, 4), 16), &boring{LR: 1})
	w0, w1 := floats(t, before, "/dense")["/dense/dense/weights"], floats(t, after, "/dense")["/dense/dense/weights"]
	d := make([]float64, len(w0))
	for i := range d {
		d[i] = w1[i] - w0[i]
	}
	return d
}

func TestGradientClipping(t *testing.T) {
	t.Run("norm", func(t *testing.T) {
		d := deltaAfterOneStep(t, volt.Config{GradientClipVal: 1e-3})
		var sq float64
		for _, x := range d {
			sq += x * x
		}
		// The bias shares the global norm budget, so the weights' part is <= 1e-3.
		if n := math.Sqrt(sq); n > 1e-3 || n < 1e-4 {
			t.Errorf("weight update norm %g, want in (1e-4, 1e-3]", n)
		}
	})
	t.Run("value", func(t *testing.T) {
		d := deltaAfterOneStep(t, volt.Config{GradientClipVal: 1e-3, GradientClipAlgorithm: volt.ClipValue})
		hit := 0
		for _, x := range d {
			if math.Abs(x) > 1e-3*(1+1e-12) {
				t.Errorf("element update %g exceeds 1e-3", x)
			}
			if math.Abs(math.Abs(x)-1e-3) < 1e-15 {
				hit++
			}
		}
		if hit == 0 {
			t.Error("no element was clipped to exactly 1e-3")
		}
	})
}

func TestTrackGradNorm(t *testing.T) {
	for _, p := range []float64{1, 2, math.Inf(1)} {
		tr := fitBoring(t, volt.Config{MaxSteps: 1, LogEveryNSteps: 1, TrackGradNorm: p, Precision: "64-true"}, loaderOf(regression(16, 4), 16), &boring{})
		name := map[float64]string{1: "grad_1.0_norm", 2: "grad_2.0_norm", math.Inf(1): "grad_inf_norm"}[p]
		lm := tr.LoggedMetrics()
		w, okW := lm[name+"/dense/dense/weights"]
		b, okB := lm[name+"/dense/dense/biases"]
		total, okT := lm[name+"_total"]
		if !okW || !okB || !okT {
			t.Fatalf("p=%v: missing norms in %v", p, lm)
		}
		var want float64
		switch p {
		case 1:
			want = w + b
		case 2:
			want = math.Hypot(w, b)
		default:
			want = math.Max(w, b)
		}
		if math.Abs(total-want) > 1e-9*want {
			t.Errorf("p=%v: total %v, want %v from per-parameter norms %v, %v", p, total, want, w, b)
		}
	}
}

// nanAt returns a dataset whose label is NaN in example i.
func nanAt(n, i int) data.Slice {
	ds := regression(n, 9)
	ds[i].Labels = []data.Field{{Value: []float32{float32(math.NaN())}}}
	return ds
}

// sqrtZero has a finite loss but a NaN gradient (0 * d sqrt(0)).
type sqrtZero struct{ boring }

func (m *sqrtZero) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.boring.TrainingStep(s, b)
	w := s.Scope().Store().GetVariable("/dense/dense/weights").NodeValue(s.Graph())
	zero := graph.ReduceAllSum(graph.Mul(graph.ZerosLike(w), graph.Sqrt(graph.Sub(w, w))))
	return graph.Add(l, zero)
}

func TestTerminateOnNaN(t *testing.T) {
	tests := []struct {
		name   string
		cfg    volt.Config
		module volt.Module
		ds     data.Dataset
		want   string
	}{
		{"loss", volt.Config{TerminateOnNaN: true}, &boring{}, nanAt(16, 9), "TerminateOnNaN: the loss is NaN at epoch 0, batch 2 (global step 2)"},
		{"gradient", volt.Config{DetectAnomaly: true}, &sqrtZero{}, regression(16, 1), "the gradient of /dense/dense/weights is not finite at epoch 0, batch 0"},
		{"parameter", volt.Config{TerminateOnNaN: true}, &boring{LR: 1e300}, regression(16, 1), "the parameter /dense/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quiet(tc.cfg)
			cfg.MaxEpochs = 2
			tr := testutil.NewTrainer(t, cfg)
			err := tr.Fit(t.Context(), tc.module, loaderOf(tc.ds, 4))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fit error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// Without the flag, training goes on through the NaN.
	tr := fitBoring(t, volt.Config{MaxEpochs: 1}, loaderOf(nanAt(16, 9), 4), &boring{})
	if tr.GlobalStep() != 4 {
		t.Errorf("without TerminateOnNaN: %d steps, want 4", tr.GlobalStep())
	}
}
