package volt_test

import (
	"context"
	"iter"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/metrics"
)

// fixedLoader yields the same batches every epoch.
type fixedLoader struct{ batches []*data.Batch }

func (l *fixedLoader) NumBatches() int { return len(l.batches) }

func (l *fixedLoader) Batches(_ context.Context, _, skip int) iter.Seq2[*data.Batch, error] {
	return func(yield func(*data.Batch, error) bool) {
		for _, b := range l.batches[skip:] {
			if !yield(b, nil) {
				return
			}
		}
	}
}

// goldenF1 returns a case of the metrics package's torchmetrics goldens
// whose targets are labels: its batches and torchmetrics' (scalar) value.
func goldenF1(t *testing.T, name string) ([]*data.Batch, float64) {
	t.Helper()
	g := readGolden(t, name)
	return g.batches, g.value[0]
}

// metricModule's predictions are its inputs (logits) times a weight that
// stays 1 (the loss has no gradient), so its metrics are torchmetrics' of the
// golden batches. It logs macro F1 and accuracy in every step.
type metricModule struct {
	f1, acc metrics.Metric
	traces  map[volt.RunningStage]int
	opts    []volt.LogOption // of the training step's logs
}

func newMetricModule(t *testing.T, opts ...volt.LogOption) *metricModule {
	t.Helper()
	f1, err := metrics.NewF1(metrics.Multiclass(4), metrics.Macro)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := metrics.NewAccuracy(metrics.Multiclass(4), metrics.Micro)
	if err != nil {
		t.Fatal(err)
	}
	return &metricModule{f1: f1, acc: acc, traces: map[volt.RunningStage]int{}, opts: opts}
}

func (m *metricModule) preds(s *volt.Step, b volt.Batch) *graph.Node {
	m.traces[s.Stage()]++
	w := s.Scope().VariableWithValue("w", float32(1)).NodeValue(s.Graph())
	return graph.Mul(b.Input(0), graph.ConvertDType(w, b.Input(0).DType()))
}

func (m *metricModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	p := m.preds(s, b)
	s.LogMetric("train_f1", m.f1, p, b.Label(0), m.opts...)
	s.LogMetric("train_acc", m.acc, p, b.Label(0), m.opts...)
	return graph.MulScalar(graph.ReduceAllSum(p), 0)
}

func (m *metricModule) ValidationStep(s *volt.Step, b volt.Batch) {
	p := m.preds(s, b)
	s.LogMetric("val_f1", m.f1, p, b.Label(0))
	s.LogMetric("val_acc", m.acc, p, b.Label(0))
}

func (m *metricModule) TestStep(s *volt.Step, b volt.Batch) {
	s.LogMetric("test_f1", m.f1, m.preds(s, b), b.Label(0))
}

// TestLogMetricEpochF1IsTorchmetrics: the epoch F1 logged through the
// trainer is torchmetrics' F1 of all the epoch's samples, not the mean of the
// batches' F1s; the state is reset for every run.
func TestLogMetricEpochF1IsTorchmetrics(t *testing.T) {
	batches, want := goldenF1(t, "mc_f1_macro")
	tr := testutil.NewTrainer(t, quiet(volt.Config{}))
	m := newMetricModule(t)
	for run := range 2 { // the second run starts from a reset state
		res, err := tr.Validate(t.Context(), m, volt.Loaders{Val: []data.Loader{&fixedLoader{batches}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res[0]["val_f1"]; math.Abs(got-want) > 1e-6 {
			t.Errorf("run %d: val_f1 = %.9f, torchmetrics %.9f", run, got, want)
		}
	}
	res, err := tr.Test(t.Context(), m, volt.Loaders{Test: []data.Loader{&fixedLoader{batches}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res[0]["test_f1"]; math.Abs(got-want) > 1e-6 {
		t.Errorf("test_f1 = %.9f, torchmetrics %.9f", got, want)
	}
	// The batch-size-weighted mean of each batch's F1 (each batch validated
	// alone) is another number: averaging would be visible.
	var sum, n float64
	for _, b := range batches {
		res, err := tr.Validate(t.Context(), m, volt.Loaders{Val: []data.Loader{&fixedLoader{[]*data.Batch{b}}}})
		if err != nil {
			t.Fatal(err)
		}
		sum += res[0]["val_f1"] * float64(b.Size)
		n += float64(b.Size)
	}
	if mean := sum / n; math.Abs(mean-want) < 1e-3 {
		t.Errorf("mean of batch F1s %.6f is close to the epoch F1 %.6f: the golden cannot tell them apart", mean, want)
	}
}

// TestLogMetricNoRetracePerBatch: evaluation metric state is carried as
// program inputs, so validating batches of one shape traces the step twice
// (creating the state, then with the state as an input), not once per batch,
// and a second run with unchanged weights not at all.
func TestLogMetricNoRetracePerBatch(t *testing.T) {
	batches, _ := goldenF1(t, "mc_f1_macro")
	var same []*data.Batch
	for range 6 {
		same = append(same, batches[0])
	}
	tr := testutil.NewTrainer(t, quiet(volt.Config{}))
	m := newMetricModule(t)
	for run, want := range []int{2, 2} {
		if _, err := tr.Validate(t.Context(), m, volt.Loaders{Val: []data.Loader{&fixedLoader{same}}}); err != nil {
			t.Fatal(err)
		}
		if got := m.traces[volt.RunningValidate]; got != want {
			t.Errorf("after run %d: %d traces of ValidationStep for %d batches of one shape, want %d", run, got, len(same), want)
		}
	}
}

// TestLogMetricMonitoredByCallbacks: a validation metric's epoch value is in
// CallbackMetrics, where EarlyStopping reads it (strict: a missing monitor
// is an error); F1 is torchmetrics', accuracy the one computed here.
func TestLogMetricMonitoredByCallbacks(t *testing.T) {
	batches, wantF1 := goldenF1(t, "mc_f1_macro")
	var right, total float64
	for _, b := range batches {
		right += batchAccuracy(b) * float64(b.Size)
		total += float64(b.Size)
	}
	wantAcc := right / total
	es := callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "val_f1", Mode: "max", Patience: 1})
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 6, Callbacks: []volt.Callback{es}}))
	m := newMetricModule(t, volt.OnStep(false), volt.OnEpoch(true))
	dm := volt.Loaders{Train: &fixedLoader{batches}, Val: []data.Loader{&fixedLoader{batches}}}
	if err := tr.Fit(t.Context(), m, dm); err != nil {
		t.Fatal(err)
	}
	cb := tr.CallbackMetrics()
	for name, want := range map[string]float64{"val_f1": wantF1, "train_f1": wantF1, "val_acc": wantAcc, "train_acc": wantAcc} {
		if got, ok := cb[name]; !ok || math.Abs(got-want) > 1e-6 {
			t.Errorf("CallbackMetrics[%q] = %v (present %v), want %v", name, got, ok, want)
		}
	}
	// val_f1 never improves after the first epoch: patience 1 stops at the second.
	if tr.CurrentEpoch() >= 5 {
		t.Errorf("EarlyStopping on val_f1 did not stop the run (epoch %d)", tr.CurrentEpoch())
	}
}

// batchAccuracy is the top-1 accuracy of one golden batch, computed here.
func batchAccuracy(b *data.Batch) float64 {
	logits := tensors.MustCopyFlatData[float32](b.Inputs[0])
	labels := tensors.MustCopyFlatData[int32](b.Labels[0])
	right := 0
	for i, y := range labels {
		best := 0
		for c := 1; c < 4; c++ {
			if logits[i*4+c] > logits[i*4+best] {
				best = c
			}
		}
		if int32(best) == y {
			right++
		}
	}
	return float64(right) / float64(len(labels))
}

// TestLogMetricStepCadence: a metric logged per step and per epoch reaches
// the loggers as name_step on the logging cadence's steps, with that batch's
// own value, and as name_epoch at the epoch's end with the epoch's value.
func TestLogMetricStepCadence(t *testing.T) {
	batches, wantAcc := goldenF1(t, "mc_accuracy_micro")
	mem := &memLogger{}
	cfg := quiet(volt.Config{MaxEpochs: 2, LogEveryNSteps: 2, Loggers: []logger.Logger{mem}})
	cfg.DisableLoggers = false
	tr := testutil.NewTrainer(t, cfg)
	m := newMetricModule(t, volt.OnStep(true), volt.OnEpoch(true))
	if err := tr.Fit(t.Context(), m, volt.Loaders{Train: &fixedLoader{batches}}); err != nil {
		t.Fatal(err)
	}
	var steps []int64
	epochs := 0
	for i, row := range mem.rows {
		if v, ok := row["train_acc_step"]; ok {
			steps = append(steps, mem.steps[i])
			want := batchAccuracy(batches[mem.steps[i]%int64(len(batches))])
			if math.Abs(v-want) > 1e-9 {
				t.Errorf("step %d: train_acc_step %v, the batch's accuracy %v", mem.steps[i], v, want)
			}
		}
		if v, ok := row["train_acc_epoch"]; ok {
			epochs++
			if math.Abs(v-wantAcc) > 1e-6 {
				t.Errorf("train_acc_epoch %v, torchmetrics %v (state not reset per epoch?)", v, wantAcc)
			}
		}
	}
	if want := []int64{1, 3, 5, 7}; !slicesEqual(steps, want) {
		t.Errorf("train_acc_step logged at steps %v, want %v (every 2nd step)", steps, want)
	}
	if epochs != 2 {
		t.Errorf("train_acc_epoch logged %d times, want 2", epochs)
	}
	// The last logged step value (step 7, the second epoch's last batch) is
	// also the one callbacks see.
	if got, want := tr.CallbackMetrics()["train_acc_step"], batchAccuracy(batches[3]); got != want {
		t.Errorf("CallbackMetrics[train_acc_step] = %v, the last logged batch's accuracy %v", got, want)
	}
}

func slicesEqual(a, b []int64) bool {
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

// TestLogMetricResumeMidEpoch: a checkpoint taken mid-epoch holds the
// training metrics' state; the resumed run's epoch values are bitwise the
// uninterrupted run's.
func TestLogMetricResumeMidEpoch(t *testing.T) {
	batches, _ := goldenF1(t, "mc_f1_macro")
	path := filepath.Join(t.TempDir(), "metric.ckpt")
	dm := func() volt.Loaders { return volt.Loaders{Train: &fixedLoader{batches}} }
	cfg := quiet(volt.Config{MaxEpochs: 2})
	full := &memLogger{}
	sv := &saver{path: path, atBatch: 6, when: "batch", mem: full}
	testResume(t, cfg, sv, dm)
	// Without the state the resumed epoch would cover two batches only.
	fresh := testutil.Fit(t, cfg, newMetricModule(t, volt.OnStep(false), volt.OnEpoch(true)), volt.Loaders{Train: &fixedLoader{batches[2:]}})
	r := testutil.Fit(t, cfg, newMetricModule(t, volt.OnStep(false), volt.OnEpoch(true)), dm(), volt.FromCheckpoint(path))
	if fresh.CallbackMetrics()["train_f1"] == r.CallbackMetrics()["train_f1"] {
		t.Errorf("train_f1 of the last two batches alone equals the resumed epoch's: the test cannot tell")
	}
}

// TestLogMetricResumeAfterLastBatch: a checkpoint taken at the validation
// after an epoch's last batch resumes with no batch left in the epoch; the
// epoch value still comes from the restored state.
func TestLogMetricResumeAfterLastBatch(t *testing.T) {
	batches, _ := goldenF1(t, "mc_f1_macro")
	path := filepath.Join(t.TempDir(), "metric.ckpt")
	dm := func() volt.Loaders {
		return volt.Loaders{Train: &fixedLoader{batches}, Val: []data.Loader{&fixedLoader{batches[:1]}}}
	}
	sv := &saver{path: path, atBatch: 4, when: "validation", mem: &memLogger{}}
	testResume(t, quiet(volt.Config{MaxEpochs: 1}), sv, dm) // the resumed epoch is the last
}

// testResume runs Fit with sv saving a checkpoint on the way, then resumes
// a fresh trainer from it, and compares the training metrics bitwise.
func testResume(t *testing.T, cfg volt.Config, sv *saver, dm func() volt.Loaders) {
	t.Helper()
	path := sv.path
	cfg.Callbacks = []volt.Callback{sv}
	u := testutil.NewTrainer(t, cfg)
	opts := []volt.LogOption{volt.OnStep(false), volt.OnEpoch(true)}
	if err := u.Fit(t.Context(), newMetricModule(t, opts...), dm()); err != nil {
		t.Fatal(err)
	}
	if !sv.saved {
		t.Fatal("the checkpoint was not saved")
	}
	// The state is in the checkpoint, not among the model's variables.
	f, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var stateTensors []string
	for _, ct := range f.Tensors {
		if strings.Contains(ct.Name, "train_f1") || strings.Contains(ct.Name, "train_acc") {
			stateTensors = append(stateTensors, ct.Name)
		}
	}
	if len(stateTensors) == 0 || !strings.HasPrefix(stateTensors[0], "/volt/metric_state/state/") {
		t.Errorf("checkpoint metric state tensors %q, want some under /volt/metric_state/state/", stateTensors)
	}
	for v := range u.Store().IterVariables() {
		if strings.Contains(v.Path(), "train_") || (v.Trainable && v.Path() != "/w") {
			t.Errorf("store variable %s (trainable %v): metric state must stay out of the model", v.Path(), v.Trainable)
		}
	}
	cfg.Callbacks = nil
	r := testutil.Fit(t, cfg, newMetricModule(t, opts...), dm(), volt.FromCheckpoint(path))
	for _, name := range []string{"train_f1", "train_acc"} {
		a, b := u.CallbackMetrics()[name], r.CallbackMetrics()[name]
		if math.Float64bits(a) != math.Float64bits(b) {
			t.Errorf("%s: uninterrupted %v, resumed %v", name, a, b)
		}
	}
}

// collectionModule logs a metrics.Collection in its validation step.
type collectionModule struct {
	metricModule
	c *metrics.Collection
}

func (m *collectionModule) ValidationStep(s *volt.Step, b volt.Batch) {
	s.LogMetrics(m.c, m.preds(s, b), b.Label(0))
}

// TestLogMetricsCollection: a collection's metrics share one state and each
// logs its epoch value (macro F1: torchmetrics'; micro F1: the accuracy,
// computed here).
func TestLogMetricsCollection(t *testing.T) {
	batches, wantMacro := goldenF1(t, "mc_f1_macro")
	var right, total float64
	for _, b := range batches {
		right += batchAccuracy(b) * float64(b.Size)
		total += float64(b.Size)
	}
	wantMicro := right / total // micro F1 of single-label predictions is the accuracy
	macro, err := metrics.NewF1(metrics.Multiclass(4), metrics.Macro)
	if err != nil {
		t.Fatal(err)
	}
	micro, err := metrics.NewF1(metrics.Multiclass(4), metrics.Micro)
	if err != nil {
		t.Fatal(err)
	}
	c, err := metrics.NewCollection(metrics.Named{Name: "val_f1_macro", Metric: macro}, metrics.Named{Name: "val_f1_micro", Metric: micro})
	if err != nil {
		t.Fatal(err)
	}
	tr := testutil.NewTrainer(t, quiet(volt.Config{}))
	m := &collectionModule{metricModule: *newMetricModule(t), c: c}
	res, err := tr.Validate(t.Context(), m, volt.Loaders{Val: []data.Loader{&fixedLoader{batches}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"val_f1_macro": wantMacro, "val_f1_micro": wantMicro} {
		if got := res[0][name]; math.Abs(got-want) > 1e-6 {
			t.Errorf("%s = %.9f, want %.9f", name, got, want)
		}
	}
}

// badMetricModule logs what its validation step is given.
type badMetricModule struct {
	metricModule
	log func(s *volt.Step, preds, target *graph.Node)
}

func (m *badMetricModule) ValidationStep(s *volt.Step, b volt.Batch) {
	m.log(s, m.preds(s, b), b.Label(0))
}

// TestLogMetricErrors: what LogMetric cannot log is an error naming it.
func TestLogMetricErrors(t *testing.T) {
	perClass, err := metrics.NewF1(metrics.Multiclass(4), metrics.NoAverage)
	if err != nil {
		t.Fatal(err)
	}
	macro, err := metrics.NewF1(metrics.Multiclass(4), metrics.Macro)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		log  func(s *volt.Step, preds, target *graph.Node)
		want string
	}{
		{"a vector value", func(s *volt.Step, p, y *graph.Node) { s.LogMetric("val_f1", perClass, p, y) },
			`logged metric "val_f1": metric value has shape [4]`},
		{"a name logged twice", func(s *volt.Step, p, y *graph.Node) {
			s.Log("val_f1", graph.ReduceAllMean(p))
			s.LogMetric("val_f1", macro, p, y)
		}, `"val_f1" is logged twice in the same step`},
		{"a nil metric", func(s *volt.Step, p, y *graph.Node) { s.LogMetric("val_f1", nil, p, y) }, "nil metric"},
	}
	batches, _ := goldenF1(t, "mc_f1_macro")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := testutil.NewTrainer(t, quiet(volt.Config{}))
			m := &badMetricModule{metricModule: *newMetricModule(t), log: tc.log}
			_, err := tr.Validate(t.Context(), m, volt.Loaders{Val: []data.Loader{&fixedLoader{batches}}})
			if err == nil || !contains(err.Error(), tc.want) {
				t.Fatalf("Validate error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// manualMetricModule is metricModule in manual optimization.
type manualMetricModule struct{ *metricModule }

func (m *manualMetricModule) AutomaticOptimization() bool { return false }

func (m *manualMetricModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.metricModule.TrainingStep(s, b)
	s.Optimizers()[0].Step(l)
	return l
}

// TestLogMetricTrainingStepForms: the training metric's epoch value is
// torchmetrics' whatever form the step takes: one program, the two programs
// of gradient accumulation sharing the state, the split step of data
// parallelism (the state is carried by the gradient program), or a manual
// step.
func TestLogMetricTrainingStepForms(t *testing.T) {
	batches, want := goldenF1(t, "mc_f1_macro")
	tests := []struct {
		name       string
		accumulate int
		split      bool
		manual     bool
		precision  string
	}{
		{"one program", 1, false, false, ""},
		{"accumulation over 3 batches", 3, false, false, ""},
		{"split step", 1, true, false, ""},
		{"manual optimization", 1, false, true, ""},
		{"bf16-mixed (float32 masters, made by a forward pass)", 1, false, false, "bf16-mixed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2, AccumulateGradBatches: tc.accumulate, Precision: tc.precision}))
			calls := 0
			if tc.split {
				volt.SetGradientReducer(tr, 1, func(g []*tensors.Tensor) ([]*tensors.Tensor, error) { calls++; return g, nil })
			}
			var m volt.Module = newMetricModule(t, volt.OnStep(false), volt.OnEpoch(true))
			if tc.manual {
				m = &manualMetricModule{m.(*metricModule)}
			}
			if err := tr.Fit(t.Context(), m, volt.Loaders{Train: &fixedLoader{batches}}); err != nil {
				t.Fatal(err)
			}
			if got := tr.CallbackMetrics()["train_f1"]; math.Abs(got-want) > 1e-6 {
				t.Errorf("train_f1 = %.9f, torchmetrics %.9f", got, want)
			}
			if tc.split && calls == 0 {
				t.Error("the gradient reducer never ran: the step was not split")
			}
		})
	}
}
