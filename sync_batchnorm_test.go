package volt_test

import (
	"bytes"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/batchnorm"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

// twoBatchNorms is a regression through two batch normalizations (the
// input's, and a hidden layer's with momentum 0.3), trained with SGD and
// momentum; without them when plain.
type twoBatchNorms struct{ plain bool }

func (m twoBatchNorms) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	x := b.Input(0)
	if !m.plain {
		x = batchnorm.New(s.Scope().In("bn"), x, -1).Done()
	}
	x = graph.Tanh(layers.Dense(s.Scope().In("hidden"), x, false, 5))
	if !m.plain {
		x = batchnorm.New(s.Scope().In("bn2"), x, -1).Momentum(0.3).Done()
	}
	pred := layers.DenseWithBias(s.Scope().In("out"), x, 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (twoBatchNorms) ConfigureOptimizers() volt.Optimizers {
	o := optim.SGD(0.05)
	o.Momentum = 0.9
	return volt.Optimize(o)
}

// regressionData is 24 seeded examples of 3 features with offsets and
// spreads (the statistics move far from 0 and 1), in batches of 4.
func regressionData() volt.Loaders {
	rng := rand.New(rand.NewPCG(23, 1))
	ds := make(data.Slice, 24)
	for i := range ds {
		x := make([]float32, 3)
		y := float32(0)
		for j := range x {
			x[j] = float32(rng.NormFloat64()*float64(j+1) + 3*float64(j) - 2)
			y += 0.1 * float32(j+1) * x[j]
		}
		ds[i] = data.Example{Inputs: []data.Field{{Value: x}}, Labels: []data.Field{{Value: []float32{y}}}}
	}
	return volt.Loaders{Train: &data.DataLoader{Dataset: ds, BatchSize: 4}}
}

// identityReducer makes tr's training steps split as under data-parallel
// training, with one rank (the reduction is the identity).
func identityReducer(tr *volt.Trainer) {
	volt.SetGradientReducer(tr, 1, func(g []*tensors.Tensor) ([]*tensors.Tensor, error) { return g, nil })
}

// fitSync trains m with SyncBatchNorm set as given; split runs the split
// step of data-parallel training on one rank. It returns the weights and
// what volt logged.
func fitSync(t *testing.T, m volt.Module, syncBN, split bool) (map[string][]byte, string) {
	t.Helper()
	var logged bytes.Buffer
	cfg := quiet(volt.Config{MaxEpochs: 2, SyncBatchNorm: syncBN})
	cfg.Log = slog.New(slog.NewTextHandler(&logged, nil))
	tr := testutil.NewTrainer(t, cfg)
	if split {
		identityReducer(tr)
	}
	if err := tr.Fit(t.Context(), m, regressionData()); err != nil {
		t.Fatal(err)
	}
	w, err := testutil.Weights(tr.Store())
	if err != nil {
		t.Fatal(err)
	}
	return w, logged.String()
}

// TestSyncBatchNormOneProcess: in one process (Devices 0 or 1) SyncBatchNorm
// changes nothing, as in Lightning: bitwise the same weights and running
// statistics.
func TestSyncBatchNormOneProcess(t *testing.T) {
	plain, _ := fitSync(t, twoBatchNorms{}, false, false)
	synced, _ := fitSync(t, twoBatchNorms{}, true, false)
	if len(plain) < 8 {
		t.Fatalf("%d variables: the module did not train", len(plain))
	}
	for path, w := range plain {
		if !bytes.Equal(w, synced[path]) {
			t.Errorf("%s differs with SyncBatchNorm in one process", path)
		}
	}
}

// TestSyncBatchNormStagesOnOneRank: the synchronised step (statistics and
// adjoint sweeps, then the split step with the union's statistics as inputs)
// on one rank, whose union is its own batch, trains as the plain split step
// within float rounding (the statistics are combined in float64 on the host,
// and normalised by other ops than the backend's batch normalization):
// 1.2e-6 after these 12 steps of SGD with momentum, where a missing
// adjoint term was 1e-2 away.
func TestSyncBatchNormStagesOnOneRank(t *testing.T) {
	plain, _ := fitSync(t, twoBatchNorms{}, false, true)
	synced, _ := fitSync(t, twoBatchNorms{}, true, true)
	worst := 0.0
	for path, w := range plain {
		if strings.HasSuffix(path, "num_batches_tracked") {
			if !bytes.Equal(w, synced[path]) {
				t.Errorf("%s differs", path)
			}
			continue
		}
		a, b := float32s(w), float32s(synced[path])
		if len(a) != len(b) || len(a) == 0 {
			t.Fatalf("%s: %d values, synchronised %d", path, len(a), len(b))
		}
		for i := range a {
			worst = max(worst, math.Abs(a[i]-b[i])/max(1, math.Abs(a[i])))
		}
	}
	if worst > 1e-5 {
		t.Errorf("the synchronised step ends %.2g away from the plain one", worst)
	}
}

// float32s reads little-endian float32 values.
func float32s(raw []byte) []float64 {
	out := make([]float64, len(raw)/4)
	for i := range out {
		b := raw[4*i:]
		out[i] = float64(math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24))
	}
	return out
}

// TestSyncBatchNormWithoutBatchNorm: a module without batch normalization
// trains as without SyncBatchNorm (bitwise), and volt says once that there
// is nothing to synchronise.
func TestSyncBatchNormWithoutBatchNorm(t *testing.T) {
	plain, _ := fitSync(t, twoBatchNorms{plain: true}, false, true)
	synced, logged := fitSync(t, twoBatchNorms{plain: true}, true, true)
	for path, w := range plain {
		if !bytes.Equal(w, synced[path]) {
			t.Errorf("%s differs with SyncBatchNorm", path)
		}
	}
	if n := strings.Count(logged, "Config.SyncBatchNorm is set but the training step has no batchnorm layer"); n != 1 {
		t.Errorf("said %d times that there is no batchnorm layer, want once:\n%s", n, logged)
	}
}

// manualBatchNorm is twoBatchNorms in manual optimization.
type manualBatchNorm struct{ twoBatchNorms }

func (manualBatchNorm) AutomaticOptimization() bool { return false }

func (m manualBatchNorm) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.twoBatchNorms.TrainingStep(s, b)
	s.Optimizers()[0].Step(l)
	return l
}

// TestSyncBatchNormRefusesManualOptimization: under data-parallel training
// (here one rank's split step) SyncBatchNorm with manual optimization is an
// error naming the field.
func TestSyncBatchNormRefusesManualOptimization(t *testing.T) {
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, SyncBatchNorm: true}))
	identityReducer(tr)
	err := tr.Fit(t.Context(), manualBatchNorm{}, regressionData())
	if err == nil || !strings.Contains(err.Error(), "Config.SyncBatchNorm is not supported with manual optimization") {
		t.Fatalf("Fit: %v, want the SyncBatchNorm refusal", err)
	}
}

// TestSyncBatchNormRefusesTBPTT: SyncBatchNorm with TruncatedBPTTSteps under
// data-parallel training (one rank's split step) is an error naming both
// fields.
func TestSyncBatchNormRefusesTBPTT(t *testing.T) {
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, TruncatedBPTTSteps: 3, SyncBatchNorm: true}))
	identityReducer(tr)
	err := tr.Fit(t.Context(), &carry{}, loaderOf(sequences(8, 7), 4))
	if err == nil || !strings.Contains(err.Error(), "Config.SyncBatchNorm is not supported with Config.TruncatedBPTTSteps=3") {
		t.Fatalf("Fit: %v, want the SyncBatchNorm refusal", err)
	}
}
