package callback

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/voltml/volt"
)

// This file is ModelCheckpoint's "how": paths, atomic writes and copies,
// and removals.

// lastName is the file name of the copy of the newest checkpoint.
const lastName = "last.ckpt"

// pathFor returns the path of a new checkpoint: the rendered Filename in the
// directory, with "-v1", "-v2", … appended while another file has the name
// (reuse is the file about to be replaced, whose name may be taken again).
func (m *ModelCheckpoint) pathFor(candidates map[string]float64, reuse string) string {
	name := m.name.render(candidates)
	path := filepath.Join(m.dirpath, name+".ckpt")
	for v := 1; path != reuse && exists(path); v++ {
		path = filepath.Join(m.dirpath, fmt.Sprintf("%s-v%d.ckpt", name, v))
	}
	return path
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
		m.state.LastModelPath = filepath.Join(m.dirpath, lastName)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("ModelCheckpoint: %w", err)
	}
	if err := t.SaveCheckpoint(path, m.cfg.SaveWeightsOnly); err != nil {
		return err
	}
	if !t.IsGlobalZero() {
		return nil // rank 0 alone manages the files (remove)
	}
	if info, err := os.Stat(path); err == nil {
		if m.written == nil {
			m.written = map[string]os.FileInfo{}
		}
		m.written[path] = info
	}
	return nil
}

// saveLast brings last.ckpt up to date: an atomic copy of saved, the file
// this save just wrote, or else a fresh save. FromCheckpoint("last") then
// loads it.
func (m *ModelCheckpoint) saveLast(t *volt.Trainer, saved string) error {
	last := filepath.Join(m.dirpath, lastName)
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
// write, which stays where it is (the bookkeeping still drops it). Nor is
// a file that another process put in place of this process's save (two
// runs given one Dirpath that chose the same name at once): it is kept,
// with a warning.
func (m *ModelCheckpoint) remove(t *volt.Trainer, path string) error {
	if path == m.state.LastModelPath || !t.IsGlobalZero() {
		return nil // rank 0 alone manages the files of a data-parallel job
	}
	if !sameDir(filepath.Dir(path), m.dirpath) {
		t.Slog().Info("volt: ModelCheckpoint: keeping a checkpoint outside its directory (written by another run)",
			"path", path, "dirpath", m.dirpath)
		return nil
	}
	saved, ours := m.written[path]
	delete(m.written, path)
	if current, err := os.Stat(path); ours && err == nil && !os.SameFile(saved, current) {
		t.Slog().Warn("volt: ModelCheckpoint: keeping a checkpoint another process wrote over this run's (two runs share its directory?)",
			"path", path)
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
