package volt

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"

	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/profiler"
)

// Config configures a Trainer. The zero value is valid and trains for 1000
// epochs with Lightning's defaults; NewTrainer checks every field up front.
type Config struct {
	// MaxEpochs stops training after this many epochs. 0 means 1000 when
	// MaxSteps is unset and no limit otherwise; -1 means no limit.
	MaxEpochs int
	// MinEpochs keeps training at least this many epochs, even when a
	// callback asks to stop.
	MinEpochs int
	// MaxSteps stops training after this many optimization steps; 0 or -1
	// means no limit.
	MaxSteps int64
	// MinSteps keeps training at least this many optimization steps; as
	// in Lightning, with MinEpochs 0 it also keeps the first epoch.
	MinSteps int64

	// CheckValEveryNEpoch runs validation in every n-th training epoch;
	// 0 means 1.
	CheckValEveryNEpoch int
	// ValCheckInterval says when validation runs within those epochs:
	// Batches(n), Fraction(f), AcrossEpochs(n) or Every(d); nil means after
	// the epoch's last batch. With gradient accumulation a due validation
	// waits for the end of the accumulation window.
	ValCheckInterval ValInterval

	// LimitTrainBatches, LimitValBatches, LimitTestBatches and
	// LimitPredictBatches cap the batches per epoch of each loop (per loader
	// for evaluation): Batches(n) or Fraction(f); Batches(0) turns the loop
	// off. Nil means every batch.
	LimitTrainBatches   BatchLimit
	LimitValBatches     BatchLimit
	LimitTestBatches    BatchLimit
	LimitPredictBatches BatchLimit
	// OverfitBatches trains on the same first batches every epoch (shuffling
	// off) and validates on them: Batches(n) or Fraction(f) of the training
	// loader. Nil or Batches(0) is off.
	OverfitBatches BatchLimit
	// FastDevRun runs n batches of training, validation and test (one epoch)
	// to check that everything runs; loggers, checkpointing and early stopping
	// are off. 0 is off.
	FastDevRun int
	// ReloadDataloadersEveryNEpochs asks the data module for new loaders
	// every n epochs; 0 never. As in Lightning, the training loader is asked
	// for before OnTrainEpochStart of an epoch n epochs after it was last
	// asked, and the validation loaders right before a validation run n
	// epochs after they were last asked for one (with CheckValEveryNEpoch 3
	// and n 2: at the validations of epochs 2 and 5, 0-based).
	ReloadDataloadersEveryNEpochs int
	// NumSanityValSteps is the number of validation batches run before
	// training to catch bugs early: nil means 2, 0 turns the check off, -1
	// runs the whole validation set.
	NumSanityValSteps *int

	// LogEveryNSteps sends training step-level metrics to the loggers every
	// n optimization steps; 0 means 50. As in Lightning, validation and test
	// step values are sent after every batch.
	LogEveryNSteps int
	// Loggers receive the metrics. Nil means one CSV logger under
	// DefaultRootDir/volt_logs/version_N; set DisableLoggers to log nothing.
	// NewTrainer reports a logger whose Validate method fails.
	Loggers []Logger
	// DisableLoggers turns off the default CSV logger.
	DisableLoggers bool
	// DefaultRootDir is where the default logger writes; "" means ".".
	DefaultRootDir string

	// AccumulateGradBatches sums the gradients of this many batches before
	// each optimizer step (the loss is scaled by 1/AccumulateGradBatches; the
	// last, partial window of an epoch still steps); 0 means 1.
	AccumulateGradBatches int
	// GradientClipVal clips gradients before each optimizer step; 0 is off.
	GradientClipVal float64
	// GradientClipAlgorithm is ClipNorm (default: global 2-norm over all the
	// optimizer's parameters) or ClipValue (each element to ±GradientClipVal).
	GradientClipAlgorithm ClipAlgorithm
	// TrackGradNorm logs the p-norm of each parameter's gradient and their
	// total (grad_<p>_norm/<variable>, grad_<p>_norm_total) every
	// LogEveryNSteps; p > 0, math.Inf(1) for the max norm; 0 is off.
	TrackGradNorm float64
	// TerminateOnNaN stops training with an error when the loss or a
	// parameter becomes NaN or infinite.
	TerminateOnNaN bool
	// DetectAnomaly also checks every gradient, naming the first variable
	// whose gradient is not finite (implies TerminateOnNaN), and the class
	// labels a step passes through Step.ClassLabels.
	DetectAnomaly bool

	// TruncatedBPTTSteps splits each training batch along its time axis
	// into chunks of this many steps, each an optimization step with the
	// hidden state carried over (see TBPTTStepper); 0 is off.
	TruncatedBPTTSteps int

	// DisableModelSummary turns off the table of the model's variables
	// printed when Fit starts; SummaryWriter is where it goes (nil: stderr).
	DisableModelSummary bool
	SummaryWriter       io.Writer

	// Profiler names a profiler timing each hook call, batch wait, step,
	// logging and checkpoint save of every run, its report and files going
	// to the run's log directory: "simple", "advanced" or "trace" (see
	// package profiler); "" is none. CustomProfiler takes one of your own,
	// or a configured one, instead.
	Profiler       string
	CustomProfiler profiler.Profiler

	// DisableCheckpointing turns off the default checkpointing: the latest
	// state saved after each epoch in <log dir>/checkpoints (see Checkpointer).
	DisableCheckpointing bool

	// HandleSignals makes Fit handle SIGTERM, SIGINT and SIGUSR1: finish
	// the current optimization step, save a resumable checkpoint, return an
	// *InterruptedError naming it; a second signal stops at once.
	HandleSignals bool
	// SignalCheckpointPath is where that checkpoint goes; "" means
	// LogDir()/checkpoints/interrupted.ckpt.
	SignalCheckpointPath string

	// Callbacks are called before the module for each hook, in this order.
	Callbacks []Callback

	// Precision is the numeric policy, as Lightning's precision flag:
	// "32-true" (default), "64-true", "bf16-true" and "16-true" (the model,
	// its gradients and the optimizer state in that dtype), "bf16-mixed" and
	// "16-mixed" (the model computes in bfloat16/float16 while float32
	// master weights and optimizer state are updated; "16-mixed" also scales
	// the loss dynamically and skips steps whose gradients overflow).
	Precision string
	// Seed seeds this trainer's variable initialisation and random ops, and
	// the shuffling of the DataLoaders it runs that have no Seed of their
	// own; it is saved in checkpoints and restored on resume. Nil means the
	// seed set by SeedEverything (0 if never called) when NewTrainer runs.
	Seed *uint64
	// Backend selects GoMLX's backend: "go:ops_by_graph" (the pure-Go
	// backend, volt's default: independent ops side by side in graphs
	// with a convolution or, on more than one core, large matrix
	// products, on one executor goroutine per core, one op at a time in
	// the others), "go" (side by
	// side whenever one graph runs alone), "go:ops_sequential" (one op at a
	// time, each on every core), or "xla:<plugin>" in builds with -tags
	// xla; "" lets Accelerator choose. When set, Accelerator must be "" or
	// agree.
	Backend string
	// Accelerator is Lightning's accelerator: "cpu" (GoMLX's Go backend:
	// $GOMLX_BACKEND when it names it, else "go:ops_by_graph"), "gpu"
	// (GoMLX's XLA backend with a CUDA PJRT plugin; the program must be
	// built with -tags xla) or "auto" ("" means "auto": $GOMLX_BACKEND
	// when set, else gpu when an XLA build finds a GPU plugin, else cpu).
	Accelerator string
	// DeviceIDs lists the GPUs of a machine's ranks, Lightning's
	// devices=[…]: local rank i runs on GPU DeviceIDs[i]; nil means local
	// rank i on GPU i. Devices 0 is read as len(DeviceIDs). Only for "gpu"
	// or "auto".
	DeviceIDs []int

	// Devices is the number of data-parallel ranks per machine (Lightning's
	// devices with strategy="ddp"): 0 or 1 runs one process; N > 1 run as a
	// plain process re-executes the program under mpirun -np N (the binary
	// must be built with -tags mpi) and exits with the job's status. Under
	// an MPI launcher the job's size comes from MPI and must equal
	// Devices × NumNodes when Devices is set. See the README's distributed
	// section.
	Devices int
	// NumNodes is the number of machines of a job started by the cluster's
	// launcher (mpirun -H, srun --mpi=pmix); 0 means 1.
	NumNodes int
	// ShardUneven says how the training loader is sharded across ranks
	// when its length is not a multiple of the world size: data.PadRepeat
	// (default, Lightning's DistributedSampler: repeat the first samples)
	// or data.DropTail. Validation and test loaders are never padded, so
	// their epoch values equal one process's over the whole set.
	ShardUneven data.Uneven
	// SyncBatchNorm is Lightning's sync_batchnorm: under Devices > 1 every
	// batchnorm layer (package batchnorm) of the training step normalises
	// with the mean and variance of the union of the ranks' batches, and
	// the gradients and running statistics are those of one process over
	// that union (PyTorch's SyncBatchNorm); one process has nothing to
	// synchronise. The Go backend cannot all-reduce inside a program, so a
	// step with M batch normalizations runs M forward and M backward passes
	// more, with the ranks' statistics and their gradients exchanged
	// between them (see the batchnorm package). The step must reach the
	// same batch normalizations in the same order in every trace; manual
	// optimization and TruncatedBPTTSteps are not supported with it.
	SyncBatchNorm bool

	// Log receives volt's own messages (why a run stopped, what was
	// turned off, …). Nil means plain lines on stderr when it is a
	// terminal and the program kept slog's default logger (as Lightning
	// prints them), else slog.Default(); use
	// slog.New(slog.DiscardHandler) to silence them.
	Log *slog.Logger

	// EnableProgressBar is Lightning's enable_progress_bar: nil or true
	// adds a ProgressBar writing to stderr (bars on a terminal, a line per
	// epoch elsewhere) unless a ProgressReporter is in Callbacks; false
	// shows no progress (a ProgressReporter in Callbacks is then an error).
	EnableProgressBar *bool
}

// Ptr returns a pointer to v, for the optional Config fields.
func Ptr[T any](v T) *T { return &v }

// resolved is a Config with defaults applied, as the loops use it.
type resolved struct {
	Config
	maxEpochs      int // -1: none
	maxSteps       int64
	sanitySteps    int // -1: all
	valEveryEpochs int
	logEvery       int64
	accumulate     int
	precision      engine.Precision
	backend        string
	placement      engine.Placement // where this process runs; backend is its Backend
	seed           uint64           // restored from a checkpoint on resume
	// reduceGradients, when set, runs between the gradient and the apply
	// programs of every automatic training step (the data-parallel
	// all-reduce); nil compiles each step as one program.
	reduceGradients *engine.Reducer
	// fakeSteps, when set, replaces the compiled training steps (loop tests
	// on a fake engine).
	fakeSteps trainSteps
	fakeEval  evalSteps
	profiler  profiler.Profiler // Config.Profiler's or CustomProfiler; nil: none
	// moreParts are state parts beyond the trainer's own (stateParts):
	// tests add a toy part here.
	moreParts []statePart
}

// validate checks every field and returns all problems at once, each naming
// its field and what is allowed, with the configuration's defaults applied
// (withDefaults). The rules are a table in the order their problems are
// listed: a field's range, then what it must agree with.
func (c Config) validate() (resolved, error) {
	r := c.withDefaults()
	sanity := 0
	if c.NumSanityValSteps != nil {
		sanity = *c.NumSanityValSteps
	}
	errs := []error{
		mustBe(c.MaxEpochs >= -1, "MaxEpochs", "-1 (no limit), 0 (default) or positive", c.MaxEpochs),
		mustBe(c.MinEpochs >= 0, "MinEpochs", ">= 0", c.MinEpochs),
		notAbove("MinEpochs", c.MinEpochs, "MaxEpochs", c.epochLimit()),
		mustBe(c.MaxSteps >= -1, "MaxSteps", "-1 or 0 (no limit) or positive", c.MaxSteps),
		mustBe(c.MinSteps >= 0, "MinSteps", ">= 0", c.MinSteps),
		notAbove("MinSteps", c.MinSteps, "MaxSteps", c.stepLimit()),
		mustBe(c.CheckValEveryNEpoch >= 0, "CheckValEveryNEpoch", ">= 1 (0 means 1)", c.CheckValEveryNEpoch),
		mustBe(sanity >= -1, "NumSanityValSteps", "-1 (all), 0 (off) or positive", sanity),
		mustBe(c.LogEveryNSteps >= 0, "LogEveryNSteps", ">= 1 (0 means 50)", c.LogEveryNSteps),
		mustBe(c.AccumulateGradBatches >= 0, "AccumulateGradBatches", ">= 1 (0 means 1)", c.AccumulateGradBatches),
		mustBe(c.GradientClipVal >= 0 && !math.IsInf(c.GradientClipVal, 0), "GradientClipVal", "a finite number >= 0 (0 is off)", c.GradientClipVal),
		check(slices.Contains([]ClipAlgorithm{"", ClipNorm, ClipValue}, c.GradientClipAlgorithm),
			"Config.GradientClipAlgorithm: unknown %q; valid: %q, %q", c.GradientClipAlgorithm, ClipNorm, ClipValue),
		mustBe(c.TruncatedBPTTSteps >= 0, "TruncatedBPTTSteps", ">= 0 (0 is off)", c.TruncatedBPTTSteps),
		mustBe(c.TrackGradNorm >= 0, "TrackGradNorm", "0 (off), a p > 0 or math.Inf(1)", c.TrackGradNorm),
		validLimit("LimitTrainBatches", c.LimitTrainBatches),
		validLimit("LimitValBatches", c.LimitValBatches),
		validLimit("LimitTestBatches", c.LimitTestBatches),
		validLimit("LimitPredictBatches", c.LimitPredictBatches),
		validLimit("OverfitBatches", c.OverfitBatches),
		errors.Join(c.validateDistributed()...),
		validValInterval(&c),
		mustBe(c.FastDevRun >= 0, "FastDevRun", ">= 0 (0 is off)", c.FastDevRun),
		mustBe(c.ReloadDataloadersEveryNEpochs >= 0, "ReloadDataloadersEveryNEpochs", ">= 0 (0 is never)", c.ReloadDataloadersEveryNEpochs),
		check(c.OverfitBatches == nil || c.LimitTrainBatches == nil,
			"Config.OverfitBatches and Config.LimitTrainBatches are both set; OverfitBatches already limits training"),
		check(!c.DisableLoggers || len(c.Loggers) == 0,
			"Config.DisableLoggers is set but Config.Loggers lists %d loggers; use one or the other", len(c.Loggers)),
	}
	for i, l := range c.Loggers {
		errs = append(errs, check(l != nil, "Config.Loggers[%d]: is nil", i))
		if v, ok := l.(CallbackValidator); ok && l != nil {
			if err := v.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("Config.Loggers[%d]: %T: %w", i, l, err))
			}
		}
	}
	for i, cb := range c.Callbacks {
		if err := checkCallback(cb); err != nil {
			errs = append(errs, fmt.Errorf("Config.Callbacks[%d]: %v", i, err))
		}
	}
	// What is parsed as it is checked.
	var err error
	r.profiler, err = profilerOf(c)
	errs = append(errs, err)
	if r.precision, err = engine.ParsePrecision(c.Precision); err != nil {
		errs = append(errs, fmt.Errorf("Config.Precision: %v", err))
	}
	if err := r.placeDevices(); err != nil {
		errs = append(errs, err)
	} else if err := engine.CheckBackendConfig(r.backend); err != nil {
		errs = append(errs, fmt.Errorf("Config.Backend: %v", err))
	}
	return r, errors.Join(errs...)
}

// withDefaults resolves the fields whose zero value means a default, and
// what FastDevRun and DetectAnomaly imply. It does not check them (validate
// does); a field out of range resolves to what its problem is reported on.
func (c Config) withDefaults() resolved {
	r := resolved{Config: c, maxEpochs: c.epochLimit(), maxSteps: c.stepLimit(), sanitySteps: 2, valEveryEpochs: 1, logEvery: 50, seed: data.DefaultSeed()}
	if c.CheckValEveryNEpoch > 0 {
		r.valEveryEpochs = c.CheckValEveryNEpoch
	}
	if c.NumSanityValSteps != nil {
		r.sanitySteps = *c.NumSanityValSteps
	}
	if c.LogEveryNSteps > 0 {
		r.logEvery = int64(c.LogEveryNSteps)
	}
	r.accumulate = max(c.AccumulateGradBatches, 1)
	if c.GradientClipAlgorithm == "" {
		r.GradientClipAlgorithm = ClipNorm
	}
	if c.DetectAnomaly {
		r.TerminateOnNaN = true
	}
	if c.FastDevRun > 0 {
		n := Batches(c.FastDevRun)
		r.maxEpochs, r.maxSteps, r.sanitySteps = 1, int64(n), 0
		r.LimitTrainBatches, r.LimitValBatches, r.LimitTestBatches, r.LimitPredictBatches = n, n, n, n
		r.ValCheckInterval = nil
		r.DisableLoggers, r.Loggers = true, nil
	}
	if c.Seed != nil {
		r.seed = *c.Seed
	}
	if r.Log == nil {
		r.Log = defaultLog()
	}
	if r.DefaultRootDir == "" {
		r.DefaultRootDir = "."
	}
	return r
}

// epochLimit is MaxEpochs resolved, before FastDevRun: 1000 when neither
// MaxEpochs nor MaxSteps is set, none (-1) when only MaxSteps is.
func (c Config) epochLimit() int {
	switch {
	case c.MaxEpochs == 0 && c.MaxSteps <= 0:
		return 1000
	case c.MaxEpochs == 0:
		return -1
	}
	return c.MaxEpochs
}

// stepLimit is MaxSteps resolved, before FastDevRun: none (-1) unless
// positive.
func (c Config) stepLimit() int64 {
	if c.MaxSteps > 0 {
		return c.MaxSteps
	}
	return -1
}

// mustBe is validate's problem with a field out of its range, nil when ok:
// "Config.<field>: must be <valid>, got <got>".
func mustBe(ok bool, field, valid string, got any) error {
	if ok {
		return nil
	}
	return fmt.Errorf("%s: must be %s, got %v", "Config."+field, valid, got)
}

// notAbove is validate's problem with a lower bound above the upper bound
// it goes with, nil when either is unset (max <= 0, min < 0: the range
// rule reports that) or they agree.
func notAbove[T int | int64](minField string, min T, maxField string, max T) error {
	if min < 0 || max <= 0 || min <= max {
		return nil
	}
	return fmt.Errorf("%s (%d) is larger than %s (%d)", "Config."+minField, min, "Config."+maxField, max)
}

// check is validate's problem that is not a range, nil when ok.
func check(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// SeedEverything sets the process-wide default seed: the seed of trainers
// created afterwards without Config.Seed (their variable initialisation and
// their DataLoaders without a Seed), and of DataLoaders run outside a
// trainer. A trainer reads it once, in NewTrainer; changing it later does not
// change existing trainers, and resuming from a checkpoint does not change it.
func SeedEverything(seed uint64) { data.SetDefaultSeed(seed) }
