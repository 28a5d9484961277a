package engine

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt/internal/gokernels"
	"github.com/voltml/volt/internal/golower"
	"github.com/voltml/volt/internal/onednn/onednntest"
)

// convolveOn runs one convolution of an x of xDims by a kernel of kDims on
// volt's backend for config (PadSame when same) and returns the wrapper
// and the output's dimensions.
func convolveOn(t *testing.T, config string, same bool, xDims, kDims []int) (*golower.Backend, []int) {
	t.Helper()
	b, err := Backend(config)
	if err != nil {
		t.Fatal(err)
	}
	fc, ok := b.(*golower.Backend)
	if !ok {
		t.Fatalf("Backend(%q) is %T, want the golower wrapper", config, b)
	}
	exec, err := graph.NewExec(b, func(x, k *graph.Node) *graph.Node {
		if same {
			return graph.Convolve(x, k).PadSame().Done()
		}
		return graph.Convolve(x, k).NoPadding().Done()
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Call(tensors.FromShape(shapes.Make(dtypes.Float32, xDims...)),
		tensors.FromShape(shapes.Make(dtypes.Float32, kDims...)))
	if err != nil {
		t.Fatal(err)
	}
	return fc, out[0].Shape().Dimensions
}

// TestGoBackendLowersConvolutions: the Go backend volt uses runs a
// convolution through golower's lowering when internal/gokernels is off
// (and a trainer's tensors work on it, which the wrapper's buffers make
// possible).
func TestGoBackendLowersConvolutions(t *testing.T) {
	withoutKernels(t)
	b, err := Backend("go")
	if err != nil {
		t.Fatal(err)
	}
	before := b.(*golower.Backend).Lowered()
	fc, got := convolveOn(t, "go", false, []int{4, 16, 16, 8}, []int{3, 3, 8, 16})
	if got[1] != 14 || got[3] != 16 {
		t.Errorf("output shape %v, want [4 14 14 16]", got)
	}
	if fc.Lowered() == before {
		t.Error("the convolution was not lowered onto the matmul")
	}
}

// TestGoBackendRunsConvolutionsOnOneDNN: with internal/gokernels on and
// oneDNN present, the Go backend volt uses leaves a convolution to oneDNN
// instead of lowering it.
func TestGoBackendRunsConvolutionsOnOneDNN(t *testing.T) {
	onednntest.Require(t)
	if err := gokernels.Installed(); err != nil {
		t.Fatalf("internal/gokernels is not installed: %v", err)
	}
	b, err := Backend("go")
	if err != nil {
		t.Fatal(err)
	}
	lowered, onOneDNN := b.(*golower.Backend).Lowered(), b.(*golower.Backend).KernelConvs()
	fc, got := convolveOn(t, "go", false, []int{4, 16, 16, 8}, []int{3, 3, 8, 16})
	if got[1] != 14 || got[3] != 16 {
		t.Errorf("output shape %v, want [4 14 14 16]", got)
	}
	if fc.KernelConvs() == onOneDNN || fc.Lowered() != lowered {
		t.Errorf("%d convolutions left to oneDNN, %d lowered; want 1 and 0",
			fc.KernelConvs()-onOneDNN, fc.Lowered()-lowered)
	}
}

// withoutKernels turns internal/gokernels off for the rest of the test,
// so that the graphs it builds lower their convolutions.
func withoutKernels(t *testing.T) {
	was := gokernels.SetEnabled(false)
	t.Cleanup(func() { gokernels.SetEnabled(was) })
}

// TestShiftTilesFollowTheExecutor: a 16-channel 3×3 convolution at 28×28
// (patches of 4 MB) is built in tiles on the Go backend that runs
// independent ops side by side (as volt's default runs graphs with
// convolutions), and whole on "go:ops_sequential".
func TestShiftTilesFollowTheExecutor(t *testing.T) {
	withoutKernels(t)
	for _, tc := range []struct {
		config string
		tiled  bool
	}{{"go:ops_sequential", false}, {"go", true}, {"go:ops_parallel", true}, {"go:parallelism=1,ops_sequential", false}, {"go:ops_by_graph", true}, {"", true}} {
		t.Run(tc.config, func(t *testing.T) {
			b, err := Backend(tc.config)
			if err != nil {
				t.Fatal(err)
			}
			before := b.(*golower.Backend).TiledShifts()
			fc, _ := convolveOn(t, tc.config, true, []int{8, 28, 28, 16}, []int{3, 3, 16, 16})
			if tiled := fc.TiledShifts() > before; tiled != tc.tiled {
				t.Errorf("tiled %v, want %v", tiled, tc.tiled)
			}
		})
	}
}
