package callback_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
)

// TestBadCallbackConfigReachesNewTrainer: the callback constructors return
// no error; a bad field reaches NewTrainer's error, naming the callback's
// place in Config.Callbacks, its type and the field, and Validate reports
// the same error.
func TestBadCallbackConfigReachesNewTrainer(t *testing.T) {
	tests := []struct {
		cb   interface{ Validate() error }
		want string
	}{
		{callback.NewEarlyStopping(callback.EarlyStoppingConfig{Patience: 5}),
			"callback.NewEarlyStopping: EarlyStoppingConfig.Monitor: required"},
		{callback.NewModelCheckpoint(callback.ModelCheckpointConfig{Monitor: "val_loss", Mode: "down"}),
			`callback.NewModelCheckpoint: ModelCheckpointConfig.Mode: unknown "down"`},
		{callback.NewTimer(callback.TimerConfig{Interval: "hour"}), `TimerConfig.Interval: unknown "hour"`},
		{callback.NewLearningRateMonitor(callback.LearningRateMonitorConfig{LoggingInterval: "batch"}),
			`LearningRateMonitorConfig.LoggingInterval: unknown "batch"`},
		{callback.NewModelSummary(callback.ModelSummaryConfig{MaxDepth: -2}), "ModelSummaryConfig.MaxDepth"},
		{callback.NewOnExceptionCheckpoint(callback.OnExceptionCheckpointConfig{}), "OnExceptionCheckpointConfig.Dirpath: required"},
		{callback.NewPredictionWriter(callback.PredictionWriterConfig{WriteInterval: "step"}), "PredictionWriterConfig.WriteInterval"},
		{callback.NewProgressBar(callback.ProgressBarConfig{Every: -1}), "ProgressBarConfig.Every"},
		{callback.NewGradientAccumulationScheduler(callback.GradientAccumulationSchedulerConfig{}),
			"GradientAccumulationSchedulerConfig.Scheduling: must not be empty"},
		{callback.NewStochasticWeightAveraging(callback.StochasticWeightAveragingConfig{}), "StochasticWeightAveragingConfig"},
		{callback.NewEMAWeightAveraging(callback.EMAWeightAveragingConfig{Decay: 2}), "EMAWeightAveragingConfig.Decay"},
		{callback.NewBackboneFinetuning(callback.BackboneFinetuningConfig{Multiplier: -1}), "BackboneFinetuningConfig.Multiplier"},
		{callback.NewFinetuning(callback.FinetuningConfig{Freeze: []string{"x/y"}}), "FinetuningConfig.Freeze[0]"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%T", tc.cb), func(t *testing.T) {
			verr := tc.cb.Validate()
			if verr == nil || !strings.Contains(verr.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error containing %q", verr, tc.want)
			}
			_, err := volt.NewTrainer(volt.Config{Callbacks: []volt.Callback{callback.NewTimer(callback.TimerConfig{}), tc.cb}})
			if want := fmt.Sprintf("Config.Callbacks[1]: %T: %v", tc.cb, verr); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("NewTrainer error = %v, want one containing %q", err, want)
			}
		})
	}
	for _, ok := range []interface{ Validate() error }{
		callback.NewEarlyStopping(callback.EarlyStoppingConfig{Monitor: "val_loss"}),
		callback.NewModelCheckpoint(callback.ModelCheckpointConfig{}),
		callback.NewDeviceStatsMonitor(callback.DeviceStatsMonitorConfig{}),
		callback.NewThroughputMonitor(callback.ThroughputMonitorConfig{}),
	} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%T: Validate = %v on a valid configuration", ok, err)
		}
	}
}
