package engine

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/fastconv"
)

// TestGoBackendLowersConvolutions: the Go backend volt uses runs a
// convolution through fastconv's lowering (and a trainer's tensors work on
// it, which the wrapper's buffers make possible).
func TestGoBackendLowersConvolutions(t *testing.T) {
	b, err := Backend("go")
	if err != nil {
		t.Fatal(err)
	}
	fc, ok := b.(*fastconv.Backend)
	if !ok {
		t.Fatalf("Backend(\"go\") is %T, want the fastconv wrapper", b)
	}
	before := fc.Lowered()
	exec, err := graph.NewExec(b, func(x, k *graph.Node) *graph.Node {
		return graph.Convolve(x, k).NoPadding().Done()
	})
	if err != nil {
		t.Fatal(err)
	}
	x := tensors.FromShape(shapes.Make(dtypes.Float32, 4, 16, 16, 8))
	k := tensors.FromShape(shapes.Make(dtypes.Float32, 3, 3, 8, 16))
	out, err := exec.Call(x, k)
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].Shape().Dimensions; got[1] != 14 || got[3] != 16 {
		t.Errorf("output shape %v, want [4 14 14 16]", got)
	}
	if fc.Lowered() == before {
		t.Error("the convolution was not lowered onto the matmul")
	}
}

// TestShiftTilesFollowTheExecutor: a 16-channel 3×3 convolution at 28×28
// (patches of 4 MB) is built in tiles on the Go backend that runs
// independent ops side by side, and whole on "go:ops_sequential", volt's
// default.
func TestShiftTilesFollowTheExecutor(t *testing.T) {
	for _, tc := range []struct {
		config string
		tiled  bool
	}{{"go:ops_sequential", false}, {"go", true}, {"go:ops_parallel", true}, {"go:parallelism=1,ops_sequential", false}} {
		t.Run(tc.config, func(t *testing.T) {
			b, err := Backend(tc.config)
			if err != nil {
				t.Fatal(err)
			}
			fc := b.(*fastconv.Backend)
			before := fc.TiledShifts()
			exec, err := graph.NewExec(b, func(x, k *graph.Node) *graph.Node {
				return graph.Convolve(x, k).PadSame().Done()
			})
			if err != nil {
				t.Fatal(err)
			}
			x := tensors.FromShape(shapes.Make(dtypes.Float32, 8, 28, 28, 16))
			k := tensors.FromShape(shapes.Make(dtypes.Float32, 3, 3, 16, 16))
			if _, err := exec.Call(x, k); err != nil {
				t.Fatal(err)
			}
			if tiled := fc.TiledShifts() > before; tiled != tc.tiled {
				t.Errorf("tiled %v, want %v", tiled, tc.tiled)
			}
		})
	}
}
