package tensorboard

import (
	"fmt"
	"time"

	"github.com/voltml/volt/logger"
)

// Defaults applied by [New] to zero-valued [Config] fields.
const (
	// DefaultFlushEvery is the number of events buffered before they are
	// written to the file (SummaryWriter's max_queue).
	DefaultFlushEvery = 10
	// DefaultFlushInterval is the longest time events stay buffered while
	// logging continues (SummaryWriter's flush_secs).
	DefaultFlushInterval = 120 * time.Second
)

// Config configures a TensorBoard [Logger]. The directory fields follow the
// rules of [logger.VersionDir] (and so of logger.CSVConfig).
type Config struct {
	// SaveDir is the root directory ("." if empty).
	SaveDir string
	// Name is the experiment name, a directory under SaveDir. Empty means
	// logger.DefaultName ("volt_logs"); "." means no name level.
	Name string
	// Version selects version_N explicitly. Nil means the next free version.
	// It must not be negative.
	Version *int
	// VersionName, when non-empty, overrides Version and is used verbatim as
	// the version directory name.
	VersionName string
	// FlushEvery is the number of events buffered before a write; zero
	// means DefaultFlushEvery. It must not be negative.
	FlushEvery int
	// FlushInterval bounds how long events stay buffered: a write that finds
	// the oldest buffered event older than this flushes. Zero means
	// DefaultFlushInterval. It must not be negative.
	FlushInterval time.Duration

	// pinned is the directory WithDir took the directory fields from.
	pinned *logger.VersionDir
}

// WithDir returns cfg with its directory fields taken from d, so the logger
// shares d's directory with other loggers built from d.
func (cfg Config) WithDir(d logger.VersionDir) Config {
	cfg.SaveDir, cfg.Name, cfg.Version, cfg.VersionName = d.SaveDir, d.Name, d.Version, d.VersionName
	cfg.pinned = &d
	return cfg
}

// withDefaults validates cfg and returns a copy with defaults filled in and
// the pinned version directory.
func (cfg Config) withDefaults() (Config, logger.VersionDir, error) {
	if cfg.Version != nil && *cfg.Version < 0 {
		return cfg, logger.VersionDir{}, fmt.Errorf("tensorboard: Config.Version is %d; must be >= 0 (or nil for the next free version)", *cfg.Version)
	}
	if cfg.FlushEvery < 0 {
		return cfg, logger.VersionDir{}, fmt.Errorf("tensorboard: Config.FlushEvery is %d; must be >= 1 (or 0 for the default %d)", cfg.FlushEvery, DefaultFlushEvery)
	}
	if cfg.FlushInterval < 0 {
		return cfg, logger.VersionDir{}, fmt.Errorf("tensorboard: Config.FlushInterval is %v; must be > 0 (or 0 for the default %v)", cfg.FlushInterval, DefaultFlushInterval)
	}
	if cfg.FlushEvery == 0 {
		cfg.FlushEvery = DefaultFlushEvery
	}
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	dir := logger.VersionDir{SaveDir: cfg.SaveDir, Name: cfg.Name, Version: cfg.Version, VersionName: cfg.VersionName}
	if p := cfg.pinned; p != nil && p.SaveDir == dir.SaveDir && p.Name == dir.Name && p.Version == dir.Version && p.VersionName == dir.VersionName {
		dir = *p // keeps whether Pin chose the version
	}
	dir, err := dir.Pin()
	if err != nil {
		return cfg, dir, fmt.Errorf("tensorboard: Config: %w", err)
	}
	return cfg, dir, nil
}
