package volt

import (
	"reflect"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt/data"
)

// The hook table lists every optional interface volt looks for, once. It
// drives discovery (which targets implement what, resolved when a run
// starts), the signature checks, Config.Callbacks validation, dispatch and
// the names in errors. A test checks that every optional interface of the
// package is in it.

// hookID names one row of the hook table.
type hookID uint8

// The rows of the hook table.
const (
	// hookNone is no hook: the trainer's current hook outside hook calls.
	hookNone hookID = iota
	hookSetup
	hookTeardown
	hookOnFitStart
	hookOnFitEnd
	hookOnSanityCheckStart
	hookOnSanityCheckEnd
	hookOnTrainStart
	hookOnTrainEnd
	hookOnTrainEpochStart
	hookOnTrainEpochEnd
	hookOnTrainBatchStart
	hookOnTrainBatchEnd
	hookOnValidationStart
	hookOnValidationEnd
	hookOnValidationEpochStart
	hookOnValidationEpochEnd
	hookOnValidationBatchStart
	hookOnValidationBatchEnd
	hookOnTestStart
	hookOnTestEnd
	hookOnTestEpochStart
	hookOnTestEpochEnd
	hookOnTestBatchStart
	hookOnTestBatchEnd
	hookOnPredictStart
	hookOnPredictEnd
	hookOnPredictEpochStart
	hookOnPredictEpochEnd
	hookOnPredictBatchStart
	hookOnPredictBatchEnd
	hookOnException
	hookOnBeforeBackward
	hookOnAfterBackward
	hookOnBeforeOptimizerStep
	hookStateful
	hookCheckpointer
	hookMetricMonitor
	hookBestModelPather
	hookLastModelPather
	hookCheckpointDirer
	hookModelSummarizer
	hookFastDevRunSkipped
	hookProgressReporter
	hookValidationStepper
	hookTestStepper
	hookPredictStepper
	hookOptimizerConfigurer
	hookAutomaticOptimizer
	hookTBPTTStepper
	hookTBPTTSplitter
	hookGradientClipper
	hookHParamser
	hookTrainDataloader
	hookValDataloaders
	hookTestDataloaders
	hookPredictDataloaders
	hookDataPreparer
	hookDataSetup
	hookDataTeardown
	hookDataStateful
	hookStepOutputReader
	numHooks
)

// hookTime says when volt calls a hook.
type hookTime uint8

const (
	// perEvent hooks run on the host at each event of a loop.
	perEvent hookTime = iota + 1
	// traceTime hooks run while the training step is traced into a graph.
	traceTime
	// asked hooks are not events: volt asks a target for something
	// (a step function, its optimizers, its state).
	asked
	// markers change how volt treats a callback but are no hook on their
	// own: a callback must implement something else too.
	markerOnly
)

// targetKind is the set of targets that may implement a hook.
type targetKind uint8

const (
	onCallback targetKind = 1 << iota
	onModule
	onDataModule
)

// hookArgs carries the arguments of every host hook call; each row's call
// picks what its hook takes. It is small and passed by value, so that
// dispatch does not allocate.
type hookArgs struct {
	batch         *data.Batch
	out           *StepOutput
	batchIdx      int
	dataloaderIdx int
	stage         Stage
	err           error
}

// traceArgs carries the arguments of the trace-time hooks.
type traceArgs struct {
	step         *Step
	loss         *graph.Node
	grads        []Gradient
	optimizerIdx int
}

// hookSpec is one row of the hook table.
type hookSpec struct {
	iface reflect.Type
	when  hookTime
	on    targetKind
	// bind returns the call of a host hook on h, which implements iface
	// (the type assertion is done once, when a run resolves its hooks);
	// bindTrace that of a trace-time hook. Nil for hooks that are no events.
	bind      func(h any) hookCall
	bindTrace func(h any) traceCall
	// name is the hook's name in errors: the method's name for a
	// one-method interface, else the interface's (filled in by init).
	name string
}

// hookTable is the table, indexed by hookID.
var hookTable = [numHooks]hookSpec{
	hookSetup: event(onCallback|onModule, func(h Setup) hookCall {
		return func(t *Trainer, a hookArgs) error { return h.Setup(t, a.stage) }
	}),
	hookTeardown: event(onCallback|onModule, func(h Teardown) hookCall {
		return func(t *Trainer, a hookArgs) error { return h.Teardown(t, a.stage) }
	}),
	hookOnFitStart: event(onCallback|onModule, func(h OnFitStart) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnFitStart(t) }
	}),
	hookOnFitEnd: event(onCallback|onModule, func(h OnFitEnd) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnFitEnd(t) }
	}),
	hookOnSanityCheckStart: event(onCallback|onModule, func(h OnSanityCheckStart) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnSanityCheckStart(t) }
	}),
	hookOnSanityCheckEnd: event(onCallback|onModule, func(h OnSanityCheckEnd) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnSanityCheckEnd(t) }
	}),
	hookOnTrainStart: event(onCallback|onModule, func(h OnTrainStart) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnTrainStart(t) }
	}),
	hookOnTrainEnd: event(onCallback|onModule, func(h OnTrainEnd) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnTrainEnd(t) }
	}),
	hookOnTrainEpochStart: event(onCallback|onModule, func(h OnTrainEpochStart) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnTrainEpochStart(t) }
	}),
	hookOnTrainEpochEnd: event(onCallback|onModule, func(h OnTrainEpochEnd) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnTrainEpochEnd(t) }
	}),
	hookOnTrainBatchStart: event(onCallback|onModule, func(h OnTrainBatchStart) hookCall {
		return func(t *Trainer, a hookArgs) error { return h.OnTrainBatchStart(t, a.batch, a.batchIdx) }
	}),
	hookOnTrainBatchEnd: event(onCallback|onModule, func(h OnTrainBatchEnd) hookCall {
		return func(t *Trainer, a hookArgs) error { return h.OnTrainBatchEnd(t, a.out, a.batch, a.batchIdx) }
	}),
	hookOnValidationStart: event(onCallback|onModule, func(h OnValidationStart) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnValidationStart(t) }
	}),
	hookOnValidationEnd: event(onCallback|onModule, func(h OnValidationEnd) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnValidationEnd(t) }
	}),
	hookOnValidationEpochStart: event(onCallback|onModule, func(h OnValidationEpochStart) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnValidationEpochStart(t) }
	}),
	hookOnValidationEpochEnd: event(onCallback|onModule, func(h OnValidationEpochEnd) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnValidationEpochEnd(t) }
	}),
	hookOnValidationBatchStart: event(onCallback|onModule, func(h OnValidationBatchStart) hookCall {
		return func(t *Trainer, a hookArgs) error {
			return h.OnValidationBatchStart(t, a.batch, a.batchIdx, a.dataloaderIdx)
		}
	}),
	hookOnValidationBatchEnd: event(onCallback|onModule, func(h OnValidationBatchEnd) hookCall {
		return func(t *Trainer, a hookArgs) error {
			return h.OnValidationBatchEnd(t, a.out, a.batch, a.batchIdx, a.dataloaderIdx)
		}
	}),
	hookOnTestStart: event(onCallback|onModule, func(h OnTestStart) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnTestStart(t) }
	}),
	hookOnTestEnd: event(onCallback|onModule, func(h OnTestEnd) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnTestEnd(t) }
	}),
	hookOnTestEpochStart: event(onCallback|onModule, func(h OnTestEpochStart) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnTestEpochStart(t) }
	}),
	hookOnTestEpochEnd: event(onCallback|onModule, func(h OnTestEpochEnd) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnTestEpochEnd(t) }
	}),
	hookOnTestBatchStart: event(onCallback|onModule, func(h OnTestBatchStart) hookCall {
		return func(t *Trainer, a hookArgs) error { return h.OnTestBatchStart(t, a.batch, a.batchIdx, a.dataloaderIdx) }
	}),
	hookOnTestBatchEnd: event(onCallback|onModule, func(h OnTestBatchEnd) hookCall {
		return func(t *Trainer, a hookArgs) error {
			return h.OnTestBatchEnd(t, a.out, a.batch, a.batchIdx, a.dataloaderIdx)
		}
	}),
	hookOnPredictStart: event(onCallback|onModule, func(h OnPredictStart) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnPredictStart(t) }
	}),
	hookOnPredictEnd: event(onCallback|onModule, func(h OnPredictEnd) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnPredictEnd(t) }
	}),
	hookOnPredictEpochStart: event(onCallback|onModule, func(h OnPredictEpochStart) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnPredictEpochStart(t) }
	}),
	hookOnPredictEpochEnd: event(onCallback|onModule, func(h OnPredictEpochEnd) hookCall {
		return func(t *Trainer, _ hookArgs) error { return h.OnPredictEpochEnd(t) }
	}),
	hookOnPredictBatchStart: event(onCallback|onModule, func(h OnPredictBatchStart) hookCall {
		return func(t *Trainer, a hookArgs) error {
			return h.OnPredictBatchStart(t, a.batch, a.batchIdx, a.dataloaderIdx)
		}
	}),
	hookOnPredictBatchEnd: event(onCallback|onModule, func(h OnPredictBatchEnd) hookCall {
		return func(t *Trainer, a hookArgs) error {
			return h.OnPredictBatchEnd(t, a.out, a.batch, a.batchIdx, a.dataloaderIdx)
		}
	}),
	hookOnException: event(onCallback|onModule, func(h OnException) hookCall {
		return func(t *Trainer, a hookArgs) error {
			h.OnException(t, a.err)
			return nil
		}
	}),
	hookOnBeforeBackward:      traced(func(h OnBeforeBackward, a traceArgs) { h.OnBeforeBackward(a.step, a.loss) }),
	hookOnAfterBackward:       traced(func(h OnAfterBackward, a traceArgs) { h.OnAfterBackward(a.step, a.grads) }),
	hookOnBeforeOptimizerStep: traced(func(h OnBeforeOptimizerStep, a traceArgs) { h.OnBeforeOptimizerStep(a.step, a.optimizerIdx, a.grads) }),
	hookStateful:              ask[Stateful](onCallback | onModule),
	hookCheckpointer:          marker[Checkpointer](),
	hookMetricMonitor:         marker[MetricMonitor](),
	hookBestModelPather:       marker[BestModelPather](),
	hookLastModelPather:       marker[LastModelPather](),
	hookCheckpointDirer:       marker[CheckpointDirer](),
	hookModelSummarizer:       marker[ModelSummarizer](),
	hookFastDevRunSkipped:     marker[FastDevRunSkipped](),
	hookProgressReporter:      marker[ProgressReporter](),
	hookValidationStepper:     ask[ValidationStepper](onModule),
	hookTestStepper:           ask[TestStepper](onModule),
	hookPredictStepper:        ask[PredictStepper](onModule),
	hookOptimizerConfigurer:   ask[OptimizerConfigurer](onModule),
	hookAutomaticOptimizer:    ask[AutomaticOptimizer](onModule),
	hookTBPTTStepper:          ask[TBPTTStepper](onModule),
	hookTBPTTSplitter:         ask[TBPTTSplitter](onModule),
	hookGradientClipper:       ask[GradientClipper](onModule),
	hookHParamser:             ask[HParamser](onModule | onDataModule),
	hookTrainDataloader:       ask[TrainDataloader](onDataModule),
	hookValDataloaders:        ask[ValDataloaders](onDataModule),
	hookTestDataloaders:       ask[TestDataloaders](onDataModule),
	hookPredictDataloaders:    ask[PredictDataloaders](onDataModule),
	hookDataPreparer: dataEvent(func(h DataPreparer) hookCall {
		return func(_ *Trainer, _ hookArgs) error { return h.PrepareData() }
	}),
	hookDataSetup: dataEvent(func(h DataSetup) hookCall {
		return func(_ *Trainer, a hookArgs) error { return h.Setup(a.stage) }
	}),
	hookDataTeardown: dataEvent(func(h DataTeardown) hookCall {
		return func(_ *Trainer, a hookArgs) error { return h.Teardown(a.stage) }
	}),
	hookDataStateful: ask[DataStateful](onDataModule),
	// A module may say it does not read its step outputs; a callback must
	// implement a batch-end hook too.
	hookStepOutputReader: {iface: reflect.TypeFor[StepOutputReader](), when: markerOnly, on: onCallback | onModule},
}

func init() {
	for id := range hookTable {
		s := &hookTable[id]
		if s.iface == nil {
			continue // hookNone
		}
		if s.iface.NumMethod() == 1 {
			s.name = s.iface.Method(0).Name
		} else {
			s.name = s.iface.Name()
		}
	}
}

// event is a per-event host hook's row: bind returns the call of the hook
// on h.
func event[T any](on targetKind, bind func(h T) hookCall) hookSpec {
	return hookSpec{iface: reflect.TypeFor[T](), when: perEvent, on: on, bind: func(h any) hookCall { return bind(h.(T)) }}
}

// dataEvent is a data module's per-event hook's row.
func dataEvent[T any](bind func(h T) hookCall) hookSpec {
	return event(onDataModule, bind)
}

// traced is a trace-time hook's row.
func traced[T any](call func(h T, a traceArgs)) hookSpec {
	return hookSpec{iface: reflect.TypeFor[T](), when: traceTime, on: onCallback | onModule, bindTrace: func(h any) traceCall {
		th := h.(T)
		return func(a traceArgs) { call(th, a) }
	}}
}

// ask is the row of an interface volt asks for something, not an event.
func ask[T any](on targetKind) hookSpec {
	return hookSpec{iface: reflect.TypeFor[T](), when: asked, on: on}
}

// marker is the row of a callback's marker interface.
func marker[T any]() hookSpec {
	return hookSpec{iface: reflect.TypeFor[T](), when: markerOnly, on: onCallback}
}

// hookCall is one target's host hook, bound.
type hookCall func(t *Trainer, a hookArgs) error

// traceCall is one target's trace-time hook, bound.
type traceCall func(a traceArgs)
