package zoo

import (
	"log/slog"
	"math/rand/v2"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// QuietConfig is a configuration that trains m as its example does (its
// gradient clipping) and otherwise does nothing but train: one epoch, no
// sanity check, loggers, checkpoints, summary, progress bar or log lines.
// Callers set what they measure (Callbacks, Backend, MaxSteps).
func (m Model) QuietConfig() volt.Config {
	cfg := volt.Config{MaxEpochs: 1, NumSanityValSteps: volt.Ptr(0), DisableLoggers: true,
		DisableCheckpointing: true, DisableModelSummary: true, EnableProgressBar: volt.Ptr(false),
		Log: slog.New(slog.DiscardHandler)}
	if m.ClipNorm > 0 {
		cfg.GradientClipVal, cfg.GradientClipAlgorithm = m.ClipNorm, volt.ClipNorm
	}
	return cfg
}

// Loader returns a loader of batches synthetic batches of m's shape, drawn
// from rng, in order.
func (m Model) Loader(batches int, rng *rand.Rand) *data.DataLoader {
	return &data.DataLoader{Dataset: m.Examples(m.Batch*batches, rng), BatchSize: m.Batch}
}
