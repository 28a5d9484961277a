package logger

// Position is how far a logger's files went when a checkpoint was taken:
// what a run resumed from that checkpoint continues from. The trainer
// stores it in the checkpoint.
type Position struct {
	// Dir is the logger's version directory.
	Dir string `json:"dir"`
	// File is the metrics file in Dir ("" when nothing was written yet).
	File string `json:"file,omitempty"`
	// Offset is how much of File belongs to the history: data rows for
	// metrics.csv, bytes for metrics.jsonl and TensorBoard event files.
	Offset int64 `json:"offset"`
}

// Resumable is implemented by loggers that keep a run's history whole
// across a crash and a resume: [CSVLogger], [JSONLLogger] and
// tensorboard.Logger. Before a checkpoint file is published the trainer
// calls Mark and stores the position in it; a Fit resumed from that
// checkpoint in a new process calls Resume with it before anything is
// logged, so that the resumed run continues the same files and no row
// appears twice or goes missing.
type Resumable interface {
	Logger
	// Mark writes every row logged so far to the files, syncs them to
	// stable storage and returns how far they go.
	Mark() (Position, error)
	// Resume makes the logger continue the history recorded up to pos:
	// it writes into pos.Dir, and its first write drops what its files
	// hold past pos (the rows a killed run logged after its checkpoint,
	// which the resumed run logs again). It reports false and changes
	// nothing when the logger has written already, or when its directory
	// was given (Version, VersionName) as another one or lies under
	// another root.
	Resume(pos Position) (bool, error)
}

// DirClaimer is implemented by loggers that claim their version directory
// (see [VersionDir.Claim]): the trainer calls ClaimDir when a run starts,
// before callbacks place files under the log directory, so that LogDir
// does not change afterwards. Loggers also claim it on their first write.
type DirClaimer interface {
	// ClaimDir creates the log directory, claiming a new version_N
	// atomically when the version was chosen as the next free one.
	ClaimDir() error
}
