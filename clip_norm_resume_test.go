package volt_test

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/internal/testutil"
)

// clipMLP is an 8-64-64-1 MLP: several layers, so that the global gradient
// norm sums more than two per-variable norms and its value depends on the
// order it sums them in.
type clipMLP struct{ boring }

func (m *clipMLP) forward(s *volt.Step, x *graph.Node) *graph.Node {
	for i := range 2 {
		x = activation.Relu(layers.DenseWithBias(s.Scope().In("hidden_%d", i), x, 64))
	}
	return layers.DenseWithBias(s.Scope().In("out"), x, 1)
}

func (m *clipMLP) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))})
}

func (m *clipMLP) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))}))
}

// clipResumeConfig trains clipMLP for epochs epochs with clipping set by
// algorithm ("" is off) at a threshold the gradients' norm exceeds, logging
// the gradients' 2-norms (TrackGradNorm).
func clipResumeConfig(epochs int, algorithm volt.ClipAlgorithm) volt.Config {
	cfg := quiet(volt.Config{MaxEpochs: epochs, TrackGradNorm: 2})
	if algorithm != "" {
		cfg.GradientClipVal, cfg.GradientClipAlgorithm = 0.05, algorithm
	}
	return cfg
}

// resumeClipFit resumes clipMLP from path for a second epoch in a fresh
// trainer and returns it.
func resumeClipFit(t *testing.T, path string, algorithm volt.ClipAlgorithm) *volt.Trainer {
	t.Helper()
	volt.SeedEverything(999) // the checkpoint must bring the seed back
	r := testutil.Fit(t, clipResumeConfig(2, algorithm), &clipMLP{}, resumeData(), volt.FromCheckpoint(path))
	return r
}

// TestResumeIsBitwiseWithClipping: training 2 epochs and training 1 epoch
// then resuming from its checkpoint for the second give the same weights bit
// for bit, with clipping by norm (whose global norm sums the variables in an
// order that must not depend on how the store was filled: by tracing, or by
// loading a checkpoint), by value and without clipping; in this process and
// in a new one. The tracked total norm, a sum over the variables too, is the
// same bit for bit.
func TestResumeIsBitwiseWithClipping(t *testing.T) {
	if path := os.Getenv("VOLT_CLIP_RESUME_CHILD"); path != "" {
		r := resumeClipFit(t, path, volt.ClipAlgorithm(os.Getenv("VOLT_CLIP_RESUME_ALGORITHM")))
		if err := r.SaveCheckpoint(os.Getenv("VOLT_CLIP_RESUME_OUT"), true); err != nil {
			t.Fatal(err)
		}
		return
	}
	tests := []struct {
		name       string
		algorithm  volt.ClipAlgorithm
		newProcess bool
	}{
		{"clip by norm", volt.ClipNorm, false},
		{"clip by norm, resumed in a new process", volt.ClipNorm, true},
		{"clip by value", volt.ClipValue, false},
		{"no clipping", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "epoch0.ckpt")
			volt.SeedEverything(11)
			defer volt.SeedEverything(0)
			cfg := clipResumeConfig(2, tc.algorithm)
			sv := &saver{path: path, atBatch: 8, when: "epoch", mem: &memLogger{}}
			cfg.Callbacks = []volt.Callback{sv}
			u := testutil.Fit(t, cfg, &clipMLP{}, resumeData())
			if !sv.saved {
				t.Fatal("the epoch-0 checkpoint was not saved")
			}
			want := weights(t, u)
			var got map[string][]byte
			if tc.newProcess {
				got = resumeInChild(t, path, dir, tc.algorithm)
			} else {
				r := resumeClipFit(t, path, tc.algorithm)
				got = weights(t, r)
				const total = "grad_2.0_norm_total"
				nu, okU := u.CallbackMetrics()[total]
				nr, okR := r.CallbackMetrics()[total]
				if !okU || !okR || math.Float64bits(nu) != math.Float64bits(nr) {
					t.Errorf("last %s: uninterrupted %v (%v), resumed %v (%v)", total, nu, okU, nr, okR)
				}
			}
			checked := 0
			for name, w := range want {
				g, ok := got[name]
				if !ok {
					continue // state a weights-only file leaves out
				}
				checked++
				if string(g) != string(w) {
					t.Errorf("variable %s differs after resuming", name)
				}
			}
			if checked < 6 {
				t.Errorf("compared %d variables, want the MLP's 6 at least", checked)
			}
		})
	}
}

// resumeInChild runs resumeClipFit in a new process (this test binary) and
// returns the weights it ended with, by variable path.
func resumeInChild(t *testing.T, path, dir string, algorithm volt.ClipAlgorithm) map[string][]byte {
	t.Helper()
	out := filepath.Join(dir, "child.ckpt")
	cmd := exec.Command(os.Args[0], "-test.run=^TestResumeIsBitwiseWithClipping$")
	cmd.Env = append(os.Environ(), "VOLT_CLIP_RESUME_CHILD="+path, "VOLT_CLIP_RESUME_OUT="+out,
		"VOLT_CLIP_RESUME_ALGORITHM="+string(algorithm))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, b)
	}
	f, err := checkpoint.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, ct := range f.Tensors {
		got[ct.Name] = ct.Data
	}
	return got
}
