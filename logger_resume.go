package volt

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/logger"
)

// loggerMark is where one logger's files stood when a checkpoint was
// taken: what a Fit resumed from the checkpoint continues (the loggers in
// Config order).
type loggerMark struct {
	// Logger is the logger's Go type.
	Logger string `json:"logger"`
	// Position is nil for loggers that are not logger.Resumable.
	Position *logger.Position `json:"position,omitempty"`
}

// markLoggers makes every logger write (and, where it can, sync) every row
// logged so far, before a checkpoint is published, so that a checkpoint is
// never ahead of the logs it implies; it returns the positions to store in
// the checkpoint.
func (t *Trainer) markLoggers() ([]loggerMark, error) {
	var marks []loggerMark
	var errs []error
	for _, l := range leafLoggers(t.logs.loggers) {
		m := loggerMark{Logger: fmt.Sprintf("%T", l)}
		if r, ok := l.(logger.Resumable); ok {
			pos, err := r.Mark()
			if err != nil {
				errs = append(errs, fmt.Errorf("logger %T: %w", l, err))
			} else {
				m.Position = &pos
			}
		} else if err := l.Save(); err != nil {
			errs = append(errs, fmt.Errorf("logger %T: %w", l, err))
		}
		marks = append(marks, m)
	}
	return marks, errors.Join(errs...)
}

// settleLoggers fixes the loggers' directories when a run starts, before
// any callback places files under LogDir: a Fit resumed from a checkpoint
// continues the logs of the run it resumes (resumeLoggers), the others
// claim their directory (a new version_N, atomically). In a data-parallel
// job rank 0 settles and the other ranks learn its directory.
func (t *Trainer) settleLoggers(fn Stage, opts *runOptions) error {
	if len(t.logs.loggers) == 0 || fn == StagePredict {
		return nil
	}
	if t.IsGlobalZero() {
		if fn == StageFit && opts.ckptPath != "" {
			if err := t.resumeLoggers(opts); err != nil {
				return err
			}
		}
		if err := t.claimLogDirs(); err != nil {
			return err
		}
	}
	if t.ddp.on {
		return t.rankZeroLoggers()
	}
	return nil
}

// claimLogDirs makes every logger that claims its directory do so now.
func (t *Trainer) claimLogDirs() error {
	var errs []error
	for _, l := range leafLoggers(t.logs.loggers) {
		if c, ok := l.(logger.DirClaimer); ok {
			if err := c.ClaimDir(); err != nil {
				errs = append(errs, fmt.Errorf("logger %T: %w", l, err))
			}
		}
	}
	return errors.Join(errs...)
}

// resumeLoggers hands each logger its position in the checkpoint Fit
// resumes from, so that the resumed run continues the same files from
// there. It resolves the checkpoint ("last", "best") once, for restore too;
// a checkpoint that cannot be read is left for restore to report.
func (t *Trainer) resumeLoggers(opts *runOptions) error {
	path, err := t.resolveCheckpointPath(opts.ckptPath)
	if err != nil {
		return nil
	}
	opts.ckptPath = path
	h, err := checkpoint.ReadHeader(path)
	if err != nil {
		return nil
	}
	var st struct {
		Logs []loggerMark `json:"logs"`
	}
	if json.Unmarshal(h.State(), &st) != nil {
		return nil
	}
	leaves := leafLoggers(t.logs.loggers)
	if len(st.Logs) == 0 {
		if slices.ContainsFunc(leaves, func(l logger.Logger) bool { _, ok := l.(logger.Resumable); return ok }) {
			t.cfg.Log.Info("volt: resuming; the checkpoint holds no logger positions (its run had no loggers, or its \"logs\" part is missing), so this run's logs start afresh instead of continuing the run it resumes",
				"checkpoint", path)
		}
		return nil
	}
	if len(st.Logs) != len(leaves) {
		t.cfg.Log.Info("volt: resuming; the checkpoint was saved with other loggers, so this run's logs start afresh",
			"checkpoint", path, "loggers", len(leaves), "checkpoint_loggers", len(st.Logs))
		return nil
	}
	var dirs []string
	for i, l := range leaves {
		m := st.Logs[i]
		r, ok := l.(logger.Resumable)
		if !ok || m.Position == nil || m.Logger != fmt.Sprintf("%T", l) {
			continue
		}
		resumed, err := r.Resume(*m.Position)
		if err != nil {
			return fmt.Errorf("checkpoint %s: logger %T: %w", path, l, err)
		}
		if resumed && !slices.Contains(dirs, m.Position.Dir) {
			dirs = append(dirs, m.Position.Dir)
		}
	}
	if len(dirs) > 0 {
		t.cfg.Log.Info("volt: resuming; the logs continue those of the run it resumes in "+strings.Join(dirs, ", "), "checkpoint", path)
	}
	return nil
}

// leafLoggers returns loggers with every logger.Group replaced by the
// loggers it holds, at any depth.
func leafLoggers(loggers []logger.Logger) []logger.Logger {
	var out []logger.Logger
	for _, l := range loggers {
		if g, ok := l.(logger.Group); ok {
			out = append(out, leafLoggers(g.Loggers())...)
		} else {
			out = append(out, l)
		}
	}
	return out
}
