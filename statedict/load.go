package statedict

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/engine"
)

// Key returns the state_dict key of variable path under scope: the path
// after scope, its "/" as ".". The variable "/resnet/layer1/0/conv1/weight"
// under scope "/resnet" is "layer1.0.conv1.weight".
func Key(scope, path string) string {
	prefix := strings.TrimSuffix(scope, "/") + "/"
	return strings.ReplaceAll(strings.TrimPrefix(path, prefix), "/", ".")
}

// modelVariables returns the variables under scope that a state dict
// holds, by key: all of them but GoMLX's own (a name starting with "#",
// as its random-number state "#rngState") and volt's ("/volt/…": the
// optimizers' state, accumulators, metric state).
func modelVariables(scope *model.Scope) (keys []string, vars map[string]*model.Variable) {
	prefix := strings.TrimSuffix(scope.Scope(), "/") + "/"
	vars = map[string]*model.Variable{}
	for v := range scope.Store().IterVariables() {
		if !strings.HasPrefix(v.Path(), prefix) || !engine.ModuleVariable(v.Path()) {
			continue
		}
		key := Key(scope.Scope(), v.Path())
		keys = append(keys, key)
		vars[key] = v
	}
	return keys, vars
}

// match pairs the file's tensors with the model's keys (renamed and
// transposed as opts say) and checks shapes and dtypes. want reports
// which model keys need a value (all for Load, those without one for
// Apply). It returns the tensors to load by key, in the model's dtype.
func (sd *StateDict) match(scope *model.Scope, opts *options, want func(*model.Variable) bool) (map[string]*tensors.Tensor, *Report, error) {
	keys, vars := modelVariables(scope)
	report := &Report{Scope: scope.Scope(), File: sd.where()}
	byModelKey := map[string]string{} // model key → file key
	lerr := &LoadError{Scope: scope.Scope(), File: sd.where(), Strict: opts.strict, Renamed: len(opts.renames) > 0}
	values := map[string]*tensors.Tensor{}
	for _, fileKey := range sd.keys {
		if opts.excluded(fileKey) {
			report.Excluded = append(report.Excluded, fileKey)
			continue
		}
		key := opts.rename(fileKey)
		if other, dup := byModelKey[key]; dup {
			return nil, nil, fmt.Errorf("statedict: %s: the file's keys %q and %q both become %q", sd.where(), other, fileKey, key)
		}
		byModelKey[key] = fileKey
		v, ok := vars[key]
		if !ok {
			report.Unexpected = append(report.Unexpected, key)
			continue
		}
		if !want(v) {
			continue
		}
		t := sd.tensors[fileKey]
		if opts.transposes(key) {
			var err error
			if t, err = transpose2D(fileKey, t); err != nil {
				return nil, nil, fmt.Errorf("statedict: %s: %w", sd.where(), err)
			}
		}
		if !slices.Equal(t.Shape().Dimensions, v.Shape().Dimensions) {
			lerr.Mismatched = append(lerr.Mismatched, Mismatch{Key: key, FileKey: fileKey, File: t.Shape(), Model: v.Shape()})
			continue
		}
		if t.DType() != v.DType() {
			if !opts.convert || !t.DType().IsFloat() || !v.DType().IsFloat() {
				lerr.Mismatched = append(lerr.Mismatched, Mismatch{Key: key, FileKey: fileKey, File: t.Shape(), Model: v.Shape()})
				continue
			}
			var err error
			if t, err = convertDType(t, v.DType()); err != nil {
				return nil, nil, fmt.Errorf("statedict: %s: tensor %q: %w", sd.where(), fileKey, err)
			}
			report.Converted = append(report.Converted, key)
		}
		values[key] = t
		report.Loaded = append(report.Loaded, key)
	}
	for _, key := range keys {
		if _, ok := byModelKey[key]; !ok && want(vars[key]) {
			report.Missing = append(report.Missing, key)
		}
	}
	lerr.Missing, lerr.Unexpected = report.Missing, report.Unexpected
	if len(lerr.Mismatched) > 0 || (opts.strict && (len(lerr.Missing) > 0 || len(lerr.Unexpected) > 0)) {
		if !opts.strict {
			lerr.Missing, lerr.Unexpected = nil, nil
		}
		return nil, nil, lerr
	}
	return values, report, nil
}

// Load sets the variables under scope, which the model's graph has
// created (after a trace: an Exec's first call, or a Trainer's first
// step), to the state dict's tensors, as torch's
// model.load_state_dict(state_dict) does. Strict by default: the model's
// keys that the file lacks and the file's keys that the model lacks make
// a *LoadError listing them, as does a tensor whose shape or dtype differs
// from its variable's (naming the key and both shapes); then no variable
// is changed. NonStrict loads what matches and reports the rest.
func (sd *StateDict) Load(scope *model.Scope, opts ...Option) (*Report, error) {
	o := newOptions(opts)
	values, report, err := sd.match(scope, o, func(*model.Variable) bool { return true })
	if err != nil {
		return nil, err
	}
	_, vars := modelVariables(scope)
	for _, key := range report.Loaded {
		value, err := values[key].LocalClone()
		if err == nil {
			err = vars[key].SetValue(value)
		}
		if err != nil {
			return nil, fmt.Errorf("statedict: %s: setting %s from %q: %w", sd.where(), vars[key].Path(), key, err)
		}
	}
	if o.onReport != nil {
		o.onReport(report)
	}
	return report, nil
}

// Apply gives every variable under scope that has no value yet the state
// dict's tensor under its key, while the model's graph is built: defer it
// at the top of the function that builds the layers,
//
//	defer weights.Apply(scope)
//
// so that it runs after they have created their variables and before
// the first step initialises them. It checks as Load does, over the
// variables without a value (a later trace, whose variables all have
// values, changes nothing), and panics with the *LoadError: in a volt
// step the panic becomes Fit's error. When the layers themselves panic,
// a deferred Apply passes their panic on instead of loading the
// variables they created before it.
func (sd *StateDict) Apply(scope *model.Scope, opts ...Option) *Report {
	if r := recover(); r != nil { // deferred, as the layers panicked: theirs is the error
		panic(r)
	}
	o := newOptions(opts)
	_, vars := modelVariables(scope)
	if !slices.ContainsFunc(slices.Collect(maps.Values(vars)), func(v *model.Variable) bool { return !v.HasValue() }) {
		return &Report{Scope: scope.Scope(), File: sd.where()}
	}
	values, report, err := sd.match(scope, o, func(v *model.Variable) bool { return !v.HasValue() })
	if err != nil {
		panic(err)
	}
	store := scope.Store()
	for _, key := range report.Loaded {
		v, value := vars[key], values[key]
		store.VariableWithShape(v.Path(), v.Shape(), func(g *graph.Graph, _ shapes.Shape) *graph.Node {
			return graph.ConstCachedTensor(g, value)
		})
	}
	if o.onReport != nil {
		o.onReport(report)
	}
	return report
}
