package callback

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/voltml/volt"
)

// OnExceptionCheckpoint saves a resumable checkpoint when Fit fails or is
// interrupted (a cancelled context, an error from a step or a hook), so that
// Fit(…, volt.FromCheckpoint(cb.Path())) continues where it stopped
// (Lightning's OnExceptionCheckpoint).
//
// It saves only for a Fit that reached OnFitStart: a failure before that (a
// data module that cannot set up, a checkpoint that does not load) leaves the
// file untouched, so a failed resume never overwrites the checkpoint it was
// resuming from. The save happens at Teardown, while the loops still say
// where they were, when Fit ended without reaching OnFitEnd; a failure after
// OnFitEnd (training complete) is saved from OnException. A failed save is
// joined to Fit's error at Teardown and logged through Trainer.Slog from
// OnException.
type OnExceptionCheckpoint struct {
	configured[OnExceptionCheckpointConfig]
	armed    bool // this Fit reached OnFitStart and no save happened yet
	finished bool // OnFitEnd was reached
}

// OnExceptionCheckpointConfig configures OnExceptionCheckpoint.
type OnExceptionCheckpointConfig struct {
	// Dirpath is the directory of the file. Required.
	Dirpath string
	// Filename is the file name, with or without the ".ckpt" extension;
	// "" means "on_exception.ckpt".
	Filename string
}

// NewOnExceptionCheckpoint returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewOnExceptionCheckpoint(cfg OnExceptionCheckpointConfig) *OnExceptionCheckpoint {
	return newCallback(cfg, newOnExceptionCheckpoint)
}

// Config returns the configuration in effect: NewOnExceptionCheckpoint's, with the defaults
// its zero values stand for filled in (print-config shows it).
func (c *OnExceptionCheckpoint) Config() OnExceptionCheckpointConfig { return c.cfg }

// newOnExceptionCheckpoint builds the callback for cfg, filling in the
// defaults its zero values stand for, or reports its bad fields.
func newOnExceptionCheckpoint(cfg *OnExceptionCheckpointConfig) (*OnExceptionCheckpoint, error) {
	if cfg.Dirpath == "" {
		return nil, fmt.Errorf("callback.NewOnExceptionCheckpoint: OnExceptionCheckpointConfig.Dirpath: required, the directory of the checkpoint")
	}
	switch {
	case cfg.Filename == "":
		cfg.Filename = "on_exception.ckpt"
	case strings.ContainsRune(cfg.Filename, filepath.Separator):
		return nil, fmt.Errorf("callback.NewOnExceptionCheckpoint: OnExceptionCheckpointConfig.Filename: a file name without directories (put those in Dirpath), got %q", cfg.Filename)
	case !strings.HasSuffix(cfg.Filename, ".ckpt"):
		cfg.Filename += ".ckpt"
	}
	return &OnExceptionCheckpoint{}, nil
}

// Path returns the checkpoint's path.
func (c *OnExceptionCheckpoint) Path() string { return filepath.Join(c.cfg.Dirpath, c.cfg.Filename) }

// Setup disarms the callback until the run's OnFitStart.
func (c *OnExceptionCheckpoint) Setup(*volt.Trainer, volt.Stage) error {
	c.armed, c.finished = false, false
	return nil
}

// OnFitStart arms the callback.
func (c *OnExceptionCheckpoint) OnFitStart(*volt.Trainer) error {
	c.armed = true
	return nil
}

// OnFitEnd notes that training completed.
func (c *OnExceptionCheckpoint) OnFitEnd(*volt.Trainer) error {
	c.finished = true
	return nil
}

// Teardown saves when Fit ended early (it reached OnFitStart, not OnFitEnd).
func (c *OnExceptionCheckpoint) Teardown(t *volt.Trainer, stage volt.Stage) error {
	if stage != volt.StageFit || !c.armed || c.finished {
		return nil
	}
	return c.save(t)
}

// OnException saves when Fit failed after OnFitEnd.
func (c *OnExceptionCheckpoint) OnException(t *volt.Trainer, _ error) {
	if !c.armed {
		return
	}
	if err := c.save(t); err != nil {
		t.Slog().Error("volt: OnExceptionCheckpoint: " + err.Error())
	}
}

func (c *OnExceptionCheckpoint) save(t *volt.Trainer) error {
	c.armed = false
	if err := os.MkdirAll(c.cfg.Dirpath, 0o755); err != nil {
		return fmt.Errorf("OnExceptionCheckpoint: %w", err)
	}
	if err := t.SaveCheckpoint(c.Path(), false); err != nil {
		return fmt.Errorf("OnExceptionCheckpoint: %w", err)
	}
	t.Slog().Info("volt: OnExceptionCheckpoint: saved a checkpoint to resume from", "path", c.Path(), "epoch", t.CurrentEpoch(), "global_step", t.GlobalStep())
	return nil
}

// Interface guards.
// SkippedInFastDevRun implements volt.FastDevRunSkipped: Config.FastDevRun
// turns OnExceptionCheckpoint off.
func (*OnExceptionCheckpoint) SkippedInFastDevRun() {}

var (
	_ volt.FastDevRunSkipped = (*OnExceptionCheckpoint)(nil)
	_ volt.Setup             = (*OnExceptionCheckpoint)(nil)
	_ volt.OnFitStart        = (*OnExceptionCheckpoint)(nil)
	_ volt.OnFitEnd          = (*OnExceptionCheckpoint)(nil)
	_ volt.Teardown          = (*OnExceptionCheckpoint)(nil)
	_ volt.OnException       = (*OnExceptionCheckpoint)(nil)
)
