package logger

// File names written by [JSONLLogger] into its log directory.
const (
	// JSONLMetricsFileName holds one JSON object per LogMetrics call.
	JSONLMetricsFileName = "metrics.jsonl"
	// JSONLHparamsFileName holds the merged hyperparameters as JSON.
	JSONLHparamsFileName = "hparams.json"
)

// JSONLConfig configures a JSONLLogger. The directory fields follow the
// rules of [VersionDir] (and so of [CSVConfig]).
type JSONLConfig struct {
	// SaveDir is the root directory ("." if empty).
	SaveDir string
	// Name is the experiment name, a directory under SaveDir. Empty means
	// DefaultName; "." means no name level.
	Name string
	// Version selects version_N explicitly. Nil means the next free version.
	// It must not be negative.
	Version *int
	// VersionName, when non-empty, overrides Version and is used verbatim as
	// the version directory name.
	VersionName string

	// chosen: the directory fields come from a VersionDir whose version Pin
	// chose (WithDir).
	chosen bool
}

// WithDir returns cfg with its directory fields taken from d.
func (cfg JSONLConfig) WithDir(d VersionDir) JSONLConfig {
	cfg.SaveDir, cfg.Name, cfg.Version, cfg.VersionName, cfg.chosen = d.SaveDir, d.Name, d.Version, d.VersionName, d.chosen
	return cfg
}

// versionDir returns the directory fields of cfg.
func (cfg JSONLConfig) versionDir() VersionDir {
	return VersionDir(cfg)
}
