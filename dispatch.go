package volt

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"

	"github.com/voltml/volt/internal/engine"
)

// target is one receiver of hooks: a callback, the module or the data module.
type target struct {
	name  string
	value any
	kind  targetKind
	call  hookCall  // the host hook bound to value
	trace traceCall // the trace-time hook bound to value
	// action names the calls of this hook on value in profiles, once a
	// profiler asks (actionName).
	action string
}

// hookSet is the hook table resolved for one run: for each hook, the targets
// that implement it, in call order (callbacks as configured, then the
// module; the data module for its own hooks).
type hookSet struct {
	by [numHooks][]target
}

// resolveHooks finds, once per run, which targets implement which hooks.
// As in Lightning, Checkpointer callbacks come after the other callbacks
// (in their configured order otherwise), and in OnTrainEpochEnd the
// monitoring callbacks (Checkpointer, MetricMonitor) run after the module.
func resolveHooks(callbacks []Callback, fastDevRun bool, m Module, dm DataModule) *hookSet {
	hs := &hookSet{}
	ordered := slices.Clone(callbacks)
	slices.SortStableFunc(ordered, func(a, b Callback) int { return cmp.Compare(isCheckpointer(a), isCheckpointer(b)) })
	for _, cb := range ordered {
		if _, skip := cb.(FastDevRunSkipped); skip && fastDevRun {
			continue
		}
		hs.add(target{name: targetName(cb), value: cb}, onCallback)
	}
	hs.add(target{name: targetName(m), value: m}, onModule)
	if dm != nil {
		hs.add(target{name: targetName(dm), value: dm}, onDataModule)
	}
	slices.SortStableFunc(hs.by[hookOnTrainEpochEnd], func(a, b target) int {
		return cmp.Compare(isMonitoring(a), isMonitoring(b))
	})
	return hs
}

// moduleFirst returns the targets of hook id with the module first: the
// order in which a checkpoint restores states (Lightning loads the module's
// before the callbacks'; it saves the callbacks' first).
func (hs *hookSet) moduleFirst(id hookID) []target {
	ts := slices.Clone(hs.by[id])
	notModule := func(tg target) int {
		if tg.kind == onModule {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(ts, func(a, b target) int { return cmp.Compare(notModule(a), notModule(b)) })
	return ts
}

// isCheckpointer is 1 for a Checkpointer callback, else 0 (a sort key).
func isCheckpointer(cb Callback) int {
	if _, ok := cb.(Checkpointer); ok {
		return 1
	}
	return 0
}

// isMonitoring is 1 for a monitoring callback, else 0 (a sort key).
func isMonitoring(tg target) int {
	if tg.kind != onCallback {
		return 0
	}
	if _, monitors := tg.value.(MetricMonitor); monitors || isCheckpointer(tg.value) == 1 {
		return 1
	}
	return 0
}

// add registers tg, of kind, under every hook it implements.
func (hs *hookSet) add(tg target, kind targetKind) {
	typ := reflect.TypeOf(tg.value)
	for id := range hookTable {
		spec := &hookTable[id]
		if spec.iface != nil && spec.on&kind != 0 && typ.Implements(spec.iface) {
			bound := tg
			bound.kind = kind
			if spec.bind != nil {
				bound.call = spec.bind(tg.value)
			}
			if spec.bindTrace != nil {
				bound.trace = spec.bindTrace(tg.value)
			}
			hs.by[id] = append(hs.by[id], bound)
		}
	}
}

// has reports whether any target implements hook id.
func (hs *hookSet) has(id hookID) bool { return hs != nil && len(hs.by[id]) > 0 }

// emit calls hook id on every target that implements it, in order, and
// returns the first error (the later targets are not called then). It is
// the per-batch path: nothing to do costs a length check, and one deferred
// recovery covers all the targets.
func (t *Trainer) emit(id hookID, a hookArgs) error {
	targets := t.hooks.by[id]
	if len(targets) == 0 {
		return nil
	}
	return t.dispatch(id, targets, a)
}

// dispatch is emit's loop.
func (t *Trainer) dispatch(id hookID, targets []target, a hookArgs) (err error) {
	r := t.run
	i, prev := 0, r.inHook
	r.inHook = id
	defer func() {
		r.inHook = prev
		err = t.hookFailed(id, targets[min(i, len(targets)-1)], err, recover())
	}()
	for ; i < len(targets); i++ {
		if r.prof != nil {
			err = t.profiledCall(id, &targets[i], a)
		} else {
			err = targets[i].call(t, a)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// emitAll calls hook id on every target that implements it, even after an
// error, and joins the errors (Teardown, OnException).
func (t *Trainer) emitAll(id hookID, a hookArgs) error {
	var errs []error
	for _, tg := range t.hooks.by[id] {
		if err := t.dispatch(id, []target{tg}, a); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// traceHooks calls trace-time hook id on every target that implements it.
// The step is being traced, so a failure panics on (GoMLX's way), as a
// *HookError naming the target.
func (t *Trainer) traceHooks(id hookID, a traceArgs) {
	for _, tg := range t.hooks.by[id] {
		if err := t.traceHook(id, tg, a); err != nil {
			panic(err)
		}
	}
}

// traceHook calls one trace-time hook, recovering a panic into an error.
func (t *Trainer) traceHook(id hookID, tg target, a traceArgs) (err error) {
	defer func() { err = t.hookFailed(id, tg, nil, recover()) }()
	if t.run.prof != nil {
		defer t.run.prof.Start(tg.actionName(id))()
	}
	tg.trace(a)
	return nil
}

// hookFailed turns what a hook call of tg returned (err) or raised
// (recovered, nil if nothing) into the error dispatch returns: nil, or a
// *HookError naming the target and the hook and saying where the run is.
func (t *Trainer) hookFailed(id hookID, tg target, err error, recovered any) error {
	if recovered != nil {
		err = &engine.PanicError{Value: recovered, Stack: debug.Stack()}
	}
	if err == nil {
		return nil
	}
	return &HookError{Target: tg.name, Hook: hookTable[id].name, Epoch: t.CurrentEpoch(), GlobalStep: t.GlobalStep(), Err: err}
}

// targetName names a callback or module in errors: its type.
func targetName(v any) string {
	if n, ok := v.(interface{ Name() string }); ok {
		return n.Name()
	}
	return reflect.TypeOf(v).String()
}

// checkCallback rejects values that implement no hook at all, a method
// named like a hook's with another signature, or a CallbackValidator whose
// Validate fails.
func checkCallback(cb Callback) error {
	if cb == nil {
		return fmt.Errorf("is nil")
	}
	if err := checkSignatures("callback", cb, onCallback); err != nil {
		return err
	}
	if v, ok := cb.(CallbackValidator); ok {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("%T: %w", cb, err)
		}
	}
	typ := reflect.TypeOf(cb)
	for id := range hookTable {
		spec := &hookTable[id]
		if spec.iface != nil && spec.on&onCallback != 0 && spec.when != markerOnly && typ.Implements(spec.iface) {
			return nil
		}
	}
	return fmt.Errorf("%T implements no volt hook interface (OnTrainEpochEnd, OnValidationEnd, …); check the method names and signatures", cb)
}
