package golower

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	timage "github.com/gomlx/gomlx/core/tensors/images"
)

// shiftCase is a stride-1 convolution with per-axis kernel sizes,
// dilations and (asymmetric) paddings, of 1 to 3 spatial axes.
type shiftCase struct {
	batch, inChannels, outChannels int
	size, kernel, dilation         []int
	paddings                       [][2]int
	channelsFirst                  bool
}

func (c shiftCase) String() string {
	layout := "last"
	if c.channelsFirst {
		layout = "first"
	}
	return fmt.Sprintf("b%d_c%d-%d_size%v_k%v_d%v_pad%v_%s", c.batch, c.inChannels, c.outChannels, c.size,
		c.kernel, c.dilation, c.paddings, layout)
}

// generatedShiftCases draws stride-1 convolutions with a non-empty output:
// batch 1 to 3, odd and even sizes from 1, kernels 1 to 4 per axis,
// dilations 1 and 2, paddings 0 to 2 on each side (at most the kernel's
// span less one), both channel layouts.
func generatedShiftCases(count int) []shiftCase {
	rng := rand.New(rand.NewPCG(23, 3))
	var cases []shiftCase
	for len(cases) < count {
		n := 1 + rng.IntN(3)
		c := shiftCase{batch: 1 + rng.IntN(3), inChannels: 1 + rng.IntN(5), outChannels: 1 + rng.IntN(5),
			channelsFirst: rng.IntN(2) == 1}
		empty := false
		for range n {
			size, kernel, dilation := 1+rng.IntN(9), 1+rng.IntN(4), 1+rng.IntN(2)
			// GoMLX's gradient takes no padding wider than half the kernel's span less one.
			maxPad := min(2, (kernel-1)*dilation/2)
			pad := [2]int{rng.IntN(maxPad + 1), rng.IntN(maxPad + 1)}
			if size+pad[0]+pad[1] < (kernel-1)*dilation+1 {
				empty = true
			}
			c.size, c.kernel, c.dilation = append(c.size, size), append(c.kernel, kernel), append(c.dilation, dilation)
			c.paddings = append(c.paddings, pad)
		}
		if !empty {
			cases = append(cases, c)
		}
	}
	return cases
}

// shapes returns the input and kernel dimensions of the case.
func (c shiftCase) shapes() (input, kernel []int) {
	if c.channelsFirst {
		return append([]int{c.batch, c.inChannels}, c.size...), append([]int{c.outChannels, c.inChannels}, c.kernel...)
	}
	return append(append([]int{c.batch}, c.size...), c.inChannels), append(append([]int{}, c.kernel...),
		c.inChannels, c.outChannels)
}

// convolve is the case's convolution of x by kernel.
func (c shiftCase) convolve(x, kernel *Node) *Node {
	conv := Convolve(x, kernel).DilationPerAxis(c.dilation...).PaddingPerDim(c.paddings)
	if c.channelsFirst {
		conv = conv.ChannelsAxis(timage.ChannelsFirst)
	}
	return conv.Done()
}

// TestShiftedMatchesDirect compares stride-1 convolutions lowered from
// shifted runs (shift.go), and their gradients, with the Go backend's
// direct convolution over generated shapes, and checks that the forward
// convolution took that path and that the kernel gradient reused its
// patches.
func TestShiftedMatchesDirect(t *testing.T) {
	// Small shapes waste more of the padded grid than the default allows.
	// The batch (1 to 3) is left whole or cut into as many blocks as it
	// has images (split.go).
	for _, split := range []int{1, 3} {
		t.Run(fmt.Sprintf("split=%d", split), func(t *testing.T) {
			testShiftedMatchesDirect(t, Lowering{MaxShiftWaste: 1e9, ShiftSplit: split, ShiftTileBytes: -1})
		})
	}
	// Tiles of at most 96 bytes (24 float32 patch values): every case with
	// more is cut into tiles, down to one grid position each (shift_tiles.go).
	t.Run("tiles", func(t *testing.T) {
		testShiftedMatchesDirect(t, Lowering{MaxShiftWaste: 1e9, ShiftTileBytes: 96})
	})
	// Channels-last inputs without moving their channels (shift_cl.go),
	// whole and in tiles.
	t.Run("channels-last", func(t *testing.T) {
		testShiftedMatchesDirect(t, Lowering{MaxShiftWaste: 1e9, ShiftTileBytes: -1, ChannelsLastShifts: true,
			ChannelsLastShiftMinChannels: 1})
	})
	t.Run("channels-last-tiles", func(t *testing.T) {
		testShiftedMatchesDirect(t, Lowering{MaxShiftWaste: 1e9, ShiftTileBytes: 96, ChannelsLastShifts: true,
			ChannelsLastShiftMinChannels: 1})
	})
}

// shiftCaseInputs draws c's input, kernel and output cotangent.
func shiftCaseInputs(rng *rand.Rand, c shiftCase) (x, kernel, cotangent *tensors.Tensor) {
	inDims, kDims := c.shapes()
	x, kernel = randomTensor(rng, inDims), randomTensor(rng, kDims)
	outDims := slices.Clone(inDims)
	spatial0 := 1
	if c.channelsFirst {
		spatial0 = 2
		outDims[1] = c.outChannels
	} else {
		outDims[len(outDims)-1] = c.outChannels
	}
	for a := range c.size {
		outDims[spatial0+a] = outputSize(c.size[a]+c.paddings[a][0]+c.paddings[a][1], c.kernel[a], c.dilation[a], 1)
	}
	return x, kernel, randomTensor(rng, outDims)
}

func testShiftedMatchesDirect(t *testing.T, lowering Lowering) {
	lowered := WrapWith(gobackend.GetBackend(), Rules{}, lowering).(*Backend)
	names := []string{"output", "d/dinput", "d/dkernel"}
	for i, c := range generatedShiftCases(40) {
		t.Run(c.String(), func(t *testing.T) {
			x, kernel, cotangent := shiftCaseInputs(rand.New(rand.NewPCG(uint64(i), 5)), c)
			shifted, reused, tiled := lowered.ShiftedConvs(), lowered.ReusedPatches(), lowered.TiledShifts()
			want := outputsAndGradients(t, lowered.Backend, c, x, kernel, cotangent)
			got := outputsAndGradients(t, lowered, c, x, kernel, cotangent)
			if d := lowered.ShiftedConvs() - shifted; d < 1 {
				t.Errorf("%d convolutions lowered from shifted runs, want at least the forward one", d)
			}
			patchBytes, patchRows := 4*c.inChannels*c.batch, c.inChannels
			for a := range c.size {
				patchBytes *= c.kernel[a] * (c.size[a] + c.paddings[a][0] + c.paddings[a][1])
				patchRows *= c.kernel[a]
			}
			// (The input gradient, shifted too, may be tiled on its own.)
			if lowering.shiftTileCount(patchBytes, patchRows, c.outChannels) > 1 && lowered.TiledShifts() == tiled {
				t.Errorf("the forward convolution's %d patch bytes were not tiled (ShiftTileBytes %d)",
					patchBytes, lowering.ShiftTileBytes)
			}
			if d := lowered.ReusedPatches() - reused; d != 1 {
				t.Errorf("%d convolutions reused patches, want 1 (the kernel gradient)", d)
			}
			compareFlat(t, names, got, want)
		})
	}
	// The tiled variant must exercise tiles on a good share of the cases.
	if n := lowered.TiledShifts(); lowering.ShiftTileBytes > 0 && n < 15 {
		t.Errorf("%d shifted convolutions were tiled, want at least 15 of the 40 cases' forward and input-gradient ones", n)
	}
}

// TestTransposedProductMatchesDirect: shifted convolutions with fewer
// patch rows (K·C) than output channels, multiplied with their patches
// moved (shiftPatchesTransposedProduct), match the Go backend's direct
// convolution, values and both gradients, on examples/resnet's stem and
// examples/cnn's first convolution (batch 3) and a 1-D (channels first)
// and a 3-D case; and one multiplied as usual whose output channels equal
// its grid's positions (N·P: batch 2, 2×2 padded to 4×4, 32 channels),
// which must still be moved to channels-last (the move was once decided by
// the product's first axis and skipped there: torchvision's ResNet-18
// fine-tuning left torch's losses).
func TestTransposedProductMatchesDirect(t *testing.T) {
	lowered := WrapWith(gobackend.GetBackend(), Rules{}, Lowering{MaxShiftWaste: 1e9}).(*Backend)
	names := []string{"output", "d/dinput", "d/dkernel"}
	for i, c := range []shiftCase{
		{batch: 3, inChannels: 1, outChannels: 16, size: []int{28, 28}, kernel: []int{3, 3}, dilation: []int{1, 1},
			paddings: [][2]int{{1, 1}, {1, 1}}},
		{batch: 3, inChannels: 1, outChannels: 32, size: []int{28, 28}, kernel: []int{3, 3}, dilation: []int{1, 1},
			paddings: [][2]int{{0, 0}, {0, 0}}},
		{batch: 2, inChannels: 2, outChannels: 7, size: []int{9}, kernel: []int{3}, dilation: []int{2},
			paddings: [][2]int{{2, 1}}, channelsFirst: true},
		{batch: 2, inChannels: 1, outChannels: 9, size: []int{4, 5, 3}, kernel: []int{2, 2, 2}, dilation: []int{1, 1, 1},
			paddings: [][2]int{{1, 0}, {0, 1}, {1, 1}}},
		{batch: 2, inChannels: 4, outChannels: 32, size: []int{2, 2}, kernel: []int{3, 3}, dilation: []int{1, 1},
			paddings: [][2]int{{1, 1}, {1, 1}}},
	} {
		t.Run(c.String(), func(t *testing.T) {
			x, kernel, cotangent := shiftCaseInputs(rand.New(rand.NewPCG(uint64(i), 7)), c)
			shifted := lowered.ShiftedConvs()
			want := outputsAndGradients(t, lowered.Backend, c, x, kernel, cotangent)
			got := outputsAndGradients(t, lowered, c, x, kernel, cotangent)
			if lowered.ShiftedConvs() == shifted {
				t.Errorf("the convolution was not lowered from shifted runs")
			}
			compareFlat(t, names, got, want)
		})
	}
}
