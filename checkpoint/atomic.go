package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// lastWrite is the modification time of the newest checkpoint this process
// wrote: every later one gets a strictly later time, so that the newest
// file (FromCheckpoint("last") in a new trainer) is the one written last even
// where two saves fall in one tick of the file system's clock (a few ms).
var lastWrite struct {
	sync.Mutex
	t time.Time
}

// laterThanLastWrite gives the file at path a modification time after every
// checkpoint this process wrote before.
func laterThanLastWrite(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	lastWrite.Lock()
	defer lastWrite.Unlock()
	mt := info.ModTime()
	if !mt.After(lastWrite.t) {
		mt = lastWrite.t.Add(time.Microsecond)
		if err := os.Chtimes(path, mt, mt); err != nil {
			return err
		}
	}
	lastWrite.t = mt
	return nil
}

// testHooks lets tests inject failures into writeAtomic; all nil in
// production.
var testHooks struct {
	// wrapWriter wraps the writer of the temporary file.
	wrapWriter func(io.Writer) io.Writer
	// beforeRename runs after the temporary file is written and synced.
	beforeRename func(tmpPath string) error
}

// writeAtomic writes p to a temporary file next to path and renames it over
// path. On error it removes the temporary file.
func writeAtomic(path string, p *prepared) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("creating temporary file: %w", err)
	}
	tmpPath := tmp.Name()
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmpPath)
		}
	}()

	var w io.Writer = tmp
	if testHooks.wrapWriter != nil {
		w = testHooks.wrapWriter(w)
	}
	if err := p.writeTo(w); err != nil {
		return fmt.Errorf("writing %s: %w", tmpPath, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("setting permissions of %s: %w", tmpPath, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmpPath, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmpPath, err)
	}
	if err := laterThanLastWrite(tmpPath); err != nil {
		return fmt.Errorf("setting the modification time of %s: %w", tmpPath, err)
	}
	if testHooks.beforeRename != nil {
		if err := testHooks.beforeRename(tmpPath); err != nil {
			return err
		}
	}
	if err := os.Rename(tmpPath, path); err != nil {
		return fmt.Errorf("renaming %s: %w", tmpPath, err)
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory so a rename in it is durable. File systems that
// cannot sync directories are tolerated.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("opening directory %s to sync it: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}
