package volt_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// outputsModule declares two named outputs in its validation, test and
// predict steps (the batch's inputs doubled, and its labels) and records in
// its batch-end hooks what it receives.
type outputsModule struct {
	boring
	got     map[volt.RunningStage][]string
	noHooks bool // the hooks do not read outputs
}

func (m *outputsModule) outputs(s *volt.Step, b volt.Batch) {
	s.Output("double", graph.MulScalar(b.Input(0), 2))
	s.Output("labels", b.Label(0))
}

func (m *outputsModule) ValidationStep(s *volt.Step, b volt.Batch) {
	m.boring.ValidationStep(s, b)
	m.outputs(s, b)
}

func (m *outputsModule) TestStep(s *volt.Step, b volt.Batch) {
	m.boring.TestStep(s, b)
	m.outputs(s, b)
}

func (m *outputsModule) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	m.outputs(s, b)
	return m.boring.PredictStep(s, b)
}

func (m *outputsModule) OnValidationBatchEnd(t *volt.Trainer, out *volt.StepOutput, b *data.Batch, batchIdx, dl int) error {
	return m.record(volt.RunningValidate, out, b)
}

func (m *outputsModule) OnTestBatchEnd(t *volt.Trainer, out *volt.StepOutput, b *data.Batch, batchIdx, dl int) error {
	return m.record(volt.RunningTest, out, b)
}

func (m *outputsModule) OnPredictBatchEnd(t *volt.Trainer, out *volt.StepOutput, b *data.Batch, batchIdx, dl int) error {
	return m.record(volt.RunningPredict, out, b)
}

func (m *outputsModule) record(stage volt.RunningStage, out *volt.StepOutput, b *data.Batch) error {
	if m.got == nil {
		m.got = map[volt.RunningStage][]string{}
	}
	if m.noHooks {
		return nil
	}
	m.got[stage] = append(m.got[stage], checkOutputs(out, b))
	return nil
}

// checkOutputs returns "ok" when out holds the batch's inputs doubled and its
// labels, else what is wrong.
func checkOutputs(out *volt.StepOutput, b *data.Batch) string {
	double, err := out.Output("double")
	if err != nil {
		return err.Error()
	}
	labels, err := out.Output("labels")
	if err != nil {
		return err.Error()
	}
	x := tensors.MustCopyFlatData[float32](b.Inputs[0])
	got := tensors.MustCopyFlatData[float32](double)
	if len(got) != len(x) {
		return fmt.Sprintf("double has %d values for %d inputs", len(got), len(x))
	}
	for i := range x {
		if got[i] != 2*x[i] {
			return fmt.Sprintf("double[%d] = %v, want %v", i, got[i], 2*x[i])
		}
	}
	want := tensors.MustCopyFlatData[float32](b.Labels[0])
	gotL := tensors.MustCopyFlatData[float32](labels)
	for i := range want {
		if gotL[i] != want[i] {
			return fmt.Sprintf("labels[%d] = %v, want %v", i, gotL[i], want[i])
		}
	}
	return "ok"
}

// optingOutModule reads no step outputs and says so.
type optingOutModule struct{ outputsModule }

func (*optingOutModule) ReadsStepOutputs(volt.RunningStage) bool { return false }

// outputsCallback reads step outputs in its batch-end hooks when reads says so.
type outputsCallback struct {
	reads bool
	got   []string
}

func (c *outputsCallback) ReadsStepOutputs(stage volt.RunningStage) bool {
	return c.reads && stage == volt.RunningValidate
}

func (c *outputsCallback) OnValidationBatchEnd(t *volt.Trainer, out *volt.StepOutput, b *data.Batch, batchIdx, dl int) error {
	c.got = append(c.got, checkOutputs(out, b))
	return nil
}

// batchEndCallback implements the batch-end hooks and reads nothing (a
// progress bar, say).
type batchEndCallback struct{ calls int }

func (c *batchEndCallback) OnValidationBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int, int) error {
	c.calls++
	return nil
}

// TestStepOutputsReachBatchEndHooks: the named outputs of validation, test
// and predict steps reach the batch-end hooks that read them, per batch, on
// the host; no hook reading them means no copy at all.
func TestStepOutputsReachBatchEndHooks(t *testing.T) {
	// boringData: 1 validation batch, 2 test and 2 predict batches.
	tests := []struct {
		name   string
		module interface {
			recorded() map[volt.RunningStage][]string
		}
		callbacks  func() (volt.Callback, func() []string)
		wantModule map[volt.RunningStage]int // batches the module saw "ok"
		wantCb     []string
		wantCopies int64
	}{
		{name: "module hooks read", module: &outputsModule{},
			wantModule: map[volt.RunningStage]int{volt.RunningValidate: 1, volt.RunningTest: 2, volt.RunningPredict: 2}, wantCopies: 2 * 5},
		{name: "module opts out", module: &optingOutModule{outputsModule{noHooks: true}}, wantCopies: 0},
		{name: "callback opts in", module: &optingOutModule{outputsModule{noHooks: true}}, callbacks: func() (volt.Callback, func() []string) {
			c := &outputsCallback{reads: true}
			return c, func() []string { return c.got }
		}, wantCb: []string{"ok"}, wantCopies: 2},
		{name: "callback does not opt in", module: &optingOutModule{outputsModule{noHooks: true}}, callbacks: func() (volt.Callback, func() []string) {
			c := &outputsCallback{}
			return c, func() []string { return c.got }
		}, wantCb: []string{"did not fetch"}, wantCopies: 0},
		{name: "a callback without the interface", module: &optingOutModule{outputsModule{noHooks: true}}, callbacks: func() (volt.Callback, func() []string) {
			c := &batchEndCallback{}
			return c, func() []string { return []string{fmt.Sprint(c.calls)} }
		}, wantCb: []string{"1"}, wantCopies: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quiet(volt.Config{})
			var cbGot func() []string
			if tc.callbacks != nil {
				var cb volt.Callback
				cb, cbGot = tc.callbacks()
				cfg.Callbacks = []volt.Callback{cb}
			}
			tr := testutil.NewTrainer(t, cfg)
			m := tc.module.(volt.Module)
			mustValidateTestPredict(t, tr, m, boringData())
			got := tc.module.recorded()
			for _, stage := range []volt.RunningStage{volt.RunningValidate, volt.RunningTest, volt.RunningPredict} {
				n := 0
				for _, r := range got[stage] {
					if r != "ok" {
						t.Errorf("%s batch: %s", stage, r)
					}
					n++
				}
				if n != tc.wantModule[stage] {
					t.Errorf("%s: the module's hook read outputs of %d batches, want %d", stage, n, tc.wantModule[stage])
				}
			}
			if cbGot != nil {
				cg := cbGot()
				if len(cg) != len(tc.wantCb) {
					t.Fatalf("callback got %q, want %q", cg, tc.wantCb)
				}
				for i := range cg {
					if !strings.Contains(cg[i], tc.wantCb[i]) {
						t.Errorf("callback batch %d: %q, want it to contain %q", i, cg[i], tc.wantCb[i])
					}
				}
			}
			if c := volt.HostCopies(tr); c != tc.wantCopies {
				t.Errorf("host copies %d, want %d", c, tc.wantCopies)
			}
		})
	}
}

func (m *outputsModule) recorded() map[volt.RunningStage][]string { return m.got }

// misuseModule calls Step.Output as its fields say.
type misuseModule struct {
	boring
	inTraining, twice bool
	read              string // the output its validation batch-end hook reads
}

func (m *misuseModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	if m.inTraining {
		s.Output("loss", graph.ReduceAllMean(b.Input(0)))
	}
	return m.boring.TrainingStep(s, b)
}

func (m *misuseModule) ValidationStep(s *volt.Step, b volt.Batch) {
	m.boring.ValidationStep(s, b)
	s.Output("x", b.Input(0))
	if m.twice {
		s.Output("x", b.Input(0))
	}
}

func (m *misuseModule) OnValidationBatchEnd(t *volt.Trainer, out *volt.StepOutput, b *data.Batch, _, _ int) error {
	_, err := out.Output(m.read)
	return err
}

// TestStepOutputErrors: a misused Step.Output, or a hook reading an output
// the step does not have, is an error saying what is wrong.
func TestStepOutputErrors(t *testing.T) {
	tests := []struct {
		name   string
		module *misuseModule
		want   string
	}{
		{"in a training step", &misuseModule{inTraining: true, read: "x"}, "a training step has no named outputs"},
		{"a name given twice", &misuseModule{twice: true, read: "x"}, `Step.Output("x"): the name is given twice`},
		{"a name the step lacks", &misuseModule{read: "logits"}, `step output "logits": the validate step declares no such output (it has ["x"])`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, NumSanityValSteps: volt.Ptr(0)}))
			err := tr.Fit(t.Context(), tc.module, boringData())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fit error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestStepOutputOfTraining: a training batch's StepOutput has no named
// outputs, and says so.
func TestStepOutputOfTraining(t *testing.T) {
	var got error
	cb := &trainBatchEndReader{read: func(out *volt.StepOutput) { _, got = out.Output("logits") }}
	testutil.Fit(t, quiet(volt.Config{MaxSteps: 1, Callbacks: []volt.Callback{cb}}), &boring{}, boringData())
	if want := "training steps have no named outputs"; got == nil || !strings.Contains(got.Error(), want) {
		t.Errorf("Output in OnTrainBatchEnd: %v, want an error containing %q", got, want)
	}
}

// trainBatchEndReader calls read with each training batch's output.
type trainBatchEndReader struct{ read func(*volt.StepOutput) }

func (c *trainBatchEndReader) OnTrainBatchEnd(_ *volt.Trainer, out *volt.StepOutput, _ *data.Batch, _ int) error {
	c.read(out)
	return nil
}

// onlyReader implements StepOutputReader and no hook.
type onlyReader struct{}

func (onlyReader) ReadsStepOutputs(volt.RunningStage) bool { return true }

// TestStepOutputReaderAloneIsNoCallback: StepOutputReader marks a callback's
// batch-end hooks; a callback with nothing else is rejected as hookless.
func TestStepOutputReaderAloneIsNoCallback(t *testing.T) {
	_, err := volt.NewTrainer(volt.Config{Callbacks: []volt.Callback{onlyReader{}}})
	if want := "implements no volt hook"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("NewTrainer error = %v, want it to contain %q", err, want)
	}
}
