package logger

import "sync"

// fileLogger is what CSVLogger and JSONLLogger share, embedded: the lock
// over each one's state, its run directory, and LogDir, Version and
// ClaimDir (tensorboard.Logger, in a package of its own, keeps a RunDir
// and the same three methods).
type fileLogger struct {
	mu  sync.Mutex
	dir *RunDir
	// moveTo points the logger's metrics file into the directory its
	// claim returned; mu is held.
	moveTo func(dir string)
}

// LogDir returns the directory files are written to: SaveDir/Name/version_N
// (or SaveDir/Name/VersionName). A chosen version_N that another program
// claimed first moves on to the next free number when the logger claims its
// directory; a resumed run continues the directory of the run it resumes.
func (l *fileLogger) LogDir() string { return l.dir.Path() }

// Version returns the resolved version number N of the version_N directory,
// or -1 when the configuration's VersionName named the directory.
func (l *fileLogger) Version() int { return l.dir.Number() }

// ClaimDir creates the log directory, claiming a new version_N atomically
// when the version was chosen as the next free one.
func (l *fileLogger) ClaimDir() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.claimLocked()
}

// claimLocked claims the log directory once, moving the metrics file into
// the directory claimed; l.mu must be held.
func (l *fileLogger) claimLocked() error {
	if l.dir.Claimed() {
		return nil // every flush asks: no path to build again
	}
	dir, err := l.dir.Claim()
	if err == nil {
		l.moveTo(dir)
	}
	return err
}
