package volt_test

import (
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
)

// countingLogger counts the rows logged since its last Save.
type countingLogger struct {
	rows, unsaved, saves int
}

func (l *countingLogger) LogMetrics(map[string]float64, int64) error {
	l.rows++
	l.unsaved++
	return nil
}
func (l *countingLogger) LogHyperparams(map[string]any) error { return nil }
func (l *countingLogger) Save() error                         { l.saves++; l.unsaved = 0; return nil }
func (l *countingLogger) Finalize(string) error               { return l.Save() }

// unsavedAtEpochStart records, at each training epoch start, how many rows
// the logger holds unsaved.
type unsavedAtEpochStart struct {
	log     *countingLogger
	unsaved []int
}

func (u *unsavedAtEpochStart) OnTrainEpochStart(*volt.Trainer) error {
	u.unsaved = append(u.unsaved, u.log.unsaved)
	return nil
}

// TestLoggersAreFlushedAtEveryEpochEnd: every training epoch ends with the
// loggers saved, so a crash in the next epoch loses none of its rows (before,
// Save came only at the end of the run).
func TestLoggersAreFlushedAtEveryEpochEnd(t *testing.T) {
	l := &countingLogger{}
	probe := &unsavedAtEpochStart{log: l}
	cfg := quiet(volt.Config{MaxEpochs: 3, LogEveryNSteps: 1, Callbacks: []volt.Callback{probe}})
	cfg.DisableLoggers, cfg.Loggers = false, []logger.Logger{l}
	testutil.Fit(t, cfg, &boring{}, boringData())
	if l.rows == 0 {
		t.Fatal("nothing was logged")
	}
	for epoch, n := range probe.unsaved[1:] {
		if n != 0 {
			t.Errorf("epoch %d ended with %d rows not saved", epoch, n)
		}
	}
}
