package golower

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/gobackend"

	"github.com/voltml/volt/internal/gokernels"
	"github.com/voltml/volt/internal/onednn"
	"github.com/voltml/volt/internal/onednn/onednntest"
)

// TestConvsOnOneDNNMatchDirect runs the equivalence table's convolutions
// and both gradients with internal/gokernels' RunsConv as the lowering's
// ConvKernel, which leaves the single-group ones (forward, kernel gradient and input
// gradient, strided ones included) to oneDNN, and compares them with the
// Go backend's own convolution.
func TestConvsOnOneDNNMatchDirect(t *testing.T) {
	onednntest.Require(t)
	withKernels(t)
	direct := gobackend.GetBackend()
	names := []string{"output", "d/dinput", "d/dkernel"}
	wrapped := WrapWith(direct, Rules{}, Lowering{ConvKernel: gokernels.RunsConv}).(*Backend)
	table := equivalenceTable()
	// examples/resnet's strided convolutions at even sizes (GoMLX pads
	// them (k−1)/2 below and k/2 above), batches past the oneDNN chunk:
	// the 1×1 one reads no last row, so its kernel gradient leaves that
	// row out and its input gradient writes it zero.
	resnetLike := []convCase{
		{batch: 20, size: 28, inChannels: 16, outChannels: 32, kernel: 3, stride: 2, dilation: 1, groups: 1, padSame: true},
		{batch: 20, size: 14, inChannels: 32, outChannels: 64, kernel: 1, stride: 2, dilation: 1, groups: 1, padSame: true},
		{batch: 33, size: 28, inChannels: 1, outChannels: 16, kernel: 3, stride: 1, dilation: 1, groups: 1, padSame: true},
		{batch: 17, size: 7, inChannels: 64, outChannels: 64, kernel: 3, stride: 1, dilation: 1, groups: 1, padSame: true,
			channelsFirst: true},
	}
	table = append(table, resnetLike...)
	resnetFrom := len(table) - len(resnetLike)
	for i, c := range table {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 16))
			inDims, kDims := c.shapes()
			x, kernel := randomTensor(rng, inDims), randomTensor(rng, kDims)
			gokernels.SetEnabled(false)
			cotangent := randomTensor(rng, outputDims(t, direct, c, x, kernel))
			want := outputsAndGradients(t, direct, c, x, kernel, cotangent)
			gokernels.SetEnabled(true)
			implsBefore := onednn.CachedImpls()
			before, loweredBefore := wrapped.KernelConvs(), wrapped.Lowered()
			got := outputsAndGradients(t, wrapped, c, x, kernel, cotangent)
			kernelConvs, lowered := wrapped.KernelConvs()-before, wrapped.Lowered()-loweredBefore
			if c.groups == 1 && kernelConvs != 3 {
				t.Errorf("%d convolutions left to oneDNN (%d lowered), want all 3", kernelConvs, lowered)
			}
			// planConv maps one group only: the grouped forward is lowered
			// (GoMLX builds its gradients one group at a time).
			if c.groups > 1 && lowered < 1 {
				t.Errorf("%d convolutions lowered, want the grouped forward at least", lowered)
			}
			compareFlat(t, names, got, want)
			// The ResNet's convolutions, in every direction, must run on
			// oneDNN's fast kernels (on a layout they do not take, a
			// cropped view say, it falls back to its reference ones, 20-50×
			// slower), and channels-last ones on the activations as they
			// are, with no reorders (their crops widened back to the dense
			// tensor).
			if i >= resnetFrom {
				for _, impl := range onednn.CachedImpls() {
					if slices.Contains(implsBefore, impl) {
						continue
					}
					if strings.HasSuffix(impl, ": ref:any") || strings.Contains(impl, "gemm") {
						t.Errorf("a slow oneDNN implementation: %s", impl)
					}
					if !c.channelsFirst && !strings.Contains(impl, "Format:weights-blocked") {
						t.Errorf("activations reordered: %s", impl)
					}
				}
			}
		})
	}
}
