package golower

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	timage "github.com/gomlx/gomlx/core/tensors/images"
)

// convCase is one convolution of the equivalence table.
type convCase struct {
	batch, size, inChannels, outChannels int
	kernel, stride, dilation, groups     int
	padSame, channelsFirst               bool
}

func (c convCase) String() string {
	layout := "NHWC"
	if c.channelsFirst {
		layout = "NCHW"
	}
	pad := "valid"
	if c.padSame {
		pad = "same"
	}
	return fmt.Sprintf("b%d_%dx%d_c%d-%d_k%d_s%d_d%d_g%d_%s_%s", c.batch, c.size, c.size, c.inChannels,
		c.outChannels, c.kernel, c.stride, c.dilation, c.groups, pad, layout)
}

// equivalenceTable covers kernel sizes 1/3/5/7, strides 1/2, padding
// same/valid, both channel layouts and batches 1 and 64, plus dilation and
// channel groups.
func equivalenceTable() []convCase {
	var table []convCase
	for _, kernel := range []int{1, 3, 5, 7} {
		for _, stride := range []int{1, 2} {
			for _, padSame := range []bool{false, true} {
				for _, channelsFirst := range []bool{false, true} {
					for _, batch := range []int{1, 64} {
						table = append(table, convCase{batch: batch, size: 11, inChannels: 3, outChannels: 4,
							kernel: kernel, stride: stride, dilation: 1, groups: 1,
							padSame: padSame, channelsFirst: channelsFirst})
					}
				}
			}
		}
	}
	for _, channelsFirst := range []bool{false, true} {
		for _, padSame := range []bool{false, true} {
			table = append(table,
				convCase{batch: 2, size: 13, inChannels: 2, outChannels: 3, kernel: 3, stride: 1, dilation: 2,
					groups: 1, padSame: padSame, channelsFirst: channelsFirst},
				convCase{batch: 2, size: 9, inChannels: 6, outChannels: 4, kernel: 3, stride: 1, dilation: 1,
					groups: 2, padSame: padSame, channelsFirst: channelsFirst},
				convCase{batch: 3, size: 10, inChannels: 4, outChannels: 8, kernel: 3, stride: 2, dilation: 1,
					groups: 4, padSame: padSame, channelsFirst: channelsFirst},
				convCase{batch: 1, size: 12, inChannels: 3, outChannels: 6, kernel: 5, stride: 1, dilation: 2,
					groups: 3, padSame: padSame, channelsFirst: channelsFirst})
		}
	}
	return table
}

// shapes returns the input and kernel dimensions of the case.
func (c convCase) shapes() (input, kernel []int) {
	kin := c.inChannels / c.groups
	if c.channelsFirst {
		return []int{c.batch, c.inChannels, c.size, c.size}, []int{c.outChannels, kin, c.kernel, c.kernel}
	}
	return []int{c.batch, c.size, c.size, c.inChannels}, []int{c.kernel, c.kernel, kin, c.outChannels}
}

// convolve builds the case's convolution with GoMLX's graph.Convolve.
func (c convCase) convolve(x, kernel *Node) *Node {
	conv := Convolve(x, kernel).Strides(c.stride).Dilations(c.dilation).ChannelGroupCount(c.groups)
	if c.channelsFirst {
		conv = conv.ChannelsAxis(timage.ChannelsFirst)
	}
	if c.padSame {
		conv = conv.PadSame()
	}
	return conv.Done()
}

// convolver is a test case's convolution (convCase, shiftCase).
type convolver interface{ convolve(x, kernel *Node) *Node }

// outputsAndGradients runs the convolution of the case on backend and
// returns its output and the gradients of sum(output·cotangent) with
// respect to the input and the kernel.
func outputsAndGradients(t *testing.T, backend compute.Backend, c convolver, x, kernel, cotangent *tensors.Tensor) [][]float32 {
	t.Helper()
	return runFlat(t, backend, func(in []*Node) []*Node {
		y := c.convolve(in[0], in[1])
		grads := Gradient(ReduceAllSum(Mul(y, in[2])), in[0], in[1])
		return []*Node{y, grads[0], grads[1]}
	}, x, kernel, cotangent)
}

// randomTensor returns a tensor of uniform values in [-1, 1).
func randomTensor(rng *rand.Rand, dims []int) *tensors.Tensor {
	size := 1
	for _, d := range dims {
		size *= d
	}
	data := make([]float32, size)
	for i := range data {
		data[i] = 2*rng.Float32() - 1
	}
	return tensors.FromFlatDataAndDimensions(data, dims...)
}

// outputDims returns the dimensions of the case's output, computed by the
// direct backend.
func outputDims(t *testing.T, backend compute.Backend, c convCase, x, kernel *tensors.Tensor) []int {
	t.Helper()
	out := MustExecOnce(backend, func(x, kernel *Node) *Node { return c.convolve(x, kernel) },
		clone(t, x), clone(t, kernel))
	defer out.FinalizeAll()
	return out.Shape().Dimensions
}

// loweringVariants are the lowerings every case runs with: the default
// (one Gather, no tiling at these sizes), per-position slices, and a patch
// bound so small that every convolution is cut into batch tiles and, one
// example at a time, into row bands.
var loweringVariants = []struct {
	name     string
	lowering Lowering
}{
	{"gather", Lowering{}},
	{"gather-shiftall", Lowering{MaxShiftWaste: 1e9}},
	{"gather-noreuse", Lowering{NoPatchReuse: true}},
	{"gather-noshift", Lowering{NoShiftPatches: true}},
	{"gather-nophases", Lowering{NoPhases: true}},
	{"slices", Lowering{SlicePatches: true}},
	{"tiled", Lowering{MaxPatchBytes: 600}},
}

// TestLoweredMatchesDirect compares the lowered convolution's output and
// gradients with the Go backend's direct convolution.
func TestLoweredMatchesDirect(t *testing.T) {
	direct := gobackend.GetBackend()
	names := []string{"output", "d/dinput", "d/dkernel"}
	for _, variant := range loweringVariants {
		lowered := WrapWith(direct, Rules{}, variant.lowering).(*Backend)
		for i, c := range equivalenceTable() {
			t.Run(variant.name+"/"+c.String(), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(i), 16))
				inDims, kDims := c.shapes()
				x, kernel := randomTensor(rng, inDims), randomTensor(rng, kDims)
				cotangent := randomTensor(rng, outputDims(t, direct, c, x, kernel))
				before, reusedBefore := lowered.Lowered(), lowered.ReusedPatches()
				want := outputsAndGradients(t, direct, c, x, kernel, cotangent)
				got := outputsAndGradients(t, lowered, c, x, kernel, cotangent)
				if lowered.Lowered() < before+3 {
					t.Fatalf("expected the forward and both gradient convolutions lowered, got %d",
						lowered.Lowered()-before)
				}
				// The kernel gradient reuses the forward's patches unless
				// disabled or split per channel group by GoMLX (tiled:
				// when the forward fits in one tile).
				wantReused := int64(0)
				if strings.HasPrefix(variant.name, "gather") && variant.name != "gather-noreuse" && c.groups == 1 {
					wantReused = 1
				}
				if reused := lowered.ReusedPatches() - reusedBefore; reused != wantReused && variant.name != "tiled" {
					t.Errorf("%d convolutions reused patches, want %d", reused, wantReused)
				}
				compareFlat(t, names, got, want)
			})
		}
	}
}

// compareFlat fails unless got and want agree to 1e-5 of each tensor's
// largest value: sums of thousands of float32 products differ with the
// order of summation.
func compareFlat(t *testing.T, names []string, got, want [][]float32) {
	t.Helper()
	for j := range want {
		if len(got[j]) != len(want[j]) {
			t.Fatalf("%s: %d values, want %d", names[j], len(got[j]), len(want[j]))
		}
		scale := 1.0
		for _, w := range want[j] {
			scale = max(scale, math.Abs(float64(w)))
		}
		for k := range want[j] {
			if diff := math.Abs(float64(got[j][k] - want[j][k])); diff > 1e-5*scale {
				t.Fatalf("%s[%d] = %g, direct convolution gives %g (diff %g, largest value %g)",
					names[j], k, got[j][k], want[j][k], diff, scale)
			}
		}
	}
}

// clone returns a local copy of tensor.
func clone(t testing.TB, tensor *tensors.Tensor) *tensors.Tensor {
	t.Helper()
	c, err := tensor.LocalClone()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
