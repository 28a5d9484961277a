package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// IsSaveTemp reports whether name is a temporary file of a checkpoint save
// (".<file>.ckpt.<random>.tmp", written by Save and renamed when complete):
// one that still exists was left by a save that was killed or failed
// without cleaning up.
func IsSaveTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp") && strings.Contains(name, ".ckpt.")
}

// StaleTemps returns the temporary files of checkpoint saves in dir (see
// IsSaveTemp) that nothing has written to for at least idle, sorted: what
// a killed run left behind, sometimes full-size. A save in progress writes
// its file continuously and renames it as soon as it is complete, so a
// recent temporary file is not listed. A missing dir is not an error.
func StaleTemps(dir string, idle time.Duration) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: listing temporary files: %w", err)
	}
	var stale []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !IsSaveTemp(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < idle {
			continue
		}
		stale = append(stale, filepath.Join(dir, e.Name()))
	}
	slices.Sort(stale)
	return stale, nil
}

// RemoveStaleTemps removes the temporary files StaleTemps lists and
// returns the removed paths, sorted; a missing dir is not an error.
func RemoveStaleTemps(dir string, idle time.Duration) ([]string, error) {
	stale, err := StaleTemps(dir, idle)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: cleaning temporary files: %w", err)
	}
	var removed []string
	var errs []error
	for _, path := range stale {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, path)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("checkpoint: cleaning temporary files: %w", errors.Join(errs...))
	}
	return removed, nil
}
