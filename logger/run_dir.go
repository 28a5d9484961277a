package logger

import "sync"

// RunDir is the version directory a file logger writes into: pinned when
// the logger is built, claimed once ([VersionDir.Claim]) when a run starts
// or on the logger's first write, or moved before that to the directory of
// the run a checkpoint resumes ([Resumable]). [CSVLogger], [JSONLLogger]
// and tensorboard.Logger each keep one and answer LogDir, Version and
// ClaimDir from it; a file logger of your own can too. It is safe for
// concurrent use.
type RunDir struct {
	mu      sync.Mutex
	dir     VersionDir // pinned; fixed once claimed
	claimed bool
}

// NewRunDir returns the run directory of a logger pinned to dir
// ([VersionDir.Pin]).
func NewRunDir(dir VersionDir) *RunDir { return &RunDir{dir: dir} }

// Dir returns the version directory: the pinned one, the resumed run's or
// the claimed one.
func (d *RunDir) Dir() VersionDir {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dir
}

// Path returns the directory's path: SaveDir/Name/version_N (or
// SaveDir/Name/VersionName).
func (d *RunDir) Path() string { return d.Dir().Path() }

// Number returns N of the version_N directory, or -1 when a VersionName
// names it.
func (d *RunDir) Number() int { return d.Dir().Number() }

// Claimed reports whether Claim has created the directory.
func (d *RunDir) Claimed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.claimed
}

// Claim creates the directory the first time it succeeds, claiming a new
// version_N atomically when the version was chosen as the next free one
// ([VersionDir.Claim]), and returns its path; later calls return the same
// path.
func (d *RunDir) Claim() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.claimed {
		dir, err := d.dir.Claim()
		if err != nil {
			return "", err
		}
		d.dir, d.claimed = dir, true
	}
	return d.dir.Path(), nil
}

// Resume moves d to dir, the version directory of the run a checkpoint
// resumes, when d is not claimed yet and the directory it was pinned to
// may continue that run ([VersionDir.MayResume]), and reports whether it
// moved. check, called only when d may move, can refuse the move with an
// error (a position the logger cannot continue); d then stays.
func (d *RunDir) Resume(dir string, check func() error) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.claimed || !d.dir.MayResume(dir) {
		return false, nil
	}
	if err := check(); err != nil {
		return false, err
	}
	d.dir = VersionDirAt(dir)
	return true, nil
}
