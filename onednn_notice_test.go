package volt_test

import (
	"bytes"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/gokernels"
	"github.com/voltml/volt/internal/onednn"
	"github.com/voltml/volt/internal/onednn/onednntest"
	"github.com/voltml/volt/internal/testutil"
)

// convolving is the boring model with its 8 features also read as a 2×2
// image of 2 channels through a 1×1 convolution, in every step.
type convolving struct{ boring }

func convolved(s *volt.Step, b volt.Batch) *graph.Node {
	x := b.Input(0)
	image := graph.Reshape(x, x.Shape().Dimensions[0], 2, 2, 2)
	y := layers.Convolution(s.Scope().In("conv"), image).Channels(4).KernelSize(1).Done()
	return graph.ReduceAllMean(graph.Square(y))
}

func (m *convolving) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return graph.Add(m.boring.TrainingStep(s, b), convolved(s, b))
}

func (m *convolving) ValidationStep(s *volt.Step, b volt.Batch) { s.Log("val_conv", convolved(s, b)) }

func (m *convolving) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return graph.Add(m.boring.PredictStep(s, b), convolved(s, b))
}

// TestWarnsOnceWithoutOneDNN checks what a run whose convolutions oneDNN
// would take says when oneDNN cannot be loaded: one warning per process,
// naming why and how to install or silence it; nothing when VOLT_ONEDNN=off
// says so already, or when oneDNN runs them.
func TestWarnsOnceWithoutOneDNN(t *testing.T) {
	if err := gokernels.Installed(); err != nil {
		t.Skipf("volt's Go backend kernels are not installed: %v", err)
	}
	missing := errors.New("onednn: loading libdnnl.so.2: libdnnl.so.2: cannot open shared object file")
	for _, tc := range []struct {
		name     string
		missing  error
		disabled bool
		warnings int
	}{
		{"library missing", missing, false, 1},
		{"library missing, VOLT_ONEDNN=off", missing, true, 0},
		{"library loaded", nil, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.missing == nil {
				onednntest.Require(t)
			}
			defer onednn.SetUnavailableForTest(tc.missing)()
			defer gokernels.ResetNoticeForTest()
			env := ""
			if tc.disabled {
				env = "off"
			}
			t.Setenv("VOLT_ONEDNN", env)
			var buf bytes.Buffer
			cfg := quiet(volt.Config{MaxEpochs: 1})
			cfg.Log = slog.New(slog.NewTextHandler(&buf, nil))
			loaders := boringData()
			loaders.Val = nil // Fit alone: each kind of run must say it
			for _, run := range []struct {
				name string
				run  func(tr *volt.Trainer) error
			}{
				{"Fit", func(tr *volt.Trainer) error { return tr.Fit(t.Context(), &convolving{}, loaders) }},
				{"Validate", func(tr *volt.Trainer) error {
					_, err := tr.Validate(t.Context(), &convolving{}, boringData())
					return err
				}},
				{"Predict", func(tr *volt.Trainer) error {
					_, err := tr.Predict(t.Context(), &convolving{}, boringData())
					return err
				}},
			} {
				buf.Reset()
				gokernels.ResetNoticeForTest()
				for range 2 { // two trainers, one process: said once
					if err := run.run(testutil.NewTrainer(t, cfg)); err != nil {
						t.Fatal(err)
					}
				}
				said := buf.String()
				if n := strings.Count(said, gokernels.NoticeMessage); n != tc.warnings {
					t.Fatalf("%s: warned %d times, want %d:\n%s", run.name, n, tc.warnings, said)
				}
				if tc.warnings == 0 {
					continue
				}
				for _, want := range []string{"apt install libdnnl2", "VOLT_ONEDNN=off", "cannot open shared object file"} {
					if !strings.Contains(said, want) {
						t.Errorf("%s: the warning does not say %q:\n%s", run.name, want, said)
					}
				}
			}

			// A Predictor (what a service runs) says it too, on the logger a
			// trainer's Config.Log defaults to: slog's default here.
			path := filepath.Join(t.TempDir(), "conv.ckpt")
			if err := testutil.Fit(t, cfg, &convolving{}, loaders).SaveCheckpoint(path, true); err != nil {
				t.Fatal(err)
			}
			buf.Reset()
			gokernels.ResetNoticeForTest()
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
			for range 2 {
				p, err := volt.LoadPredictorModule(path, &convolving{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := p.Predict([][]float32{{1, 2, 3, 4, 5, 6, 7, 8}}); err != nil {
					t.Fatal(err)
				}
				p.Close()
			}
			if n := strings.Count(buf.String(), gokernels.NoticeMessage); n != tc.warnings {
				t.Errorf("Predictor: warned %d times, want %d:\n%s", n, tc.warnings, buf.String())
			}
		})
	}
}
