package volt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/voltml/volt/logger"
)

// CheckpointDirer is implemented by callbacks that write checkpoints into a
// directory (ModelCheckpoint): FromCheckpoint("last") looks there.
type CheckpointDirer interface{ Dirpath() string }

// findLastCheckpoint returns the checkpoint FromCheckpoint("last") loads:
// the one this trainer saved last, else the most recently written .ckpt
// file in the checkpoint directories of this configuration, the runs
// before it included (every <logger root>/version_*/checkpoints, every
// callback's Dirpath), so that a new process resumes after a crash.
func (t *Trainer) findLastCheckpoint() (string, error) {
	if t.ckpt.lastCheckpoint != "" {
		return t.ckpt.lastCheckpoint, nil
	}
	dirs := t.checkpointDirs()
	var newest string
	var newestTime time.Time
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".ckpt") || strings.HasPrefix(name, ".") {
				continue // not a checkpoint, or a save in progress (.name.tmp)
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			if info.ModTime().After(newestTime) {
				newest, newestTime = filepath.Join(dir, name), info.ModTime()
			}
		}
	}
	switch {
	case newest == "" && len(dirs) == 0:
		return "", errors.New(`FromCheckpoint("last"): this trainer has not saved a checkpoint yet, and no checkpoint directory is configured (no logger directory, no ModelCheckpoint)`)
	case newest == "":
		return "", fmt.Errorf(`FromCheckpoint("last"): this trainer has not saved a checkpoint yet, and there is no .ckpt file in %s`,
			strings.Join(dirs, ", "))
	}
	return newest, nil
}

// checkpointDirs lists where this configuration's checkpoints go: each
// callback's Dirpath and the checkpoints folder of every version of every
// logger's run directory.
func (t *Trainer) checkpointDirs() []string {
	var dirs []string
	seen := map[string]bool{}
	add := func(d string) {
		if d != "" && !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, cb := range t.cfg.Callbacks {
		if d, ok := cb.(CheckpointDirer); ok {
			add(d.Dirpath())
		}
	}
	for _, l := range t.loggers {
		d, ok := l.(logger.Direr)
		if !ok {
			continue
		}
		versions, _ := filepath.Glob(filepath.Join(filepath.Dir(d.LogDir()), "version_*", "checkpoints"))
		for _, v := range versions {
			add(v)
		}
	}
	return dirs
}
