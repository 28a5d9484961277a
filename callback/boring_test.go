package callback_test

import (
	"bytes"
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/logger"
)

// boring is the shared test model (internal/testutil.Boring).
type boring = testutil.Boring

// regression returns n examples of y = x·w + 0.5 with 8 features.
func regression(n int, seed uint64) data.Slice { return testutil.Regression(n, seed) }

// boringData returns 4 training batches of 16, 1 validation batch of 16 and
// 2 test/predict batches of 8.
func boringData() volt.Loaders { return testutil.BoringData() }

// trainOnly returns boringData without validation loaders.
func trainOnly() volt.Loaders {
	l := boringData()
	l.Val = nil
	return l
}

// quiet returns a config that writes no logs and no files.
func quiet(cfg volt.Config) volt.Config {
	cfg.DisableLoggers = true
	cfg.Log = slog.New(slog.DiscardHandler)
	return cfg
}

// capture returns a config like quiet but whose volt messages go to buf.
func capture(cfg volt.Config, buf *bytes.Buffer) volt.Config {
	cfg = quiet(cfg)
	cfg.Log = slog.New(slog.NewTextHandler(buf, nil))
	return cfg
}

// fit trains m on dm with cfg and the callbacks (testutil.FitErr), failing
// the test on a configuration error; it returns the trainer and Fit's error.
func fit(t *testing.T, cfg volt.Config, m volt.Module, dm volt.DataModule, cbs ...volt.Callback) (*volt.Trainer, error) {
	t.Helper()
	cfg.Callbacks = append(cfg.Callbacks, cbs...)
	return testutil.FitErr(t, cfg, m, dm)
}

// memLogger is a logger that keeps every row in memory.
type memLogger struct {
	rows  []map[string]float64
	steps []int64
}

func (l *memLogger) LogMetrics(m map[string]float64, step int64) error {
	l.rows = append(l.rows, maps.Clone(m))
	l.steps = append(l.steps, step)
	return nil
}
func (l *memLogger) LogHyperparams(map[string]any) error { return nil }
func (l *memLogger) Save() error                         { return nil }
func (l *memLogger) Finalize(string) error               { return nil }

// series returns the values of name in logged order.
func (l *memLogger) series(name string) []float64 {
	var out []float64
	for _, r := range l.rows {
		if v, ok := r[name]; ok {
			out = append(out, v)
		}
	}
	return out
}

// fakeClock is a clock that moves only when told.
type fakeClock struct{ now time.Time }

func newFakeClock() *fakeClock               { return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }
func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) advance(d time.Duration) { c.now = c.now.Add(d) }

// ticker advances a fake clock by Step at each training batch end; list it
// before the callback that reads the clock.
type ticker struct {
	clock *fakeClock
	step  time.Duration
}

func (k ticker) OnTrainBatchEnd(*volt.Trainer, *volt.StepOutput, *data.Batch, int) error {
	k.clock.advance(k.step)
	return nil
}

// logged returns a quiet config whose only logger is l.
func logged(cfg volt.Config, l *memLogger) volt.Config {
	cfg = quiet(cfg)
	cfg.DisableLoggers = false
	cfg.Loggers = []logger.Logger{l}
	return cfg
}
