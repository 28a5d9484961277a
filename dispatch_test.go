package volt_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// panicking panics in the hook named by where, and records the others.
type panicking struct {
	recorder
	where string
}

func (p panicking) OnTrainBatchEnd(t *volt.Trainer, out *volt.StepOutput, b *data.Batch, i int) error {
	if p.where == "OnTrainBatchEnd" {
		panic("batch hook broke")
	}
	return p.recorder.OnTrainBatchEnd(t, out, b, i)
}

func (p panicking) Teardown(t *volt.Trainer, s volt.Stage) error {
	if p.where == "Teardown" {
		panic("teardown broke")
	}
	return p.recorder.Teardown(t, s)
}

func (p panicking) OnException(t *volt.Trainer, err error) {
	p.recorder.OnException(t, err)
	if p.where == "OnException" {
		panic("exception hook broke")
	}
}

func (p panicking) OnBeforeBackward(s *volt.Step, loss *graph.Node) {
	if p.where == "OnBeforeBackward" {
		panic("trace hook broke")
	}
}

// failingEpochEnd makes the run fail so that OnException runs.
type failingEpochEnd struct{}

func (failingEpochEnd) OnTrainEpochEnd(*volt.Trainer) error { return errors.New("boom") }

// A panic in any user hook, teardown and OnException included, becomes an
// error naming the callback and the hook; the run still calls OnException
// and every Teardown.
func TestHookPanicsBecomeErrors(t *testing.T) {
	tests := []struct {
		where string
		fail  bool // make the run fail first, so that OnException runs
		want  []string
		calls []string // hooks of the panicking callback that must still run
	}{
		{where: "OnTrainBatchEnd", want: []string{"volt_test.panicking.OnTrainBatchEnd (epoch 0, global step 1): batch hook broke"}, calls: []string{"cb.OnException", "cb.Teardown(fit)", "other.Teardown(fit)"}},
		{where: "Teardown", want: []string{"volt_test.panicking.Teardown (epoch 1, global step 4): teardown broke"}, calls: []string{"other.Teardown(fit)"}},
		{where: "OnException", fail: true, want: []string{"OnTrainEpochEnd (epoch 0, global step 4): boom", "volt_test.panicking.OnException (epoch 0, global step 4): exception hook broke"}, calls: []string{"cb.Teardown(fit)", "other.Teardown(fit)"}},
		{where: "OnBeforeBackward", want: []string{"volt_test.panicking.OnBeforeBackward (epoch 0, global step 0): trace hook broke"}, calls: []string{"cb.OnException", "cb.Teardown(fit)"}},
	}
	for _, tc := range tests {
		t.Run(tc.where, func(t *testing.T) {
			var log []string
			cbs := []volt.Callback{panicking{recorder{"cb", &log}, tc.where}, recorder{"other", &log}}
			if tc.fail {
				cbs = append(cbs, failingEpochEnd{})
			}
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, Callbacks: cbs}))
			err := tr.Fit(t.Context(), &boring{}, boringData())
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Fit error = %v, want it to contain %q", err, w)
				}
			}
			var he *volt.HookError
			if !errors.As(err, &he) {
				t.Errorf("Fit error %v is no *volt.HookError", err)
			}
			for _, c := range tc.calls {
				if !slices.Contains(log, c) {
					t.Errorf("%s was not called: %v", c, log)
				}
			}
			if tr.State().Status != volt.StatusFailed {
				t.Errorf("status %v, want failed", tr.State().Status)
			}
		})
	}
}

// A data module's hooks go through the same dispatch: errors name the data
// module and the hook.
type failingData struct{ volt.Loaders }

func (failingData) Setup(volt.Stage) error { return errors.New("no disk") }

func TestDataModuleHookErrors(t *testing.T) {
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1}))
	err := tr.Fit(t.Context(), &boring{}, failingData{boringData()})
	if want := "volt_test.failingData.Setup (epoch 0, global step 0): no disk"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Fit error = %v, want it to contain %q", err, want)
	}
}
