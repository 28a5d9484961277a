package onnxexport

import (
	"slices"

	"github.com/gomlx/compute"
)

// unary records x → onnxOp(x).
func (f *function) unary(op compute.OpType, onnxOp string, iv compute.Value, err error, x compute.Value) (compute.Value, error) {
	return f.record(op, iv, err, func(e *emitter, v *value) string {
		return e.node(onnxOp, []string{e.value(v.inputs[0])})
	}, x)
}

// elementwise records an op whose ONNX counterpart broadcasts its operands
// (multidirectionally); then is applied to the ONNX result (a Not after
// Equal), when not nil.
func (f *function) elementwise(op compute.OpType, onnxOp string, iv compute.Value, err error, then func(e *emitter, x string) string, operands ...compute.Value) (compute.Value, error) {
	return f.record(op, iv, err, func(e *emitter, v *value) string {
		out := e.node(onnxOp, e.broadcastOperands(v.shape.Dimensions, v.inputs))
		if then != nil {
			out = then(e, out)
		}
		return out
	}, operands...)
}

// broadcastOperands returns the operands' names for an ONNX op that
// broadcasts them to out: broadcasts stay compact where ONNX's own
// broadcasting yields out, the others are materialised.
func (e *emitter) broadcastOperands(out []int, vs []*value) []string {
	names := make([]string, len(vs))
	dims := make([][]int, len(vs))
	for i, v := range vs {
		names[i], dims[i] = e.compactOf(v)
	}
	for i, v := range vs {
		if slices.Equal(broadcastDims(dims...), out) {
			break
		}
		if v.compact != nil {
			names[i], dims[i] = e.value(v), v.shape.Dimensions
		}
	}
	return names
}

// broadcastDims is ONNX's multidirectional broadcast of shapes (nil when
// they do not broadcast).
func broadcastDims(shapes ...[]int) []int {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make([]int, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			switch {
			case d == out[off+i] || d == 1:
			case out[off+i] == 1:
				out[off+i] = d
			default:
				return nil
			}
		}
	}
	return out
}

// not emits a logical not.
func not(e *emitter, x string) string { return e.node("Not", []string{x}) }

// Abs implements compute.Function.
func (f *function) Abs(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Abs(x)
	return f.unary(compute.OpTypeAbs, "Abs", iv, err, x)
}

// Neg implements compute.Function.
func (f *function) Neg(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Neg(x)
	return f.unary(compute.OpTypeNeg, "Neg", iv, err, x)
}

// Exp implements compute.Function.
func (f *function) Exp(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Exp(x)
	return f.unary(compute.OpTypeExp, "Exp", iv, err, x)
}

// Log implements compute.Function.
func (f *function) Log(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Log(x)
	return f.unary(compute.OpTypeLog, "Log", iv, err, x)
}

// Tanh implements compute.Function.
func (f *function) Tanh(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Tanh(x)
	return f.unary(compute.OpTypeTanh, "Tanh", iv, err, x)
}

// Logistic implements compute.Function (ONNX Sigmoid).
func (f *function) Logistic(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Logistic(x)
	return f.unary(compute.OpTypeLogistic, "Sigmoid", iv, err, x)
}

// Sqrt implements compute.Function.
func (f *function) Sqrt(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Sqrt(x)
	return f.unary(compute.OpTypeSqrt, "Sqrt", iv, err, x)
}

// Rsqrt implements compute.Function: Reciprocal(Sqrt(x)).
func (f *function) Rsqrt(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Rsqrt(x)
	return f.record(compute.OpTypeRsqrt, iv, err, func(e *emitter, v *value) string {
		return e.node("Reciprocal", []string{e.node("Sqrt", []string{e.value(v.inputs[0])})})
	}, x)
}

// Floor implements compute.Function.
func (f *function) Floor(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Floor(x)
	return f.unary(compute.OpTypeFloor, "Floor", iv, err, x)
}

// Ceil implements compute.Function.
func (f *function) Ceil(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Ceil(x)
	return f.unary(compute.OpTypeCeil, "Ceil", iv, err, x)
}

// Erf implements compute.Function.
func (f *function) Erf(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Erf(x)
	return f.unary(compute.OpTypeErf, "Erf", iv, err, x)
}

// Sin implements compute.Function.
func (f *function) Sin(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Sin(x)
	return f.unary(compute.OpTypeSin, "Sin", iv, err, x)
}

// Cos implements compute.Function.
func (f *function) Cos(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Cos(x)
	return f.unary(compute.OpTypeCos, "Cos", iv, err, x)
}

// Sign implements compute.Function.
func (f *function) Sign(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Sign(x)
	return f.unary(compute.OpTypeSign, "Sign", iv, err, x)
}

// IsNaN implements compute.Function.
func (f *function) IsNaN(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.IsNaN(x)
	return f.unary(compute.OpTypeIsNaN, "IsNaN", iv, err, x)
}

// LogicalNot implements compute.Function.
func (f *function) LogicalNot(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.LogicalNot(x)
	return f.unary(compute.OpTypeLogicalNot, "Not", iv, err, x)
}

// Identity implements compute.Function.
func (f *function) Identity(x compute.Value) (compute.Value, error) {
	iv, err := f.inner.Identity(x)
	return f.unary(compute.OpTypeIdentity, "Identity", iv, err, x)
}

// Add implements compute.Function.
func (f *function) Add(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.Add(lhs, rhs)
	return f.elementwise(compute.OpTypeAdd, "Add", iv, err, nil, lhs, rhs)
}

// Sub implements compute.Function.
func (f *function) Sub(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.Sub(lhs, rhs)
	return f.elementwise(compute.OpTypeSub, "Sub", iv, err, nil, lhs, rhs)
}

// Mul implements compute.Function.
func (f *function) Mul(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.Mul(lhs, rhs)
	return f.elementwise(compute.OpTypeMul, "Mul", iv, err, nil, lhs, rhs)
}

// Div implements compute.Function.
func (f *function) Div(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.Div(lhs, rhs)
	return f.elementwise(compute.OpTypeDiv, "Div", iv, err, nil, lhs, rhs)
}

// Pow implements compute.Function.
func (f *function) Pow(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.Pow(lhs, rhs)
	return f.elementwise(compute.OpTypePow, "Pow", iv, err, nil, lhs, rhs)
}

// Max implements compute.Function; Max(x, 0) is written Relu(x).
func (f *function) Max(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.Max(lhs, rhs)
	return f.record(compute.OpTypeMax, iv, err, func(e *emitter, v *value) string {
		a, b := v.inputs[0], v.inputs[1]
		if a.zero {
			a, b = b, a
		}
		if b.zero && a.shape.DType.IsFloat() && slices.Equal(a.shape.Dimensions, v.shape.Dimensions) {
			return e.node("Relu", []string{e.value(a)})
		}
		return e.node("Max", e.broadcastOperands(v.shape.Dimensions, v.inputs))
	}, lhs, rhs)
}

// Min implements compute.Function.
func (f *function) Min(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.Min(lhs, rhs)
	return f.elementwise(compute.OpTypeMin, "Min", iv, err, nil, lhs, rhs)
}

// Rem implements compute.Function (ONNX Mod with fmod=1: the sign of the
// dividend, as C's fmod).
func (f *function) Rem(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.Rem(lhs, rhs)
	return f.record(compute.OpTypeRem, iv, err, func(e *emitter, v *value) string {
		out := e.fresh("Mod")
		e.nodes = append(e.nodes, modNode(out, e.broadcastOperands(v.shape.Dimensions, v.inputs)))
		return out
	}, lhs, rhs)
}

// Equal implements compute.Function.
func (f *function) Equal(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.Equal(lhs, rhs)
	return f.elementwise(compute.OpTypeEqual, "Equal", iv, err, nil, lhs, rhs)
}

// NotEqual implements compute.Function: Not(Equal).
func (f *function) NotEqual(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.NotEqual(lhs, rhs)
	return f.elementwise(compute.OpTypeNotEqual, "Equal", iv, err, not, lhs, rhs)
}

// GreaterThan implements compute.Function.
func (f *function) GreaterThan(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.GreaterThan(lhs, rhs)
	return f.elementwise(compute.OpTypeGreaterThan, "Greater", iv, err, nil, lhs, rhs)
}

// GreaterOrEqual implements compute.Function.
func (f *function) GreaterOrEqual(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.GreaterOrEqual(lhs, rhs)
	return f.elementwise(compute.OpTypeGreaterOrEqual, "GreaterOrEqual", iv, err, nil, lhs, rhs)
}

// LessThan implements compute.Function.
func (f *function) LessThan(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.LessThan(lhs, rhs)
	return f.elementwise(compute.OpTypeLessThan, "Less", iv, err, nil, lhs, rhs)
}

// LessOrEqual implements compute.Function.
func (f *function) LessOrEqual(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.LessOrEqual(lhs, rhs)
	return f.elementwise(compute.OpTypeLessOrEqual, "LessOrEqual", iv, err, nil, lhs, rhs)
}

// LogicalAnd implements compute.Function.
func (f *function) LogicalAnd(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.LogicalAnd(lhs, rhs)
	return f.elementwise(compute.OpTypeLogicalAnd, "And", iv, err, nil, lhs, rhs)
}

// LogicalOr implements compute.Function.
func (f *function) LogicalOr(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.LogicalOr(lhs, rhs)
	return f.elementwise(compute.OpTypeLogicalOr, "Or", iv, err, nil, lhs, rhs)
}

// LogicalXor implements compute.Function.
func (f *function) LogicalXor(lhs, rhs compute.Value) (compute.Value, error) {
	iv, err := f.inner.LogicalXor(lhs, rhs)
	return f.elementwise(compute.OpTypeLogicalXor, "Xor", iv, err, nil, lhs, rhs)
}

// Where implements compute.Function.
func (f *function) Where(condition, onTrue, onFalse compute.Value) (compute.Value, error) {
	iv, err := f.inner.Where(condition, onTrue, onFalse)
	return f.elementwise(compute.OpTypeWhere, "Where", iv, err, nil, condition, onTrue, onFalse)
}
