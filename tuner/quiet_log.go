package tuner

import (
	"context"
	"log/slog"
)

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
