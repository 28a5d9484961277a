package convgrad

import (
	"encoding/json"
	"math"
	"os"
	"sort"
	"testing"

	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// torchCase is one convolution of testdata/torch_input_gradients.json.
type torchCase struct {
	X             []int     `json:"x"`
	Kernel        []int     `json:"kernel"`
	Stride        int       `json:"stride"`
	Padding       int       `json:"padding"`
	Output        []int     `json:"output"`
	InputGradient []float64 `json:"input_gradient"`
}

// filled is a float64 tensor whose flat value i is f(i).
func filled(dims []int, f func(float64) float64) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	data := make([]float64, n)
	for i := range data {
		data[i] = f(float64(i))
	}
	return tensors.FromFlatDataAndDimensions(data, dims...)
}

// TestInputGradientMatchesPyTorch compares the input gradient of
// sum(conv(x, k) * r) with PyTorch's (testdata/gen_torch_golden.py) for
// even kernels (DCGAN's 4×4 stride 2, 2×2, 2×4) and a 3×3 kernel padded
// beyond its span, which GoMLX v0.28.16 gets wrong or fails to build.
func TestInputGradientMatchesPyTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/torch_input_gradients.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases map[string]torchCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) < 4 {
		t.Fatalf("testdata has %d cases, want 4", len(names))
	}
	axes := graph.ConvolveAxesConfig{InputBatch: 0, InputChannels: 1, InputSpatial: []int{2, 3},
		KernelOutputChannels: 0, KernelInputChannels: 1, KernelSpatial: []int{2, 3},
		OutputBatch: 0, OutputChannels: 1, OutputSpatial: []int{2, 3}}
	for _, name := range names {
		c := cases[name]
		t.Run(name, func(t *testing.T) {
			x := filled(c.X, math.Sin)
			k := filled(c.Kernel, func(i float64) float64 { return math.Cos(0.7 * i) })
			r := filled(c.Output, func(i float64) float64 { return math.Sin(0.3*i + 1) })
			strides, pad := []int{c.Stride, c.Stride}, [][2]int{{c.Padding, c.Padding}, {c.Padding, c.Padding}}
			exec, err := graph.NewExec(gobackend.GetBackend(), func(x, k, r *graph.Node) *graph.Node {
				y := graph.ConvGeneral(x, k, axes, strides, pad, nil, nil, 1, 1)
				return graph.Gradient(graph.ReduceAllSum(graph.Mul(y, r)), x)[0]
			})
			if err != nil {
				t.Fatal(err)
			}
			defer exec.Finalize()
			outs, err := exec.Call(x, k, r)
			if err != nil {
				t.Fatal(err)
			}
			got := tensors.MustCopyFlatData[float64](outs[0])
			if len(got) != len(c.InputGradient) {
				t.Fatalf("gradient has %d values, PyTorch's %d", len(got), len(c.InputGradient))
			}
			for i, want := range c.InputGradient {
				if math.Abs(got[i]-want) > 1e-9*max(1, math.Abs(want)) {
					t.Fatalf("input gradient [%d] = %.12g, PyTorch's %.12g", i, got[i], want)
				}
			}
		})
	}
}
