package logger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
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
// created on the first write. It is safe for concurrent use.
type CSVLogger struct {
	mu         sync.Mutex
	logDir     string
	version    int
	flushEvery int
	cadence    flushCadence
	dirMade    bool
	metrics    *metricsFile
	hparams    map[string]any
}

// NewCSV validates cfg and resolves the version directory, scanning
// SaveDir/Name for existing version_N directories when cfg.Version is nil.
// It creates no directories; that happens on the first write.
func NewCSV(cfg CSVConfig) (*CSVLogger, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	root := filepath.Join(cfg.SaveDir, cfg.Name)
	version := -1
	dirName := cfg.VersionName
	if dirName == "" {
		if cfg.Version != nil {
			version = *cfg.Version
		} else if version, err = nextVersion(root); err != nil {
			return nil, err
		}
		dirName = versionDirName(version)
	}
	logDir := filepath.Join(root, dirName)
	return &CSVLogger{
		logDir:     logDir,
		version:    version,
		flushEvery: cfg.FlushEvery,
		cadence:    flushCadence{every: int64(cfg.FlushEvery)},
		metrics:    newMetricsFile(filepath.Join(logDir, MetricsFileName)),
	}, nil
}

// LogDir returns the directory files are written to: SaveDir/Name/version_N
// (or SaveDir/Name/VersionName).
func (l *CSVLogger) LogDir() string {
	return l.logDir
}

// Version returns the resolved version number N of the version_N directory,
// or -1 when CSVConfig.VersionName named the directory.
func (l *CSVLogger) Version() int {
	return l.version
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
	if err := l.ensureDirLocked(); err != nil {
		return err
	}
	if err := writeHparams(filepath.Join(l.logDir, HparamsFileName), merged); err != nil {
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
// the previous call, if any.
func (l *CSVLogger) Finalize(status string) error {
	return errors.Join(checkStatus(status), l.Save())
}

// flushLocked writes pending metric rows; l.mu must be held.
func (l *CSVLogger) flushLocked() error {
	if len(l.metrics.pending) == 0 {
		return nil
	}
	if err := l.ensureDirLocked(); err != nil {
		return err
	}
	return l.metrics.flush()
}

// ensureDirLocked creates the log directory once; l.mu must be held.
func (l *CSVLogger) ensureDirLocked() error {
	if l.dirMade {
		return nil
	}
	if err := os.MkdirAll(l.logDir, 0o755); err != nil {
		return fmt.Errorf("logger: create log directory %s: %w", l.logDir, err)
	}
	l.dirMade = true
	return nil
}

// CSVLogger implements Logger and Direr.
var (
	_ Logger = (*CSVLogger)(nil)
	_ Direr  = (*CSVLogger)(nil)
)
