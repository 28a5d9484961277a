package tensorboard

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/voltml/volt/logger"
)

// Logger writes metrics, hyperparameters and text to a TensorBoard event
// file in LogDir. The directory and file are created on the first write;
// events are buffered and written every Config.FlushEvery events, when the
// oldest buffered event is older than Config.FlushInterval, and on Save and
// Finalize. It is safe for concurrent use.
type Logger struct {
	mu         sync.Mutex
	cfg        Config
	dir        logger.VersionDir // pinned
	now        func() time.Time
	start      time.Time // session start time (first LogHyperparams)
	file       *eventFile
	lastPath   string
	hparams    map[string]any // merged top-level hyperparameters
	hps        []hparam       // hparams flattened when last written
	started    bool           // a session_start_info was written
	ended      bool           // the session_end_info was written
	metricTags map[string]struct{}
}

// New validates cfg and resolves the version directory like logger.NewCSV,
// scanning SaveDir/Name for version_N directories when cfg.Version is nil.
// It creates no files or directories.
func New(cfg Config) (*Logger, error) {
	cfg, dir, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Logger{cfg: cfg, dir: dir, now: time.Now, metricTags: map[string]struct{}{}}, nil
}

// LogDir returns the directory event files are written to:
// SaveDir/Name/version_N (or SaveDir/Name/VersionName).
func (l *Logger) LogDir() string {
	return l.dir.Path()
}

// Version returns N of the version_N directory, or -1 when
// Config.VersionName named it.
func (l *Logger) Version() int {
	return l.dir.Number()
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
	if l.file != nil {
		errs = append(errs, l.file.close())
		l.file = nil
	}
	return errors.Join(errs...)
}

// writeLocked writes one summary event holding values, opening the event
// file first when none is open and flushing when the buffer is due; l.mu
// must be held.
func (l *Logger) writeLocked(step int64, values ...[]byte) error {
	now := l.now()
	if l.file == nil {
		f, err := createEventFile(l.dir.Path(), now)
		if err != nil {
			return err
		}
		l.file, l.lastPath = f, f.path
	}
	if err := l.file.write(summaryEvent(wallTime(now), step, values...), now); err != nil {
		return err
	}
	if l.file.pending >= l.cfg.FlushEvery || now.Sub(l.file.oldest) >= l.cfg.FlushInterval {
		return l.file.flush(false)
	}
	return nil
}

// Logger implements logger.Logger and logger.Direr.
var (
	_ logger.Logger = (*Logger)(nil)
	_ logger.Direr  = (*Logger)(nil)
)
