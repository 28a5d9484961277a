package volt

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/internal/fieldkey"
)

// moduleWeights are the weights LoadModule attached to a module.
type moduleWeights struct {
	path    string
	tensors []checkpoint.Tensor
	frozen  map[string]bool
	// owns reports whether m is the module they were attached to; alive,
	// whether that module is still reachable.
	owns  func(m Module) bool
	alive func() bool
}

// loadedWeights holds the attached weights by the module's address. An entry
// does not keep its module alive: it is dropped when the module is
// collected, and owns checks, so a new module at a reused address never
// sees another's weights. A type of size zero has no identity (every
// pointer to one may be the same address): its weights are kept by type.
var loadedWeights = struct {
	sync.Mutex
	byAddr map[uintptr]*moduleWeights
	byType map[reflect.Type]*moduleWeights
}{byAddr: map[uintptr]*moduleWeights{}, byType: map[reflect.Type]*moduleWeights{}}

// attachWeights attaches w to m, replacing what was attached before.
func attachWeights[T any](m *T, w *moduleWeights) {
	if typ := reflect.TypeFor[T](); typ.Size() == 0 {
		w.owns = func(other Module) bool { _, ok := any(other).(*T); return ok }
		w.alive = func() bool { return true }
		loadedWeights.Lock()
		loadedWeights.byType[typ] = w
		loadedWeights.Unlock()
		return
	}
	wp := weak.Make(m)
	w.owns = func(other Module) bool {
		p, ok := any(other).(*T)
		return ok && p == wp.Value()
	}
	w.alive = func() bool { return wp.Value() != nil }
	addr := uintptr(reflect.ValueOf(m).UnsafePointer())
	loadedWeights.Lock()
	_, had := loadedWeights.byAddr[addr]
	loadedWeights.byAddr[addr] = w
	loadedWeights.Unlock()
	if !had {
		runtime.AddCleanup(m, dropWeights, addr)
	}
}

// dropWeights forgets the weights of a collected module.
func dropWeights(addr uintptr) {
	loadedWeights.Lock()
	defer loadedWeights.Unlock()
	if w, ok := loadedWeights.byAddr[addr]; ok && !w.alive() {
		delete(loadedWeights.byAddr, addr)
	}
}

// ModuleWrapper is implemented by modules that wrap another, such as the
// tuner's sweeps: a wrapper runs with the weights LoadModule attached to
// the module it wraps.
type ModuleWrapper interface{ Unwrap() Module }

// weightsOf returns the weights LoadModule attached to m or, through
// ModuleWrapper, to the module it wraps (nil when none).
func weightsOf(m Module) *moduleWeights {
	for m != nil {
		if w := attachedTo(m); w != nil {
			return w
		}
		u, ok := m.(ModuleWrapper)
		if !ok {
			return nil
		}
		m = u.Unwrap()
	}
	return nil
}

// attachedTo returns the weights LoadModule attached to m itself.
func attachedTo(m Module) *moduleWeights {
	v := reflect.ValueOf(m)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	loadedWeights.Lock()
	defer loadedWeights.Unlock()
	if v.Type().Elem().Size() == 0 {
		return loadedWeights.byType[v.Type().Elem()]
	}
	w := loadedWeights.byAddr[uintptr(v.UnsafePointer())]
	if w == nil || !w.owns(m) {
		return nil
	}
	return w
}

// initFromLoadedModule puts the weights LoadModule attached to m into the
// trainer's fresh store; the first trace checks them against the module's
// variables (loadCheck), strictly unless opts.nonStrict.
func (t *Trainer) initFromLoadedModule(m Module, opts runOptions) error {
	w := weightsOf(m)
	if w == nil {
		return nil
	}
	l := &loadCheck{path: w.path, loaded: map[string]bool{}, strict: !opts.nonStrict}
	store := t.eng.Store
	for _, ct := range w.tensors {
		val, err := ct.ToGoMLX()
		if err != nil {
			return fmt.Errorf("checkpoint %s (volt.LoadModule): tensor %s: %w", w.path, ct.Name, err)
		}
		v := store.GetVariable(ct.Name)
		if v == nil {
			v, err = store.CreateVariable(ct.Name, val)
		} else if !val.Shape().Equal(v.Shape()) {
			err = errors.New(mismatch(ct.Name, val.Shape().String(), v.Shape().String()))
		} else {
			err = v.SetValue(val)
		}
		if err != nil {
			return fmt.Errorf("checkpoint %s (volt.LoadModule): variable %s: %w", w.path, ct.Name, err)
		}
		v.SetTrainable(!w.frozen[ct.Name])
		l.loaded[ct.Name] = true
	}
	t.ckpt.loaded = l
	return nil
}

// hparamKey is the hyper-parameter key of a struct field (the CLI's config
// key); skip is true for fields that have none.
func hparamKey(f reflect.StructField) (key string, skip bool) {
	key, _, skip, _ = fieldkey.Of(f)
	return key, skip
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
