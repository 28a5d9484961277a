package onednn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// requireLibrary skips the test when oneDNN cannot be loaded, or fails
// it when VOLT_REQUIRE_ONEDNN=1.
func requireLibrary(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("VOLT_REQUIRE_ONEDNN") == "1" {
			t.Fatalf("VOLT_REQUIRE_ONEDNN=1 but oneDNN is unavailable: %v", err)
		}
		t.Skipf("oneDNN unavailable: %v", err)
	}
}

// layout names how a case stores its tensors.
type layout int

const (
	layoutNCHW  layout = iota // NCHW input/output, OIHW kernel
	layoutGoMLX               // NHWC input/output, HWIO kernel (GoMLX's default)
	layoutGaps                // NHWC with every row padded by 3 unused elements, kernel IHWO
)

func (l layout) String() string { return [...]string{"nchw", "gomlx", "gaps"}[l] }

// convCase is one table entry.
type convCase struct {
	batch, in, h, w, out, kh, kw int
	stride, padLow, padHigh      [2]int
	dilation                     [2]int
	groups                       int
	layout                       layout
}

func (k convCase) String() string {
	return fmt.Sprintf("b%d_c%d_%dx%d_o%d_k%dx%d_s%v_p%v%v_d%v_g%d_%v", k.batch, k.in, k.h, k.w, k.out, k.kh, k.kw,
		k.stride, k.padLow, k.padHigh, k.dilation, k.groups, k.layout)
}

// conv returns the case's Conv (normalized, strides filled in).
func (k convCase) conv(threads int, format Format) Conv {
	c := Conv{Batch: k.batch, InChannels: k.in, Height: k.h, Width: k.w, OutChannels: k.out,
		KernelHeight: k.kh, KernelWidth: k.kw, Groups: k.groups, Strides: k.stride,
		PadLow: k.padLow, PadHigh: k.padHigh, Dilations: k.dilation, Threads: threads, Format: FormatPlain}
	c = c.normalized()
	switch k.layout {
	case layoutGoMLX:
		c.SrcStrides = Dense(c.srcDims(), [4]int{0, 2, 3, 1})
		c.WeightsStrides = Dense(c.weightsDims(), [4]int{2, 3, 1, 0})
		c.DstStrides = Dense(c.dstDims(), [4]int{0, 2, 3, 1})
	case layoutGaps:
		gappy := func(d [4]int) [4]int {
			// NHWC whose W·C rows are 3 elements longer than needed.
			row := d[3]*d[1] + 3
			return [4]int{d[2] * row, 1, row, d[1]}
		}
		c.SrcStrides = gappy(c.srcDims())
		c.WeightsStrides = Dense(c.weightsDims(), [4]int{1, 2, 3, 0})
		c.DstStrides = gappy(c.dstDims())
	}
	// The default format depends on the layout: decided once the
	// strides are set.
	c.Format = format
	return c.normalized()
}

// convCases covers 1×1, 3×3 and the 7×7 stride-2 stem, strides,
// symmetric and asymmetric padding, dilation, groups, batches 1 and 64,
// and the three layouts.
func convCases() []convCase {
	one, two := [2]int{1, 1}, [2]int{2, 2}
	var cases []convCase
	for _, l := range []layout{layoutNCHW, layoutGoMLX, layoutGaps} {
		cases = append(cases,
			convCase{batch: 1, in: 3, h: 5, w: 6, out: 4, kh: 1, kw: 1, stride: one, dilation: one, groups: 1, layout: l},
			convCase{batch: 2, in: 8, h: 9, w: 9, out: 16, kh: 1, kw: 1, stride: two, dilation: one, groups: 1, layout: l},
			convCase{batch: 1, in: 4, h: 8, w: 7, out: 5, kh: 3, kw: 3, stride: one, padLow: one, padHigh: one, dilation: one, groups: 1, layout: l},
			convCase{batch: 3, in: 16, h: 10, w: 10, out: 32, kh: 3, kw: 3, stride: two, padLow: one, padHigh: one, dilation: one, groups: 1, layout: l},
			convCase{batch: 2, in: 6, h: 11, w: 9, out: 4, kh: 3, kw: 3, stride: [2]int{2, 1}, padLow: [2]int{1, 0}, padHigh: [2]int{0, 2}, dilation: one, groups: 1, layout: l},
			convCase{batch: 2, in: 5, h: 12, w: 12, out: 7, kh: 3, kw: 3, stride: one, padLow: two, padHigh: two, dilation: two, groups: 1, layout: l},
			convCase{batch: 2, in: 3, h: 32, w: 32, out: 8, kh: 7, kw: 7, stride: two, padLow: [2]int{3, 3}, padHigh: [2]int{3, 3}, dilation: one, groups: 1, layout: l},
			convCase{batch: 2, in: 8, h: 7, w: 7, out: 6, kh: 3, kw: 1, stride: one, padLow: [2]int{1, 0}, padHigh: [2]int{1, 0}, dilation: one, groups: 2, layout: l},
			convCase{batch: 64, in: 16, h: 7, w: 7, out: 16, kh: 3, kw: 3, stride: one, padLow: one, padHigh: one, dilation: one, groups: 1, layout: l},
			convCase{batch: 64, in: 1, h: 12, w: 12, out: 8, kh: 3, kw: 3, stride: one, dilation: one, groups: 1, layout: l},
		)
	}
	return cases
}

// sentinel fills the parts of an output slice its strides skip; they
// must come back unchanged.
const sentinel = float32(1234.5)

// covered marks the offsets a tensor of the given dimensions and strides
// occupies.
func covered(n int, d, strides [4]int) []bool {
	m := make([]bool, n)
	for a := range d[0] {
		for b := range d[1] {
			for c := range d[2] {
				for e := range d[3] {
					m[at([4]int{a, b, c, e}, strides)] = true
				}
			}
		}
	}
	return m
}

// compare checks got against the float64 reference within the
// worst-case float32 summation bound: any order of adding K terms errs by
// at most K·u·Σ|term| (u = 2⁻²⁴, Higham's γ_K), plus one rounding of the
// result. An indexing, padding or stride bug misplaces whole terms and
// breaks it by orders of magnitude on these sizes.
func compare(t *testing.T, what string, got []float32, want, abs []float64, terms int, mask []bool) {
	t.Helper()
	const u = 1.0 / (1 << 24)
	bad := 0
	for i := range got {
		if !mask[i] {
			if got[i] != sentinel {
				t.Errorf("%s: element %d outside the tensor was overwritten: %v", what, i, got[i])
				return
			}
			continue
		}
		bound := float64(terms)*u*abs[i] + u*math.Abs(want[i]) + 1e-30
		if diff := math.Abs(float64(got[i]) - want[i]); !(diff <= bound) {
			if bad < 3 {
				t.Errorf("%s[%d] = %v, want %v (diff %.3g > bound %.3g)", what, i, got[i], want[i], diff, bound)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements outside the bound", what, bad, len(got))
	}
}

// checkCase runs the three directions of one Conv and compares them with
// the reference.
func checkCase(t *testing.T, c Conv, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 38))
	src := randomFloats(rng, c.SrcLen())
	weights := randomFloats(rng, c.WeightsLen())
	diffDst := randomFloats(rng, c.DstLen())
	ref := referenceConv(c, src, weights, diffDst)
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = sentinel
		}
		return s
	}
	dst, diffSrc, diffWeights := fill(c.DstLen()), fill(c.SrcLen()), fill(c.WeightsLen())
	if err := Forward(c, src, weights, dst); err != nil {
		t.Fatal(err)
	}
	if err := BackwardData(c, diffDst, weights, diffSrc); err != nil {
		t.Fatal(err)
	}
	if err := BackwardWeights(c, src, diffDst, diffWeights); err != nil {
		t.Fatal(err)
	}
	compare(t, "Forward", dst, ref.dst, ref.dstAbs, ref.dstTerms, covered(len(dst), c.dstDims(), c.DstStrides))
	compare(t, "BackwardData", diffSrc, ref.diffSrc, ref.diffSrcAbs, ref.diffSrcTerms, covered(len(diffSrc), c.srcDims(), c.SrcStrides))
	compare(t, "BackwardWeights", diffWeights, ref.diffWeights, ref.diffWeightsAbs, ref.diffWTerms, covered(len(diffWeights), c.weightsDims(), c.WeightsStrides))
}

// TestConvMatchesReference runs every case in every format and with 1
// and 2 threads.
func TestConvMatchesReference(t *testing.T) {
	requireLibrary(t)
	for i, k := range convCases() {
		for _, format := range []Format{FormatPlain, FormatBlocked, FormatWeightsBlocked} {
			for _, threads := range []int{1, 2} {
				c := k.conv(threads, format)
				t.Run(fmt.Sprintf("%v_%v_t%d", k, format, threads), func(t *testing.T) {
					checkCase(t, c, uint64(i))
				})
			}
		}
	}
}
