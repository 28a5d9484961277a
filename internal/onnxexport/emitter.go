package onnxexport

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/gomlx/compute/dtypes"
)

// emitter writes the ONNX nodes and initializers of a trace, each value
// once, in dependency order.
type emitter struct {
	nodes      []*onnx.NodeProto
	inits      []*onnx.TensorProto
	full       map[*value]string
	compacts   map[*value]string
	n          int
	inputNames []string
	// nameConstant names an initializer (a variable's path), or "".
	nameConstant func(dt dtypes.DType, dims []int, raw []byte) string
	used         map[string]bool
	// constants names the initializers by dtype, dimensions and bytes.
	constants map[string]string
	// batchParam is a graph input whose axis 0 is the batch (its twin's
	// differs), or nil; batchDim is the name of its size as an int64 [1]
	// tensor, once emitted.
	batchParam *value
	batchDim   string
}

func newEmitter(inputNames []string, nameConstant func(dtypes.DType, []int, []byte) string) *emitter {
	return &emitter{full: map[*value]string{}, compacts: map[*value]string{}, inputNames: inputNames,
		nameConstant: nameConstant, used: map[string]bool{}, constants: map[string]string{}}
}

// value returns the name of the tensor holding v, emitting it first.
func (e *emitter) value(v *value) string {
	if name, ok := e.full[v]; ok {
		return name
	}
	name := v.lower(e, v)
	e.full[v] = name
	return name
}

// fresh returns a new tensor name.
func (e *emitter) fresh(prefix string) string {
	for {
		e.n++
		name := fmt.Sprintf("%s_%d", prefix, e.n)
		if !e.used[name] {
			e.used[name] = true
			return name
		}
	}
}

// node appends an ONNX node and returns the name of its (first) output.
func (e *emitter) node(opType string, inputs []string, attrs ...*onnx.AttributeProto) string {
	out := e.fresh(opType)
	e.nodes = append(e.nodes, &onnx.NodeProto{OpType: opType, Name: out, Input: inputs, Output: []string{out}, Attribute: attrs})
	return out
}

// initializer adds a constant tensor and returns its name. A constant
// that holds a variable's values is named after it; another constant
// already added (the same dtype, dimensions and bytes: shapes, axes,
// scalars) is named again rather than repeated.
func (e *emitter) initializer(dt dtypes.DType, dims []int, raw []byte) string {
	name := ""
	if e.nameConstant != nil && len(raw) > dt.Size() {
		name = e.nameConstant(dt, dims, raw)
	}
	if name == "" || e.used[name] {
		key := fmt.Sprint(dt, dims, string(raw))
		if name, ok := e.constants[key]; ok {
			return name
		}
		name = e.fresh("const")
		e.constants[key] = name
	}
	e.used[name] = true
	typ, _ := onnxType(dt)
	e.inits = append(e.inits, &onnx.TensorProto{Name: name, DataType: typ, Dims: int64s(dims), RawData: raw})
	return name
}

// int64s returns ints as int64s (never nil: an empty shape is a scalar).
func int64s(ints []int) []int64 {
	out := make([]int64, len(ints))
	for i, x := range ints {
		out[i] = int64(x)
	}
	return out
}

// int64Const adds a 1-D int64 initializer (shapes, axes) and returns its name.
func (e *emitter) int64Const(vals []int64) string {
	raw := make([]byte, 8*len(vals))
	for i, x := range vals {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return e.initializer(dtypes.Int64, []int{len(vals)}, raw)
}

// compactOf returns the name and dimensions of v as ONNX broadcasting may
// take it: for a broadcast (or a Reshape that only adds leading 1s) its
// operand, in the smallest form that broadcasts back to v's shape; else v
// itself.
func (e *emitter) compactOf(v *value) (string, []int) {
	if v.compact == nil {
		return e.value(v), v.shape.Dimensions
	}
	if name, ok := e.compacts[v]; ok {
		return name, v.compact
	}
	op := v.inputs[0]
	var name string
	if op.constant != nil {
		name = e.initializer(op.shape.DType, v.compact, op.constant)
	} else if opName, opDims := e.compactOf(op); slices.Equal(opDims, v.compact) {
		name = opName
	} else {
		name = e.reshape(e.value(op), op.shape.Dimensions, v.compact)
	}
	e.compacts[v] = name
	return name, v.compact
}

// trimOnes drops leading 1s: ONNX aligns shapes from the right, so they are
// implied when broadcasting.
func trimOnes(dims []int) []int {
	for len(dims) > 0 && dims[0] == 1 {
		dims = dims[1:]
	}
	return dims
}

// reshape emits a Reshape of x (dimensions from) to dimensions to. The
// leading dimensions that stay as they are are written 0 (ONNX: copy the
// input's), so that a batch axis in front does not fix the batch size.
func (e *emitter) reshape(x string, from, to []int) string { return e.reshapeTo(x, from, to, from, to) }

// reshapeTo is reshape, given the same Reshape at the other batch size
// (twinFrom to twinTo; from and to again when there is none): the leading
// dimensions written 0 are those kept at both, and one other dimension
// that differs between the two (the batch's, merged or split) is written
// -1 (ONNX: what the other dimensions leave), so that the Reshape does not
// fix the batch size.
func (e *emitter) reshapeTo(x string, from, to, twinFrom, twinTo []int) string {
	target := int64s(to)
	for i := range min(len(from), len(to)) {
		if from[i] != to[i] || twinFrom[i] != twinTo[i] {
			break
		}
		target[i] = 0
	}
	var free []int
	for i := range to {
		if target[i] != 0 && to[i] != twinTo[i] {
			free = append(free, i)
		}
	}
	if len(free) == 1 {
		target[free[0]] = -1
	}
	return e.node("Reshape", []string{x, e.int64Const(target)})
}

// transpose emits a Transpose of x by perm, or returns x for the identity.
func (e *emitter) transpose(x string, perm []int) string {
	identity := true
	for i, p := range perm {
		identity = identity && p == i
	}
	if identity {
		return x
	}
	return e.node("Transpose", []string{x}, attrInts("perm", perm))
}

func attrInts(name string, vals []int) *onnx.AttributeProto {
	return &onnx.AttributeProto{Name: name, Type: onnx.AttributeProto_INTS, Ints: int64s(vals)}
}

func attrInt(name string, val int) *onnx.AttributeProto {
	return &onnx.AttributeProto{Name: name, Type: onnx.AttributeProto_INT, I: int64(val)}
}

// rename gives the tensor a node produces the name to, in that node and
// every node reading it; false when no node produces from (an input or a
// constant).
func (e *emitter) rename(from, to string) bool {
	found := false
	for _, n := range e.nodes {
		for i, out := range n.Output {
			if out == from {
				n.Output[i], found = to, true
				if n.Name == from {
					n.Name = to
				}
			}
		}
		for i, in := range n.Input {
			if in == from {
				n.Input[i] = to
			}
		}
	}
	return found
}

// scalar adds a scalar initializer of dtype dt and returns its name.
func (e *emitter) scalar(dt dtypes.DType, x float64) string {
	raw, err := encode(dt, []float64{x})
	if err != nil {
		panic(err) // callers pass the float and integer dtypes encode writes
	}
	return e.initializer(dt, []int{}, raw)
}

// shape returns the name of an int64 [rank] tensor holding dims, the
// shape of a value whose twin has twinDims: a constant, except where the
// two differ by the batch size (c·batch in both, for one c), which is
// read from the batch input's shape when the model runs. Where they
// differ otherwise, the shape stays the constant dims (the graphs at the
// two batch sizes then differ, and the model is fixed).
func (e *emitter) shape(dims, twinDims []int) string {
	var batchAxes []int
	for i := range dims {
		if dims[i] != twinDims[i] {
			batchAxes = append(batchAxes, i)
		}
	}
	p := e.batchParam
	if len(batchAxes) == 0 || p == nil {
		return e.int64Const(int64s(dims))
	}
	b1, b2 := p.shape.Dimensions[0], p.twin.shape.Dimensions[0]
	for _, i := range batchAxes {
		if dims[i]%b1 != 0 || dims[i]/b1*b2 != twinDims[i] {
			return e.int64Const(int64s(dims))
		}
	}
	if e.batchDim == "" {
		e.batchDim = e.node("Slice", []string{e.node("Shape", []string{e.value(p)}), e.int64Const([]int64{0}), e.int64Const([]int64{1})})
	}
	var parts []string
	var run []int64
	for i, d := range dims {
		if !slices.Contains(batchAxes, i) {
			run = append(run, int64(d))
			continue
		}
		if len(run) > 0 {
			parts, run = append(parts, e.int64Const(run)), nil
		}
		part := e.batchDim
		if c := d / b1; c != 1 {
			part = e.node("Mul", []string{part, e.int64Const([]int64{int64(c)})})
		}
		parts = append(parts, part)
	}
	if len(run) > 0 {
		parts = append(parts, e.int64Const(run))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return e.node("Concat", parts, attrInt("axis", 0))
}
