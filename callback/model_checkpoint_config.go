package callback

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ModelCheckpointConfig configures ModelCheckpoint. The cadences
// EveryNTrainSteps, EveryNEpochs and TrainTimeInterval are mutually
// exclusive; with none of them it saves every epoch.
type ModelCheckpointConfig struct {
	// Dirpath is the directory of the files; "" means
	// Trainer.LogDir()+"/checkpoints", resolved when Fit starts.
	Dirpath string
	// Filename is the name template, without the ".ckpt" extension; ""
	// means "{epoch}-{step}" (rendered "epoch=3-step=120"). Placeholders are
	// {epoch}, {step} and any metric of Trainer.CallbackMetrics, with an
	// optional Python-style format spec ({val_loss:.2f}, {epoch:03d}). See
	// NoAutoInsertMetricName.
	Filename string
	// NoAutoInsertMetricName renders "{val_loss}" as "0.1234" instead of
	// Lightning's default "val_loss=0.1234".
	NoAutoInsertMetricName bool
	// Monitor is the metric that ranks checkpoints ("" ranks by recency:
	// the top k are the latest k). "epoch" and "step" can be monitored too.
	Monitor string
	// Mode is "min" (default: lower is better) or "max".
	Mode string
	// SaveTopK is how many checkpoints to keep: k >= 1, 0 for none (only
	// last.ckpt, with SaveLast) or -1 for all; nil means 1. Without a
	// Monitor it must be -1, 0 or 1.
	SaveTopK *int
	// SaveLast keeps last.ckpt, a copy of the newest checkpoint, updated at
	// every save and at the end of training, and only then (Lightning also
	// rewrites it at every epoch's or validation's end whose cadence is not
	// due). It is a real file (written atomically), not a link.
	SaveLast bool
	// EveryNTrainSteps saves after every n optimization steps (checked at
	// training batch end). With a Monitor, a save due after a batch that a
	// validation follows waits for that validation's end, and one due before
	// the Fit's first validation has logged the monitored value waits for
	// it, so that it ranks with fresh values (Lightning 2.5.5; 2.2.5 saves
	// at the batch). The same holds for TrainTimeInterval.
	EveryNTrainSteps int
	// EveryNEpochs saves every n epochs (default 1 when no other cadence is
	// set).
	EveryNEpochs int
	// TrainTimeInterval saves at the first training batch end after this
	// much time has passed since the last timed save (or the start of Fit).
	TrainTimeInterval time.Duration
	// SaveOnTrainEpochEnd chooses the hook of the epoch cadence: true for
	// OnTrainEpochEnd, false for OnValidationEnd; nil chooses as Lightning
	// does: OnTrainEpochEnd when Trainer.MonitorsAtTrainEpochEnd says so
	// (CheckValEveryNEpoch 1, ValCheckInterval unset, Fraction(1) or
	// Batches(1)) or Fit does not validate, OnValidationEnd otherwise.
	SaveOnTrainEpochEnd *bool
	// SaveWeightsOnly writes the module's weights only (such files load in
	// Validate, Test and Predict; Fit cannot resume from them).
	SaveWeightsOnly bool
	// Verbose reports every save and every rejected checkpoint through
	// Trainer.Slog.
	Verbose bool
	// Now is the clock of TrainTimeInterval; nil means time.Now.
	Now func() time.Time
}

// NewModelCheckpoint returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewModelCheckpoint(cfg ModelCheckpointConfig) *ModelCheckpoint {
	return newCallback(cfg, newModelCheckpoint)
}

// newModelCheckpoint builds the callback for cfg, filling in the defaults its
// zero values stand for, or reports its bad fields.
func newModelCheckpoint(cfg *ModelCheckpointConfig) (*ModelCheckpoint, error) {
	var errs []string
	bad := func(format string, args ...any) {
		errs = append(errs, "ModelCheckpointConfig."+fmt.Sprintf(format, args...))
	}
	m := &ModelCheckpoint{topK: 1, orphansUpTo: -1}
	if cfg.SaveTopK != nil {
		m.topK = *cfg.SaveTopK
	}
	switch {
	case m.topK < -1:
		bad("SaveTopK: must be -1 (keep all), 0 (keep none) or k >= 1, got %d", m.topK)
	case m.topK > 1 && cfg.Monitor == "":
		bad("SaveTopK: %d needs a Monitor to rank checkpoints; without one it must be -1, 0 or 1", m.topK)
	}
	switch cfg.Mode {
	case "", "min":
		cfg.Mode = "min"
		m.better = func(a, b float64) bool { return a < b }
	case "max":
		m.better = func(a, b float64) bool { return a > b }
	default:
		bad("Mode: unknown %q; valid: \"min\", \"max\"", cfg.Mode)
	}
	if cfg.EveryNTrainSteps < 0 {
		bad("EveryNTrainSteps: must be >= 1 (0: unset), got %d", cfg.EveryNTrainSteps)
	}
	if cfg.EveryNEpochs < 0 {
		bad("EveryNEpochs: must be >= 1 (0: unset), got %d", cfg.EveryNEpochs)
	}
	if cfg.TrainTimeInterval < 0 {
		bad("TrainTimeInterval: must be > 0 (0: unset), got %s", cfg.TrainTimeInterval)
	}
	var set []string
	for name, on := range map[string]bool{
		"EveryNTrainSteps": cfg.EveryNTrainSteps > 0, "EveryNEpochs": cfg.EveryNEpochs > 0, "TrainTimeInterval": cfg.TrainTimeInterval > 0,
	} {
		if on {
			set = append(set, name)
		}
	}
	slices.Sort(set)
	switch {
	case len(set) > 1:
		bad("%s: mutually exclusive, set only one of EveryNTrainSteps, EveryNEpochs, TrainTimeInterval", strings.Join(set, ", "))
	case len(set) == 0:
		cfg.EveryNEpochs = 1
	}
	if cfg.Filename == "" {
		cfg.Filename = "{epoch}-{step}"
	}
	var err error
	if m.name, err = parseFilename(cfg.Filename, !cfg.NoAutoInsertMetricName); err != nil {
		bad("Filename: %v", err)
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return nil, fmt.Errorf("callback.NewModelCheckpoint: %s", strings.Join(errs, "; "))
	}
	if cfg.Now == nil {
		cfg.Now, m.defaultNow = time.Now, true
	}
	m.state = newModelCheckpointState(cfg.Monitor)
	return m, nil
}

// Config returns the configuration in effect: the one given, with the zero
// values that mean a default replaced by that default (Mode "min", SaveTopK
// 1, EveryNEpochs 1 when no cadence is set, Filename "{epoch}-{step}").
// Dirpath stays "" when not given: it is chosen when Fit starts; so does a
// nil Now (time.Now), which a config cannot set.
func (m *ModelCheckpoint) Config() ModelCheckpointConfig {
	c, k := m.cfg, m.topK
	c.SaveTopK = &k
	if m.defaultNow {
		c.Now = nil
	}
	return c
}
