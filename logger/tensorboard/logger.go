package tensorboard

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/voltml/volt/logger"
)

// Logger writes metrics, hyperparameters and text to a TensorBoard event
// file in LogDir. The directory is claimed (logger.VersionDir.Claim) when a
// run starts or on the first write, and the file created on the first
// write; a run resumed from a checkpoint appends to the checkpoint's event
// file instead (logger.Resumable). Events are buffered and written every Config.FlushEvery events, when the
// oldest buffered event is older than Config.FlushInterval, and on Save and
// Finalize. It is safe for concurrent use.
type Logger struct {
	mu         sync.Mutex
	cfg        Config
	dir        *logger.RunDir
	resume     *logger.Position // the killed run's event file to continue
	now        func() time.Time
	start      time.Time // session start time (first LogHyperparams)
	file       *eventFile
	lastPath   string
	lastSize   int64          // length of lastPath when it was closed
	hparams    map[string]any // merged top-level hyperparameters
	hps        []hparam       // hparams flattened when last written
	started    bool           // a session_start_info was written
	ended      bool           // the session_end_info was written
	metricTags map[string]struct{}
	invalid    error // what Validate reports: a bad Config, an unreadable SaveDir
}

// New returns a logger configured by cfg, as Lightning's TensorBoardLogger
// is built: it cannot fail, and volt.NewTrainer reports a bad field (or a
// SaveDir/Name whose version_N directories cannot be listed) through
// Validate before any run, naming the logger. It resolves the version
// directory like logger.NewCSV, scanning SaveDir/Name for version_N
// directories when cfg.Version is nil, and creates no files or directories.
//
//	volt.Config{Loggers: []volt.Logger{tensorboard.New(tensorboard.Config{SaveDir: dir})}}
func New(cfg Config) *Logger {
	cfg, dir, err := cfg.withDefaults()
	return &Logger{cfg: cfg, dir: logger.NewRunDir(dir), now: time.Now, metricTags: map[string]struct{}{}, invalid: err}
}

// Validate reports what was wrong with the Config New was given (the
// field, its value and what would be valid), or that the version
// directories under SaveDir/Name could not be listed; nil for a logger that
// can write. A logger that fails Validate writes nothing: its writes return
// the same error.
func (l *Logger) Validate() error { return l.invalid }

// Config returns the configuration New was given with the defaults its
// zero values stand for filled in (SaveDir ".", Name "volt_logs",
// FlushEvery 10, FlushInterval 2m0s); a chosen version stays unset
// (print-config shows it).
func (l *Logger) Config() Config {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, d := l.cfg, l.dir.Dir()
	c.SaveDir, c.Name, c.pinned = d.SaveDir, d.Name, nil
	return c
}

// LogDir returns the directory event files are written to:
// SaveDir/Name/version_N (or SaveDir/Name/VersionName), as
// logger.CSVLogger.LogDir.
func (l *Logger) LogDir() string { return l.dir.Path() }

// Version returns N of the version_N directory, or -1 when
// Config.VersionName named it.
func (l *Logger) Version() int { return l.dir.Number() }

// ClaimDir creates the log directory, claiming a new version_N atomically
// when the version was chosen as the next free one (logger.VersionDir.Claim).
func (l *Logger) ClaimDir() error { return l.claim() }

// Mark writes the buffered events to the event file, syncs it and returns
// the file's length in bytes. Before the first event it creates the file,
// so that the position names the file a resumed run continues.
func (l *Logger) Mark() (logger.Position, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil && l.resume == nil && l.lastPath == "" {
		if err := l.openLocked(l.now()); err != nil {
			return logger.Position{}, err
		}
	}
	switch {
	case l.file != nil:
		if err := l.file.flush(true); err != nil {
			return logger.Position{}, err
		}
		return logger.Position{Dir: l.dir.Path(), File: filepath.Base(l.file.path), Offset: l.file.size}, nil
	case l.resume != nil:
		return *l.resume, nil
	}
	return logger.Position{Dir: l.dir.Path(), File: filepath.Base(l.lastPath), Offset: l.lastSize}, nil
}

// Resume continues the run whose event file pos.File was pos.Offset bytes
// long at a checkpoint: the logger writes into pos.Dir, and its first write
// cuts that file back to that length and appends to it, so that TensorBoard
// and other readers see one run whose every event appears once. See
// logger.Resumable.
func (l *Logger) Resume(pos logger.Position) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.invalid != nil {
		return false, l.invalid
	}
	if l.file != nil || l.lastPath != "" {
		return false, nil
	}
	moved, err := l.dir.Resume(pos.Dir, func() error {
		if pos.Offset < 0 || pos.File != filepath.Base(pos.File) {
			return fmt.Errorf("tensorboard: cannot resume %s at byte %d of %q: not a file name and length", pos.Dir, pos.Offset, pos.File)
		}
		return nil
	})
	if !moved {
		return false, err
	}
	if pos.File != "" {
		l.resume = &pos
	}
	return true, nil
}

// EventFile returns the path of the event file being written, or of the
// last one after Finalize; "" before the first write.
func (l *Logger) EventFile() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastPath
}

// LogMetrics writes one event at step holding a simple_value scalar
// summary (float32, as TensorBoard stores scalars) per metric, sorted by
// name. Metric names must be non-empty; an empty map writes nothing.
func (l *Logger) LogMetrics(metrics map[string]float64, step int64) error {
	if len(metrics) == 0 {
		return nil
	}
	tags := slices.Sorted(maps.Keys(metrics))
	values := make([][]byte, len(tags))
	for i, tag := range tags {
		if tag == "" {
			return errors.New("tensorboard: LogMetrics: empty metric name")
		}
		values[i] = scalarValue(tag, float32(metrics[tag]))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, tag := range tags {
		l.metricTags[tag] = struct{}{}
	}
	return l.writeLocked(step, values...)
}

// LogText writes a text summary (TensorBoard's text plugin: a DT_STRING
// tensor) with tag at step. The text is rendered as Markdown by TensorBoard.
func (l *Logger) LogText(tag, text string, step int64) error {
	if tag == "" {
		return errors.New("tensorboard: LogText: empty tag")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writeLocked(step, textValue(tag, text))
}

// LogHyperparams merges params into the hyperparameters logged so far
// (top-level keys of later calls replace earlier ones) and writes the
// HParams plugin's session_start_info with all of them, flattened as
// "outer/inner" (the package documentation lists the value conversions).
// TensorBoard reads the first session_start_info of a run, so log all
// hyperparameters in one call before training when possible. The
// experiment summary, declaring the hyperparameters and every metric
// logged, is written with the session end by Finalize.
func (l *Logger) LogHyperparams(params map[string]any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	merged := maps.Clone(l.hparams)
	if merged == nil {
		merged = map[string]any{}
	}
	maps.Copy(merged, params)
	hps := flattenHparams(merged)
	if len(hps) == 0 {
		return nil
	}
	if !l.started {
		l.start = l.now()
	}
	if err := l.writeLocked(0, sessionStartValue(hps, wallTime(l.start))); err != nil {
		return err
	}
	l.hparams, l.hps, l.started = merged, hps, true
	return nil
}

// Save writes buffered events to the event file and syncs it to disk.
func (l *Logger) Save() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return nil
	}
	return l.file.flush(true)
}

// Finalize ends the run. When hyperparameters were logged it writes the
// HParams experiment summary (hyperparameters and all metric tags logged)
// and the session_end_info with the status mapped from status: "success"
// to STATUS_SUCCESS, "failed" to STATUS_FAILURE and "interrupted" to
// STATUS_UNKNOWN. It then flushes, syncs and closes the event file. An
// invalid status is reported but the file is still closed. Calling it again
// is harmless; events logged after it go to a new event file.
func (l *Logger) Finalize(status string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	if !slices.Contains([]string{logger.StatusSuccess, logger.StatusFailed, logger.StatusInterrupted}, status) {
		errs = append(errs, fmt.Errorf("tensorboard: Finalize status %q is invalid; valid: %q, %q, %q",
			status, logger.StatusSuccess, logger.StatusFailed, logger.StatusInterrupted))
	}
	if l.started && !l.ended {
		tags := slices.Sorted(maps.Keys(l.metricTags))
		end := wallTime(l.now())
		err := errors.Join(
			l.writeLocked(0, experimentValue(l.hps, tags, wallTime(l.start))),
			l.writeLocked(0, sessionEndValue(sessionStatus(status), end)),
		)
		errs = append(errs, err)
		l.ended = err == nil
	}
	if l.file == nil && l.resume != nil && status == logger.StatusSuccess {
		errs = append(errs, l.openLocked(l.now())) // drop what a killed run logged after its checkpoint
	}
	if l.file != nil {
		errs = append(errs, l.file.close())
		l.lastSize = l.file.size
		l.file = nil
	}
	return errors.Join(errs...)
}

// writeLocked writes one summary event holding values, opening the event
// file first when none is open and flushing when the buffer is due; l.mu
// must be held.
func (l *Logger) writeLocked(step int64, values ...[]byte) error {
	now := l.now()
	if err := l.openLocked(now); err != nil {
		return err
	}
	if err := l.file.write(summaryEvent(wallTime(now), step, values...), now); err != nil {
		return err
	}
	if l.file.pending >= l.cfg.FlushEvery || now.Sub(l.file.oldest) >= l.cfg.FlushInterval {
		return l.file.flush(false)
	}
	return nil
}

// openLocked opens the event file when none is open: the killed run's
// file being resumed, cut back to the resumed length, or a new one; l.mu
// must be held.
func (l *Logger) openLocked(now time.Time) error {
	if l.file != nil {
		return nil
	}
	if err := l.claim(); err != nil {
		return err
	}
	if r := l.resume; r != nil {
		l.resume = nil
		f, err := openEventFile(filepath.Join(l.dir.Path(), r.File), r.Offset)
		if err == nil {
			l.file, l.lastPath = f, f.path
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// The resumed run's file is gone: start a new one.
	}
	f, err := createEventFile(l.dir.Path(), now)
	if err != nil {
		return err
	}
	l.file, l.lastPath = f, f.path
	return nil
}

// claim claims the log directory once, or reports why the logger cannot
// write.
func (l *Logger) claim() error {
	if l.invalid != nil {
		return l.invalid
	}
	if _, err := l.dir.Claim(); err != nil {
		return fmt.Errorf("tensorboard: %w", err)
	}
	return nil
}

// Logger implements logger.Logger, logger.Direr, logger.Resumable and
// logger.DirClaimer.
var (
	_ logger.Logger     = (*Logger)(nil)
	_ logger.Direr      = (*Logger)(nil)
	_ logger.Resumable  = (*Logger)(nil)
	_ logger.DirClaimer = (*Logger)(nil)
)
