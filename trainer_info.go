package volt

import (
	"log/slog"

	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/optim"
)

// Slog returns the logger for volt's own messages (Config.Log), for
// callbacks that report something.
func (t *Trainer) Slog() *slog.Logger { return t.cfg.Log }

// Config returns the configuration the trainer was made with, its Seed set to
// the seed the trainer uses (a restored checkpoint's after a resume), so that a
// second trainer made from it — the tuner's — initialises variables and
// shuffles data alike.
func (t *Trainer) Config() Config {
	c := t.cfg.Config
	seed := t.cfg.seed
	c.Seed = &seed
	return c
}

// MaxEpochs returns the resolved epoch limit (-1: none).
func (t *Trainer) MaxEpochs() int { return t.cfg.maxEpochs }

// MaxSteps returns the resolved optimization-step limit (-1: none).
func (t *Trainer) MaxSteps() int64 { return t.cfg.maxSteps }

// AccumulateGradBatches returns the number of batches per optimization step.
func (t *Trainer) AccumulateGradBatches() int { return t.cfg.accumulate }

// SetAccumulateGradBatches changes the number of batches per optimization
// step, from OnTrainEpochStart (the GradientAccumulationScheduler uses it).
func (t *Trainer) SetAccumulateGradBatches(k int) {
	if k >= 1 {
		t.cfg.accumulate = k
	}
}

// NumTrainingBatches returns the number of batches in a training epoch of the
// current Fit, or -1 when unknown (iterable data) or outside Fit.
func (t *Trainer) NumTrainingBatches() int {
	if t.run.trainLoader == nil {
		return -1
	}
	return effectiveBatches(t.run.trainLoader.NumBatches(), t.run.trainLimit)
}

// NumEvalBatches returns, for the evaluation or prediction run in progress,
// the number of batches of each loader (-1 when unknown).
func (t *Trainer) NumEvalBatches() []int {
	n := make([]int, len(t.run.evalLoaders))
	for i, l := range t.run.evalLoaders {
		n[i] = l.NumBatches()
	}
	return n
}

// Optimizers returns the optimizers of the current module (nil before Fit).
func (t *Trainer) Optimizers() Optimizers {
	if t.perModule.optimization == nil {
		return nil
	}
	return t.perModule.optimization.opts
}

// LearningRates returns the current learning rate of each optimizer, as held
// in its variable (the configured value before the first step).
func (t *Trainer) LearningRates() []float64 {
	opts := t.Optimizers()
	lrs := make([]float64, len(opts))
	for i, o := range opts {
		lrs[i] = o.Optimizer.LR
		if t.eng == nil {
			continue
		}
		if v := t.eng.Store.GetVariable(optim.StatePrefix(i) + "/lr"); v != nil && v.HasValue() {
			if val, err := v.Value(); err == nil {
				if f, err := engine.Float64(val); err == nil {
					lrs[i] = f
				}
			}
		}
	}
	return lrs
}

// LogDir returns the directory of the first logger that has one (the
// version directory of the default CSV logger), else Config.DefaultRootDir.
// ModelCheckpoint saves under LogDir()/checkpoints by default. Asked before
// a run, it claims the loggers' directory (a new version_N, see
// logger.VersionDir.Claim) so that files a program writes there belong to
// the run that follows; a Fit resumed with FromCheckpoint then logs there
// too, instead of continuing the directory of the run it resumes.
func (t *Trainer) LogDir() string {
	if t.IsGlobalZero() {
		if err := t.claimLogDirs(); err != nil {
			t.sayOnce("claim-log-dir", "volt: "+err.Error())
		}
	}
	return t.logDir()
}

// logDir is LogDir without claiming the directory.
func (t *Trainer) logDir() string {
	for _, l := range t.logs.loggers {
		if d, ok := l.(logger.Direr); ok {
			return d.LogDir()
		}
	}
	return t.cfg.DefaultRootDir
}

// LastCheckpoint returns the checkpoint this trainer wrote or recorded last,
// the one FromCheckpoint("last") loads in this process: the file of the
// latest SaveCheckpoint call (the default checkpointing's
// epoch=E-step=S.ckpt, a ModelCheckpoint's top-k file, or a file of your
// own, weights-only included), or the file a callback recorded since with
// SetLastCheckpoint (ModelCheckpoint's last.ckpt under SaveLast); "" before
// either. A ModelCheckpoint that keeps only the best file writes no file for
// a worse epoch, so after Fit this may be an earlier epoch's. For
// Lightning's checkpoint_callback.best_model_path and last_model_path see
// BestModelPath and LastModelPath.
func (t *Trainer) LastCheckpoint() string { return t.ckpt.lastCheckpoint }

// SetLastCheckpoint records path as the last checkpoint (what
// FromCheckpoint("last") loads and LastCheckpoint returns), for callbacks
// that manage files themselves.
func (t *Trainer) SetLastCheckpoint(path string) { t.ckpt.lastCheckpoint = path }

// LossScale returns the current dynamic loss scale under "16-mixed" (0 for
// the other precisions).
func (t *Trainer) LossScale() float64 {
	if t.perModule.scaler == nil {
		return 0
	}
	return t.perModule.scaler.Scale()
}

// Validating reports whether the current Fit validates (it has validation
// loaders, a ValidationStep, and validation is not turned off).
func (t *Trainer) Validating() bool {
	fit := t.run.fit
	return fit != nil && fit.validating
}

// CheckValEveryNEpoch returns the resolved Config.CheckValEveryNEpoch.
func (t *Trainer) CheckValEveryNEpoch() int { return t.cfg.valEveryEpochs }

// NumSanityValSteps returns the resolved number of sanity-check batches per
// validation loader (-1: all, 0: no sanity check).
func (t *Trainer) NumSanityValSteps() int { return t.cfg.sanitySteps }

// LogEveryNSteps returns the resolved logging cadence in optimization steps.
func (t *Trainer) LogEveryNSteps() int64 { return t.cfg.logEvery }

// FastDevRun returns Config.FastDevRun (0: off).
func (t *Trainer) FastDevRun() int { return t.cfg.FastDevRun }

// ValidatesAfterBatch reports, in OnTrainBatchEnd, whether Fit's validation
// cadence (ValCheckInterval, CheckValEveryNEpoch, the end of the
// accumulation window) runs a validation right after the current training
// batch; false elsewhere. A stop requested in that OnTrainBatchEnd may add
// one (Lightning validates before a stop ends the epoch). ModelCheckpoint
// uses it to save a step-triggered checkpoint after that validation.
func (t *Trainer) ValidatesAfterBatch() bool {
	fit := t.run.fit
	return fit != nil && fit.valAfterBatch
}
