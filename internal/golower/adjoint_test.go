package golower

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	_ "github.com/voltml/volt/internal/convgrad" // volt's correction of GoMLX's input gradient.
)

// TestConvolutionGradientsAreAdjoints checks the convolution gradients
// against the forward convolution alone, not against another gradient:
// L(x, k) = <conv(x, k), r> is linear in each argument, so for any v and u,
// <dL/dx, v> = <conv(v, k), r> and <dL/dk, u> = <conv(x, u), r>. The
// equivalence tests compare the lowered ops with the Go backend's on the
// same GoMLX graph, so a wrong gradient in GoMLX itself would pass them;
// this test would not.
// It covers even and odd kernels, strides, valid and same padding, on the
// Go backend and through the lowering.
//
// It found one: GoMLX v0.28.16's input gradient of a convolution with an
// even kernel is wrong (one position off); internal/convgrad, which volt's
// engine imports, corrects it, and this test runs with the correction, so
// it checks the lowering of the corrected gradient graph too.
// internal/convgrad's TestGradientsAreAdjoints checks generated
// configurations (dilations, groups, layouts) on the Go backend and through
// the lowering.
func TestConvolutionGradientsAreAdjoints(t *testing.T) {
	direct := gobackend.GetBackend()
	backends := []struct {
		name    string
		backend compute.Backend
	}{{"go", direct}, {"lowered", WrapWith(direct, Rules{}, Lowering{})}}
	var cases []convCase
	for _, kernel := range []int{2, 3, 4} {
		for _, stride := range []int{1, 2} {
			for _, padSame := range []bool{false, true} {
				for _, channelsFirst := range []bool{false, true} {
					cases = append(cases, convCase{batch: 2, size: 9, inChannels: 3, outChannels: 4,
						kernel: kernel, stride: stride, dilation: 1, groups: 1, padSame: padSame, channelsFirst: channelsFirst})
				}
			}
		}
	}
	for _, b := range backends {
		for i, c := range cases {
			t.Run(b.name+"/"+c.String(), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(i), 31))
				inDims, kDims := c.shapes()
				x, k, v, u := randomTensor(rng, inDims), randomTensor(rng, kDims), randomTensor(rng, inDims), randomTensor(rng, kDims)
				r := randomTensor(rng, outputDims(t, direct, c, x, k))
				sums := runFlat(t, b.backend, func(in []*Node) []*Node {
					x, k, v, u, r := in[0], in[1], in[2], in[3], in[4]
					grads := Gradient(ReduceAllSum(Mul(c.convolve(x, k), r)), x, k)
					return []*Node{
						ReduceAllSum(Mul(grads[0], v)), ReduceAllSum(Mul(c.convolve(v, k), r)),
						ReduceAllSum(Mul(grads[1], u)), ReduceAllSum(Mul(c.convolve(x, u), r)),
					}
				}, x, k, v, u, r)
				for j, name := range []string{"d/dinput", "d/dkernel"} {
					got, want := float64(sums[2*j][0]), float64(sums[2*j+1][0])
					d := math.Abs(got-want) / max(math.Abs(want), 1)
					if !(d <= 1e-4) {
						t.Errorf("%s: <gradient, direction> = %.6g, the forward says %.6g (relative difference %.2g)", name, got, want, d)
					}
				}
			})
		}
	}
}
