package tuner

import (
	"context"
	"log/slog"

	"github.com/voltml/volt"
)

// trialConfig is the configuration of a trainer that trains steps steps of
// t's configuration for the learning-rate sweep or a batch-size trial: it
// starts from t's weights, runs rec as its only callback besides that, and
// validates, sanity-checks, logs, checkpoints, summarises and handles
// signals not at all; volt's own notes are left out (quiet).
func trialConfig(t *volt.Trainer, steps int, rec volt.Callback) volt.Config {
	cfg := t.Config()
	cfg.MaxEpochs, cfg.MaxSteps = -1, int64(steps)
	cfg.Callbacks = []volt.Callback{&warmStart{from: t.Store()}, rec}
	cfg.Loggers, cfg.DisableLoggers = nil, true
	cfg.LimitValBatches = volt.Batches(0)
	cfg.NumSanityValSteps = volt.Ptr(0)
	cfg.DisableCheckpointing, cfg.DisableModelSummary = true, true
	cfg.HandleSignals = false
	cfg.Log = quiet(cfg.Log)
	cfg.EnableProgressBar = volt.Ptr(false)
	return cfg
}

// quiet returns l (slog's default when nil) without its Info and Debug
// records: the sweep's and the trials' trainers would otherwise repeat the
// same notes ("validation is off", "Fit stopped") at every trial.
func quiet(l *slog.Logger) *slog.Logger {
	if l == nil {
		l = slog.Default()
	}
	return slog.New(warnOnly{l.Handler()})
}

// warnOnly passes on warnings and errors only.
type warnOnly struct{ slog.Handler }

// Enabled drops records below slog.LevelWarn.
func (h warnOnly) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn && h.Handler.Enabled(ctx, level)
}
