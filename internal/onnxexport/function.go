package onnxexport

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/notimplemented"
	"github.com/gomlx/compute/shapes"
)

// Trace is the recorded main function of one graph.
type Trace struct {
	// Name is the builder's (GoMLX's graph) name.
	Name    string
	values  map[compute.Value]*value
	order   []*value // every value, in the order recorded
	params  []*value
	outputs []*value
	done    bool
}

// Params returns the shapes of the function's parameters, in order.
func (t *Trace) Params() []shapes.Shape {
	out := make([]shapes.Shape, len(t.params))
	for i, p := range t.params {
		out[i] = p.shape
	}
	return out
}

// Outputs returns the shapes of the function's outputs, in order.
func (t *Trace) Outputs() []shapes.Shape {
	out := make([]shapes.Shape, len(t.outputs))
	for i, p := range t.outputs {
		out[i] = p.shape
	}
	return out
}

// add records iv's value v.
func (t *Trace) add(iv compute.Value, v *value) {
	t.values[iv] = v
	t.order = append(t.order, v)
}

// Done reports whether the function returned (its graph is complete).
func (t *Trace) Done() bool { return t.done }

// UnusedParams returns, in order, the indices of the parameters that no
// output depends on.
func (t *Trace) UnusedParams() []int {
	seen := map[*value]bool{}
	stack := slices.Clone(t.outputs)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[v] {
			continue
		}
		seen[v] = true
		stack = append(stack, v.inputs...)
	}
	var unused []int
	for i, p := range t.params {
		if !seen[p] {
			unused = append(unused, i)
		}
	}
	return unused
}

// lowerFn writes the ONNX nodes of v (its inputs are emitted through e)
// and returns the name of the tensor holding v.
type lowerFn func(e *emitter, v *value) string

// value is one recorded op's result.
type value struct {
	op     compute.OpType
	shape  shapes.Shape
	inputs []*value
	lower  lowerFn
	// param is the parameter index, or -1.
	param int
	// constant is a constant's data, little-endian (nil otherwise).
	constant []byte
	// compact, for a broadcast, is the operand reshaped to the output's
	// rank with 1 on the new axes: what ONNX broadcasting expands itself.
	compact []int
	// zero: every element is 0 (a zero constant, or a broadcast of one).
	zero bool
	// twin is the same value in the step traced at the other batch size
	// (pairTwins), or nil: where their shapes differ, a shape the
	// lowering writes is made to follow the batch size.
	twin *value
}

// function records the ops of a builder's main function, passing each to
// the wrapped function (for shapes); ops without a lowering answer an
// *UnsupportedOpError through notimplemented.Function.
type function struct {
	notimplemented.Function
	inner   compute.Function
	builder *builder
	trace   *Trace
}

func newFunction(bld *builder, inner compute.Function) *function {
	f := &function{inner: inner, builder: bld, trace: bld.trace}
	f.Function.ErrFn = func(op compute.OpType) error { return refuse(op.String(), "") }
	return f
}

// Name implements compute.Function.
func (f *function) Name() string { return f.inner.Name() }

// Builder implements compute.Function.
func (f *function) Builder() compute.Builder { return f.builder }

// Parent implements compute.Function.
func (f *function) Parent() compute.Function { return nil }

// Closure implements compute.Function: a closure is built on the wrapped
// function, unrecorded, so that GoMLX goes on to the op that takes it
// (Sort, which TopK uses, While, If), which has no lowering and is refused
// by its name.
func (f *function) Closure() (compute.Function, error) { return f.inner.Closure() }

// Shape implements compute.Function.
func (f *function) Shape(v compute.Value) (shapes.Shape, error) { return f.inner.Shape(v) }

// Parameter implements compute.Function: a graph input.
func (f *function) Parameter(name string, shape shapes.Shape, spec *compute.ShardingSpec) (compute.Value, error) {
	iv, err := f.inner.Parameter(name, shape, spec)
	if err != nil {
		return nil, err
	}
	if _, ok := onnxType(shape.DType); !ok {
		return nil, unsupported(compute.OpTypeParameter, "input %q is %s, which ONNX has no type for", name, shape.DType)
	}
	v := &value{op: compute.OpTypeParameter, shape: shape, param: len(f.trace.params)}
	v.lower = func(e *emitter, v *value) string { return e.inputNames[v.param] }
	f.trace.params = append(f.trace.params, v)
	f.trace.add(iv, v)
	return iv, nil
}

// Constant implements compute.Function: an initializer.
func (f *function) Constant(flat any, dims ...int) (compute.Value, error) {
	iv, err := f.inner.Constant(flat, dims...)
	if err != nil {
		return nil, err
	}
	shape, err := f.inner.Shape(iv)
	if err != nil {
		return nil, err
	}
	raw, zero, err := rawBytes(flat)
	if err != nil {
		return nil, unsupported(compute.OpTypeConstant, "%v", err)
	}
	if _, ok := onnxType(shape.DType); !ok {
		return nil, unsupported(compute.OpTypeConstant, "a %s constant, which ONNX has no type for", shape.DType)
	}
	v := &value{op: compute.OpTypeConstant, shape: shape, param: -1, constant: raw, zero: zero}
	v.lower = func(e *emitter, v *value) string { return e.initializer(v.shape.DType, v.shape.Dimensions, v.constant) }
	f.trace.add(iv, v)
	return iv, nil
}

// Return implements compute.Function: the graph's outputs.
func (f *function) Return(outputs []compute.Value, shardings []*compute.ShardingSpec) error {
	outs, err := f.lookup(compute.OpTypeInvalid, outputs...)
	if err != nil {
		return err
	}
	if err := f.inner.Return(outputs, shardings); err != nil {
		return err
	}
	f.trace.outputs = outs
	f.trace.done = true
	return nil
}

// lookup returns the recorded values of inner values.
func (f *function) lookup(op compute.OpType, vs ...compute.Value) ([]*value, error) {
	out := make([]*value, len(vs))
	for i, iv := range vs {
		v, ok := f.trace.values[iv]
		if !ok {
			return nil, fmt.Errorf("ONNX export: %s: operand %d (%T) was not built by the recording backend", op, i, iv)
		}
		out[i] = v
	}
	return out, nil
}

// record registers the result iv of op (computed by the wrapped function
// with error err) on the recorded inputs, lowered by lower.
func (f *function) record(op compute.OpType, iv compute.Value, err error, lower lowerFn, inputs ...compute.Value) (compute.Value, error) {
	if err != nil {
		return nil, err
	}
	ins, err := f.lookup(op, inputs...)
	if err != nil {
		return nil, err
	}
	shape, err := f.inner.Shape(iv)
	if err != nil {
		return nil, err
	}
	if _, ok := onnxType(shape.DType); !ok {
		return nil, unsupported(op, "its result is %s, which ONNX has no type for", shape.DType)
	}
	v := &value{op: op, shape: shape, inputs: ins, lower: lower, param: -1}
	f.trace.add(iv, v)
	return iv, nil
}

// rawBytes returns the little-endian bytes of a flat slice of numbers and
// whether they are all zero.
func rawBytes(flat any) ([]byte, bool, error) {
	rv := reflect.ValueOf(flat)
	if rv.Kind() != reflect.Slice {
		return nil, false, fmt.Errorf("constant data is a %T, not a slice", flat)
	}
	size := int(rv.Type().Elem().Size())
	n := rv.Len()
	raw := make([]byte, n*size)
	if n > 0 {
		src := reflect.ValueOf(rv.Slice(0, n).Interface())
		copy(raw, unsafeBytes(src, n*size))
	}
	zero := !slices.ContainsFunc(raw, func(b byte) bool { return b != 0 })
	return raw, zero, nil
}

// SupportedOps lists the GoMLX ops the export lowers, sorted.
func SupportedOps() string {
	names := make([]string, 0, len(supported))
	for op := range supported {
		names = append(names, op.String())
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// onnxType maps a dtype to ONNX's TensorProto.DataType.
func onnxType(dt dtypes.DType) (int32, bool) {
	switch dt {
	case dtypes.Float32:
		return 1, true
	case dtypes.Uint8:
		return 2, true
	case dtypes.Int8:
		return 3, true
	case dtypes.Uint16:
		return 4, true
	case dtypes.Int16:
		return 5, true
	case dtypes.Int32:
		return 6, true
	case dtypes.Int64:
		return 7, true
	case dtypes.Bool:
		return 9, true
	case dtypes.Float16:
		return 10, true
	case dtypes.Float64:
		return 11, true
	case dtypes.Uint32:
		return 12, true
	case dtypes.Uint64:
		return 13, true
	case dtypes.BFloat16:
		return 16, true
	}
	return 0, false
}
