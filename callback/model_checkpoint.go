package callback

import (
	"os"
	"path/filepath"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/data"
)

// ModelCheckpoint saves checkpoints during Fit: when a cadence is due, it
// keeps the best SaveTopK files by a monitored metric (or the latest ones
// without a monitor) and, with SaveLast, a copy of the newest one as
// "last.ckpt" (Lightning's ModelCheckpoint).
//
// The work is split three ways, after a validated configuration
// (model_checkpoint_config.go). When: the cadence (every n training steps,
// every n epochs, or every time interval) and the hook that checks it
// (model_checkpoint.go). Which: the top-k bookkeeping that decides whether a
// checkpoint is kept and which file drops out (model_checkpoint_topk.go).
// How: file names from the Filename template (model_checkpoint_filename.go)
// and atomic writes, copies and removals (model_checkpoint_writer.go).
//
// It never saves during the sanity check, outside Fit, or twice for the same
// global step. It removes only files its own bookkeeping holds, in its own
// directory (never another run's, even after resuming from it), never the
// last file. It implements volt.BestModelPather, so FromCheckpoint("best") loads
// BestModelPath, and it records last.ckpt with Trainer.SetLastCheckpoint, so
// FromCheckpoint("last") loads it. Its bookkeeping is volt.Stateful: a
// resumed Fit continues the same top k.
type ModelCheckpoint struct {
	configured[ModelCheckpointConfig]
	defaultNow bool // cfg.Now was nil: time.Now
	topK       int
	name       filenameTemplate
	better     func(a, b float64) bool
	dirpath    string // resolved at Setup
	state      modelCheckpointState

	loaded      bool   // LoadState ran: keep lastGlobalStepSaved at OnFitStart
	orphansUpTo int64  // LoadState restored this directory's bookkeeping up to this step (-1: not)
	loadWarning string // said at OnFitStart
	valRan      bool   // a Fit validation run ended: a missing monitor is an error
	warned      bool   // the missing monitor was reported
	lastTime    time.Time
	// deferred: a step- or time-triggered save waits for the end of the
	// next validation (deferToValidation).
	deferred bool
	// written is what this process's saves left at each path (rank 0), so
	// that a file another process put in its place is not removed.
	written map[string]os.FileInfo
}

// staleTempAge is how long a save's temporary file must have been idle to be
// taken for the leftover of a killed save: a save in progress writes
// continuously and renames its file as soon as it is complete.
const staleTempAge = time.Minute

// Dirpath returns the directory of the files: ModelCheckpointConfig.Dirpath
// before the first Fit resolves it ("" when it is "").
func (m *ModelCheckpoint) Dirpath() string {
	if m.dirpath == "" {
		return m.cfg.Dirpath
	}
	return m.dirpath
}

// Setup resolves the directory when Fit starts.
func (m *ModelCheckpoint) Setup(t *volt.Trainer, stage volt.Stage) error {
	if stage != volt.StageFit {
		return nil
	}
	m.dirpath = m.cfg.Dirpath
	if m.dirpath == "" {
		m.dirpath = filepath.Join(t.LogDir(), "checkpoints")
	}
	// Under data-parallel training rank 0's directory is every rank's
	// (Lightning broadcasts dirpath too).
	return t.BroadcastFromRankZero(&m.dirpath)
}

// OnFitStart resets the per-run state; the bookkeeping of earlier saves (and
// of a loaded checkpoint) is kept. It removes from its directory the
// temporary files of saves that an earlier, killed run left (idle for
// staleTempAge) and, when resuming with this directory's bookkeeping, the
// checkpoints such a run had dropped from its top k but not yet removed.
func (m *ModelCheckpoint) OnFitStart(t *volt.Trainer) error {
	if t.IsGlobalZero() { // rank 0 alone manages the files of a data-parallel job
		m.cleanUp(t)
	}
	m.orphansUpTo = -1
	if !m.loaded {
		m.state.LastGlobalStepSaved = 0 // no need to save before any step
	}
	if m.loadWarning != "" {
		t.Slog().Warn(m.loadWarning)
	}
	m.loaded, m.loadWarning = false, ""
	m.valRan, m.warned, m.deferred = false, false, false
	m.lastTime = m.cfg.Now()
	return nil
}

// OnTrainBatchEnd saves when the step or time cadence is due, or defers the
// save to the end of the next validation (deferToValidation).
func (m *ModelCheckpoint) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if m.skip(t) {
		return nil
	}
	stepDue := m.cfg.EveryNTrainSteps > 0 && t.GlobalStep()%int64(m.cfg.EveryNTrainSteps) == 0
	timeDue := false
	if m.cfg.TrainTimeInterval > 0 {
		now := m.cfg.Now()
		timeDue = now.Sub(m.lastTime) >= m.cfg.TrainTimeInterval
		// Each rank has its own clock: under data-parallel training rank
		// 0's says when every rank saves (Lightning broadcasts it too).
		if err := t.BroadcastFromRankZero(&timeDue); err != nil {
			return err
		}
		if timeDue {
			m.lastTime = now
		}
	}
	if !stepDue && !timeDue {
		return nil
	}
	if m.deferToValidation(t) {
		m.deferred = true
		return nil
	}
	return m.save(t)
}

// deferToValidation reports whether a step- or time-triggered save with a
// Monitor waits for the end of the validation that runs right after this
// batch (Trainer.ValidatesAfterBatch), so that it ranks with that
// validation's values rather than stale or missing ones (Lightning 2.5.5,
// PR #21106; 2.2.5 saves at once). A save due after a batch no validation
// follows is made at once, as in both: before the first validation a
// missing monitored value skips the top-k file, as Lightning's does.
func (m *ModelCheckpoint) deferToValidation(t *volt.Trainer) bool {
	return m.cfg.Monitor != "" && t.Validating() && t.ValidatesAfterBatch()
}

// OnValidationEnd saves a deferred step- or time-triggered checkpoint, and
// saves when the epoch cadence is due and saves happen at validation end.
func (m *ModelCheckpoint) OnValidationEnd(t *volt.Trainer) error {
	if st := t.State(); st.Fn != volt.StageFit || st.Stage == volt.RunningSanityCheck {
		return nil
	}
	if m.deferred {
		// Saved before valRan is set: a value this first validation did
		// not log either is skipped with a warning, as the save at its
		// batch would have been.
		m.deferred = false
		err := error(nil)
		if !m.skip(t) {
			err = m.save(t)
		}
		m.valRan = true
		return err
	}
	m.valRan = true
	if m.onTrainEpochEnd(t) || m.skip(t) || !m.epochDue(t) {
		return nil
	}
	return m.save(t)
}

// OnTrainEpochEnd saves when the epoch cadence is due and saves happen at
// training epoch end.
func (m *ModelCheckpoint) OnTrainEpochEnd(t *volt.Trainer) error {
	if !m.onTrainEpochEnd(t) || m.skip(t) || !m.epochDue(t) {
		return nil
	}
	return m.save(t)
}

// OnTrainEnd brings last.ckpt up to the end of training.
func (m *ModelCheckpoint) OnTrainEnd(t *volt.Trainer) error {
	if !m.cfg.SaveLast || m.skip(t) {
		return nil
	}
	return m.saveLast(t, "")
}

// onTrainEpochEnd reports whether the epoch cadence is checked at
// OnTrainEpochEnd (else at OnValidationEnd). By default (Lightning's rule)
// it is when Trainer.MonitorsAtTrainEpochEnd says so, or when Fit does not
// validate at all.
func (m *ModelCheckpoint) onTrainEpochEnd(t *volt.Trainer) bool {
	if m.cfg.SaveOnTrainEpochEnd != nil {
		return *m.cfg.SaveOnTrainEpochEnd
	}
	if t.CheckValEveryNEpoch() != 1 {
		return false
	}
	return !t.Validating() || t.MonitorsAtTrainEpochEnd()
}

// epochDue reports whether the current epoch is one of the epoch cadence.
func (m *ModelCheckpoint) epochDue(t *volt.Trainer) bool {
	n := m.cfg.EveryNEpochs
	return n > 0 && (t.CurrentEpoch()+1)%n == 0
}

// skip reports whether no checkpoint may be written now: outside Fit, in the
// sanity check, or when this global step was already saved.
func (m *ModelCheckpoint) skip(t *volt.Trainer) bool {
	st := t.State()
	return st.Fn != volt.StageFit || st.Stage == volt.RunningSanityCheck || m.state.LastGlobalStepSaved == t.GlobalStep()
}

// save writes the checkpoints of one due cadence: the top-k file (when it
// makes the cut) and last.ckpt.
func (m *ModelCheckpoint) save(t *volt.Trainer) error {
	candidates := monitorCandidates(t)
	// Under data-parallel training every rank decides as rank 0, which
	// writes the files, so that every rank records the real paths.
	if err := t.BroadcastFromRankZero(&candidates); err != nil {
		return err
	}
	var saved string
	if m.topK != 0 {
		var err error
		if saved, err = m.saveTopK(t, candidates); err != nil {
			return err
		}
	}
	if !m.cfg.SaveLast {
		return nil
	}
	return m.saveLast(t, saved)
}

// monitorCandidates returns the metrics a monitor or a filename can name:
// the callback metrics plus "epoch" and "step" (unless logged under those
// names).
func monitorCandidates(t *volt.Trainer) map[string]float64 {
	c := t.CallbackMetrics()
	if _, ok := c["epoch"]; !ok {
		c["epoch"] = float64(t.CurrentEpoch())
	}
	if _, ok := c["step"]; !ok {
		c["step"] = float64(t.GlobalStep())
	}
	return c
}

// Interface guards.
// ManagesCheckpoints implements volt.Checkpointer: with a ModelCheckpoint
// the trainer's default checkpointing is off.
func (*ModelCheckpoint) ManagesCheckpoints() {}

// SkippedInFastDevRun implements volt.FastDevRunSkipped: Config.FastDevRun
// turns ModelCheckpoint off.
func (*ModelCheckpoint) SkippedInFastDevRun() {}

var (
	_ volt.FastDevRunSkipped = (*ModelCheckpoint)(nil)
	_ volt.Setup             = (*ModelCheckpoint)(nil)
	_ volt.OnFitStart        = (*ModelCheckpoint)(nil)
	_ volt.OnTrainBatchEnd   = (*ModelCheckpoint)(nil)
	_ volt.OnValidationEnd   = (*ModelCheckpoint)(nil)
	_ volt.OnTrainEpochEnd   = (*ModelCheckpoint)(nil)
	_ volt.OnTrainEnd        = (*ModelCheckpoint)(nil)
	_ volt.Stateful          = (*ModelCheckpoint)(nil)
	_ volt.BestModelPather   = (*ModelCheckpoint)(nil)
)

// cleanUp removes what an earlier, killed run left in the directory: stale
// temporary files and, when resuming with this directory's bookkeeping, the
// checkpoints it had dropped from its top k.
func (m *ModelCheckpoint) cleanUp(t *volt.Trainer) {
	removed, err := checkpoint.RemoveStaleTemps(m.dirpath, staleTempAge)
	if len(removed) > 0 {
		t.Slog().Info("volt: ModelCheckpoint: removed temporary files of interrupted saves", "dirpath", m.dirpath, "files", len(removed))
	}
	if err != nil {
		t.Slog().Warn("volt: ModelCheckpoint: "+err.Error(), "dirpath", m.dirpath)
	}
	if m.loaded && m.orphansUpTo >= 0 {
		m.removeOrphans(t, m.orphansUpTo)
	}
}
