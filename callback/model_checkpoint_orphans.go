package callback

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/voltml/volt"
	"github.com/voltml/volt/checkpoint"
)

// This file removes the orphans of killed runs: a run killed between writing
// a new top-k checkpoint and removing the one it replaced leaves that file
// behind, and nothing would ever remove it. A Fit resumed in the same
// directory knows, from the restored bookkeeping, which files should exist
// up to the restored step.

// removeOrphans removes, from the directory, every checkpoint this
// ModelCheckpoint wrote (its own state inside the file names the file) at or
// before step upTo that the restored bookkeeping no longer holds. Files of
// later steps (the run resumed from an older checkpoint), files it did not
// write and unreadable files are kept. With SaveTopK -1 nothing ever leaves
// the top k, so there are no orphans (without a Monitor the bookkeeping
// names the latest file only, not every file kept).
func (m *ModelCheckpoint) removeOrphans(t *volt.Trainer, upTo int64) {
	if m.topK == -1 {
		return
	}
	entries, err := os.ReadDir(m.dirpath)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			t.Slog().Warn("volt: ModelCheckpoint: looking for orphaned checkpoints: " + err.Error())
		}
		return
	}
	held := map[string]bool{lastName: true}
	for _, p := range []string{m.state.BestModelPath, m.state.KthBestModelPath, m.state.LastModelPath} {
		held[filepath.Base(p)] = true
	}
	for _, e := range m.state.BestKModels {
		held[filepath.Base(e.Path)] = true
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".ckpt") || held[name] {
			continue
		}
		path := filepath.Join(m.dirpath, name)
		if !m.wroteAtOrBefore(path, upTo) {
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Slog().Warn("volt: ModelCheckpoint: removing an orphaned checkpoint: " + err.Error())
			continue
		}
		removed = append(removed, name)
	}
	if len(removed) > 0 {
		t.Slog().Info("volt: ModelCheckpoint: removed checkpoints that an interrupted run had dropped from its top k",
			"dirpath", m.dirpath, "files", removed)
	}
}

// wroteAtOrBefore reports whether the checkpoint at path was written by this
// ModelCheckpoint (same state key and directory, and its bookkeeping, saved
// in the file, names the file itself) at a global step <= upTo.
func (m *ModelCheckpoint) wroteAtOrBefore(path string, upTo int64) bool {
	h, err := checkpoint.ReadHeader(path)
	if err != nil {
		return false
	}
	var st struct {
		Progress struct {
			OptimizerSteps int64 `json:"optimizer_steps"`
		} `json:"progress"`
		Callbacks map[string][]byte `json:"callbacks"`
	}
	if json.Unmarshal(h.State(), &st) != nil || st.Progress.OptimizerSteps > upTo {
		return false
	}
	raw, ok := st.Callbacks[m.StateKey()]
	if !ok {
		return false
	}
	s := newModelCheckpointState(m.cfg.Monitor)
	if json.Unmarshal(raw, &s) != nil || !sameDir(s.Dirpath, m.dirpath) {
		return false
	}
	name := filepath.Base(path)
	if filepath.Base(s.BestModelPath) == name {
		return true
	}
	for _, e := range s.BestKModels {
		if filepath.Base(e.Path) == name {
			return true
		}
	}
	return false
}
