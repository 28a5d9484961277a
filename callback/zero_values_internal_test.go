package callback

import (
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/voltml/volt"
)

// TestZeroValuesAreTheDocumentedDefaults: for every callback, a config that
// sets only the required fields is accepted and resolves to the same
// configuration as the documented defaults written out (the clocks default
// to time.Now and the writers to os.Stdout/os.Stderr, as documented).
func TestZeroValuesAreTheDocumentedDefaults(t *testing.T) {
	tests := []struct {
		name           string
		zero, explicit func() any // the resolved configurations
	}{
		{"EarlyStopping",
			func() any { return valid(t, NewEarlyStopping(EarlyStoppingConfig{Monitor: "m"})).cfg },
			func() any {
				return valid(t, NewEarlyStopping(EarlyStoppingConfig{Monitor: "m", Patience: 3, Mode: "min",
					Strict: volt.Ptr(true), CheckFinite: volt.Ptr(true)})).cfg
			}},
		{"ModelCheckpoint",
			func() any {
				return resolvedCheckpoint(valid(t, NewModelCheckpoint(ModelCheckpointConfig{})))
			},
			func() any {
				return resolvedCheckpoint(valid(t, NewModelCheckpoint(ModelCheckpointConfig{Filename: "{epoch}-{step}", Mode: "min",
					SaveTopK: volt.Ptr(1), EveryNEpochs: 1, Now: time.Now})))
			}},
		{"BackboneFinetuning",
			func() any { return valid(t, NewBackboneFinetuning(BackboneFinetuningConfig{})).cfg },
			func() any {
				return valid(t, NewBackboneFinetuning(BackboneFinetuningConfig{Backbone: []string{"backbone"}, UnfreezeAtEpoch: 10,
					InitialRatio: 0.1, Multiplier: 2})).cfg
			}},
		{"EMAWeightAveraging",
			func() any { return valid(t, NewEMAWeightAveraging(EMAWeightAveragingConfig{})).cfg },
			func() any {
				return valid(t, NewEMAWeightAveraging(EMAWeightAveragingConfig{Decay: 0.999, UpdateEvery: 1,
					UseForValidation: volt.Ptr(true), CopyToModel: volt.Ptr(true)})).cfg
			}},
		{"LearningRateMonitor",
			func() any {
				return valid(t, NewLearningRateMonitor(LearningRateMonitorConfig{})).cfg
			},
			func() any {
				return valid(t, NewLearningRateMonitor(LearningRateMonitorConfig{LoggingInterval: "epoch"})).cfg
			}},
		{"ModelSummary",
			func() any { return valid(t, NewModelSummary(ModelSummaryConfig{})).cfg },
			func() any {
				return valid(t, NewModelSummary(ModelSummaryConfig{MaxDepth: 1, Writer: os.Stdout})).cfg
			}},
		{"OnExceptionCheckpoint",
			func() any {
				return valid(t, NewOnExceptionCheckpoint(OnExceptionCheckpointConfig{Dirpath: "d"})).cfg
			},
			func() any {
				return valid(t, NewOnExceptionCheckpoint(OnExceptionCheckpointConfig{Dirpath: "d",
					Filename: "on_exception.ckpt"})).cfg
			}},
		{"PredictionWriter",
			func() any { return valid(t, NewPredictionWriter(PredictionWriterConfig{})).cfg },
			func() any {
				return valid(t, NewPredictionWriter(PredictionWriterConfig{Dir: "predictions", WriteInterval: "batch"})).cfg
			}},
		{"StochasticWeightAveraging",
			func() any {
				return valid(t, NewStochasticWeightAveraging(StochasticWeightAveragingConfig{SWALRs: []float64{0.1}})).cfg
			},
			func() any {
				return valid(t, NewStochasticWeightAveraging(StochasticWeightAveragingConfig{SWALRs: []float64{0.1},
					StartFraction: 0.8, AnnealingEpochs: 10, AnnealingStrategy: "cos"})).cfg
			}},
		{"Timer",
			func() any { return valid(t, NewTimer(TimerConfig{})).cfg },
			func() any { return valid(t, NewTimer(TimerConfig{Interval: "step", Now: time.Now})).cfg }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			zero, explicit := funcsAsPointers(tc.zero()), funcsAsPointers(tc.explicit())
			if !reflect.DeepEqual(zero, explicit) {
				t.Errorf("zero value resolves to\n%+v\nthe documented defaults to\n%+v", zero, explicit)
			}
		})
	}
}

// valid fails t unless v's configuration is valid, and returns v.
func valid[T interface{ Validate() error }](t *testing.T, v T) T {
	t.Helper()
	if err := v.Validate(); err != nil {
		t.Fatal(err)
	}
	return v
}

// resolvedCheckpoint returns m's configuration with SaveTopK as m keeps it.
func resolvedCheckpoint(m *ModelCheckpoint) ModelCheckpointConfig {
	cfg := m.cfg
	cfg.SaveTopK = volt.Ptr(m.topK)
	return cfg
}

// funcsAsPointers returns cfg (a config struct) as a map of its fields with
// each func replaced by its code pointer (0 for nil), so that two configs
// defaulting to time.Now compare equal.
func funcsAsPointers(cfg any) map[string]any {
	v := reflect.ValueOf(cfg)
	out := map[string]any{}
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if f.Kind() == reflect.Func {
			out[v.Type().Field(i).Name] = f.Pointer()
			continue
		}
		out[v.Type().Field(i).Name] = f.Interface()
	}
	return out
}
