package volt

import "fmt"

// Reduction says how step values of a metric combine into its epoch value.
type Reduction int

// The reductions Log supports. Mean is weighted by batch size.
const (
	Mean Reduction = iota
	Sum
	Min
	Max
)

// String returns the reduction's name.
func (r Reduction) String() string {
	switch r {
	case Mean:
		return "mean"
	case Sum:
		return "sum"
	case Min:
		return "min"
	case Max:
		return "max"
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

// logOptions is the resolved form of a Log call's options.
type logOptions struct {
	onStep, onEpoch bool
	progBar         bool
	logger          bool
	reduce          Reduction
	syncDist        bool // reduce across data-parallel ranks (SyncDist)
}

// LogOption changes how a logged value is treated.
type LogOption func(*logOptions)

// OnStep sets whether the value is logged at each step (name_step when also
// logged per epoch).
func OnStep(on bool) LogOption { return func(o *logOptions) { o.onStep = on } }

// OnEpoch sets whether the value is reduced over the epoch and logged at its
// end (name_epoch when also logged per step).
func OnEpoch(on bool) LogOption { return func(o *logOptions) { o.onEpoch = on } }

// ProgBar shows the value in the progress bar metrics.
var ProgBar LogOption = func(o *logOptions) { o.progBar = true }

// NoLogger keeps the value out of the loggers (it still reaches callbacks).
var NoLogger LogOption = func(o *logOptions) { o.logger = false }

// Reduce sets how the epoch value is computed (default Mean).
func Reduce(r Reduction) LogOption { return func(o *logOptions) { o.reduce = r } }

// defaultLogOptions are Lightning's defaults: per step in training steps and
// training batch hooks, per epoch everywhere else.
func defaultLogOptions(stage RunningStage, batchLevel bool) logOptions {
	perStep := stage == RunningTrain && batchLevel
	return logOptions{onStep: perStep, onEpoch: !perStep, logger: true, reduce: Mean}
}

// logsSomething refuses options under which a value goes nowhere:
// OnStep(false) with OnEpoch(false), which Lightning refuses too
// ("self.log(on_step=False, on_epoch=False) is not useful").
func (o logOptions) logsSomething(name string) error {
	if !o.onStep && !o.onEpoch {
		return fmt.Errorf("Log(%q) with OnStep(false) and OnEpoch(false) logs nothing: log it per step (OnStep(true)), per epoch (OnEpoch(true)) or both", name)
	}
	return nil
}

// epochOnlyHooks are the hooks Lightning lets log epoch values only
// (its _FxValidator: allowed_on_step (False,), allowed_on_epoch (True,)).
var epochOnlyHooks = map[hookID]bool{
	hookOnTrainStart: true, hookOnTrainEpochStart: true, hookOnTrainEpochEnd: true,
	hookOnValidationStart: true, hookOnValidationEpochStart: true, hookOnValidationEpochEnd: true,
	hookOnTestStart: true, hookOnTestEpochStart: true, hookOnTestEpochEnd: true,
}

// allowedIn refuses, in a hook that runs once per loop or epoch, options
// that ask for step values: OnStep(true) or OnEpoch(false), as Lightning's
// self.log raises there ("You can't `self.log(on_step=True)` inside
// `on_train_epoch_end`, must be one of (False,)").
func (o logOptions) allowedIn(name string, hook hookID) error {
	if !epochOnlyHooks[hook] {
		return nil
	}
	bad := ""
	switch {
	case o.onStep:
		bad = "OnStep(true)"
	case !o.onEpoch:
		bad = "OnEpoch(false)"
	default:
		return nil
	}
	return fmt.Errorf("Log(%q) with %s in %s: that hook runs once per epoch, so it logs epoch values only "+
		"(OnStep(false), OnEpoch(true), the defaults there; Lightning raises too): drop %s, or log the value in a batch hook or a step",
		name, bad, hookTable[hook].name, bad)
}

func resolveLogOptions(o logOptions, opts []LogOption) logOptions {
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}
