package logger

import (
	"errors"
	"fmt"
	"path/filepath"
)

// File names written into the log directory.
const (
	// MetricsFileName is the CSV file holding one row per LogMetrics call.
	MetricsFileName = "metrics.csv"
	// HparamsFileName is the YAML file holding the merged hyperparameters.
	HparamsFileName = "hparams.yaml"
)

// CSVLogger writes metrics to LogDir/metrics.csv and hyperparameters to
// LogDir/hparams.yaml, like PyTorch Lightning's CSVLogger. The directory is
// claimed (see [VersionDir.Claim]) when a run starts or on the first write;
// a run resumed from a checkpoint continues the checkpoint's files (see
// [Resumable]). It is safe for concurrent use.
type CSVLogger struct {
	fileLogger
	cfg        CSVConfig // as given, with the defaults its zero values stand for
	flushEvery int
	cadence    flushCadence
	metrics    *metricsFile
	hparams    map[string]any
}

// NewCSV validates cfg and resolves the version directory, scanning
// SaveDir/Name for existing version_N directories when cfg.Version is nil.
// It creates no directories; the directory is claimed (see
// [VersionDir.Claim]) when a run starts or on the first write.
func NewCSV(cfg CSVConfig) (*CSVLogger, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	dir, err := VersionDir{SaveDir: cfg.SaveDir, Name: cfg.Name, Version: cfg.Version, VersionName: cfg.VersionName, chosen: cfg.chosen}.pinFor("CSVConfig")
	if err != nil {
		return nil, err
	}
	l := &CSVLogger{
		cfg:        cfg,
		flushEvery: cfg.FlushEvery,
		cadence:    flushCadence{every: int64(cfg.FlushEvery)},
		metrics:    newMetricsFile(filepath.Join(dir.Path(), MetricsFileName)),
	}
	l.fileLogger = fileLogger{dir: NewRunDir(dir), moveTo: func(dir string) { l.metrics.path = filepath.Join(dir, MetricsFileName) }}
	return l, nil
}

// Config returns the configuration NewCSV was given with the defaults its
// zero values stand for filled in (SaveDir ".", Name "volt_logs",
// FlushEvery 100); a chosen version stays unset (print-config shows it).
func (l *CSVLogger) Config() CSVConfig { return l.cfg }

// Mark writes the buffered rows to metrics.csv, syncs it and returns the
// number of data rows it holds for the run.
func (l *CSVLogger) Mark() (Position, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.flushLocked(); err != nil {
		return Position{}, err
	}
	if err := l.metrics.sync(); err != nil {
		return Position{}, err
	}
	return Position{Dir: l.dir.Path(), File: MetricsFileName, Offset: l.metrics.rows}, nil
}

// Resume continues the run whose metrics.csv held pos.Offset rows at a
// checkpoint: the logger writes into pos.Dir, and its first write keeps
// those rows and drops the ones after them. See [Resumable].
func (l *CSVLogger) Resume(pos Position) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.metrics.pending) > 0 {
		return false, nil
	}
	moved, err := l.dir.Resume(pos.Dir, func() error {
		if pos.Offset < 0 || (pos.File != "" && pos.File != MetricsFileName) {
			return fmt.Errorf("logger: cannot resume %s at %d rows of %q: the CSV logger writes %s", pos.Dir, pos.Offset, pos.File, MetricsFileName)
		}
		return nil
	})
	if !moved {
		return false, err
	}
	l.metrics = newMetricsFile(filepath.Join(l.dir.Path(), MetricsFileName))
	l.metrics.resumeAt(pos.Offset)
	return true, nil
}

// LogMetrics buffers one row for metrics.csv and writes the buffer at every
// FlushEvery optimization steps (the first row at or after each multiple),
// or once it holds FlushEvery rows. Metric names must be non-empty and not
// "step".
func (l *CSVLogger) LogMetrics(metrics map[string]float64, step int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.metrics.add(metrics, step); err != nil {
		return err
	}
	if l.cadence.due(step) || len(l.metrics.pending) >= l.flushEvery {
		return l.flushLocked()
	}
	return nil
}

// LogHyperparams merges params into the hyperparameters logged so far
// (top-level keys of later calls replace earlier ones) and rewrites
// hparams.yaml. Nothing is recorded when a value cannot be written as YAML.
func (l *CSVLogger) LogHyperparams(params map[string]any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	merged, err := mergeHparams(l.hparams, params)
	if err != nil {
		return err
	}
	if err := l.claimLocked(); err != nil {
		return err
	}
	if err := writeHparams(filepath.Join(l.dir.Path(), HparamsFileName), merged); err != nil {
		return err
	}
	l.hparams = merged
	return nil
}

// Save writes buffered metric rows to metrics.csv.
func (l *CSVLogger) Save() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flushLocked()
}

// Finalize writes buffered metric rows. status must be "success", "failed"
// or "interrupted"; an invalid status is reported, but the rows are still
// written. Calling it again is harmless: it only writes rows logged since
// the previous call, if any. A resumed run that logged nothing drops, on
// success, the rows the killed run logged after its checkpoint.
func (l *CSVLogger) Finalize(status string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if status == StatusSuccess && l.metrics.resuming {
		err = l.rewriteLocked()
	}
	return errors.Join(checkStatus(status), err, l.flushLocked())
}

// flushLocked writes pending metric rows; l.mu must be held.
func (l *CSVLogger) flushLocked() error {
	if len(l.metrics.pending) == 0 {
		return nil
	}
	if err := l.claimLocked(); err != nil {
		return err
	}
	return l.metrics.flush()
}

// rewriteLocked writes metrics.csv afresh from the rows it holds for the
// run; l.mu must be held.
func (l *CSVLogger) rewriteLocked() error {
	if err := l.claimLocked(); err != nil {
		return err
	}
	return l.metrics.flushAll()
}

// CSVLogger implements Logger, Direr, Resumable and DirClaimer.
var (
	_ Logger     = (*CSVLogger)(nil)
	_ Direr      = (*CSVLogger)(nil)
	_ Resumable  = (*CSVLogger)(nil)
	_ DirClaimer = (*CSVLogger)(nil)
)
