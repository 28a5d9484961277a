package logger

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// JSONLLogger writes metrics to LogDir/metrics.jsonl, one JSON object
// {"step":N,"metrics":{...}} per LogMetrics call, and hyperparameters to
// LogDir/hparams.json. NaN and infinities are written as the strings "nan",
// "inf" and "-inf". Lines are buffered and reach the file every
// DefaultFlushEvery optimization steps (as CSVLogger's), on Save and
// Finalize, and when the buffer fills. The directory is claimed when a run
// starts or on the first write, as CSVLogger's, and a resumed run continues
// the checkpoint's file (see [Resumable]). It is safe for concurrent use.
type JSONLLogger struct {
	fileLogger
	cfg     JSONLConfig // as given, SaveDir and Name defaulted
	path    string      // metrics.jsonl
	started bool        // metrics.jsonl was created (truncated) by this logger
	size    int64
	resume  int64 // >= 0: the bytes of a killed run's file to keep (Resume)
	f       *os.File
	w       *bufio.Writer
	cadence flushCadence
	hparams map[string]any
}

// NewJSONL validates cfg and resolves the version directory like [NewCSV].
// It creates no directories.
func NewJSONL(cfg JSONLConfig) (*JSONLLogger, error) {
	dir, err := cfg.versionDir().pinFor("JSONLConfig")
	if err != nil {
		return nil, err
	}
	cfg.SaveDir, cfg.Name = dir.SaveDir, dir.Name
	l := &JSONLLogger{cfg: cfg, path: filepath.Join(dir.Path(), JSONLMetricsFileName),
		cadence: flushCadence{every: DefaultFlushEvery}, resume: -1}
	l.fileLogger = fileLogger{dir: NewRunDir(dir), moveTo: func(dir string) { l.path = filepath.Join(dir, JSONLMetricsFileName) }}
	return l, nil
}

// Config returns the configuration NewJSONL was given with the defaults its
// zero values stand for filled in (SaveDir ".", Name "volt_logs"); a chosen
// version stays unset (print-config shows it).
func (l *JSONLLogger) Config() JSONLConfig { return l.cfg }

// Mark writes the buffered lines to metrics.jsonl, syncs it and returns its
// length in bytes.
func (l *JSONLLogger) Mark() (Position, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.flushLocked(); err != nil {
		return Position{}, err
	}
	off := l.size
	if l.resume >= 0 {
		off = l.resume
	}
	return Position{Dir: l.dir.Path(), File: JSONLMetricsFileName, Offset: off}, nil
}

// Resume continues the run whose metrics.jsonl was pos.Offset bytes long at
// a checkpoint: the logger writes into pos.Dir, and its first write cuts
// the file back to that length. See [Resumable].
func (l *JSONLLogger) Resume(pos Position) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		return false, nil
	}
	moved, err := l.dir.Resume(pos.Dir, func() error {
		if pos.Offset < 0 || (pos.File != "" && pos.File != JSONLMetricsFileName) {
			return fmt.Errorf("logger: cannot resume %s at byte %d of %q: the JSONL logger writes %s", pos.Dir, pos.Offset, pos.File, JSONLMetricsFileName)
		}
		return nil
	})
	if !moved {
		return false, err
	}
	l.path = filepath.Join(l.dir.Path(), JSONLMetricsFileName)
	l.resume = pos.Offset
	return true, nil
}

// LogMetrics buffers one line for metrics.jsonl. Metric names must be
// non-empty.
func (l *JSONLLogger) LogMetrics(metrics map[string]float64, step int64) error {
	vals := make(map[string]any, len(metrics))
	for k, v := range metrics {
		if k == "" {
			return fmt.Errorf("logger: empty metric name for %s", l.path)
		}
		vals[k] = jsonFloat(v)
	}
	line, err := json.Marshal(struct {
		Step    int64          `json:"step"`
		Metrics map[string]any `json:"metrics"`
	}{step, vals})
	if err != nil {
		return fmt.Errorf("logger: encode metrics for %s: %w", l.path, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.openLocked(); err != nil {
		return err
	}
	if _, err := l.w.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("logger: write %s: %w", l.path, err)
	}
	l.size += int64(len(line)) + 1
	if l.cadence.due(step) {
		return l.flushLocked()
	}
	return nil
}

// LogHyperparams merges params into the hyperparameters logged so far (a
// shallow merge, later top-level keys win) and atomically rewrites
// hparams.json. Non-finite floats are written as strings; nothing is
// recorded when a value cannot be written as JSON.
func (l *JSONLLogger) LogHyperparams(params map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if _, err := json.Marshal(jsonSafe(params[k])); err != nil {
			return fmt.Errorf("logger: hyperparameter %q cannot be written as JSON to %s (use maps, slices, strings, numbers, bools): %w", k, JSONLHparamsFileName, err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	merged, err := mergeHparams(l.hparams, params)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(jsonSafe(merged), "", "  ")
	if err != nil {
		return fmt.Errorf("logger: encode %s: %w", JSONLHparamsFileName, err)
	}
	if err := l.claimLocked(); err != nil {
		return err
	}
	path := filepath.Join(l.dir.Path(), JSONLHparamsFileName)
	if err := writeFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	}); err != nil {
		return err
	}
	l.hparams = merged
	return nil
}

// Save writes buffered lines to metrics.jsonl and syncs it to disk.
func (l *JSONLLogger) Save() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flushLocked()
}

// Finalize flushes, syncs and closes metrics.jsonl. status must be
// "success", "failed" or "interrupted"; an invalid status is reported but
// the file is still closed. Calling it again is harmless, and metrics logged
// after it are appended to the same file.
func (l *JSONLLogger) Finalize(status string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if status == StatusSuccess && l.resume >= 0 {
		err = l.openLocked() // drop what a killed run logged after its checkpoint
	}
	err = errors.Join(err, l.flushLocked())
	if l.f != nil {
		if cerr := l.f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("logger: close %s: %w", l.path, cerr)
		}
		l.f, l.w = nil, nil
	}
	return errors.Join(checkStatus(status), err)
}

// openLocked opens metrics.jsonl for writing: truncated on this logger's
// first write (replacing a file left by an earlier run, or, when resuming
// one, cutting it back to the resumed length), appended to after a
// Finalize. l.mu must be held.
func (l *JSONLLogger) openLocked() error {
	if l.f != nil {
		return nil
	}
	if err := l.claimLocked(); err != nil {
		return err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if l.started || l.resume >= 0 {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(l.path, flags, 0o644)
	if err != nil {
		return fmt.Errorf("logger: open %s: %w", l.path, err)
	}
	if l.resume >= 0 {
		if l.size, err = cutBack(f, l.resume); err != nil {
			f.Close()
			return fmt.Errorf("logger: resume %s: %w", l.path, err)
		}
		l.resume = -1
	}
	l.f, l.w, l.started = f, bufio.NewWriter(f), true
	return nil
}

// cutBack truncates f to size bytes when it is longer, syncs it and
// returns its new length.
func cutBack(f *os.File, size int64) (int64, error) {
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if info.Size() <= size {
		return info.Size(), nil
	}
	if err := f.Truncate(size); err != nil {
		return 0, err
	}
	return size, f.Sync()
}

// flushLocked writes buffered lines and syncs the file; l.mu must be held.
func (l *JSONLLogger) flushLocked() error {
	if l.f == nil {
		return nil
	}
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("logger: write %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("logger: sync %s: %w", l.path, err)
	}
	return nil
}

// jsonFloat returns v, or its Python spelling ("nan", "inf", "-inf") when
// it is not finite, since JSON has no such numbers.
func jsonFloat(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return formatFloat(v)
	}
	return v
}

// jsonSafe returns a copy of v with non-finite float64 and float32 values,
// at any depth of maps and slices, replaced by their Python spellings.
func jsonSafe(v any) any {
	return mapLeaves(v, func(leaf any) any {
		switch t := leaf.(type) {
		case float64:
			return jsonFloat(t)
		case float32:
			if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
				return formatFloat(float64(t))
			}
		}
		return leaf
	})
}

// JSONLLogger implements Logger, Direr, Resumable and DirClaimer.
var (
	_ Logger     = (*JSONLLogger)(nil)
	_ Direr      = (*JSONLLogger)(nil)
	_ Resumable  = (*JSONLLogger)(nil)
	_ DirClaimer = (*JSONLLogger)(nil)
)
