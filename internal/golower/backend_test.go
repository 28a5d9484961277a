package golower

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestOutputsFeedBackIn runs an executable on the wrapper three times,
// each time on the previous output: GoMLX accepts a tensor only on the
// backend instance its buffer reports, so this fails unless the wrapper's
// buffers report the wrapper.
func TestOutputsFeedBackIn(t *testing.T) {
	backend := Wrap(gobackend.GetBackend())
	rng := rand.New(rand.NewPCG(3, 4))
	x := randomTensor(rng, []int{2, 9, 9, 4})
	kernel := randomTensor(rng, []int{3, 3, 4, 4})
	exec := MustNewExec(backend, func(x, kernel *Node) *Node {
		return Tanh(Convolve(x, kernel).PadSame().Done())
	})
	defer exec.Finalize()
	for range 3 {
		out, err := exec.Call(x, kernel)
		if err != nil {
			t.Fatal(err)
		}
		x = out[0]
	}
	if got := backend.(*Backend).Lowered(); got == 0 {
		t.Error("the convolution was not lowered")
	}
}

// TestConvolutionInsideWhile lowers a convolution built inside a While
// body (a closure: the wrapper must unwrap the functions it hands to the
// inner backend) and compares with the direct backend.
func TestConvolutionInsideWhile(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := randomTensor(rng, []int{1, 8, 8, 3})
	kernel := randomTensor(rng, []int{3, 3, 3, 3})
	run := func(backend compute.Backend) []float32 {
		out := MustExecOnce(backend, func(x, kernel *Node) *Node {
			g := x.Graph()
			cond := NewClosure(g, func(g *Graph) []*Node {
				i := Parameter(g, "i", shapes.Make(dtypes.Int32))
				_ = Parameter(g, "x", x.Shape())
				return []*Node{LessThan(i, Const(g, int32(3)))}
			})
			body := NewClosure(g, func(g *Graph) []*Node {
				i := Parameter(g, "i", shapes.Make(dtypes.Int32))
				state := Parameter(g, "x", x.Shape())
				return []*Node{Add(i, Const(g, int32(1))), Tanh(Convolve(state, kernel).PadSame().Done())}
			})
			return While(cond, body, Const(g, int32(0)), x)[1]
		}, clone(t, x), clone(t, kernel))
		return tensors.MustCopyFlatData[float32](out)
	}
	lowered := Wrap(gobackend.GetBackend()).(*Backend)
	want, got := run(gobackend.GetBackend()), run(lowered)
	if lowered.Lowered() == 0 {
		t.Fatal("the convolution inside the While body was not lowered")
	}
	compareFlat(t, []string{"output"}, [][]float32{got}, [][]float32{want})
}

func TestWrapIsIdempotent(t *testing.T) {
	inner := gobackend.GetBackend()
	wrapped := Wrap(inner)
	if Wrap(wrapped) != wrapped {
		t.Error("Wrap of a wrapped backend made a second wrapper")
	}
	if wrapped.(*Backend).Inner() != inner {
		t.Error("Inner does not return the wrapped backend")
	}
	buf, err := wrapped.BufferFromFlatData(0, []float32{1, 2}, shapes.Make(dtypes.Float32, 2))
	if err != nil {
		t.Fatal(err)
	}
	if buf.Backend() != wrapped {
		t.Errorf("buffer reports backend %v, want the wrapper", buf.Backend())
	}
}
