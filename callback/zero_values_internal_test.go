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
	must := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name           string
		zero, explicit func() any // the resolved configurations
	}{
		{"EarlyStopping",
			func() any { return must(NewEarlyStopping(EarlyStoppingConfig{Monitor: "m"})).(*EarlyStopping).cfg },
			func() any {
				return must(NewEarlyStopping(EarlyStoppingConfig{Monitor: "m", Patience: 3, Mode: "min",
					Strict: volt.Ptr(true), CheckFinite: volt.Ptr(true)})).(*EarlyStopping).cfg
			}},
		{"ModelCheckpoint",
			func() any {
				return resolvedCheckpoint(must(NewModelCheckpoint(ModelCheckpointConfig{})).(*ModelCheckpoint))
			},
			func() any {
				return resolvedCheckpoint(must(NewModelCheckpoint(ModelCheckpointConfig{Filename: "{epoch}-{step}", Mode: "min",
					SaveTopK: volt.Ptr(1), EveryNEpochs: 1, Now: time.Now})).(*ModelCheckpoint))
			}},
		{"BackboneFinetuning",
			func() any { return must(NewBackboneFinetuning(BackboneFinetuningConfig{})).(*BackboneFinetuning).cfg },
			func() any {
				return must(NewBackboneFinetuning(BackboneFinetuningConfig{Scope: "/backbone", UnfreezeAtEpoch: 10,
					InitialRatio: 0.1, Multiplier: 1.5})).(*BackboneFinetuning).cfg
			}},
		{"EMAWeightAveraging",
			func() any { return must(NewEMAWeightAveraging(EMAWeightAveragingConfig{})).(*EMAWeightAveraging).cfg },
			func() any {
				return must(NewEMAWeightAveraging(EMAWeightAveragingConfig{Decay: 0.999, UpdateEvery: 1,
					UseForValidation: volt.Ptr(true), CopyToModel: volt.Ptr(true)})).(*EMAWeightAveraging).cfg
			}},
		{"LearningRateMonitor",
			func() any {
				return must(NewLearningRateMonitor(LearningRateMonitorConfig{})).(*LearningRateMonitor).cfg
			},
			func() any {
				return must(NewLearningRateMonitor(LearningRateMonitorConfig{LoggingInterval: "epoch"})).(*LearningRateMonitor).cfg
			}},
		{"ModelSummary",
			func() any { return must(NewModelSummary(ModelSummaryConfig{})).(*ModelSummary).cfg },
			func() any {
				return must(NewModelSummary(ModelSummaryConfig{MaxDepth: 1, Writer: os.Stdout})).(*ModelSummary).cfg
			}},
		{"OnExceptionCheckpoint",
			func() any {
				return must(NewOnExceptionCheckpoint(OnExceptionCheckpointConfig{Dirpath: "d"})).(*OnExceptionCheckpoint).cfg
			},
			func() any {
				return must(NewOnExceptionCheckpoint(OnExceptionCheckpointConfig{Dirpath: "d",
					Filename: "on_exception.ckpt"})).(*OnExceptionCheckpoint).cfg
			}},
		{"PredictionWriter",
			func() any { return must(NewPredictionWriter(PredictionWriterConfig{})).(*PredictionWriter).cfg },
			func() any {
				return must(NewPredictionWriter(PredictionWriterConfig{Dir: "predictions", WriteInterval: "batch"})).(*PredictionWriter).cfg
			}},
		{"StochasticWeightAveraging",
			func() any {
				return must(NewStochasticWeightAveraging(StochasticWeightAveragingConfig{SWALRs: []float64{0.1}})).(*StochasticWeightAveraging).cfg
			},
			func() any {
				return must(NewStochasticWeightAveraging(StochasticWeightAveragingConfig{SWALRs: []float64{0.1},
					StartFraction: 0.8, AnnealingEpochs: 10, AnnealingStrategy: "cos"})).(*StochasticWeightAveraging).cfg
			}},
		{"Timer",
			func() any { return must(NewTimer(TimerConfig{})).(*Timer).cfg },
			func() any { return must(NewTimer(TimerConfig{Interval: "step", Now: time.Now})).(*Timer).cfg }},
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
