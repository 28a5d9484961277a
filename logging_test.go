package volt_test

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
)

// memLogger records every row it receives.
type memLogger struct {
	rows    []map[string]float64
	steps   []int64
	hparams map[string]any
	status  string
}

func (l *memLogger) LogMetrics(m map[string]float64, step int64) error {
	l.rows = append(l.rows, m)
	l.steps = append(l.steps, step)
	return nil
}
func (l *memLogger) LogHyperparams(p map[string]any) error { l.hparams = p; return nil }
func (l *memLogger) Save() error                           { return nil }
func (l *memLogger) Finalize(status string) error          { l.status = status; return nil }

// sizeModule logs the batch size and the first input's mean in many ways, so
// the reductions can be computed by hand.
type sizeModule struct{ boring }

func (m *sizeModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	x := b.Input(0)
	size := graph.ConvertDType(graph.Const(x.Graph(), float32(x.Shape().Dimensions[0])), x.DType())
	s.Log("size", size, volt.OnStep(true), volt.OnEpoch(true))
	s.Log("size_sum", size, volt.OnStep(false), volt.OnEpoch(true), volt.Reduce(volt.Sum))
	s.Log("size_max", size, volt.OnStep(false), volt.OnEpoch(true), volt.Reduce(volt.Max))
	s.Log("size_min", size, volt.OnStep(false), volt.OnEpoch(true), volt.Reduce(volt.Min))
	s.Log("hidden", size, volt.NoLogger)
	return m.boring.TrainingStep(s, b)
}

func (m *sizeModule) ValidationStep(s *volt.Step, b volt.Batch) {
	x := b.Input(0)
	s.Log("val_size", graph.ConvertDType(graph.Const(x.Graph(), float32(x.Shape().Dimensions[0])), x.DType()))
}

// OnTrainEpochEnd logs a host value at epoch level.
func (m *sizeModule) OnTrainEpochEnd(t *volt.Trainer) error {
	t.Log("host_epoch", float64(t.CurrentEpoch()))
	return nil
}

func TestLoggingReductionsAndCadence(t *testing.T) {
	mem := &memLogger{}
	cfg := quiet(volt.Config{MaxEpochs: 2, LogEveryNSteps: 2})
	cfg.DisableLoggers = false
	cfg.Loggers = []logger.Logger{mem}
	tr := testutil.NewTrainer(t, cfg)
	// 10 training examples in batches of 4: sizes 4, 4, 2. Two validation
	// loaders: 5 examples in batches of 2 (2, 2, 1) and 3 in one batch.
	dm := volt.Loaders{
		Train: &data.DataLoader{Dataset: regression(10, 1), BatchSize: 4},
		Val: []data.Loader{
			&data.DataLoader{Dataset: regression(5, 2), BatchSize: 2},
			&data.DataLoader{Dataset: regression(3, 3), BatchSize: 4},
		},
	}
	if err := tr.Fit(t.Context(), &sizeModule{}, dm); err != nil {
		t.Fatal(err)
	}
	cm := tr.CallbackMetrics()
	want := map[string]float64{
		"size_epoch":                (4*4 + 4*4 + 2*2) / 10.0, // mean weighted by batch size
		"size_step":                 2,
		"size":                      (4*4 + 4*4 + 2*2) / 10.0,
		"size_sum":                  10,
		"size_max":                  4,
		"size_min":                  2,
		"hidden":                    2,
		"host_epoch":                1,
		"val_size/dataloader_idx_0": (2*2 + 2*2 + 1*1) / 5.0,
		"val_size/dataloader_idx_1": 3,
	}
	for k, v := range want {
		if got, ok := cm[k]; !ok || math.Abs(got-v) > 1e-6 {
			t.Errorf("CallbackMetrics[%q] = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if _, ok := tr.LoggedMetrics()["hidden"]; ok {
		t.Error("a NoLogger value reached the loggers")
	}
	if pb := tr.ProgressBarMetrics(); pb["train_loss"] == 0 {
		t.Errorf("ProgBar value missing: %v", pb)
	}
	// 6 optimization steps with LogEveryNSteps=2: step rows after steps 2, 4, 6
	// (logged at step index 1, 3, 5); validation and epoch rows at 2 and 5.
	var stepRows, epochRows, valRows []int64
	for i, r := range mem.rows {
		if _, ok := r["size_step"]; ok {
			stepRows = append(stepRows, mem.steps[i])
		}
		if _, ok := r["size_epoch"]; ok {
			epochRows = append(epochRows, mem.steps[i])
			if r["epoch"] != float64(len(epochRows)-1) {
				t.Errorf("epoch row %d has epoch %v", len(epochRows)-1, r["epoch"])
			}
		}
		if _, ok := r["val_size/dataloader_idx_1"]; ok {
			valRows = append(valRows, mem.steps[i])
		}
	}
	if !equalInts(stepRows, []int64{1, 3, 5}) || !equalInts(epochRows, []int64{2, 5}) || !equalInts(valRows, []int64{2, 5}) {
		t.Errorf("rows at steps: step values %v, epoch values %v, validation %v; want [1 3 5], [2 5], [2 5]", stepRows, epochRows, valRows)
	}
	if mem.status != "success" {
		t.Errorf("Finalize status %q", mem.status)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// loaderHookModule logs host values in the validation hooks around and
// inside the loaders' batches.
type loaderHookModule struct{ boring }

func (m *loaderHookModule) OnValidationEpochStart(t *volt.Trainer) error {
	t.Log("epoch_start", 2)
	return nil
}

func (m *loaderHookModule) OnValidationBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _, _ int) error {
	t.Log("batch_end", 3)
	return nil
}

func (m *loaderHookModule) OnValidationEpochEnd(t *volt.Trainer) error {
	t.Log("epoch_end", 4)
	return nil
}

// TestLogOutsideLoaderBatchesHasNoLoaderSuffix: with two validation loaders,
// a value logged in a loader's batch hook is named per loader, one logged in
// the epoch's start or end hook is not (Lightning 2.2.5: "be/dataloader_idx_0",
// "be/dataloader_idx_1", "ee", "es"). volt named the epoch-end value after
// the last loader.
func TestLogOutsideLoaderBatchesHasNoLoaderSuffix(t *testing.T) {
	tr, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 1, NumSanityValSteps: volt.Ptr(0)}))
	if err != nil {
		t.Fatal(err)
	}
	dm := volt.Loaders{
		Train: &data.DataLoader{Dataset: regression(4, 1), BatchSize: 2},
		Val: []data.Loader{
			&data.DataLoader{Dataset: regression(4, 2), BatchSize: 2},
			&data.DataLoader{Dataset: regression(4, 3), BatchSize: 2},
		},
	}
	if err := tr.Fit(t.Context(), &loaderHookModule{}, dm); err != nil {
		t.Fatal(err)
	}
	cm := tr.CallbackMetrics()
	for _, name := range []string{"epoch_start", "epoch_end", "batch_end/dataloader_idx_0", "batch_end/dataloader_idx_1"} {
		if _, ok := cm[name]; !ok {
			t.Errorf("CallbackMetrics has no %q: %v", name, cm)
		}
	}
	for _, name := range []string{"epoch_start/dataloader_idx_0", "epoch_end/dataloader_idx_1", "batch_end"} {
		if _, ok := cm[name]; ok {
			t.Errorf("CallbackMetrics has %q: %v", name, cm)
		}
	}
}
