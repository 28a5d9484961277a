package volt_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
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
	tr := testutil.Fit(t, quiet(volt.Config{MaxSteps: 6}), &boring{}, boringData())
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
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1}))
			err := tr.Fit(t.Context(), tc.module, tc.dm)
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

// TestConfigErrorsAllAtOnce pins the whole message of NewTrainer for a
// configuration with every field wrong, one problem a line in field order,
// and the two cross-field messages.
func TestConfigErrorsAllAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  volt.Config
		want string
	}{
		{"every field", volt.Config{
			MaxEpochs: -2, MinEpochs: -1, MaxSteps: -7, MinSteps: -1, CheckValEveryNEpoch: -1,
			NumSanityValSteps: volt.Ptr(-3), LogEveryNSteps: -1, AccumulateGradBatches: -1,
			GradientClipVal: math.NaN(), GradientClipAlgorithm: "l1", TruncatedBPTTSteps: -1, TrackGradNorm: -1,
			LimitTrainBatches: volt.Fraction(2), LimitValBatches: volt.Batches(-1), OverfitBatches: volt.Batches(1),
			Devices: -1, ValCheckInterval: volt.Batches(0), FastDevRun: -1, ReloadDataloadersEveryNEpochs: -1,
			DisableLoggers: true, Loggers: []logger.Logger{nil}, Callbacks: []volt.Callback{struct{}{}},
			Precision: "8-true",
		}, "volt.NewTrainer: invalid configuration:\n" +
			"Config.MaxEpochs: must be -1 (no limit), 0 (default) or positive, got -2\n" +
			"Config.MinEpochs: must be >= 0, got -1\n" +
			"Config.MaxSteps: must be -1 or 0 (no limit) or positive, got -7\n" +
			"Config.MinSteps: must be >= 0, got -1\n" +
			"Config.CheckValEveryNEpoch: must be >= 1 (0 means 1), got -1\n" +
			"Config.NumSanityValSteps: must be -1 (all), 0 (off) or positive, got -3\n" +
			"Config.LogEveryNSteps: must be >= 1 (0 means 50), got -1\n" +
			"Config.AccumulateGradBatches: must be >= 1 (0 means 1), got -1\n" +
			"Config.GradientClipVal: must be a finite number >= 0 (0 is off), got NaN\n" +
			"Config.GradientClipAlgorithm: unknown \"l1\"; valid: \"norm\", \"value\"\n" +
			"Config.TruncatedBPTTSteps: must be >= 0 (0 is off), got -1\n" +
			"Config.TrackGradNorm: must be 0 (off), a p > 0 or math.Inf(1), got -1\n" +
			"Config.LimitTrainBatches: volt.Fraction must be in [0, 1], got 2\n" +
			"Config.LimitValBatches: volt.Batches must be >= 0, got -1\n" +
			"Config.Devices: must be >= 0 (0 or 1: one process; N: N ranks per machine), got -1\n" +
			"Config.ValCheckInterval: volt.Batches must be >= 1, got 0\n" +
			"Config.FastDevRun: must be >= 0 (0 is off), got -1\n" +
			"Config.ReloadDataloadersEveryNEpochs: must be >= 0 (0 is never), got -1\n" +
			"Config.OverfitBatches and Config.LimitTrainBatches are both set; OverfitBatches already limits training\n" +
			"Config.DisableLoggers is set but Config.Loggers lists 1 loggers; use one or the other\n" +
			"Config.Loggers[0]: is nil\n" +
			"Config.Callbacks[0]: struct {} implements no volt hook interface (OnTrainEpochEnd, OnValidationEnd, …); check the method names and signatures\n" +
			"Config.Precision: unknown precision \"8-true\"; valid: \"32-true\", \"64-true\", \"bf16-mixed\", \"bf16-true\", \"16-mixed\", \"16-true\""},
		{"bounds", volt.Config{MaxEpochs: 2, MinEpochs: 3, MaxSteps: 4, MinSteps: 5, GradientClipVal: math.Inf(1), TrackGradNorm: math.NaN()}, "volt.NewTrainer: invalid configuration:\n" +
			"Config.MinEpochs (3) is larger than Config.MaxEpochs (2)\n" +
			"Config.MinSteps (5) is larger than Config.MaxSteps (4)\n" +
			"Config.GradientClipVal: must be a finite number >= 0 (0 is off), got +Inf\n" +
			"Config.TrackGradNorm: must be 0 (off), a p > 0 or math.Inf(1), got NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := volt.NewTrainer(tc.cfg)
			if err == nil || err.Error() != tc.want {
				t.Errorf("NewTrainer error:\n%v\nwant:\n%s", err, tc.want)
			}
		})
	}
}

// TestConfigDefaults: what the zero values and FastDevRun resolve to.
func TestConfigDefaults(t *testing.T) {
	for _, tc := range []struct {
		cfg            volt.Config
		epochs         int
		steps          int64
		accumulate     int
		terminateOnNaN bool
	}{
		{volt.Config{}, 1000, -1, 1, false},
		{volt.Config{MaxSteps: 6}, -1, 6, 1, false},
		{volt.Config{MaxSteps: -1}, 1000, -1, 1, false},
		{volt.Config{MaxEpochs: -1, MaxSteps: 0, AccumulateGradBatches: 3}, -1, -1, 3, false},
		{volt.Config{MaxEpochs: 4, MaxSteps: 9, DetectAnomaly: true}, 4, 9, 1, true},
		{volt.Config{FastDevRun: 3, MaxEpochs: 7, MaxSteps: 100}, 1, 3, 1, false},
		// MinEpochs is checked against MaxEpochs before FastDevRun's one epoch.
		{volt.Config{FastDevRun: 2, MinEpochs: 3}, 1, 2, 1, false},
	} {
		tr := testutil.NewTrainer(t, quiet(tc.cfg))
		if tr.MaxEpochs() != tc.epochs || tr.MaxSteps() != tc.steps || tr.AccumulateGradBatches() != tc.accumulate || tr.Config().TerminateOnNaN != tc.terminateOnNaN {
			t.Errorf("%+v: epochs %d steps %d accumulate %d terminate-on-NaN %v, want %d %d %d %v", tc.cfg,
				tr.MaxEpochs(), tr.MaxSteps(), tr.AccumulateGradBatches(), tr.Config().TerminateOnNaN, tc.epochs, tc.steps, tc.accumulate, tc.terminateOnNaN)
		}
	}
}
