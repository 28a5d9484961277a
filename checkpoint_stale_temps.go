package volt

import (
	"path/filepath"
	"time"

	"github.com/voltml/volt/checkpoint"
)

// staleTempIdle is how long a checkpoint save's temporary file must have
// been idle to count as left by a save that did not finish (a save in
// progress writes it continuously): ModelCheckpoint's rule.
const staleTempIdle = time.Minute

// sayStaleTemps says once per directory, at the trainer's first save into
// dir, which temporary files of checkpoint saves an earlier run left there
// unfinished (killed during a write): volt deletes no file it did not write
// in this run, so they stay until the user removes them.
func (t *Trainer) sayStaleTemps(dir string) {
	key := "stale-temps-" + dir
	if !t.IsGlobalZero() || t.logs.saidOnce[key] {
		return
	}
	t.logs.saidOnce[key] = true // one look per directory
	stale, err := checkpoint.StaleTemps(dir, staleTempIdle)
	if err != nil || len(stale) == 0 {
		return
	}
	names := make([]string, len(stale))
	for i, p := range stale {
		names[i] = filepath.Base(p)
	}
	t.cfg.Log.Warn("volt: the checkpoint directory holds temporary files of saves an earlier run did not finish (killed during a write); "+
		"volt deletes no file it did not write in this run: remove them if no other program is writing them",
		"dir", dir, "files", names)
}
