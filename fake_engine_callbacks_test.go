package volt_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// These tests run Fit and Predict with the callbacks on the fake engine
// (volt.UseFakeEngine): the monitored values are scripted, no graph is
// compiled, and what is tested is when the loops validate and what the
// callbacks decide.

// untracedModule has every step; none may be traced on the fake engine.
type untracedModule struct{}

func (untracedModule) TrainingStep(*volt.Step, volt.Batch) *graph.Node { panic("traced") }
func (untracedModule) ValidationStep(*volt.Step, volt.Batch)           { panic("traced") }
func (untracedModule) PredictStep(*volt.Step, volt.Batch) *graph.Node  { panic("traced") }

// counting returns a loader of n examples in batches of 2.
func counting(n int) *data.DataLoader {
	examples := make(data.Slice, n)
	for i := range examples {
		examples[i] = data.Example{Inputs: []data.Field{{Value: []float32{float32(i)}}}, Labels: []data.Field{{Value: []float32{1}}}}
	}
	return &data.DataLoader{Dataset: examples, BatchSize: 2}
}

// fakeTrainer returns a quiet trainer on the fake engine, whose validation
// steps log val_loss = losses[epoch].
func fakeTrainer(t *testing.T, cfg volt.Config, losses []float64) (*volt.Trainer, *volt.FakeEval) {
	t.Helper()
	cfg.DisableLoggers, cfg.DisableModelSummary = true, true
	cfg.Log = slog.New(slog.DiscardHandler)
	tr := testutil.NewTrainer(t, cfg)
	eval := &volt.FakeEval{Log: func(tr *volt.Trainer, dl int) map[string]float64 {
		return map[string]float64{"val_loss": losses[min(tr.CurrentEpoch(), len(losses)-1)]}
	}}
	volt.UseFakeEngine(tr, eval)
	return tr, eval
}

func TestEarlyStoppingOnFakeEngine(t *testing.T) {
	es := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "val_loss", Patience: 2})
	tr, eval := fakeTrainer(t, volt.Config{MaxEpochs: 10, DisableCheckpointing: true, Callbacks: []volt.Callback{es}},
		[]float64{5, 4, 4.5, 4.2, 4.1, 3})
	if err := tr.Fit(context.Background(), untracedModule{}, volt.Loaders{Train: counting(6), Val: []data.Loader{counting(4)}}); err != nil {
		t.Fatal(err)
	}
	// Best 4 at epoch 1; epochs 2 and 3 do not improve: stop after epoch 3.
	if got := tr.CurrentEpoch(); got != 4 || !tr.ShouldStop() {
		t.Errorf("Fit ended after %d epochs (ShouldStop %t), want 4 and a stop", got, tr.ShouldStop())
	}
	// The sanity check's 2 batches, then 2 batches per epoch.
	if got := len(eval.Calls); got != 2+4*2 {
		t.Errorf("%d validation steps ran, want 10: %v", got, eval.Calls)
	}
}

func TestCheckValEveryNEpochOnFakeEngine(t *testing.T) {
	var epochs []int
	rec := &epochsValidated{epochs: &epochs}
	tr, _ := fakeTrainer(t, volt.Config{MaxEpochs: 5, CheckValEveryNEpoch: 2, NumSanityValSteps: new(0),
		DisableCheckpointing: true, Callbacks: []volt.Callback{rec}}, []float64{1})
	if err := tr.Fit(context.Background(), untracedModule{}, volt.Loaders{Train: counting(4), Val: []data.Loader{counting(2)}}); err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 3}; !slices.Equal(epochs, want) {
		t.Errorf("validated in epochs %v, want %v", epochs, want)
	}
}

// epochsValidated records the epoch of every validation run.
type epochsValidated struct{ epochs *[]int }

func (e *epochsValidated) OnValidationStart(t *volt.Trainer) error {
	*e.epochs = append(*e.epochs, t.CurrentEpoch())
	return nil
}

func TestModelCheckpointKeepsTheBestOnFakeEngine(t *testing.T) {
	dir := t.TempDir()
	mc := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{Dirpath: dir, Monitor: "val_loss", SaveTopK: new(1)})
	tr, _ := fakeTrainer(t, volt.Config{MaxEpochs: 4, Callbacks: []volt.Callback{mc}}, []float64{3, 1, 2, 1.5})
	if err := tr.Fit(context.Background(), untracedModule{}, volt.Loaders{Train: counting(4), Val: []data.Loader{counting(2)}}); err != nil {
		t.Fatal(err)
	}
	best := filepath.Base(mc.BestModelPath())
	if !strings.HasPrefix(best, "epoch=1-") {
		t.Errorf("best checkpoint %s, want epoch 1's (val_loss 1)", best)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.ckpt"))
	if len(files) != 1 {
		t.Errorf("checkpoints on disk %v, want only the best", files)
	}
}

func TestPredictOnFakeEngine(t *testing.T) {
	tr, eval := fakeTrainer(t, volt.Config{}, []float64{1})
	preds, err := tr.Predict(context.Background(), untracedModule{}, volt.Loaders{Predict: []data.Loader{counting(5), counting(2)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) != 2 || len(preds[0]) != 3 || len(preds[1]) != 1 {
		t.Fatalf("predictions per loader: %d loaders, want 3 and 1 batches", len(preds))
	}
	if want := "predict/0/2 predict/0/2 predict/0/1 predict/1/2"; strings.Join(eval.Calls, " ") != want {
		t.Errorf("predict steps %v, want %s", eval.Calls, want)
	}
}
