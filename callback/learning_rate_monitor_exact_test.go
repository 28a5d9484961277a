package callback_test

import (
	"slices"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/optim"
)

// TestLearningRateMonitorLogsExactRates: the logged learning rate is the
// configured or scheduled float64 value (0.003, not the float32-rounded
// 0.003000000026 the optimizer's variable holds).
func TestLearningRateMonitorLogsExactRates(t *testing.T) {
	step := optim.NewStepLR(1, 0.3)
	tests := []struct {
		name string
		opts volt.Optimizers
		want []float64
	}{
		{"constant", volt.Optimize(optim.Adam(0.003)), repeat(0.003, 3)},
		{"scheduled per epoch", volt.Optimizers{{Optimizer: optim.SGD(0.1), Scheduler: step}}, []float64{0.1, 0.1 * 0.3, 0.1 * 0.3 * 0.3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := callback.NewLearningRateMonitor(callback.LearningRateMonitorConfig{})
			log := &memLogger{}
			if _, err := fit(t, logged(volt.Config{MaxEpochs: 3, LogEveryNSteps: 1}, log), &heads{opts: tc.opts}, trainOnly(), m); err != nil {
				t.Fatal(err)
			}
			name := m.Names()[0]
			if got := log.series(name); !slices.Equal(got, tc.want) {
				t.Errorf("%s = %v, want exactly %v", name, got, tc.want)
			}
		})
	}
}
