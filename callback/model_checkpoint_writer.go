package callback

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/voltml/volt"
)

// This file is ModelCheckpoint's "how": paths, atomic writes and copies,
// and removals.

// lastName is the file name of the copy of the newest checkpoint.
const lastName = "last.ckpt"

// pathFor returns the path of a new checkpoint: the rendered Filename in the
// directory, with "-v1", "-v2", … appended while another file has the name
// or another run claims it (see claim; reuse is this run's file about to be
// replaced, whose name it may take again). Rank 0 claims the name, which
// it broadcasts; the other ranks' answer is replaced by it.
func (m *ModelCheckpoint) pathFor(t *volt.Trainer, candidates map[string]float64, reuse string) (string, error) {
	return m.freePath(t, m.name.render(candidates), reuse)
}

// freePath is pathFor for the file name name (without ".ckpt").
func (m *ModelCheckpoint) freePath(t *volt.Trainer, name, reuse string) (string, error) {
	path := filepath.Join(m.dirpath, name+".ckpt")
	for v := 1; path != reuse && t.IsGlobalZero(); v++ {
		ok, err := m.claim(path)
		if err != nil || ok {
			return path, err
		}
		path = filepath.Join(m.dirpath, fmt.Sprintf("%s-v%d.ckpt", name, v))
	}
	return path, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// write saves the trainer's state to path. It records the global step (and,
// with SaveLast, the last file that this save refreshes) first, so that the
// file carries bookkeeping that includes itself.
func (m *ModelCheckpoint) write(t *volt.Trainer, path string) error {
	m.state.LastGlobalStepSaved = t.GlobalStep()
	if m.cfg.SaveLast {
		if _, err := m.lastPath(t); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("ModelCheckpoint: %w", err)
	}
	return t.SaveCheckpoint(path, m.cfg.SaveWeightsOnly)
}

// lastPath returns this run's copy of the newest checkpoint, choosing it
// the first time: last.ckpt, or last-v1.ckpt, … when another run has
// written or claims that name (Lightning versions its last file the same
// way), so that runs sharing a directory never replace each other's. A
// file recorded by this ModelCheckpoint, or restored from the checkpoint a
// Fit resumes in this directory, stays its own.
func (m *ModelCheckpoint) lastPath(t *volt.Trainer) (string, error) {
	if p := m.state.LastModelPath; p != "" && sameDir(filepath.Dir(p), m.dirpath) {
		return p, nil
	}
	path, err := m.freePath(t, strings.TrimSuffix(lastName, ".ckpt"), "")
	if err != nil {
		return "", err
	}
	if err := t.BroadcastFromRankZero(&path); err != nil {
		return "", err
	}
	m.state.LastModelPath = path
	return path, nil
}

// saveLast brings last.ckpt up to date: an atomic copy of saved, the file
// this save just wrote, or else a fresh save. FromCheckpoint("last") then
// loads it.
func (m *ModelCheckpoint) saveLast(t *volt.Trainer, saved string) error {
	last, err := m.lastPath(t)
	if err != nil {
		return err
	}
	if saved == "" {
		if err := m.write(t, last); err != nil {
			return err
		}
	} else if !t.IsGlobalZero() {
		// rank 0 copies the file; the other ranks only record it.
	} else if err := copyAtomic(saved, last); err != nil {
		return fmt.Errorf("ModelCheckpoint: %w", err)
	}
	t.SetLastCheckpoint(last)
	return nil
}

// remove deletes a checkpoint that dropped out of the top k; one already
// gone is not an error. The last file is never removed, nor a file outside
// this ModelCheckpoint's directory: a Fit resumed from another run's
// checkpoint restores that run's BestModelPath, a file this run did not
// write, which stays where it is (the bookkeeping still drops it).
func (m *ModelCheckpoint) remove(t *volt.Trainer, path string) error {
	if path == m.state.LastModelPath || !t.IsGlobalZero() {
		return nil // rank 0 alone manages the files of a data-parallel job
	}
	if !sameDir(filepath.Dir(path), m.dirpath) {
		t.Slog().Info("volt: ModelCheckpoint: keeping a checkpoint outside its directory (written by another run)",
			"path", path, "dirpath", m.dirpath)
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("ModelCheckpoint: removing %s: %w", path, err)
	}
	return nil
}

// copyAtomic copies src to dst the way checkpoint.Save writes: into a
// temporary file next to dst (".<base>.<random>.tmp", which checkpoint.Load
// never reads), fsynced, renamed over dst, with the directory fsynced. On
// error dst is untouched and the temporary file removed.
func copyAtomic(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copying checkpoint: %w", err)
	}
	defer in.Close()
	dir, base := filepath.Split(dst)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
			err = fmt.Errorf("copying %s to %s: %w", src, dst, err)
		}
	}()
	if _, err := io.Copy(tmp, in); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}
