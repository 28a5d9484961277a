package golower

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// generatedScatterCases draws stride-1 convolutions whose padding on each
// side is at least the kernel's span less one (up to one more) when full,
// else zero (valid: their input gradients are full-padded): batch 1 to 3,
// sizes from 1, kernels 1 to 4 per axis, dilations 1 and 2, 1 to 3
// spatial axes, both channel layouts.
func generatedScatterCases(count int, full bool) []shiftCase {
	rng := rand.New(rand.NewPCG(29, 7))
	var cases []shiftCase
	for len(cases) < count {
		n := 1 + rng.IntN(3)
		c := shiftCase{batch: 1 + rng.IntN(3), inChannels: 1 + rng.IntN(5), outChannels: 1 + rng.IntN(5),
			channelsFirst: rng.IntN(2) == 1}
		wide, empty := false, false
		for range n {
			size, kernel, dilation := 1+rng.IntN(9), 1+rng.IntN(4), 1+rng.IntN(2)
			span := (kernel-1)*dilation + 1
			c.size, c.kernel, c.dilation = append(c.size, size), append(c.kernel, kernel), append(c.dilation, dilation)
			var pad [2]int
			if full {
				pad = [2]int{span - 1 + rng.IntN(2), span - 1 + rng.IntN(2)}
			}
			c.paddings = append(c.paddings, pad)
			wide = wide || span > 1
			empty = empty || size+pad[0]+pad[1] < span
		}
		if wide && !empty {
			cases = append(cases, c)
		}
	}
	return cases
}

// outDims returns the dimensions of the case's output.
func (c shiftCase) outDims() []int {
	inDims, _ := c.shapes()
	out := append([]int{}, inDims...)
	spatial0 := 1
	if c.channelsFirst {
		spatial0 = 2
		out[1] = c.outChannels
	} else {
		out[len(out)-1] = c.outChannels
	}
	for a := range c.size {
		out[spatial0+a] = outputSize(c.size[a]+c.paddings[a][0]+c.paddings[a][1], c.kernel[a], c.dilation[a], 1)
	}
	return out
}

// scatterApplies reports whether scatterConv takes a full-padded
// convolution of C input and Co output channels, output grid G and
// padded input grid P.
func scatterApplies(c, co, grid, padded int) bool { return co*grid <= c*padded }

// TestScatteredMatchesDirect compares convolutions lowered by multiplying
// first and summing shifted products (scatter.go) with the Go backend's
// direct convolution: full-padded forward convolutions (GoMLX cannot
// differentiate those: its gradient takes no padding over half the span),
// and valid ones with their gradients, whose input gradient is
// full-padded. It checks that the full-padded convolution took that path.
func TestScatteredMatchesDirect(t *testing.T) {
	lowered := WrapWith(gobackend.GetBackend(), Rules{}, Lowering{}).(*Backend)
	for _, full := range []bool{true, false} {
		for i, c := range generatedScatterCases(30, full) {
			name := "valid/"
			if full {
				name = "full/"
			}
			t.Run(name+c.String(), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(i), 9))
				inDims, kDims := c.shapes()
				x, kernel := randomTensor(rng, inDims), randomTensor(rng, kDims)
				outDims := c.outDims()
				grid, padded, inGrid, fullGrid, odd := 1, 1, 1, 1, true
				for a := range c.size {
					span := (c.kernel[a]-1)*c.dilation[a] + 1
					grid *= outputSize(c.size[a]+c.paddings[a][0]+c.paddings[a][1], c.kernel[a], c.dilation[a], 1)
					padded *= c.size[a] + c.paddings[a][0] + c.paddings[a][1]
					inGrid *= c.size[a]
					odd = odd && span%2 == 1
					fullGrid *= (outputSize(c.size[a], c.kernel[a], c.dilation[a], 1) + 2*(span-1))
				}
				scattered := lowered.ScatteredConvs()
				var want, got [][]float32
				var wantScattered bool
				if full {
					want = [][]float32{forwardOnly(t, lowered.Backend, c, x, kernel)}
					got = [][]float32{forwardOnly(t, lowered, c, x, kernel)}
					wantScattered = scatterApplies(c.inChannels, c.outChannels, grid, padded)
				} else {
					cotangent := randomTensor(rng, outDims)
					want = outputsAndGradients(t, lowered.Backend, c, x, kernel, cotangent)
					got = outputsAndGradients(t, lowered, c, x, kernel, cotangent)
					// The input gradient (output gradient in, input out),
					// padded (span-1, span-1) by GoMLX for odd spans.
					wantScattered = odd && scatterApplies(c.outChannels, c.inChannels, inGrid, fullGrid)
				}
				if d := lowered.ScatteredConvs() - scattered; wantScattered && d != 1 {
					t.Errorf("%d convolutions lowered by scattering, want 1", d)
				}
				compareFlat(t, []string{"output", "d/dinput", "d/dkernel"}, got, want)
			})
		}
	}
}

// forwardOnly returns the output of the case's convolution on backend.
func forwardOnly(t *testing.T, backend compute.Backend, c shiftCase, x, kernel *tensors.Tensor) []float32 {
	t.Helper()
	exec, err := NewExec(backend, func(x, kernel *Node) *Node { return c.convolve(x, kernel) })
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	outs, err := exec.Call(clone(t, x), clone(t, kernel))
	if err != nil {
		t.Fatal(err)
	}
	defer outs[0].FinalizeAll()
	return tensors.MustCopyFlatData[float32](outs[0])
}
