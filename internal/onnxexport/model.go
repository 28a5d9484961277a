package onnxexport

import (
	"fmt"
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"google.golang.org/protobuf/proto"
)

// Opset is the ONNX operator set the export writes, and IRVersion the
// ONNX IR version that goes with it.
const (
	Opset     = 13
	IRVersion = 7
)

// Options names a model's parts.
type Options struct {
	// InputNames and OutputNames name the graph's inputs and outputs, one
	// per parameter and output of the trace.
	InputNames, OutputNames []string
	// GraphName, DocString, ProducerName and ProducerVersion go to the
	// model as they are.
	GraphName, DocString, ProducerName, ProducerVersion string
	// NameConstant names an initializer (a variable's path), or returns "".
	NameConstant func(dt dtypes.DType, dims []int, raw []byte) string
	// BatchName is the dim_param of a dynamic batch axis ("batch").
	BatchName string
}

// Result is an exported model.
type Result struct {
	Model *onnx.ModelProto
	// Dynamic reports whether the batch axes (axis 0 of every input, and
	// each output axis that followed it) are symbolic: the graphs traced at
	// two batch sizes were the same. Otherwise the model takes only the
	// shapes of the first trace, and Fixed says why.
	Dynamic bool
	Fixed   string
}

// Export lowers first (a trace at the example shapes) into an ONNX model.
// second, when not nil, is the same function traced at another batch
// size: where both lower to the same graph, the batch axis is dynamic.
func Export(first, second *Trace, o Options) (*Result, error) {
	if second != nil {
		pairTwins(first, second)
	}
	g, err := lowerGraph(first, o)
	if err != nil {
		return nil, err
	}
	res := &Result{Fixed: "traced at one batch size only"}
	var batchIn, batchOut [][]bool
	if second != nil {
		g2, err := lowerGraph(second, o)
		if err != nil {
			return nil, err
		}
		batchIn, batchOut, res.Fixed = compareTraces(first, second, g, g2)
		res.Dynamic = res.Fixed == ""
	}
	for i, p := range first.params {
		g.Input = append(g.Input, valueInfo(o.InputNames[i], p.shape, pick(res.Dynamic, batchIn, i), o.BatchName))
	}
	for i, out := range first.outputs {
		g.Output = append(g.Output, valueInfo(o.OutputNames[i], out.shape, pick(res.Dynamic, batchOut, i), o.BatchName))
	}
	res.Model = &onnx.ModelProto{
		IrVersion:       IRVersion,
		OpsetImport:     []*onnx.OperatorSetIdProto{{Domain: "", Version: Opset}},
		ProducerName:    o.ProducerName,
		ProducerVersion: o.ProducerVersion,
		DocString:       o.DocString,
		Graph:           g,
	}
	return res, nil
}

// pairTwins links each value of a to the value recorded at the same place
// in b, where both recorded the same ops of the same ranks (the same step
// at two batch sizes).
func pairTwins(a, b *Trace) {
	if len(a.order) != len(b.order) {
		return
	}
	for i, v := range a.order {
		w := b.order[i]
		if v.op != w.op || v.shape.DType != w.shape.DType || v.shape.Rank() != w.shape.Rank() {
			return
		}
	}
	for i, v := range a.order {
		w := b.order[i]
		v.twin, w.twin = w, v
		// A Reshape that only adds leading 1s at batch size 1 may do more
		// at another: compact in both or in neither, and of one rank, so
		// that both lower alike (leading 1s are implied in broadcasting).
		switch {
		case v.op == compute.OpTypeReshape && (v.compact == nil) != (w.compact == nil):
			v.compact, w.compact = nil, nil
		case len(v.compact) < len(w.compact):
			v.compact = padOnes(v.compact, len(w.compact))
		case len(w.compact) < len(v.compact):
			w.compact = padOnes(w.compact, len(v.compact))
		}
	}
}

// padOnes returns dims with leading 1s up to rank n.
func padOnes(dims []int, n int) []int {
	return append(slices.Repeat([]int{1}, n-len(dims)), dims...)
}

func pick(ok bool, axes [][]bool, i int) []bool {
	if !ok {
		return nil
	}
	return axes[i]
}

// lowerGraph emits the nodes and initializers of t (inputs and outputs
// are added by Export).
func lowerGraph(t *Trace, o Options) (*onnx.GraphProto, error) {
	if !t.done {
		return nil, fmt.Errorf("ONNX export: graph %q was traced but never returned its outputs", t.Name)
	}
	if len(o.InputNames) != len(t.params) || len(o.OutputNames) != len(t.outputs) {
		return nil, fmt.Errorf("ONNX export: %d input names and %d output names for a graph of %d inputs and %d outputs",
			len(o.InputNames), len(o.OutputNames), len(t.params), len(t.outputs))
	}
	e := newEmitter(o.InputNames, o.NameConstant)
	for _, p := range t.params {
		if p.twin != nil && p.shape.Rank() > 0 && p.shape.Dimensions[0] != p.twin.shape.Dimensions[0] {
			e.batchParam = p
			break
		}
	}
	for _, n := range slices.Concat(o.InputNames, o.OutputNames) {
		if e.used[n] {
			return nil, fmt.Errorf("ONNX export: the name %q is given to two inputs or outputs", n)
		}
		e.used[n] = true
	}
	produced := map[string]bool{}
	for i, out := range t.outputs {
		name := e.value(out)
		if !produced[name] && e.rename(name, o.OutputNames[i]) {
			produced[o.OutputNames[i]] = true
			e.full[out] = o.OutputNames[i]
			continue
		}
		// An input, a constant or another output's tensor: copied (small
		// runtimes lack Identity, so only then).
		e.nodes = append(e.nodes, &onnx.NodeProto{OpType: "Identity", Name: o.OutputNames[i], Input: []string{name}, Output: []string{o.OutputNames[i]}})
	}
	return &onnx.GraphProto{Name: o.GraphName, Node: e.nodes, Initializer: e.inits}, nil
}

// compareTraces finds the axes that differ between the two traces' inputs
// and outputs (the batch axes) and checks that the graphs are otherwise
// the same; fixed says where they are not.
func compareTraces(t1, t2 *Trace, g1, g2 *onnx.GraphProto) (in, out [][]bool, fixed string) {
	diff := func(a, b []*value) ([][]bool, string) {
		axes := make([][]bool, len(a))
		if len(a) != len(b) {
			return nil, "the number of inputs or outputs depends on the batch size"
		}
		for i := range a {
			sa, sb := a[i].shape, b[i].shape
			if sa.DType != sb.DType || sa.Rank() != sb.Rank() {
				return nil, fmt.Sprintf("input or output %d is %s at one batch size and %s at another", i, sa, sb)
			}
			axes[i] = make([]bool, sa.Rank())
			for k := range sa.Dimensions {
				axes[i][k] = sa.Dimensions[k] != sb.Dimensions[k]
			}
		}
		return axes, ""
	}
	in, fixed = diff(t1.params, t2.params)
	if fixed != "" {
		return nil, nil, fixed
	}
	out, fixed = diff(t1.outputs, t2.outputs)
	if fixed != "" {
		return nil, nil, fixed
	}
	if len(g1.Node) != len(g2.Node) {
		return nil, nil, fmt.Sprintf("the graph has %d nodes at one batch size and %d at another", len(g1.Node), len(g2.Node))
	}
	for i := range g1.Node {
		if !proto.Equal(g1.Node[i], g2.Node[i]) {
			return nil, nil, fmt.Sprintf("node %s (%s) depends on the batch size", g1.Node[i].Name, g1.Node[i].OpType)
		}
	}
	if len(g1.Initializer) != len(g2.Initializer) {
		return nil, nil, "the number of constants depends on the batch size"
	}
	for i := range g1.Initializer {
		if !proto.Equal(g1.Initializer[i], g2.Initializer[i]) {
			return nil, nil, fmt.Sprintf("constant %s (shape %v) depends on the batch size", g1.Initializer[i].Name, g1.Initializer[i].Dims)
		}
	}
	return in, out, ""
}

// valueInfo describes a graph input or output; the axes marked dynamic get
// the dim_param batch instead of their size.
func valueInfo(name string, s shapes.Shape, dynamic []bool, batch string) *onnx.ValueInfoProto {
	typ, _ := onnxType(s.DType)
	dims := make([]*onnx.TensorShapeProto_Dimension, s.Rank())
	for i, d := range s.Dimensions {
		if i < len(dynamic) && dynamic[i] {
			dims[i] = &onnx.TensorShapeProto_Dimension{Value: &onnx.TensorShapeProto_Dimension_DimParam{DimParam: batch}}
		} else {
			dims[i] = &onnx.TensorShapeProto_Dimension{Value: &onnx.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}}
		}
	}
	return &onnx.ValueInfoProto{Name: name, Type: &onnx.TypeProto{Value: &onnx.TypeProto_TensorType{
		TensorType: &onnx.TypeProto_Tensor{ElemType: typ, Shape: &onnx.TensorShapeProto{Dim: dims}}}}}
}
