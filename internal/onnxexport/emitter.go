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
}

func newEmitter(inputNames []string, nameConstant func(dtypes.DType, []int, []byte) string) *emitter {
	return &emitter{full: map[*value]string{}, compacts: map[*value]string{}, inputNames: inputNames,
		nameConstant: nameConstant, used: map[string]bool{}}
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

// initializer adds a constant tensor and returns its name.
func (e *emitter) initializer(dt dtypes.DType, dims []int, raw []byte) string {
	name := ""
	if e.nameConstant != nil && len(raw) > dt.Size() {
		name = e.nameConstant(dt, dims, raw)
	}
	if name == "" || e.used[name] {
		name = e.fresh("const")
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
func (e *emitter) reshape(x string, from, to []int) string {
	target := int64s(to)
	for i := range min(len(from), len(to)) {
		if from[i] != to[i] {
			break
		}
		target[i] = 0
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
