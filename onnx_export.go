package volt

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/internal/golower"
	"github.com/voltml/volt/internal/onnxexport"
	"google.golang.org/protobuf/proto"
)

// ONNXOpset is the ONNX operator set ExportONNX writes.
const ONNXOpset = onnxexport.Opset

// ONNXOption configures ExportONNX.
type ONNXOption func(*onnxOptions)

type onnxOptions struct {
	inputNames, outputNames []string
	batch                   int
}

// ONNXInputNames names the model's inputs, one per input of the batch
// (default "input", or "input_0", "input_1", … for several).
func ONNXInputNames(names ...string) ONNXOption {
	return func(o *onnxOptions) { o.inputNames = names }
}

// ONNXOutputName names the model's output, the prediction (default "output").
func ONNXOutputName(name string) ONNXOption {
	return func(o *onnxOptions) { o.outputNames = []string{name} }
}

// ONNXBatchSize is the batch size the step is traced at (default 1): the
// shape a model whose batch axis cannot be dynamic takes.
func ONNXBatchSize(n int) ONNXOption {
	return func(o *onnxOptions) { o.batch = n }
}

// ONNXExport describes an exported model.
type ONNXExport struct {
	// Opset is the ONNX operator set (ONNXOpset).
	Opset int
	// Inputs and Outputs are the names of the model's inputs and outputs,
	// and InputShapes and OutputShapes their shapes as traced.
	Inputs, Outputs           []string
	InputShapes, OutputShapes []shapes.Shape
	// DynamicBatch reports whether the first axis of each input (and the
	// axes of the outputs that follow it) is symbolic, named "batch": the
	// step traced at two batch sizes gave the same graph. Otherwise the
	// model takes only InputShapes, one shape per export, and FixedReason
	// says which part of the graph holds the batch size.
	DynamicBatch bool
	FixedReason  string
	// Nodes and Initializers count the graph's nodes and constants.
	Nodes, Initializers int
}

// ExportONNX writes m's PredictStep, with the weights of the checkpoint at
// path, to w as an ONNX model (opset ONNXOpset, the file a PyTorch user
// gets from LightningModule.to_onnx). The checkpoint's hyper-parameters set
// m's fields first, as LoadModule does; m must be a non-nil pointer. inputs
// declare the step's inputs (dtype and the dimensions after the batch
// axis), in the order of the batch's Inputs; checkpoints do not record them.
//
// The step is traced on volt's pure-Go backend, op by op, and each GoMLX op
// is written as ONNX nodes; the trained variables become initializers
// named by their variable paths. The step is traced at two batch sizes:
// the shapes that follow the batch (a Reshape merging it, an Expand to a
// batch-sized state) are written to follow it at run time, and where both
// traces then give the same graph the batch axis is dynamic (dim_param
// "batch"); otherwise the model has the traced shapes only, one shape per
// export (ONNXBatchSize picks it), and the model's doc_string and the
// returned FixedReason say so. Recurrent layers are written unrolled over
// their time steps. An op without an ONNX lowering fails the export with
// an error naming it and where the model builds it (an
// *onnxexport.UnsupportedOpError's message: "ONNX export: op Sort has no
// ONNX lowering in volt, built at mymodel.head (mymodel/model.go:42) ←
// mymodel.(*M).PredictStep (mymodel/model.go:30) (supported: …)").
func ExportONNX(w io.Writer, path string, m Module, inputs []InputSpec, opts ...ONNXOption) (*ONNXExport, error) {
	o := onnxOptions{batch: 1}
	for _, opt := range opts {
		opt(&o)
	}
	fail := func(err error) (*ONNXExport, error) { return nil, fmt.Errorf("volt.ExportONNX %s: %w", path, err) }
	if mv := reflect.ValueOf(m); m == nil || mv.Kind() != reflect.Pointer || mv.IsNil() {
		return fail(fmt.Errorf("the module is %T; pass a non-nil pointer such as &MyModel{}", m))
	}
	if _, ok := m.(PredictStepper); !ok {
		return fail(fmt.Errorf("%T has no PredictStep(s *volt.Step, b volt.Batch) *graph.Node, the step an ONNX model runs", m))
	}
	if len(inputs) == 0 {
		return fail(errors.New("no inputs declared; give one InputSpec (dtype, dimensions after the batch axis) per input of the batch"))
	}
	if o.batch < 1 {
		return fail(fmt.Errorf("ONNXBatchSize(%d): must be at least 1", o.batch))
	}
	if o.inputNames == nil {
		o.inputNames = []string{"input"}
		if len(inputs) > 1 {
			o.inputNames = make([]string, len(inputs))
			for i := range inputs {
				o.inputNames[i] = fmt.Sprintf("input_%d", i)
			}
		}
	}
	if len(o.inputNames) != len(inputs) {
		return fail(fmt.Errorf("ONNXInputNames gives %d names for %d inputs", len(o.inputNames), len(inputs)))
	}
	if o.outputNames == nil {
		o.outputNames = []string{"output"}
	}
	for _, n := range append(append([]string{}, o.inputNames...), o.outputNames...) {
		if n == "" {
			return fail(errors.New("an input or output name is empty"))
		}
	}
	weights, err := readModule(path, m)
	if err != nil {
		return fail(err)
	}
	backend, err := engine.Backend("go")
	if err != nil {
		return fail(err)
	}
	if fb, ok := backend.(*golower.Backend); ok {
		backend = fb.Inner() // convolutions and pooling stay ops of their own
	}
	rec := onnxexport.Wrap(backend)
	p, err := newPredictor(path, m, weights, rec, predictorOptions{maxShapes: 2})
	if err != nil {
		return nil, fmt.Errorf("volt.ExportONNX%w", err)
	}
	defer p.Close()
	var traces []*onnxexport.Trace
	for _, batch := range []int{o.batch, o.batch + 1} {
		example := make([]*tensors.Tensor, len(inputs))
		want := make([]shapes.Shape, len(inputs))
		for i, s := range inputs {
			want[i] = shapes.Make(s.DType, append([]int{batch}, s.Dims...)...)
			example[i] = tensors.FromShape(want[i])
		}
		before := len(rec.Traces())
		if _, err := p.programFor(example); err != nil {
			return fail(err)
		}
		t := mainTrace(rec.Traces()[before:], want)
		if t == nil {
			return fail(fmt.Errorf("tracing the step on inputs %s recorded no graph taking them", shapesText(example)))
		}
		traces = append(traces, t)
	}
	if unused := traces[0].UnusedParams(); len(unused) > 0 {
		var what []string
		for _, i := range unused {
			what = append(what, fmt.Sprintf("input %d (%q, %s %v after the batch axis)", i, o.inputNames[i], inputs[i].DType, inputs[i].Dims))
		}
		return fail(fmt.Errorf("%T.PredictStep computes its outputs without reading %s, of the %d inputs declared; declare one InputSpec (--input-shape) per input the step reads, in the order of the batch's inputs",
			m, strings.Join(what, ", "), len(inputs)))
	}
	if n := len(traces[0].Outputs()); n != len(o.outputNames) {
		return fail(fmt.Errorf("the step has %d outputs, %d names given", n, len(o.outputNames)))
	}
	docFmt := "%T.PredictStep exported by volt from %s (ONNX opset %d)"
	res, err := onnxexport.Export(traces[0], traces[1], onnxexport.Options{
		InputNames: o.inputNames, OutputNames: o.outputNames,
		GraphName: reflect.TypeOf(m).Elem().Name(), ProducerName: "volt",
		NameConstant: variableNames(p), BatchName: "batch",
	})
	if err != nil {
		return fail(err)
	}
	info := &ONNXExport{Opset: ONNXOpset, Inputs: o.inputNames, Outputs: o.outputNames,
		InputShapes: traces[0].Params(), OutputShapes: traces[0].Outputs(), DynamicBatch: res.Dynamic,
		Nodes: len(res.Model.Graph.Node), Initializers: len(res.Model.Graph.Initializer)}
	doc := fmt.Sprintf(docFmt, m, path, ONNXOpset)
	if res.Dynamic {
		doc += "; the first axis of every input is the batch (dim_param \"batch\")"
	} else {
		info.FixedReason = res.Fixed
		doc += fmt.Sprintf("; fixed input shapes %s, one shape per export: %s", shapesList(info.InputShapes), res.Fixed)
	}
	res.Model.DocString = doc
	b, err := proto.Marshal(res.Model)
	if err != nil {
		return fail(err)
	}
	if _, err := w.Write(b); err != nil {
		return fail(fmt.Errorf("writing the model: %w", err))
	}
	return info, nil
}

// mainTrace returns the completed trace whose parameters have the shapes want.
func mainTrace(traces []*onnxexport.Trace, want []shapes.Shape) *onnxexport.Trace {
	for _, t := range traces {
		ps := t.Params()
		if !t.Done() || len(ps) != len(want) {
			continue
		}
		ok := true
		for i := range ps {
			ok = ok && ps[i].Equal(want[i])
		}
		if ok {
			return t
		}
	}
	return nil
}

// variableNames names a constant of the exported graph after the variable
// holding the same values (its path without the leading "/").
func variableNames(p *Predictor) func(dtypes.DType, []int, []byte) string {
	type key struct {
		dt   dtypes.DType
		dims string
		sum  [32]byte
	}
	byValue := map[key]string{}
	for v := range p.eng.Store.IterVariables() {
		if !p.loaded[v.Path()] {
			continue
		}
		t, err := v.Value()
		if err != nil {
			continue
		}
		s := t.Shape()
		_ = t.ConstBytes(func(data []byte) {
			k := key{s.DType, fmt.Sprint(s.Dimensions), sha256.Sum256(data)}
			if _, taken := byValue[k]; !taken {
				byValue[k] = strings.TrimPrefix(v.Path(), "/")
			}
		})
	}
	return func(dt dtypes.DType, dims []int, raw []byte) string {
		return byValue[key{dt, fmt.Sprint(dims), sha256.Sum256(raw)}]
	}
}

// shapesList shows shapes as [1 784], [1 3].
func shapesList(ss []shapes.Shape) string {
	var b bytes.Buffer
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.String())
	}
	return b.String()
}
