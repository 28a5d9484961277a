package callback

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/voltml/volt"
)

// This file makes a checkpoint's name this run's alone. Runs started at
// once with one directory and one Filename template render the same names
// at about the same moments: checking that a name is free and then writing
// it (Lightning's file_exists, then save) lets two runs both take it, the
// later rename replacing the other run's file, and the top-k removal then
// deleting a file the other run wrote. A name is instead claimed: the claim
// file ".<name>.ckpt.claim" is created exclusively (O_EXCL), and only then
// is the name checked to be free; the claim is removed once the save has
// renamed its file into place, after which the file itself keeps the name
// taken. Two runs can never both hold a claim, and a run that claims after
// the other's save sees its file, so each moves on to the next free "-vN"
// name. Claims are hidden files that volt's own scans skip (names starting
// with "."), and never hold a checkpoint's bytes.

// claimSuffix ends the name of a claim file.
const claimSuffix = ".claim"

// staleClaimAge is how old a claim file must be to be taken for the
// leftover of a run killed during a save: a live claim lasts one save.
const staleClaimAge = time.Hour

// claimPath is the claim file of the checkpoint at path.
func claimPath(path string) string {
	dir, base := filepath.Split(path)
	return filepath.Join(dir, "."+base+claimSuffix)
}

// claim tries to take the name of the checkpoint at path for this run: it
// reports false when another run holds or has written it. A taken name's
// claim is released by releaseClaims.
func (m *ModelCheckpoint) claim(path string) (bool, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, fmt.Errorf("ModelCheckpoint: %w", err)
	}
	f, err := os.OpenFile(claimPath(path), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ModelCheckpoint: claiming the name %s: %w", filepath.Base(path), err)
	}
	_ = f.Close()
	if exists(path) {
		_ = os.Remove(claimPath(path))
		return false, nil
	}
	m.claims = append(m.claims, claimPath(path))
	return true, nil
}

// releaseClaims removes this run's claim files: the files they reserved
// now exist (or the save failed, and the name is free again).
func (m *ModelCheckpoint) releaseClaims() {
	for _, c := range m.claims {
		_ = os.Remove(c)
	}
	m.claims = m.claims[:0]
}

// removeStaleClaims removes the claim files of saves that a killed run
// left, older than staleClaimAge; a claim only ever blocks a name, and the
// run that made it is gone.
func removeStaleClaims(t *volt.Trainer, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var removed int
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".ckpt"+claimSuffix) {
			continue
		}
		if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < staleClaimAge {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			removed++
		}
	}
	if removed > 0 {
		t.Slog().Info("volt: ModelCheckpoint: removed the name claims of interrupted saves", "dirpath", dir, "files", removed)
	}
}
