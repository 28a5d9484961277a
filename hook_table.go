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
//
// The rows of the hooks of hooks.go (the events and the trace-time hooks)
// are generated from hooks.go into hook_table_gen.go by
// internal/hookgen: adding such a hook is its one declaration in hooks.go,
// with its doc comment, then "go generate" here, then a t.emit where the
// loop reaches the event (TestHookTableIsCurrent fails while
// hook_table_gen.go is stale). The other rows, below, have no call to
// bind: one line each.

// hookID names one row of the hook table.
type hookID uint8

// hookNone is no hook: the trainer's current hook outside hook calls.
// The rows of the hooks of hooks.go follow (hook_table_gen.go, generated
// from hooks.go), then the others.
const hookNone hookID = 0

// The rows of the hook table for the interfaces declared outside hooks.go:
// volt asks a target for something, or they mark a callback, or they are a
// data module's hooks.
const (
	hookStateful hookID = numHooksGo + iota
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

// hookTable is the table, indexed by hookID: the rows of hooks.go's hooks
// (hooksGoRows, generated) and the others.
var hookTable = withHooksGoRows([numHooks]hookSpec{
	hookStateful:            ask[Stateful](onCallback | onModule),
	hookCheckpointer:        marker[Checkpointer](),
	hookMetricMonitor:       marker[MetricMonitor](),
	hookBestModelPather:     marker[BestModelPather](),
	hookLastModelPather:     marker[LastModelPather](),
	hookCheckpointDirer:     marker[CheckpointDirer](),
	hookModelSummarizer:     marker[ModelSummarizer](),
	hookFastDevRunSkipped:   marker[FastDevRunSkipped](),
	hookProgressReporter:    marker[ProgressReporter](),
	hookValidationStepper:   ask[ValidationStepper](onModule),
	hookTestStepper:         ask[TestStepper](onModule),
	hookPredictStepper:      ask[PredictStepper](onModule),
	hookOptimizerConfigurer: ask[OptimizerConfigurer](onModule),
	hookAutomaticOptimizer:  ask[AutomaticOptimizer](onModule),
	hookTBPTTStepper:        ask[TBPTTStepper](onModule),
	hookTBPTTSplitter:       ask[TBPTTSplitter](onModule),
	hookGradientClipper:     ask[GradientClipper](onModule),
	hookHParamser:           ask[HParamser](onModule | onDataModule),
	hookTrainDataloader:     ask[TrainDataloader](onDataModule),
	hookValDataloaders:      ask[ValDataloaders](onDataModule),
	hookTestDataloaders:     ask[TestDataloaders](onDataModule),
	hookPredictDataloaders:  ask[PredictDataloaders](onDataModule),
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
})

//go:generate go run ./internal/hookgen/genhooks

// withHooksGoRows returns table with hooksGoRows in their places.
func withHooksGoRows(table [numHooks]hookSpec) [numHooks]hookSpec {
	copy(table[:numHooksGo], hooksGoRows[:])
	return table
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
