package volt

import (
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
func (l *logging) markLoggers() ([]loggerMark, error) {
	var marks []loggerMark
	var errs []error
	for _, l := range leafLoggers(l.loggers) {
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
	st, err := t.decodeStateDoc(path, h.State())
	if err != nil {
		return nil
	}
	return t.loggerMarks().resume(st)
}

// loggerMarks is the state part of the loggers: how far each one's files
// went when the checkpoint was taken ("logs"; markLoggers). Saving it
// flushes them, so it comes after every other part. A Fit resumed from the
// checkpoint hands each logger its position when the run starts, before
// anything is written under LogDir (settleLoggers, resume), not when the
// other parts load.
type loggerMarks struct {
	logs *logging
	dir  string // this run's log directory
	log  func(msg string, attrs ...any)
}

// loggerMarks returns the loggers' state part.
func (t *Trainer) loggerMarks() loggerMarks {
	return loggerMarks{logs: &t.logs, dir: t.logDir(), log: t.cfg.Log.Info}
}

func (loggerMarks) stateKey() string { return "logs" }

func (p loggerMarks) save(st *stateDoc) error {
	marks, err := p.logs.markLoggers()
	if err != nil {
		return err
	}
	return st.putNonEmpty("logs", marks)
}

// load says where the run resumed logged, when this run logs elsewhere.
func (p loggerMarks) load(st *stateDoc) error {
	var dir string
	if _, err := st.get("log_dir", &dir); err != nil {
		return err
	}
	if dir != "" && p.dir != dir && len(p.logs.loggers) > 0 {
		st.info("volt: resuming; this run logs to "+p.dir+", the run it resumes logged to "+dir, "checkpoint", st.path)
	}
	return nil
}

// resume hands each logger its position in st, the trainer state of the
// checkpoint Fit resumes from, so that the resumed run continues the same
// files from there; a "logs" it cannot decode is ignored (restore reports
// the checkpoint's problems).
func (p loggerMarks) resume(st *stateDoc) error {
	path := st.path
	var marks []loggerMark
	if _, err := st.get("logs", &marks); err != nil {
		return nil
	}
	leaves := leafLoggers(p.logs.loggers)
	if len(marks) == 0 {
		if slices.ContainsFunc(leaves, func(l logger.Logger) bool { _, ok := l.(logger.Resumable); return ok }) {
			p.log("volt: resuming; the checkpoint holds no logger positions (its run had no loggers, or its \"logs\" part is missing), so this run's logs start afresh instead of continuing the run it resumes",
				"checkpoint", path)
		}
		return nil
	}
	if len(marks) != len(leaves) {
		p.log("volt: resuming; the checkpoint was saved with other loggers, so this run's logs start afresh",
			"checkpoint", path, "loggers", len(leaves), "checkpoint_loggers", len(marks))
		return nil
	}
	var dirs []string
	for i, l := range leaves {
		m := marks[i]
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
		p.log("volt: resuming; the logs continue those of the run it resumes in "+strings.Join(dirs, ", "), "checkpoint", path)
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
