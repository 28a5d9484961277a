package golower

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	timage "github.com/gomlx/gomlx/core/tensors/images"

	"github.com/voltml/volt/internal/gokernels"
)

// poolCase is one pooling of the equivalence table.
type poolCase struct {
	kind                  string // "max", "min", "sum" or "mean"
	batch, size, channels int
	window                int
	channelsFirst         bool
	ties                  bool // values drawn from {0, 1, 2}: many equal maxima
	nans                  bool // with ties, about one value in six NaN
}

func (c poolCase) String() string {
	layout := "NHWC"
	if c.channelsFirst {
		layout = "NCHW"
	}
	return fmt.Sprintf("%s_b%d_%dx%d_c%d_w%d_%s_ties=%v_nans=%v", c.kind, c.batch, c.size, c.size, c.channels,
		c.window, layout, c.ties, c.nans)
}

func (c poolCase) pool(x *Node) *Node {
	var p *PoolBuilder
	switch c.kind {
	case "max":
		p = MaxPool(x)
	case "min":
		p = MinPool(x)
	case "sum":
		p = SumPool(x)
	default:
		p = MeanPool(x)
	}
	if c.channelsFirst {
		p = p.ChannelsAxis(timage.ChannelsFirst)
	}
	return p.Window(c.window).Done()
}

func (c poolCase) dims() []int {
	if c.channelsFirst {
		return []int{c.batch, c.channels, c.size, c.size}
	}
	return []int{c.batch, c.size, c.size, c.channels}
}

// TestLoweredPoolingMatchesDirect compares lowered non-overlapping pooling
// and its gradient, one windowed axis at a time (the default) and over
// whole windows, with the Go backend's ReduceWindow and SelectAndScatter:
// ties go to the same element, NaN too.
func TestLoweredPoolingMatchesDirect(t *testing.T) {
	var table []poolCase
	for _, kind := range []string{"max", "min", "sum", "mean"} {
		for _, channelsFirst := range []bool{false, true} {
			for _, size := range []int{8, 7} { // 7: the last row and column are cropped
				table = append(table,
					poolCase{kind: kind, batch: 64, size: size, channels: 3, window: 2, channelsFirst: channelsFirst},
					poolCase{kind: kind, batch: 1, size: size, channels: 2, window: 3, channelsFirst: channelsFirst})
			}
		}
	}
	for _, kind := range []string{"max", "min"} {
		// Channels-last rows of 16 and 32 values: internal/gokernels' case.
		for _, channels := range []int{16, 32} {
			table = append(table, poolCase{kind: kind, batch: 3, size: 7, channels: channels, window: 2, ties: true, nans: true},
				poolCase{kind: kind, batch: 2, size: 9, channels: channels, window: 3, ties: true})
		}
		table = append(table, poolCase{kind: kind, batch: 4, size: 6, channels: 2, window: 2, ties: true},
			poolCase{kind: kind, batch: 4, size: 6, channels: 2, window: 3, channelsFirst: true, ties: true},
			poolCase{kind: kind, batch: 4, size: 7, channels: 3, window: 2, ties: true, nans: true},
			poolCase{kind: kind, batch: 4, size: 6, channels: 2, window: 3, channelsFirst: true, ties: true,
				nans: true})
	}
	direct := gobackend.GetBackend()
	names := []string{"output", "d/dinput"}
	for _, lowering := range []struct {
		name     string
		lowering Lowering
	}{
		{"axes", Lowering{}},
		{"axes-argminmax", Lowering{PoolArgMinMax: true}},
		{"whole", Lowering{WholeWindowPooling: true}},
		{"kernels", Lowering{PoolKernel: gokernels.RunsPooling}},
	} {
		lowered := WrapWith(direct, Rules{}, lowering.lowering).(*Backend)
		for i, c := range table {
			t.Run(lowering.name+"/"+c.String(), func(t *testing.T) {
				testPoolCase(t, direct, lowered, c, uint64(i), names)
			})
		}
	}
}

// testPoolCase runs one case of TestLoweredPoolingMatchesDirect.
func testPoolCase(t *testing.T, direct compute.Backend, lowered *Backend, c poolCase, seed uint64, names []string) {
	rng := rand.New(rand.NewPCG(seed, 17))
	x := randomTensor(rng, c.dims())
	if c.ties {
		values := tensors.MustCopyFlatData[float32](x)
		for j := range values {
			values[j] = float32(rng.IntN(3))
			if c.nans && rng.IntN(6) == 0 {
				values[j] = float32(math.NaN())
			}
		}
		x = tensors.FromFlatDataAndDimensions(values, c.dims()...)
	}
	outDims := MustExecOnce(direct, func(x *Node) *Node { return c.pool(x) }, clone(t, x)).Shape().Dimensions
	cotangent := randomTensor(rng, outDims)
	before, kernelsBefore := lowered.LoweredPools(), lowered.KernelPools()
	results := make([][][]float32, 2)
	defer gokernels.SetEnabled(gokernels.SetEnabled(false))
	for b, backend := range []compute.Backend{direct, lowered} {
		// The direct run on the backend's own ops; the lowered one with
		// the kernels on when its lowering leaves pooling to them.
		gokernels.SetEnabled(b == 1 && lowered.lowering.PoolKernel != nil)
		exec := MustNewExec(backend, func(x, cotangent *Node) []*Node {
			y := c.pool(x)
			return []*Node{y, Gradient(ReduceAllSum(Mul(y, cotangent)), x)[0]}
		})
		outs := exec.MustCall(clone(t, x), clone(t, cotangent))
		for _, out := range outs {
			results[b] = append(results[b], tensors.MustCopyFlatData[float32](out))
		}
		exec.Finalize()
	}
	// Max and min pooling: the forward ReduceWindow and the
	// gradient's SelectAndScatter. Sum and mean: the forward only
	// (GoMLX's gradient is an overlapping stride-1 ReduceWindow).
	// With a PoolKernel, max and min poolings of rows of 16 channels or
	// more go to the kernels instead.
	wantLowered, wantKernels := int64(1), int64(0)
	if c.kind == "max" || c.kind == "min" {
		wantLowered = 2
		if lowered.lowering.PoolKernel != nil && !c.channelsFirst && c.channels%16 == 0 {
			wantLowered, wantKernels = 0, 2
		}
	}
	if got := lowered.LoweredPools() - before; got != wantLowered {
		t.Fatalf("%d pooling ops lowered, want %d", got, wantLowered)
	}
	if got := lowered.KernelPools() - kernelsBefore; got != wantKernels {
		t.Fatalf("%d pooling ops left to the kernels, want %d", got, wantKernels)
	}
	want, got := results[0], results[1]
	for j := range want {
		for k := range want[j] {
			g, w := float64(got[j][k]), float64(want[j][k])
			if math.IsNaN(g) != math.IsNaN(w) || math.Abs(g-w) > 1e-5*(1+math.Abs(w)) {
				t.Fatalf("%s[%d] = %g, the backend's pooling gives %g", names[j], k, got[j][k], want[j][k])
			}
		}
	}
}
