package logger

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Defaults applied by [NewCSV] to zero-valued [CSVConfig] fields.
const (
	// DefaultName is the experiment name used when CSVConfig.Name is empty.
	DefaultName = "volt_logs"
	// DefaultFlushEvery is the number of optimization steps between writes
	// of the buffered metric rows when CSVConfig.FlushEvery is zero
	// (Lightning's flush_logs_every_n_steps).
	DefaultFlushEvery = 100
)

// CSVConfig configures a CSVLogger.
type CSVConfig struct {
	// SaveDir is the root directory ("." if empty).
	SaveDir string
	// Name is the experiment name, a directory under SaveDir. Empty means
	// DefaultName; "." means no name level (LogDir is SaveDir/version_N).
	Name string
	// Version selects version_N explicitly. Nil means the next free version:
	// one more than the largest existing SaveDir/Name/version_N directory,
	// or 0 when there is none. It must not be negative.
	Version *int
	// VersionName, when non-empty, overrides Version: it is used verbatim as
	// the version directory name and must be a single path element.
	VersionName string
	// FlushEvery is the number of optimization steps between writes of the
	// buffered rows (Lightning's flush_logs_every_n_steps; the buffer is
	// also written once it holds that many rows, and on Save); zero means
	// DefaultFlushEvery. It must not be negative.
	FlushEvery int

	// chosen: the directory fields come from a VersionDir whose version Pin
	// chose (WithDir).
	chosen bool
}

// withDefaults validates cfg and returns a copy with defaults filled in.
func (cfg CSVConfig) withDefaults() (CSVConfig, error) {
	if cfg.Version != nil && *cfg.Version < 0 {
		return cfg, fmt.Errorf("logger: CSVConfig.Version is %d; must be >= 0 (or nil for the next free version)", *cfg.Version)
	}
	if cfg.FlushEvery < 0 {
		return cfg, fmt.Errorf("logger: CSVConfig.FlushEvery is %d; must be >= 1 (or 0 for the default %d)", cfg.FlushEvery, DefaultFlushEvery)
	}
	if v := cfg.VersionName; v != "" && (v == "." || v == ".." || strings.ContainsAny(v, `/\`) || filepath.Base(v) != v) {
		return cfg, fmt.Errorf("logger: CSVConfig.VersionName %q must be a single directory name (no separators, not \".\" or \"..\")", v)
	}
	if cfg.SaveDir == "" {
		cfg.SaveDir = "."
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.FlushEvery == 0 {
		cfg.FlushEvery = DefaultFlushEvery
	}
	return cfg, nil
}
