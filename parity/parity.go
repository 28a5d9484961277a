package parity

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/nlpodyssey/safetensors"
	"github.com/voltml/volt/data"
)

// ParamsPrefix is the name prefix of the initial weights in a case file.
const ParamsPrefix = "params"

// Tensors are the tensors of one case file, by name.
type Tensors struct {
	// Path is the file they were read from, for messages.
	Path string
	// ByName holds each tensor, float32 (F32), float64 (F64), int32 (I32)
	// or int64 (I64) as in the file.
	ByName map[string]*tensors.Tensor
}

// Read reads the safetensors file at path.
func Read(path string) (*Tensors, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("parity: %w", err)
	}
	st, err := safetensors.Deserialize(buf)
	if err != nil {
		return nil, fmt.Errorf("parity: %s: not a safetensors file: %w", path, err)
	}
	t := &Tensors{Path: path, ByName: map[string]*tensors.Tensor{}}
	for _, nv := range st.Tensors() {
		tv := nv.TensorView
		dims := make([]int, len(tv.Shape()))
		for i, d := range tv.Shape() {
			dims[i] = int(d)
		}
		value, err := decode(tv.DType(), tv.Data(), dims)
		if err != nil {
			return nil, fmt.Errorf("parity: %s: tensor %q: %w", path, nv.Name, err)
		}
		t.ByName[nv.Name] = value
	}
	return t, nil
}

// decode converts little-endian bytes of dtype into a tensor.
func decode(dt safetensors.DType, raw []byte, dims []int) (*tensors.Tensor, error) {
	switch dt {
	case safetensors.F32:
		v := make([]float32, len(raw)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return tensors.FromFlatDataAndDimensions(v, dims...), nil
	case safetensors.F64:
		v := make([]float64, len(raw)/8)
		for i := range v {
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		return tensors.FromFlatDataAndDimensions(v, dims...), nil
	case safetensors.I32:
		v := make([]int32, len(raw)/4)
		for i := range v {
			v[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return tensors.FromFlatDataAndDimensions(v, dims...), nil
	case safetensors.I64:
		v := make([]int64, len(raw)/8)
		for i := range v {
			v[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		return tensors.FromFlatDataAndDimensions(v, dims...), nil
	}
	return nil, fmt.Errorf("dtype %s not supported (valid: F32, F64, I32, I64)", dt)
}

// Get returns the tensor called name, or an error naming the file and the
// names it holds.
func (t *Tensors) Get(name string) (*tensors.Tensor, error) {
	if v, ok := t.ByName[name]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("parity: %s has no tensor %q; it holds %v", t.Path, name, t.names())
}

func (t *Tensors) names() []string {
	names := make([]string, 0, len(t.ByName))
	for n := range t.ByName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Float64s returns the tensor called name as float64 values.
func (t *Tensors) Float64s(name string) ([]float64, error) {
	v, err := t.Get(name)
	if err != nil {
		return nil, err
	}
	out, err := Float64s(v)
	if err != nil {
		return nil, fmt.Errorf("parity: %s: tensor %q: %w", t.Path, name, err)
	}
	return out, nil
}

// Float64s returns a float32 or float64 tensor's values as float64.
func Float64s(v *tensors.Tensor) ([]float64, error) {
	switch v.DType() {
	case dtypes.Float64:
		return tensors.MustCopyFlatData[float64](v), nil
	case dtypes.Float32:
		out := make([]float64, 0, v.Size())
		for _, x := range tensors.MustCopyFlatData[float32](v) {
			out = append(out, float64(x))
		}
		return out, nil
	}
	return nil, fmt.Errorf("dtype %s, want a float", v.DType())
}

// Apply gives every variable under scope that has no value yet its initial
// weight from the file (tensor "params" + the variable's path), converted
// to the variable's dtype. It panics, naming the variable and the file,
// when the file has no such tensor or its shape differs: call it at the
// end of building the layers (defer) during the trace, where volt turns
// the panic into Fit's error.
func (t *Tensors) Apply(scope *model.Scope) {
	store := scope.Store()
	prefix := strings.TrimSuffix(scope.Scope(), "/") + "/"
	for v := range store.IterVariables() {
		if v.HasValue() || !strings.HasPrefix(v.Path(), prefix) || !v.Trainable {
			continue
		}
		value, ok := t.ByName[ParamsPrefix+v.Path()]
		if !ok {
			panic(fmt.Sprintf("parity: variable %s has no initial weight %q in %s; it holds %v", v.Path(), ParamsPrefix+v.Path(), t.Path, t.names()))
		}
		if !slices.Equal(value.Shape().Dimensions, v.Shape().Dimensions) {
			panic(fmt.Sprintf("parity: variable %s is shaped %v, its weight in %s %v", v.Path(), v.Shape().Dimensions, t.Path, value.Shape().Dimensions))
		}
		store.VariableWithShape(v.Path(), v.Shape(), func(g *graph.Graph, s shapes.Shape) *graph.Node {
			return graph.ConvertDType(graph.ConstCachedTensor(g, value), s.DType)
		})
	}
}

// Examples splits the named input and label tensors along axis 0 into
// examples, for a data.DataLoader that batches them in file order (no
// Shuffle, the file's batch size). Every tensor must have the same first
// dimension.
func (t *Tensors) Examples(inputs, labels []string) (data.Slice, error) {
	n := -1
	fields := func(names []string) ([][]data.Field, error) {
		var out [][]data.Field
		for _, name := range names {
			v, err := t.Get(name)
			if err != nil {
				return nil, err
			}
			dims := v.Shape().Dimensions
			if len(dims) == 0 || (n >= 0 && dims[0] != n) {
				return nil, fmt.Errorf("parity: %s: tensor %q is shaped %v, want %d examples along axis 0", t.Path, name, dims, n)
			}
			n = dims[0]
			split, err := splitRows(v)
			if err != nil {
				return nil, fmt.Errorf("parity: %s: tensor %q: %w", t.Path, name, err)
			}
			out = append(out, split)
		}
		return out, nil
	}
	in, err := fields(inputs)
	if err != nil {
		return nil, err
	}
	lab, err := fields(labels)
	if err != nil {
		return nil, err
	}
	examples := make(data.Slice, n)
	for i := range examples {
		for _, f := range in {
			examples[i].Inputs = append(examples[i].Inputs, f[i])
		}
		for _, f := range lab {
			examples[i].Labels = append(examples[i].Labels, f[i])
		}
	}
	return examples, nil
}

// splitRows returns the rows of v (axis 0) as data fields.
func splitRows(v *tensors.Tensor) ([]data.Field, error) {
	dims := v.Shape().Dimensions
	rowShape := slices.Clone(dims[1:])
	size := 1
	for _, d := range rowShape {
		size *= d
	}
	out := make([]data.Field, dims[0])
	switch v.DType() {
	case dtypes.Float32:
		flat := tensors.MustCopyFlatData[float32](v)
		for i := range out {
			out[i] = data.Field{Value: flat[i*size : (i+1)*size], Shape: rowShape}
		}
	case dtypes.Float64:
		flat := tensors.MustCopyFlatData[float64](v)
		for i := range out {
			out[i] = data.Field{Value: flat[i*size : (i+1)*size], Shape: rowShape}
		}
	case dtypes.Int32:
		flat := tensors.MustCopyFlatData[int32](v)
		for i := range out {
			out[i] = data.Field{Value: flat[i*size : (i+1)*size], Shape: rowShape}
		}
	case dtypes.Int64:
		flat := tensors.MustCopyFlatData[int64](v)
		for i := range out {
			out[i] = data.Field{Value: flat[i*size : (i+1)*size], Shape: rowShape}
		}
	default:
		return nil, fmt.Errorf("dtype %s not supported", v.DType())
	}
	return out, nil
}

// Mismatch is one step whose losses differ by more than the tolerance.
type Mismatch struct {
	Step      int // 0-based
	Got, Want float64
	Rel       float64 // |got − want| / |want|
}

func (m Mismatch) String() string {
	return fmt.Sprintf("step %d: volt %.9g, PyTorch %.9g (relative %.3g)", m.Step, m.Got, m.Want, m.Rel)
}

// Compare returns the steps where got is not within rel of want relative
// to |want|, and an error when the lengths differ; maxRel is the largest
// relative difference seen.
func Compare(got, want []float64, rel float64) (mismatches []Mismatch, maxRel float64, err error) {
	if len(got) != len(want) {
		return nil, 0, fmt.Errorf("parity: volt ran %d steps, PyTorch %d", len(got), len(want))
	}
	for i := range want {
		r := math.Abs(got[i]-want[i]) / math.Abs(want[i])
		if math.IsNaN(r) {
			r = math.Inf(1)
		}
		maxRel = max(maxRel, r)
		if r > rel {
			mismatches = append(mismatches, Mismatch{Step: i, Got: got[i], Want: want[i], Rel: r})
		}
	}
	return mismatches, maxRel, nil
}
