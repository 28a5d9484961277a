package testutil

import (
	"log/slog"
	"testing"

	"github.com/voltml/volt"
)

// Quiet returns cfg without the default CSV logger, the model summary and
// volt's own messages and the default progress bar: a trainer that writes
// no files and prints nothing.
func Quiet(cfg volt.Config) volt.Config {
	cfg.DisableLoggers = true
	cfg.DisableModelSummary = true
	cfg.Log = slog.New(slog.DiscardHandler)
	if cfg.EnableProgressBar == nil {
		cfg.EnableProgressBar = volt.Ptr(false) // no default bar's lines in the test output
	}
	return cfg
}

// NewTrainer returns a trainer of cfg, failing t when volt.NewTrainer
// rejects it.
func NewTrainer(t testing.TB, cfg volt.Config) *volt.Trainer {
	t.Helper()
	tr, err := volt.NewTrainer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Fit returns a trainer of cfg that has fitted m on dm (with the run
// options), failing t when NewTrainer or Fit returns an error.
func Fit(t testing.TB, cfg volt.Config, m volt.Module, dm volt.DataModule, opts ...volt.RunOption) *volt.Trainer {
	t.Helper()
	tr := NewTrainer(t, cfg)
	if err := tr.Fit(t.Context(), m, dm, opts...); err != nil {
		t.Fatal(err)
	}
	return tr
}

// FitErr is Fit for a run that may fail: it fails t only when NewTrainer
// rejects cfg, and returns the trainer and Fit's error.
func FitErr(t testing.TB, cfg volt.Config, m volt.Module, dm volt.DataModule, opts ...volt.RunOption) (*volt.Trainer, error) {
	t.Helper()
	tr := NewTrainer(t, cfg)
	return tr, tr.Fit(t.Context(), m, dm, opts...)
}
