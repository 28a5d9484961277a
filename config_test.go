package volt_test

import (
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

func TestNewTrainerRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  volt.Config
		want []string // substrings of the error
	}{
		{"negative epochs", volt.Config{MaxEpochs: -2}, []string{"Config.MaxEpochs", "-1 (no limit)", "got -2"}},
		{"min above max", volt.Config{MaxEpochs: 2, MinEpochs: 5}, []string{"Config.MinEpochs (5) is larger than Config.MaxEpochs (2)"}},
		{"negative min steps", volt.Config{MinSteps: -1}, []string{"Config.MinSteps: must be >= 0"}},
		{"bad max steps", volt.Config{MaxSteps: -7}, []string{"Config.MaxSteps"}},
		{"unknown precision", volt.Config{Precision: "8-true"}, []string{"Config.Precision", `"8-true"`, `"32-true"`, `"64-true"`}},
		{"unknown backend", volt.Config{Backend: "tpu"}, []string{"Config.Backend", `"tpu"`, "available: go"}},
		{"bad sanity steps", volt.Config{NumSanityValSteps: volt.Ptr(-3)}, []string{"Config.NumSanityValSteps"}},
		{"bad log cadence", volt.Config{LogEveryNSteps: -1}, []string{"Config.LogEveryNSteps"}},
		{"callback without hooks", volt.Config{Callbacks: []volt.Callback{struct{}{}}}, []string{"Config.Callbacks[0]", "implements no volt hook"}},
		{"several at once", volt.Config{MaxEpochs: -5, Precision: "fp8"}, []string{"Config.MaxEpochs", "Config.Precision"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := volt.NewTrainer(tc.cfg)
			if err == nil {
				t.Fatal("NewTrainer accepted the configuration")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestMaxEpochsDefaults(t *testing.T) {
	// A zero config trains 1000 epochs; with MaxSteps it is bounded by steps only.
	tr, err := volt.NewTrainer(quiet(volt.Config{MaxSteps: 6}))
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Fit(t.Context(), &boring{}, boringData()); err != nil {
		t.Fatal(err)
	}
	if tr.GlobalStep() != 6 || tr.CurrentEpoch() != 2 {
		t.Errorf("MaxSteps=6 with 4 batches/epoch: step %d epoch %d, want 6 and 2", tr.GlobalStep(), tr.CurrentEpoch())
	}
}

// lossless returns no loss.
type lossless struct{}

func (lossless) TrainingStep(*volt.Step, volt.Batch) *graph.Node { return nil }

// badOptimizer configures an invalid optimizer.
type badOptimizer struct{ boring }

func (badOptimizer) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(-1)) }

func TestFitRejectsBadInput(t *testing.T) {
	good := boringData()
	tests := []struct {
		name   string
		module volt.Module
		dm     volt.DataModule
		want   string
	}{
		{"nil module", nil, good, "the module is nil; it must implement TrainingStep"},
		{"nil loss", lossless{}, good, "TrainingStep returned a nil loss"},
		{"batch size -1", &boring{}, volt.Loaders{Train: &data.DataLoader{Dataset: regression(8, 1), BatchSize: -1}}, "training loader: data.DataLoader.BatchSize: must be >= 1 (0 means 1), got -1"},
		{"no training loader", &boring{}, volt.Loaders{}, "Fit needs a training loader"},
		{"invalid optimizer", &badOptimizer{}, good, "ConfigureOptimizers: optimizer 0: optim.sgd.LR: must be a finite number > 0, got -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 1}))
			if err != nil {
				t.Fatal(err)
			}
			err = tr.Fit(t.Context(), tc.module, tc.dm)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fit error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// oldOptimizers has ConfigureOptimizers with another signature.
type oldOptimizers struct{ boring }

func (oldOptimizers) ConfigureOptimizers() *optim.Optimizer { return optim.SGD(0.1) }

// noTrainer forgets the trainer argument of a hook.
type noTrainer struct{}

func (noTrainer) OnTrainEpochEnd() error { return nil }

// badState has Stateful's methods, LoadState with another signature.
type badState struct{ noTrainer }

func (badState) StateKey() string             { return "bad" }
func (badState) State() ([]byte, error)       { return nil, nil }
func (badState) LoadState(state string) error { return nil }

// keyless has State and LoadState but no StateKey, so volt would not save it.
type keyless struct{ failingEpochEnd }

func (keyless) State() ([]byte, error)   { return nil, nil }
func (keyless) LoadState(b []byte) error { return nil }

// badDataState is a data module whose LoadState has another signature.
type badDataState struct{ volt.Loaders }

func (badDataState) State() ([]byte, error) { return nil, nil }
func (badDataState) LoadState([]byte)       {}

func TestWrongSignaturesAreReported(t *testing.T) {
	const prefix = "a method has the name of a volt interface but not its signature, so volt would ignore it: "
	tests := []struct {
		name     string
		module   volt.Module
		callback volt.Callback
		dm       volt.DataModule
		want     string
	}{
		{name: "module optimizers", module: &oldOptimizers{},
			want: "*volt_test.oldOptimizers has ConfigureOptimizers() *optim.Optimizer, want ConfigureOptimizers() volt.Optimizers (volt.OptimizerConfigurer)"},
		{name: "callback hook", callback: noTrainer{},
			want: "Config.Callbacks[0]: callback: " + prefix + "volt_test.noTrainer has OnTrainEpochEnd() error, want OnTrainEpochEnd(*volt.Trainer) error (volt.OnTrainEpochEnd)"},
		{name: "callback state", callback: badState{},
			want: "Config.Callbacks[0]: callback: " + prefix + "volt_test.badState has LoadState(string) error, want LoadState([]uint8) error (volt.Stateful)"},
		{name: "callback state without key", callback: keyless{},
			want: "volt_test.keyless has LoadState([]uint8) error but not all of volt.Stateful: needs StateKey() string"},
		{name: "data module state", dm: badDataState{boringData()},
			want: "data module: " + prefix + "volt_test.badDataState has LoadState([]uint8), want LoadState([]uint8) error (volt.DataStateful)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quiet(volt.Config{MaxEpochs: 1})
			if tc.callback != nil {
				cfg.Callbacks = []volt.Callback{tc.callback}
			}
			tr, err := volt.NewTrainer(cfg)
			if err == nil {
				m, dm := tc.module, tc.dm
				if m == nil {
					m = &boring{}
				}
				if dm == nil {
					dm = boringData()
				}
				err = tr.Fit(t.Context(), m, dm)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
