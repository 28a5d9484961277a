package volt_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// recorder implements every hook and appends "<who>.<Hook>[args]" to a log.
type recorder struct {
	who string
	log *[]string
}

func (r recorder) add(format string, args ...any) {
	*r.log = append(*r.log, r.who+"."+fmt.Sprintf(format, args...))
}

func (r recorder) Setup(t *volt.Trainer, s volt.Stage) error    { r.add("Setup(%s)", s); return nil }
func (r recorder) Teardown(t *volt.Trainer, s volt.Stage) error { r.add("Teardown(%s)", s); return nil }
func (r recorder) OnFitStart(*volt.Trainer) error               { r.add("OnFitStart"); return nil }
func (r recorder) OnFitEnd(*volt.Trainer) error                 { r.add("OnFitEnd"); return nil }
func (r recorder) OnSanityCheckStart(*volt.Trainer) error       { r.add("OnSanityCheckStart"); return nil }
func (r recorder) OnSanityCheckEnd(*volt.Trainer) error         { r.add("OnSanityCheckEnd"); return nil }
func (r recorder) OnTrainStart(*volt.Trainer) error             { r.add("OnTrainStart"); return nil }
func (r recorder) OnTrainEnd(*volt.Trainer) error               { r.add("OnTrainEnd"); return nil }
func (r recorder) OnTrainEpochStart(*volt.Trainer) error        { r.add("OnTrainEpochStart"); return nil }
func (r recorder) OnTrainEpochEnd(*volt.Trainer) error          { r.add("OnTrainEpochEnd"); return nil }
func (r recorder) OnTrainBatchStart(_ *volt.Trainer, _ *data.Batch, i int) error {
	r.add("OnTrainBatchStart(%d)", i)
	return nil
}
func (r recorder) OnTrainBatchEnd(_ *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i int) error {
	r.add("OnTrainBatchEnd(%d)", i)
	return nil
}
func (r recorder) OnValidationStart(*volt.Trainer) error { r.add("OnValidationStart"); return nil }
func (r recorder) OnValidationEnd(*volt.Trainer) error   { r.add("OnValidationEnd"); return nil }
func (r recorder) OnValidationEpochStart(*volt.Trainer) error {
	r.add("OnValidationEpochStart")
	return nil
}
func (r recorder) OnValidationEpochEnd(*volt.Trainer) error {
	r.add("OnValidationEpochEnd")
	return nil
}
func (r recorder) OnValidationBatchStart(_ *volt.Trainer, _ *data.Batch, i, dl int) error {
	r.add("OnValidationBatchStart(%d,%d)", i, dl)
	return nil
}
func (r recorder) OnValidationBatchEnd(_ *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i, dl int) error {
	r.add("OnValidationBatchEnd(%d,%d)", i, dl)
	return nil
}
func (r recorder) OnTestStart(*volt.Trainer) error      { r.add("OnTestStart"); return nil }
func (r recorder) OnTestEnd(*volt.Trainer) error        { r.add("OnTestEnd"); return nil }
func (r recorder) OnTestEpochStart(*volt.Trainer) error { r.add("OnTestEpochStart"); return nil }
func (r recorder) OnTestEpochEnd(*volt.Trainer) error   { r.add("OnTestEpochEnd"); return nil }
func (r recorder) OnTestBatchStart(_ *volt.Trainer, _ *data.Batch, i, dl int) error {
	r.add("OnTestBatchStart(%d,%d)", i, dl)
	return nil
}
func (r recorder) OnTestBatchEnd(_ *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i, dl int) error {
	r.add("OnTestBatchEnd(%d,%d)", i, dl)
	return nil
}
func (r recorder) OnPredictStart(*volt.Trainer) error      { r.add("OnPredictStart"); return nil }
func (r recorder) OnPredictEnd(*volt.Trainer) error        { r.add("OnPredictEnd"); return nil }
func (r recorder) OnPredictEpochStart(*volt.Trainer) error { r.add("OnPredictEpochStart"); return nil }
func (r recorder) OnPredictEpochEnd(*volt.Trainer) error   { r.add("OnPredictEpochEnd"); return nil }
func (r recorder) OnPredictBatchStart(_ *volt.Trainer, _ *data.Batch, i, dl int) error {
	r.add("OnPredictBatchStart(%d,%d)", i, dl)
	return nil
}
func (r recorder) OnPredictBatchEnd(_ *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i, dl int) error {
	r.add("OnPredictBatchEnd(%d,%d)", i, dl)
	return nil
}
func (r recorder) OnException(_ *volt.Trainer, err error) { r.add("OnException") }
func (r recorder) OnBeforeBackward(*volt.Step, *graph.Node) {
	r.add("OnBeforeBackward[trace]")
}
func (r recorder) OnAfterBackward(*volt.Step, []volt.Gradient) { r.add("OnAfterBackward[trace]") }
func (r recorder) OnBeforeOptimizerStep(_ *volt.Step, i int, _ []volt.Gradient) {
	r.add("OnBeforeOptimizerStep(%d)[trace]", i)
}

// recordingModule is the boring model with every module hook recorded.
type recordingModule struct {
	*boring
	recorder
}

// expect expands each hook into the callback's call followed by the module's.
func expect(hooks ...string) []string {
	var out []string
	for _, h := range hooks {
		out = append(out, "cb."+h, "module."+h)
	}
	return out
}

func evalHooks(kind string, batches, loaders int) []string {
	var hs []string
	hs = append(hs, "On"+kind+"Start", "On"+kind+"EpochStart")
	for dl := range loaders {
		for i := range batches {
			hs = append(hs, fmt.Sprintf("On%sBatchStart(%d,%d)", kind, i, dl), fmt.Sprintf("On%sBatchEnd(%d,%d)", kind, i, dl))
		}
	}
	return append(hs, "On"+kind+"EpochEnd", "On"+kind+"End")
}

func TestHookOrder(t *testing.T) {
	var log []string
	m := &recordingModule{boring: &boring{}, recorder: recorder{"module", &log}}
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 2, Callbacks: []volt.Callback{recorder{"cb", &log}}}))
	train := &data.DataLoader{Dataset: regression(32, 1), BatchSize: 16}
	val := &data.DataLoader{Dataset: regression(24, 2), BatchSize: 8}
	dm := volt.Loaders{Train: train, Val: []data.Loader{val}, Test: []data.Loader{val, val}, Predict: []data.Loader{val}}

	var want []string
	// The training step is traced once, right after OnFitStart.
	want = append(want, expect("Setup(fit)", "OnFitStart",
		"OnBeforeBackward[trace]", "OnAfterBackward[trace]", "OnBeforeOptimizerStep(0)[trace]", "OnSanityCheckStart")...)
	// The sanity check runs NumSanityValSteps=2 batches of each loader.
	want = append(want, expect(evalHooks("Validation", 2, 1)...)...)
	want = append(want, expect("OnSanityCheckEnd", "OnTrainStart")...)
	for range 2 {
		want = append(want, expect("OnTrainEpochStart", "OnTrainBatchStart(0)", "OnTrainBatchEnd(0)", "OnTrainBatchStart(1)", "OnTrainBatchEnd(1)")...)
		want = append(want, expect(evalHooks("Validation", 3, 1)...)...)
		want = append(want, expect("OnTrainEpochEnd")...)
	}
	want = append(want, expect("OnTrainEnd", "OnFitEnd", "Teardown(fit)")...)

	steps := []struct {
		name string
		run  func() error
		want []string
	}{
		{"fit", func() error { return tr.Fit(t.Context(), m, dm) }, want},
		{"validate", func() error { _, err := tr.Validate(t.Context(), m, dm); return err },
			slices.Concat(expect("Setup(validate)"), expect(evalHooks("Validation", 3, 1)...), expect("Teardown(validate)"))},
		{"test", func() error { _, err := tr.Test(t.Context(), m, dm); return err },
			slices.Concat(expect("Setup(test)"), expect(evalHooks("Test", 3, 2)...), expect("Teardown(test)"))},
		{"predict", func() error { _, err := tr.Predict(t.Context(), m, dm); return err },
			slices.Concat(expect("Setup(predict)"), expect(evalHooks("Predict", 3, 1)...), expect("Teardown(predict)"))},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			log = log[:0]
			if err := st.run(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(log, st.want) {
				t.Errorf("hook sequence differs.\n got: %s\nwant: %s", strings.Join(log, " "), strings.Join(st.want, " "))
			}
		})
	}
}

// stopper asks to stop in a hook and fails in another, to check error wrapping.
type failing struct{ recorder }

func (f failing) OnTrainEpochEnd(*volt.Trainer) error { return fmt.Errorf("boom") }

func TestHookErrorRunsOnExceptionAndTeardown(t *testing.T) {
	var log []string
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 3, Callbacks: []volt.Callback{failing{recorder{"cb", &log}}}}))
	err := tr.Fit(t.Context(), &boring{}, boringData())
	if err == nil || !strings.Contains(err.Error(), "volt_test.failing.OnTrainEpochEnd (epoch 0, global step 4): boom") {
		t.Fatalf("Fit error = %v", err)
	}
	if !slices.Contains(log, "cb.OnException") || !slices.Contains(log, "cb.Teardown(fit)") {
		t.Errorf("OnException/Teardown not called: %v", log)
	}
	if tr.State().Status != volt.StatusFailed {
		t.Errorf("status %v", tr.State().Status)
	}
}
