package volt

import (
	"fmt"
	"reflect"
)

// target is one receiver of hooks: a callback or the module.
type target struct {
	name  string
	value any
}

// listeners is the typed list of targets that implement hook interface T,
// resolved once per run (callbacks in order, then the module).
type listeners[T any] struct {
	items []T
	names []string
}

func find[T any](targets []target) listeners[T] {
	var l listeners[T]
	for _, tg := range targets {
		if h, ok := tg.value.(T); ok {
			l.items = append(l.items, h)
			l.names = append(l.names, tg.name)
		}
	}
	return l
}

// call runs fn on each listener, setting the trainer's current hook name so
// that Trainer.Log picks the right defaults, and wraps an error with the
// listener and hook names.
func (l listeners[T]) call(t *Trainer, fx string, fn func(T) error) error {
	for i, h := range l.items {
		prev := t.fx
		t.fx = fx
		err := fn(h)
		t.fx = prev
		if err != nil {
			return &HookError{Target: l.names[i], Hook: fx, Epoch: t.CurrentEpoch(), GlobalStep: t.GlobalStep(), Err: err}
		}
	}
	return nil
}

// callHook runs a rarely-called hook on every target that implements it.
func callHook[T any](t *Trainer, fx string, fn func(T) error) error {
	return find[T](t.targets).call(t, fx, fn)
}

// batchHooks are the per-batch hooks, resolved once per run so that the
// batch loop pays nothing for hooks nobody implements.
type batchHooks struct {
	trainStart   listeners[OnTrainBatchStart]
	trainEnd     listeners[OnTrainBatchEnd]
	valStart     listeners[OnValidationBatchStart]
	valEnd       listeners[OnValidationBatchEnd]
	testStart    listeners[OnTestBatchStart]
	testEnd      listeners[OnTestBatchEnd]
	predictStart listeners[OnPredictBatchStart]
	predictEnd   listeners[OnPredictBatchEnd]
}

func resolveBatchHooks(targets []target) batchHooks {
	return batchHooks{
		trainStart:   find[OnTrainBatchStart](targets),
		trainEnd:     find[OnTrainBatchEnd](targets),
		valStart:     find[OnValidationBatchStart](targets),
		valEnd:       find[OnValidationBatchEnd](targets),
		testStart:    find[OnTestBatchStart](targets),
		testEnd:      find[OnTestBatchEnd](targets),
		predictStart: find[OnPredictBatchStart](targets),
		predictEnd:   find[OnPredictBatchEnd](targets),
	}
}

// targetName names a callback or module in errors: its type.
func targetName(v any) string {
	if n, ok := v.(interface{ Name() string }); ok {
		return n.Name()
	}
	return reflect.TypeOf(v).String()
}

// checkCallback rejects values that implement no hook at all.
func checkCallback(cb Callback) error {
	if cb == nil {
		return fmt.Errorf("is nil")
	}
	if err := checkSignatures("callback", cb, optionalInterfaces); err != nil {
		return err
	}
	switch cb.(type) {
	case Setup, Teardown, OnFitStart, OnFitEnd, OnSanityCheckStart, OnSanityCheckEnd,
		OnTrainStart, OnTrainEnd, OnTrainEpochStart, OnTrainEpochEnd, OnTrainBatchStart, OnTrainBatchEnd,
		OnValidationStart, OnValidationEnd, OnValidationEpochStart, OnValidationEpochEnd,
		OnValidationBatchStart, OnValidationBatchEnd,
		OnTestStart, OnTestEnd, OnTestEpochStart, OnTestEpochEnd, OnTestBatchStart, OnTestBatchEnd,
		OnPredictStart, OnPredictEnd, OnPredictEpochStart, OnPredictEpochEnd,
		OnPredictBatchStart, OnPredictBatchEnd, OnException,
		OnBeforeBackward, OnAfterBackward, OnBeforeOptimizerStep, Stateful:
		return nil
	}
	return fmt.Errorf("%T implements no volt hook interface (OnTrainEpochEnd, OnValidationEnd, …); check the method names and signatures", cb)
}
