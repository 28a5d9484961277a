package callback

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/dtypes/float16"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/engine"
)

// averages is the running average of a module's weights that
// EMAWeightAveraging and StochasticWeightAveraging keep: one store variable
// per module variable, "<prefix>/avg<path>", and the number of updates folded
// in, "<prefix>/n_averaged" (an int64 scalar). Living in the store, they are
// saved in every checkpoint and restored with the weights, so a resumed run
// continues the same average.
//
// The arithmetic runs on the host in float64 (torch's AveragedModel runs it
// on the device): each update reads every module variable (a device-to-host
// copy on accelerators) and writes the averages in place, in the variable's
// dtype. That is O(number of parameters) host work per update.
type averages struct {
	prefix string // "/volt/ema", "/volt/swa"
}

func (a averages) path(v string) string { return a.prefix + "/avg" + v }
func (a averages) countPath() string    { return a.prefix + "/n_averaged" }

// moduleVariables returns the module's floating-point variables that have a
// value, in the store's order: everything outside volt's "/volt/…" state and
// GoMLX's "/#…" internals. Frozen variables are included (they average to
// themselves) and so are non-trainable statistics such as batch
// normalization's, which are averaged like torch's AveragedModel does with
// use_buffers=True.
func moduleVariables(store *model.Store) []*model.Variable {
	var vars []*model.Variable
	for v := range store.IterVariables() {
		p := v.Path()
		if !engine.ModuleVariable(p) || !v.DType().IsFloat() || !v.HasValue() {
			continue
		}
		vars = append(vars, v)
	}
	return vars
}

// source returns the variable that holds v's full-precision value: its
// float32 master under mixed precision (engine.MasterPrefix, from which the
// compute copies are cast after every step), else v itself.
func source(store *model.Store, v *model.Variable) *model.Variable {
	if m := store.GetVariable(engine.MasterPrefix + v.Path()); m != nil && m.HasValue() {
		return m
	}
	return v
}

// count returns the number of updates folded into the average (0 before the
// first one).
func (a averages) count(store *model.Store) (int64, error) {
	v := store.GetVariable(a.countPath())
	if v == nil || !v.HasValue() {
		return 0, nil
	}
	val, err := v.Value()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", a.countPath(), err)
	}
	n, ok := val.Value().(int64)
	if !ok {
		return 0, fmt.Errorf("%s: want an int64 scalar, got %s", a.countPath(), val.Shape())
	}
	return n, nil
}

// update folds the module's current weights into the average: each average
// becomes f(avg, w, n) with n the updates so far; a variable without an
// average yet (the first update, or a variable created later) starts as a
// copy of its weights. It then increments the count.
func (a averages) update(store *model.Store, f func(avg, w float64, n int64) float64) error {
	n, err := a.count(store)
	if err != nil {
		return err
	}
	for _, v := range moduleVariables(store) {
		src := source(store, v)
		val, err := src.Value()
		if err != nil {
			return fmt.Errorf("reading %s: %w", src.Path(), err)
		}
		w, err := floats(val)
		if err != nil {
			return fmt.Errorf("reading %s: %w", src.Path(), err)
		}
		av := store.GetVariable(a.path(v.Path()))
		if av == nil || n == 0 {
			if err := setInternal(store, a.path(v.Path()), fromFloats(src.DType(), src.Shape().Dimensions, w)); err != nil {
				return err
			}
			continue
		}
		avg, err := av.Value()
		if err != nil {
			return fmt.Errorf("reading %s: %w", av.Path(), err)
		}
		if err := mutate(avg, w, func(x, w float64) float64 { return f(x, w, n) }); err != nil {
			return fmt.Errorf("updating %s: %w", av.Path(), err)
		}
	}
	return setInternal(store, a.countPath(), tensors.FromScalar(n+1))
}

// copyTo writes the average into the module's weights (and into the float32
// masters under mixed precision). Variables without an average are left
// alone. With keep, it returns the weights it replaced so that restore can
// put them back; otherwise the replaced values are freed.
func (a averages) copyTo(store *model.Store, keep bool) (map[*model.Variable]*tensors.Tensor, error) {
	var old map[*model.Variable]*tensors.Tensor
	if keep {
		old = map[*model.Variable]*tensors.Tensor{}
	}
	for _, v := range moduleVariables(store) {
		av := store.GetVariable(a.path(v.Path()))
		if av == nil || !av.HasValue() {
			continue
		}
		val, err := av.Value()
		if err != nil {
			return old, fmt.Errorf("reading %s: %w", av.Path(), err)
		}
		w, err := floats(val)
		if err != nil {
			return old, fmt.Errorf("reading %s: %w", av.Path(), err)
		}
		targets := []*model.Variable{v}
		if m := source(store, v); m != v {
			targets = append(targets, m)
		}
		for _, tv := range targets {
			nt := fromFloats(tv.DType(), tv.Shape().Dimensions, w)
			if keep {
				prev, err := tv.Value()
				if err != nil {
					return old, fmt.Errorf("reading %s: %w", tv.Path(), err)
				}
				old[tv] = prev
				err = tv.SetValuePreservingOld(nt)
				if err != nil {
					return old, fmt.Errorf("setting %s: %w", tv.Path(), err)
				}
				continue
			}
			if err := tv.SetValue(nt); err != nil {
				return old, fmt.Errorf("setting %s: %w", tv.Path(), err)
			}
		}
	}
	return old, nil
}

// restore puts back the weights copyTo(store, true) replaced, freeing the
// averaged copies.
func restore(old map[*model.Variable]*tensors.Tensor) error {
	for v, t := range old {
		if err := v.SetValue(t); err != nil {
			return fmt.Errorf("restoring %s: %w", v.Path(), err)
		}
	}
	return nil
}

// setInternal writes value into the non-trainable variable path, creating it
// when missing.
func setInternal(store *model.Store, path string, value *tensors.Tensor) error {
	v := store.GetVariable(path)
	if v == nil {
		nv, err := store.CreateVariable(path, value)
		if err != nil {
			return fmt.Errorf("creating %s: %w", path, err)
		}
		nv.SetTrainable(false)
		return nil
	}
	v.SetTrainable(false)
	if err := v.SetValue(value); err != nil {
		return fmt.Errorf("setting %s: %w", path, err)
	}
	return nil
}

// floats returns a copy of a floating-point tensor's values as float64.
func floats(t *tensors.Tensor) ([]float64, error) {
	out := make([]float64, t.Size())
	var bad dtypes.DType
	err := t.ConstFlatData(func(flat any) {
		switch x := flat.(type) {
		case []float32:
			for i, v := range x {
				out[i] = float64(v)
			}
		case []float64:
			copy(out, x)
		case []bfloat16.BFloat16:
			for i, v := range x {
				out[i] = v.Float64()
			}
		case []float16.Float16:
			for i, v := range x {
				out[i] = v.Float64()
			}
		default:
			bad = t.DType()
		}
	})
	if err == nil && bad != dtypes.InvalidDType {
		err = fmt.Errorf("dtype %s is not a floating-point type", bad)
	}
	return out, err
}

// fromFloats returns a new host tensor of dtype and dims holding vals.
func fromFloats(dtype dtypes.DType, dims []int, vals []float64) *tensors.Tensor {
	switch dtype {
	case dtypes.Float64:
		return tensors.FromFlatDataAndDimensions(append([]float64(nil), vals...), dims...)
	case dtypes.BFloat16:
		out := make([]bfloat16.BFloat16, len(vals))
		for i, v := range vals {
			out[i] = bfloat16.FromFloat64(v)
		}
		return tensors.FromFlatDataAndDimensions(out, dims...)
	case dtypes.Float16:
		out := make([]float16.Float16, len(vals))
		for i, v := range vals {
			out[i] = float16.FromFloat64(v)
		}
		return tensors.FromFlatDataAndDimensions(out, dims...)
	default:
		out := make([]float32, len(vals))
		for i, v := range vals {
			out[i] = float32(v)
		}
		return tensors.FromFlatDataAndDimensions(out, dims...)
	}
}

// mutate sets each element x of t to f(x, w[i]), in t's dtype.
func mutate(t *tensors.Tensor, w []float64, f func(x, w float64) float64) error {
	if t.Size() != len(w) {
		return fmt.Errorf("average has %d elements, weights %d", t.Size(), len(w))
	}
	return t.MutableFlatData(func(flat any) {
		switch x := flat.(type) {
		case []float32:
			for i := range x {
				x[i] = float32(f(float64(x[i]), w[i]))
			}
		case []float64:
			for i := range x {
				x[i] = f(x[i], w[i])
			}
		case []bfloat16.BFloat16:
			for i := range x {
				x[i] = bfloat16.FromFloat64(f(x[i].Float64(), w[i]))
			}
		case []float16.Float16:
			for i := range x {
				x[i] = float16.FromFloat64(f(x[i].Float64(), w[i]))
			}
		}
	})
}
