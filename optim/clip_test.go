package optim

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// clipGolden is testdata/clip_golden.json.
type clipGolden struct {
	Shapes    [][]int     `json:"shapes"`
	Grads     [][]float64 `json:"grads"`
	NormCases []struct {
		P       any         `json:"p"` // a number or "inf"
		MaxNorm float64     `json:"max_norm"`
		Total   float64     `json:"total"`
		Clipped [][]float64 `json:"clipped"`
	} `json:"norm_cases"`
	ValueCases []struct {
		Value   float64     `json:"value"`
		Clipped [][]float64 `json:"clipped"`
	} `json:"value_cases"`
}

// normType decodes a golden norm order.
func normType(t *testing.T, p any) float64 {
	t.Helper()
	switch v := p.(type) {
	case float64:
		return v
	case string:
		if v == "inf" {
			return math.Inf(1)
		}
	}
	t.Fatalf("bad golden norm type %v", p)
	return 0
}

// runGraph executes fn once on float64 inputs (flat data with shapes) and
// returns its outputs flattened to float64.
func runGraph(t *testing.T, shapes [][]int, inputs [][]float64, fn func(inputs []*graph.Node) []*graph.Node) [][]float64 {
	t.Helper()
	exec, err := graph.NewExec(testBackend(t), fn)
	if err != nil {
		t.Fatal(err)
	}
	args := make([]any, len(inputs))
	for i, in := range inputs {
		args[i] = tensors.FromFlatDataAndDimensions(in, shapes[i]...)
	}
	outs, err := exec.Call(args...)
	if err != nil {
		t.Fatal(err)
	}
	res := make([][]float64, len(outs))
	for i, o := range outs {
		switch o.DType() {
		case dtypes.Float64:
			res[i] = tensors.MustCopyFlatData[float64](o)
		case dtypes.Float32:
			for _, x := range tensors.MustCopyFlatData[float32](o) {
				res[i] = append(res[i], float64(x))
			}
		default:
			t.Fatalf("output %d has dtype %s", i, o.DType())
		}
	}
	return res
}

// TestClipByGlobalNormMatchesPyTorch compares GradNorm and ClipByGlobalNorm
// with torch.nn.utils.clip_grad_norm_ for p = 1, 2, 3, +Inf and a maxNorm
// that clips and one that does not.
func TestClipByGlobalNormMatchesPyTorch(t *testing.T) {
	var golden clipGolden
	loadGolden(t, "clip_golden.json", &golden)
	for _, tc := range golden.NormCases {
		p := normType(t, tc.P)
		t.Run(fmt.Sprintf("p=%v/maxNorm=%v", p, tc.MaxNorm), func(t *testing.T) {
			out := runGraph(t, golden.Shapes, golden.Grads, func(grads []*graph.Node) []*graph.Node {
				clipped, total := ClipByGlobalNorm(grads, tc.MaxNorm, p)
				return append([]*graph.Node{total, GradNorm(grads, p)}, clipped...)
			})
			checkClose(t, "total", out[0], []float64{tc.Total}, 1e-12)
			checkClose(t, "GradNorm", out[1], []float64{tc.Total}, 1e-12)
			for i, want := range tc.Clipped {
				checkClose(t, fmt.Sprintf("clipped[%d]", i), out[2+i], want, 1e-12)
			}
		})
	}
}

// TestClipByValueMatchesPyTorch compares ClipByValue with
// torch.nn.utils.clip_grad_value_.
func TestClipByValueMatchesPyTorch(t *testing.T) {
	var golden clipGolden
	loadGolden(t, "clip_golden.json", &golden)
	for _, tc := range golden.ValueCases {
		t.Run(fmt.Sprintf("v=%v", tc.Value), func(t *testing.T) {
			out := runGraph(t, golden.Shapes, golden.Grads, func(grads []*graph.Node) []*graph.Node {
				return ClipByValue(grads, tc.Value)
			})
			for i, want := range tc.Clipped {
				checkClose(t, fmt.Sprintf("clipped[%d]", i), out[i], want, 0)
			}
		})
	}
}

// TestNormOf checks each norm order on one small tensor against hand values.
func TestNormOf(t *testing.T) {
	x := []float64{3, -4, 0, 1}
	tests := []struct {
		p    float64
		want float64
	}{
		{1, 8},
		{2, math.Sqrt(26)},
		{3, math.Cbrt(27 + 64 + 1)},
		{math.Inf(1), 4},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.p), func(t *testing.T) {
			out := runGraph(t, [][]int{{2, 2}}, [][]float64{x}, func(in []*graph.Node) []*graph.Node {
				return []*graph.Node{NormOf(in[0], tc.p)}
			})
			checkClose(t, "NormOf", out[0], []float64{tc.want}, 1e-14)
		})
	}
}

// TestGradNormDType checks the result dtype: float64 if any gradient is
// float64, float32 otherwise, and that clipped gradients keep their dtype.
func TestGradNormDType(t *testing.T) {
	tests := []struct {
		name  string
		in    []dtypes.DType
		total dtypes.DType
	}{
		{"all float32", []dtypes.DType{dtypes.Float32, dtypes.Float32}, dtypes.Float32},
		{"mixed", []dtypes.DType{dtypes.Float32, dtypes.Float64}, dtypes.Float64},
		{"half", []dtypes.DType{dtypes.Float16, dtypes.BFloat16}, dtypes.Float32},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.NewGraph(testBackend(t), "dtype")
			grads := make([]*graph.Node, len(tc.in))
			for i, dt := range tc.in {
				grads[i] = graph.Ones(g, shapesOf(dt, 3))
			}
			clipped, total := ClipByGlobalNorm(grads, 1, 2)
			if total.DType() != tc.total || !total.Shape().IsScalar() {
				t.Errorf("total = %s, want a %s scalar", total.Shape(), tc.total)
			}
			for i, c := range clipped {
				if c.DType() != tc.in[i] {
					t.Errorf("clipped[%d] dtype = %s, want %s", i, c.DType(), tc.in[i])
				}
			}
		})
	}
}

// TestClipArgumentChecks checks the panics on invalid arguments name the
// argument.
func TestClipArgumentChecks(t *testing.T) {
	tests := []struct {
		name string
		fn   func(grads []*graph.Node)
		want string
	}{
		{"GradNorm p=0", func(g []*graph.Node) { GradNorm(g, 0) }, "p must be"},
		{"GradNorm p=NaN", func(g []*graph.Node) { GradNorm(g, math.NaN()) }, "p must be"},
		{"GradNorm empty", func([]*graph.Node) { GradNorm(nil, 2) }, "grads is empty"},
		{"NormOf p=-inf", func(g []*graph.Node) { NormOf(g[0], math.Inf(-1)) }, "p must be"},
		{"ClipByGlobalNorm maxNorm<0", func(g []*graph.Node) { ClipByGlobalNorm(g, -1, 2) }, "maxNorm must be"},
		{"ClipByValue v<0", func(g []*graph.Node) { ClipByValue(g, -1) }, "v must be"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.NewGraph(testBackend(t), "checks")
			grads := []*graph.Node{graph.Ones(g, shapesOf(dtypes.Float32, 2))}
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("panic = %v, want one containing %q", r, tc.want)
				}
			}()
			tc.fn(grads)
		})
	}
}

// shapesOf returns the shape of a dtype vector of n elements.
func shapesOf(dt dtypes.DType, n int) shapes.Shape { return shapes.Make(dt, n) }
