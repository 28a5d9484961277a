package logger

import (
	"fmt"
	"path/filepath"
	"strings"
)

// VersionDir selects a run's version directory SaveDir/Name/version_N (or
// SaveDir/Name/VersionName) by the same rules as [CSVConfig]. Loggers built
// from one pinned VersionDir (see [VersionDir.Pin]) share that directory:
//
//	dir, err := logger.VersionDir{SaveDir: "runs"}.Pin()
//	csvLog, err := logger.NewCSV(logger.CSVConfig{}.WithDir(dir))
//	jsonLog, err := logger.NewJSONL(logger.JSONLConfig{}.WithDir(dir))
type VersionDir struct {
	// SaveDir is the root directory ("." if empty).
	SaveDir string
	// Name is the experiment name, a directory under SaveDir. Empty means
	// DefaultName; "." means no name level.
	Name string
	// Version selects version_N explicitly; nil means the next free version.
	// It must not be negative.
	Version *int
	// VersionName, when non-empty, overrides Version and is used verbatim as
	// the version directory name; it must be a single path element.
	VersionName string

	// chosen: Pin chose Version as the next free one (see Claim).
	chosen bool
}

// Pin validates d, fills in the default SaveDir and Name and fixes the
// version: when neither Version nor VersionName is set, Version is set to
// the next free version (one more than the largest SaveDir/Name/version_N
// directory, or 0). Pinning twice returns the same directory. It creates no
// directories: a logger claims its directory (see [VersionDir.Claim]) when
// a run starts or on its first write, and a chosen version_N taken by
// another program by then makes it move on to the next free number.
func (d VersionDir) Pin() (VersionDir, error) {
	if err := d.validate("VersionDir"); err != nil {
		return d, err
	}
	if d.SaveDir == "" {
		d.SaveDir = "."
	}
	if d.Name == "" {
		d.Name = DefaultName
	}
	if d.VersionName != "" || d.Version != nil {
		if d.Version != nil {
			v := *d.Version
			d.Version = &v // never alias the caller's int
		}
		return d, nil
	}
	v, err := nextVersion(filepath.Join(d.SaveDir, d.Name))
	if err != nil {
		return d, err
	}
	d.Version, d.chosen = &v, true
	return d, nil
}

// Path returns the version directory of a pinned d: SaveDir/Name/VersionName
// when VersionName is set, else SaveDir/Name/version_N. For an unpinned d
// (no Version and no VersionName) it returns SaveDir/Name/version_0 — call
// Pin first.
func (d VersionDir) Path() string {
	return filepath.Join(d.SaveDir, d.Name, d.dirName())
}

// Number returns N of a version_N directory, or -1 when VersionName names
// the directory. It is 0 for an unpinned d without Version.
func (d VersionDir) Number() int {
	switch {
	case d.VersionName != "":
		return -1
	case d.Version != nil:
		return *d.Version
	}
	return 0
}

// dirName returns the last path element of the version directory.
func (d VersionDir) dirName() string {
	if d.VersionName != "" {
		return d.VersionName
	}
	return versionDirName(d.Number())
}

// validate checks Version and VersionName; owner names the configuration
// type in errors (for example "JSONLConfig").
func (d VersionDir) validate(owner string) error {
	if d.Version != nil && *d.Version < 0 {
		return fmt.Errorf("logger: %s.Version is %d; must be >= 0 (or nil for the next free version)", owner, *d.Version)
	}
	if v := d.VersionName; v != "" && (v == "." || v == ".." || strings.ContainsAny(v, `/\`) || filepath.Base(v) != v) {
		return fmt.Errorf("logger: %s.VersionName %q must be a single directory name (no separators, not \".\" or \"..\")", owner, v)
	}
	return nil
}

// pinFor is Pin with errors naming owner instead of VersionDir.
func (d VersionDir) pinFor(owner string) (VersionDir, error) {
	if err := d.validate(owner); err != nil {
		return d, err
	}
	return d.Pin()
}

// WithDir returns cfg with SaveDir, Name, Version and VersionName taken from
// d, so the CSV logger writes into d's directory.
func (cfg CSVConfig) WithDir(d VersionDir) CSVConfig {
	cfg.SaveDir, cfg.Name, cfg.Version, cfg.VersionName, cfg.chosen = d.SaveDir, d.Name, d.Version, d.VersionName, d.chosen
	return cfg
}
