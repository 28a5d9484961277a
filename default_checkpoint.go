package volt

import (
	"fmt"
	"os"
	"path/filepath"
)

// Checkpointer is implemented by callbacks that manage checkpoint files
// (ModelCheckpoint): when one is configured, the trainer's default
// checkpointing is off.
type Checkpointer interface {
	ManagesCheckpoints()
}

// defaultCheckpoint is Lightning's default checkpointing: at the end of each
// training epoch the run's latest state is saved as
// <LogDir>/checkpoints/epoch=E-step=S.ckpt, replacing the previous one. It is
// on when a logger gives a log directory, no Checkpointer callback is
// configured, and neither Config.DisableCheckpointing nor FastDevRun is set.
type defaultCheckpoint struct {
	dir  string
	last string
}

// newDefaultCheckpoint returns the default checkpointing for this run, or nil.
func (t *Trainer) newDefaultCheckpoint() *defaultCheckpoint {
	if t.cfg.DisableCheckpointing || t.cfg.FastDevRun > 0 || len(t.logs.loggers) == 0 {
		return nil
	}
	for _, cb := range t.cfg.Callbacks {
		if _, ok := cb.(Checkpointer); ok {
			return nil
		}
	}
	dir := t.logDir()
	if dir == t.cfg.DefaultRootDir {
		return nil // no logger directory to put it in
	}
	d := &defaultCheckpoint{dir: filepath.Join(dir, "checkpoints")}
	// A Fit resumed from this directory's latest checkpoint continues the
	// run that wrote it (its loggers continue the same directory): that
	// file is the one the next save replaces, as the uninterrupted run's
	// would be.
	if from := t.ckpt.fit.resumedFrom; from != "" && sameDir(filepath.Dir(from), d.dir) {
		if ok, _ := filepath.Match("epoch=*-step=*.ckpt", filepath.Base(from)); ok {
			d.last = from
		}
	}
	return d
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// save writes the epoch's checkpoint and removes the previous one.
func (d *defaultCheckpoint) save(t *Trainer) error {
	if d == nil {
		return nil
	}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return fmt.Errorf("volt: default checkpoint: %w", err)
	}
	path := filepath.Join(d.dir, fmt.Sprintf("epoch=%d-step=%d.ckpt", t.CurrentEpoch(), t.GlobalStep()))
	if err := t.SaveCheckpoint(path, false); err != nil {
		return err
	}
	if d.last != "" && d.last != path && t.IsGlobalZero() {
		if err := os.Remove(d.last); err != nil && !os.IsNotExist(err) {
			t.sayOnce("default-ckpt-remove", "volt: could not remove the previous checkpoint", "path", d.last, "error", err)
		}
	}
	d.last = path
	t.ckpt.defaultSaved = path
	return nil
}
