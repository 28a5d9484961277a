package onnxexport_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/internal/golower"
	"github.com/voltml/volt/internal/onnxcheck"
	"github.com/voltml/volt/internal/onnxexport"
	"github.com/voltml/volt/nn"
	"google.golang.org/protobuf/proto"
)

// goBackend is volt's pure-Go backend as ExportONNX wraps it (convolutions
// and pooling as ops of their own).
func goBackend(t *testing.T) compute.Backend {
	t.Helper()
	be, err := engine.Backend("go")
	if err != nil {
		t.Fatal(err)
	}
	if fb, ok := be.(*golower.Backend); ok {
		be = fb.Inner()
	}
	return be
}

// floats returns n values drawn uniformly from [-2, 2).
func floats(rng *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = 4*rng.Float32() - 2
	}
	return out
}

// ints returns n values drawn uniformly from [lo, hi).
func ints(rng *rand.Rand, n, lo, hi int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(lo + rng.IntN(hi-lo))
	}
	return out
}

// exportCase is a graph of one input whose axis 0 is the batch.
type exportCase struct {
	name string
	fn   func(scope *model.Scope, x *graph.Node) *graph.Node
	// input returns the input at a batch size.
	input func(rng *rand.Rand, batch int) *tensors.Tensor
	// ops are ONNX ops the model must hold.
	ops []string
}

// TestLoweringsRunInONNXRuntime: each graph, traced at batch sizes 1 and 2
// on the recording backend, exports with a dynamic batch axis, passes
// python3-onnx's checker, and gives in ONNX Runtime, at batch sizes 3 and 5,
// what GoMLX's Go backend computes (floats within 1e-6, integers equal).
// The gathers take indices past both ends of their axes: GoMLX clamps
// them, and so must the model.
func TestLoweringsRunInONNXRuntime(t *testing.T) {
	onnxcheck.RequireORT(t)
	table := make([]float32, 10*4)
	for i := range table {
		table[i] = float32(i)/8 - 2
	}
	cube := make([]float32, 5*6*3)
	for i := range cube {
		cube[i] = float32(i%17) - 8
	}
	feature := func(vals ...float32) func(g *graph.Graph) *graph.Node {
		return func(g *graph.Graph) *graph.Node { return graph.Const(g, vals) }
	}
	for _, tc := range []exportCase{
		{"embedding", func(_ *model.Scope, ids *graph.Node) *graph.Node {
			return graph.Gather(graph.Reshape(graph.Const(ids.Graph(), table), 10, 4), graph.ExpandAxes(ids, -1))
		}, func(rng *rand.Rand, b int) *tensors.Tensor {
			return tensors.FromFlatDataAndDimensions(ints(rng, b*7, -3, 14), b, 7)
		}, []string{"Clip", "Gather", "Squeeze"}},
		{"gather_nd", func(_ *model.Scope, idx *graph.Node) *graph.Node {
			return graph.Gather(graph.Reshape(graph.Const(idx.Graph(), cube), 5, 6, 3), idx)
		}, func(rng *rand.Rand, b int) *tensors.Tensor {
			return tensors.FromFlatDataAndDimensions(ints(rng, b*2, -2, 9), b, 2)
		}, []string{"GatherND", "Max", "Min"}},
		{"reshape_merging_the_batch", func(_ *model.Scope, x *graph.Node) *graph.Node {
			b := x.Shape().Dim(0)
			y := graph.Reshape(x, b*4, 6) // [B·4, 6]
			y = graph.Einsum("nd,de->ne", y, graph.Reshape(graph.Const(x.Graph(), table[:6*2]), 6, 2))
			return graph.Reshape(y, b, 8)
		}, func(rng *rand.Rand, b int) *tensors.Tensor {
			return tensors.FromFlatDataAndDimensions(floats(rng, b*24), b, 4, 6)
		}, []string{"MatMul", "Reshape"}},
		{"zeros_of_the_batch", func(_ *model.Scope, x *graph.Node) *graph.Node {
			// An initial state as a recurrent layer makes one: zeros
			// [B, 3], concatenated with the input.
			zeros := graph.Zeros(x.Graph(), shapes.Make(dtypes.Float32, x.Shape().Dim(0), 3))
			return graph.Concatenate([]*graph.Node{zeros, x}, 1)
		}, func(rng *rand.Rand, b int) *tensors.Tensor {
			return tensors.FromFlatDataAndDimensions(floats(rng, b*5), b, 5)
		}, []string{"Concat", "Expand", "Shape"}},
		{"slice_of_each_row", func(_ *model.Scope, x *graph.Node) *graph.Node {
			return graph.Slice(x, graph.AxisRange(), graph.AxisRange(1, 4))
		}, func(rng *rand.Rand, b int) *tensors.Tensor {
			return tensors.FromFlatDataAndDimensions(floats(rng, b*6), b, 6)
		}, []string{"Slice"}},
		{"pad_and_crop", func(_ *model.Scope, x *graph.Node) *graph.Node {
			// Padding before and cropping after an axis, and the other way
			// round, with a fill that is not 0.
			fill := graph.Scalar(x.Graph(), dtypes.Float32, 0.5)
			return graph.Pad(x, fill, compute.PadAxis{}, compute.PadAxis{}, compute.PadAxis{Start: 2, End: -1}, compute.PadAxis{Start: -1, End: 3})
		}, func(rng *rand.Rand, b int) *tensors.Tensor {
			return tensors.FromFlatDataAndDimensions(floats(rng, b*2*5*4), b, 2, 5, 4)
		}, []string{"Pad", "Slice"}},
		{"reverse", func(_ *model.Scope, x *graph.Node) *graph.Node {
			return graph.Reverse(x, 1, 3)
		}, func(rng *rand.Rand, b int) *tensors.Tensor {
			return tensors.FromFlatDataAndDimensions(floats(rng, b*3*2*5), b, 3, 2, 5)
		}, []string{"Slice"}},
		{"softmax", func(_ *model.Scope, x *graph.Node) *graph.Node { return graph.Softmax(x) }, func(rng *rand.Rand, b int) *tensors.Tensor {
			return tensors.FromFlatDataAndDimensions(floats(rng, b*7), b, 7)
		}, []string{"Exp", "ReduceMax", "ReduceSum"}},
		{"avg_pool_without_padding_counted", func(_ *model.Scope, x *graph.Node) *graph.Node {
			// torch's AvgPool2d(3, 2, 1, count_include_pad=False): sum
			// pools of x and of ones.
			return nn.AvgPool2d(x, 3).Stride(2).Padding(1).CountIncludePad(false).Done()
		}, func(rng *rand.Rand, b int) *tensors.Tensor {
			return tensors.FromFlatDataAndDimensions(floats(rng, b*2*7*7), b, 2, 7, 7)
		}, []string{"AveragePool"}},
		{"batch_norm_for_inference", func(_ *model.Scope, x *graph.Node) *graph.Node {
			g := x.Graph()
			return graph.InternalBatchNormForInference(x, feature(1.5, -0.5, 2)(g), feature(0.1, 0.2, -0.3)(g),
				feature(0.5, -1, 0)(g), feature(2, 0.25, 1)(g), 1e-5, -1)
		}, func(rng *rand.Rand, b int) *tensors.Tensor {
			return tensors.FromFlatDataAndDimensions(floats(rng, b*4*3), b, 4, 3)
		}, []string{"Mul", "Sqrt"}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkLowering(t, tc, 1e-6) })
	}
}

// checkLowering is TestLoweringsRunInONNXRuntime for one case: floats
// within tolerance.
func checkLowering(t *testing.T, tc exportCase, tolerance float64) {
	rng := rand.New(rand.NewPCG(39, 1))
	// The variables are drawn on volt's Go backend first: the recording
	// one has no random numbers (RNGBitGenerator).
	be, err := engine.Backend("go")
	if err != nil {
		t.Fatal(err)
	}
	store := model.NewStore()
	initial, err := model.NewExec1(be, store, tc.fn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := initial.Call(tc.input(rng, 1)); err != nil {
		t.Fatal(err)
	}
	rec := onnxexport.Wrap(goBackend(t))
	exec, err := model.NewExec1(rec, store, tc.fn)
	if err != nil {
		t.Fatal(err)
	}
	var traces []*onnxexport.Trace
	for _, b := range []int{1, 2} {
		before := len(rec.Traces())
		if _, err := exec.Call(tc.input(rng, b)); err != nil {
			t.Fatal(err)
		}
		for _, tr := range rec.Traces()[before:] {
			if tr.Done() && len(tr.Params()) == 1 {
				traces = append(traces, tr)
			}
		}
	}
	if len(traces) != 2 {
		t.Fatalf("%d traces of the graph at batch sizes 1 and 2, want 2", len(traces))
	}
	res, err := onnxexport.Export(traces[0], traces[1], onnxexport.Options{InputNames: []string{"x"}, OutputNames: []string{"y"}, BatchName: "batch", GraphName: tc.name})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Dynamic {
		t.Errorf("the batch axis is fixed: %s", res.Fixed)
	}
	raw, err := proto.Marshal(res.Model)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), tc.name+".onnx")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	report := onnxcheck.Check(t, path)
	for _, op := range tc.ops {
		if !slices.Contains(report.Ops, op) {
			t.Errorf("the model's ops %v hold no %s", report.Ops, op)
		}
	}
	for _, b := range []int{3, 5} {
		x := tc.input(rng, b)
		want, err := exec.Call(x)
		if err != nil {
			t.Fatal(err)
		}
		run, err := onnxcheck.ORT(t, path, []string{"x"}, []*tensors.Tensor{x})
		if err != nil {
			t.Fatal(err)
		}
		got := run.Outputs[0]
		if !got.Shape().Equal(want.Shape()) {
			t.Fatalf("batch %d: ONNX Runtime gives %s, GoMLX %s", b, got.Shape(), want.Shape())
		}
		g, w := tensors.MustCopyFlatData[float32](got), tensors.MustCopyFlatData[float32](want)
		worst := 0.0
		for i := range w {
			worst = math.Max(worst, math.Abs(float64(g[i]-w[i])))
		}
		if worst > tolerance {
			t.Errorf("batch %d: ONNX Runtime's output differs from GoMLX's by up to %.3g\ngot  %v\nwant %v", b, worst, g, w)
		}
	}
}

// TestNNLayersRunInONNXRuntime: package nn's recurrent layers (exported
// unrolled, a step's nodes per time step), attention and transformer
// layers, and a convolution with a group norm, their variables drawn by
// torch's initialisation, export with a dynamic batch axis and give in
// ONNX Runtime what GoMLX computes, within 1e-5.
func TestNNLayersRunInONNXRuntime(t *testing.T) {
	onnxcheck.RequireORT(t)
	sequence := func(rng *rand.Rand, b int) *tensors.Tensor {
		return tensors.FromFlatDataAndDimensions(floats(rng, b*5*8), b, 5, 8)
	}
	for _, tc := range []exportCase{
		{"lstm", func(scope *model.Scope, x *graph.Node) *graph.Node {
			outputs, _, _ := nn.LSTM(scope, x, 4)
			return outputs
		}, sequence, []string{"Sigmoid", "Tanh"}},
		{"gru", func(scope *model.Scope, x *graph.Node) *graph.Node {
			outputs, _ := nn.GRU(scope, x, 4)
			return outputs
		}, sequence, []string{"Sigmoid", "Tanh"}},
		{"causal_multihead_attention", func(scope *model.Scope, x *graph.Node) *graph.Node {
			out, _ := nn.MultiheadAttention(scope, x, x, x, 2).Causal().Done()
			return out
		}, sequence, []string{"Exp", "MatMul", "Where"}},
		{"transformer_encoder_layer_pre_norm", func(scope *model.Scope, x *graph.Node) *graph.Node {
			return nn.TransformerEncoderLayer(scope, x, 2).FeedForward(16).Dropout(0).NormFirst().Causal().Done()
		}, sequence, []string{"MatMul", "Sqrt"}},
		{"transformer_decoder_layer", func(scope *model.Scope, x *graph.Node) *graph.Node {
			return nn.TransformerDecoderLayer(scope, x, x, 2).FeedForward(16).Dropout(0).Causal().Done()
		}, sequence, []string{"MatMul", "Sqrt"}},
		{"conv1d_group_norm", func(scope *model.Scope, x *graph.Node) *graph.Node {
			return nn.GroupNorm(scope.In("norm"), nn.Conv1d(scope.In("conv"), x, 4, 3).Padding(1).Done(), 2)
		}, sequence, []string{"Conv"}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkLowering(t, tc, 1e-5) })
	}
}
