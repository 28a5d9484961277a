package volt_test

import (
	"strings"
	"testing"

	"github.com/voltml/volt"
)

// epochHookLogger logs "x" with opts in the hook named by hook (volt's
// name), in every call of it.
type epochHookLogger struct {
	boring
	hook string
	opts []volt.LogOption
}

func (m *epochHookLogger) log(t *volt.Trainer, hook string) error {
	if hook == m.hook {
		t.Log("x", 1, m.opts...)
	}
	return nil
}

func (m *epochHookLogger) OnTrainStart(t *volt.Trainer) error { return m.log(t, "OnTrainStart") }
func (m *epochHookLogger) OnTrainEpochStart(t *volt.Trainer) error {
	return m.log(t, "OnTrainEpochStart")
}
func (m *epochHookLogger) OnTrainEpochEnd(t *volt.Trainer) error { return m.log(t, "OnTrainEpochEnd") }
func (m *epochHookLogger) OnValidationStart(t *volt.Trainer) error {
	return m.log(t, "OnValidationStart")
}
func (m *epochHookLogger) OnValidationEpochStart(t *volt.Trainer) error {
	return m.log(t, "OnValidationEpochStart")
}
func (m *epochHookLogger) OnValidationEpochEnd(t *volt.Trainer) error {
	return m.log(t, "OnValidationEpochEnd")
}
func (m *epochHookLogger) OnTestStart(t *volt.Trainer) error { return m.log(t, "OnTestStart") }
func (m *epochHookLogger) OnTestEpochStart(t *volt.Trainer) error {
	return m.log(t, "OnTestEpochStart")
}
func (m *epochHookLogger) OnTestEpochEnd(t *volt.Trainer) error { return m.log(t, "OnTestEpochEnd") }

// TestLogInEpochHooksRefusesStepValues: as Lightning's self.log raises a
// MisconfigurationException ("You can't `self.log(on_step=True)` inside
// `on_train_epoch_end`, must be one of (False,)"; likewise on_epoch=False),
// Log with OnStep(true) or OnEpoch(false) in a hook that runs once per
// epoch or loop fails that hook, naming the value, the option and the
// hook; OnStep(false) with OnEpoch(true), the default there, is accepted.
func TestLogInEpochHooksRefusesStepValues(t *testing.T) {
	hooks := []string{"OnTrainStart", "OnTrainEpochStart", "OnTrainEpochEnd", "OnValidationStart",
		"OnValidationEpochStart", "OnValidationEpochEnd", "OnTestStart", "OnTestEpochStart", "OnTestEpochEnd"}
	options := []struct {
		name string
		opts []volt.LogOption
		want string // "" for accepted
	}{
		{"on_step", []volt.LogOption{volt.OnStep(true)}, "OnStep(true)"},
		{"on_step_and_epoch", []volt.LogOption{volt.OnStep(true), volt.OnEpoch(true)}, "OnStep(true)"},
		{"not_on_epoch", []volt.LogOption{volt.OnEpoch(false)}, "OnEpoch(false)"},
		{"defaults_written_out", []volt.LogOption{volt.OnStep(false), volt.OnEpoch(true)}, ""},
	}
	for _, hook := range hooks {
		for _, o := range options {
			t.Run(hook+"/"+o.name, func(t *testing.T) {
				tr, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 1, NumSanityValSteps: volt.Ptr(0)}))
				if err != nil {
					t.Fatal(err)
				}
				m := &epochHookLogger{hook: hook, opts: o.opts}
				if strings.HasPrefix(hook, "OnTest") {
					_, err = tr.Test(t.Context(), m, boringData())
				} else {
					err = tr.Fit(t.Context(), m, boringData())
				}
				if o.want == "" {
					if err != nil {
						t.Fatalf("Log(\"x\") with OnStep(false), OnEpoch(true) in %s: %v", hook, err)
					}
					return
				}
				if testing.Verbose() {
					t.Log(err)
				}
				for _, w := range []string{`Log("x")`, o.want, hook} {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Fatalf("error = %v, want one containing %q", err, w)
					}
				}
			})
		}
	}
}
