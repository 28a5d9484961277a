package volt

import (
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/profiler"
)

// run is the state of one Fit, Validate, Test or Predict: Trainer.lifecycle
// gives each run a fresh one and replaces it with an empty one when the run
// ends, so nothing of a run outlives it and code outside a run reads zero
// values (no loaders, no results, no profiler).
type run struct {
	fit         *fitLoop      // the Fit in progress
	trainLoader data.Loader   // the training loader of the Fit in progress
	trainLimit  int           // batches per training epoch (-1: all of the loader)
	signals     *signalWatch  // Config.HandleSignals, during Fit
	evalLoaders []data.Loader // the loaders of the evaluation or prediction in progress
	skipEpoch   bool          // SkipRestOfEpoch was called
	// inBatchEnd is set during OnTrainBatchEnd, and batchEndStepLogs
	// then says whether the batch's step values go to the loggers after it
	// (a checkpoint taken in the hook records it: resumePoint.StepLogs).
	// Values, not a pointer: nothing is allocated per batch.
	inBatchEnd, batchEndStepLogs bool
	// epochEndLogs is set from OnTrainEpochEnd until the epoch's values
	// are sent to the loggers.
	epochEndLogs bool

	// The batch being processed, for Trainer.Log and tracing.
	res        *results // receives Trainer.Log calls
	batchSize  int      // the weight of a logged value
	loader     int      // the index of the batch's loader (-1: none)
	numLoaders int      // the loaders of the stage, for the /dataloader_idx_N suffix
	inHook     hookID   // the hook being called, for Log's defaults

	prof profiler.Profiler // Config.Profiler's; nil when off

	// evalBatchesSeen counts, per evaluation loader, the batches run so far
	// (sanity check aside): the step of their step values in the loggers
	// (Lightning's _seen_batches_per_dataloader).
	evalBatchesSeen map[evalLoaderKey]int
}

// evalLoaderKey names one evaluation loader of a run.
type evalLoaderKey struct {
	stage  RunningStage
	loader int
}

// addEvalBatchesSeen adds n batches to the count of stage's loader dl.
func (r *run) addEvalBatchesSeen(stage RunningStage, dl, n int) {
	if r.evalBatchesSeen == nil {
		r.evalBatchesSeen = map[evalLoaderKey]int{}
	}
	r.evalBatchesSeen[evalLoaderKey{stage, dl}] += n
}

// checkpointState is what the trainer knows of checkpoints between runs.
type checkpointState struct {
	lastCheckpoint string             // the last file SaveCheckpoint wrote, or SetLastCheckpoint recorded
	defaultSaved   string             // the default checkpointing's newest file (BestModelPath without a ModelCheckpoint)
	loaded         *loadCheck         // what the last restore set, until the first trace checks it
	restoredFrom   *loadCheck         // what the last restore set, kept to explain a shape clash (explainShapeClash)
	fit            fitResume          // where the next Fit continues (fit_resume.go)
	schedulers     restoredSchedulers // applied when Fit starts (scheduling.go)
}

// stopRequest is a request to stop Fit (Trainer.Stop); it stays readable
// after the run (ShouldStop).
type stopRequest struct {
	requested bool
	reason    string
}
