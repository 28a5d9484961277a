package golower

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
)

// opCounter wraps a backend function and counts the data-moving ops
// built on it (Reshape, Transpose, Pad), for tests that a lowering does not
// emit copies it need not: the Go backend copies a Reshape of a value that
// has other users, and every Transpose and Pad.
type opCounter struct {
	compute.Function
	reshapes, transposes, pads int
}

// Reshape implements compute.Function.
func (c *opCounter) Reshape(x compute.Value, dims ...int) (compute.Value, error) {
	c.reshapes++
	return c.Function.Reshape(x, dims...)
}

// Transpose implements compute.Function.
func (c *opCounter) Transpose(x compute.Value, perm ...int) (compute.Value, error) {
	c.transposes++
	return c.Function.Transpose(x, perm...)
}

// Pad implements compute.Function.
func (c *opCounter) Pad(x, fill compute.Value, axes ...compute.PadAxis) (compute.Value, error) {
	c.pads++
	return c.Function.Pad(x, fill, axes...)
}

// newOpCounter returns a counter around the main function of a new
// builder of the Go backend, and a float32 parameter of dims on it.
func newOpCounter(t *testing.T, dims ...int) (*opCounter, compute.Value) {
	t.Helper()
	f := &opCounter{Function: gobackend.GetBackend().Builder(t.Name()).Main()}
	x, err := f.Parameter("x", shapes.Make(dtypes.Float32, dims...), nil)
	if err != nil {
		t.Fatal(err)
	}
	return f, x
}

// TestBatchNormNoIdentityReshape: the lowered batch normalization of an
// operand whose axes stagedSum need not split ([64, 28, 28, 16], as
// examples/resnet's) emits no Reshape of the operand to its own shape,
// which the Go backend would copy (the centering Sub also reads it); one
// with a longer axis ([4, 100, 16]: 100 is split into 10×10) still does, once per sum.
func TestBatchNormNoIdentityReshape(t *testing.T) {
	for _, c := range []struct {
		dims []int
		want int // Reshapes of the operand's size
	}{
		{[]int{64, 28, 28, 16}, 0},
		{[]int{4, 100, 16}, 2},
	} {
		f, x := newOpCounter(t, c.dims...)
		features := c.dims[len(c.dims)-1]
		scale, err := f.Constant(make([]float32, features), features)
		if err != nil {
			t.Fatal(err)
		}
		counted := &reshapeSizes{opCounter: f, size: prod(c.dims)}
		if _, _, _, err := LowerBatchNormForTraining(counted, x, scale, scale, 1e-5, -1); err != nil {
			t.Fatal(err)
		}
		if counted.count != c.want {
			t.Errorf("%v: %d Reshapes of the whole operand, want %d", c.dims, counted.count, c.want)
		}
	}
}

// reshapeSizes counts the Reshapes whose result has size elements.
type reshapeSizes struct {
	*opCounter
	size, count int
}

// Reshape implements compute.Function.
func (r *reshapeSizes) Reshape(x compute.Value, dims ...int) (compute.Value, error) {
	if prod(dims) == r.size {
		r.count++
	}
	return r.opCounter.Reshape(x, dims...)
}

// countingBackend is a backend whose main functions are opCounters.
type countingBackend struct {
	compute.Backend
	counters []*opCounter
}

// Builder implements compute.Backend.
func (b *countingBackend) Builder(name string) compute.Builder {
	return &countingBuilder{Builder: b.Backend.Builder(name), backend: b}
}

// countingBuilder returns its main function wrapped by an opCounter.
type countingBuilder struct {
	compute.Builder
	backend *countingBackend
	main    *opCounter
}

// Main implements compute.Builder.
func (b *countingBuilder) Main() compute.Function {
	if b.main == nil {
		b.main = &opCounter{Function: b.Builder.Main()}
		b.backend.counters = append(b.backend.counters, b.main)
	}
	return b.main
}

// TestGradientRowsShareThePad: a channels-last "same" convolution with 16
// channels and its input and kernel gradients pad two values, not three:
// the input gradient's padded output gradient is the kernel gradient's
// too (gradientRows in shift.go); and the values match the direct
// convolution.
func TestGradientRowsShareThePad(t *testing.T) {
	counting := &countingBackend{Backend: gobackend.GetBackend()}
	lowered := WrapWith(counting, Rules{}, Lowering{MaxShiftWaste: 1e9, ChannelsLastShifts: true})
	c := shiftCase{batch: 2, inChannels: 16, outChannels: 16, size: []int{6, 6}, kernel: []int{3, 3},
		dilation: []int{1, 1}, paddings: [][2]int{{1, 1}, {1, 1}}}
	rng := rand.New(rand.NewPCG(4, 5))
	inDims, kDims := c.shapes()
	x, kernel, cotangent := randomTensor(rng, inDims), randomTensor(rng, kDims), randomTensor(rng, []int{2, 6, 6, 16})
	want := outputsAndGradients(t, gobackend.GetBackend(), c, x, kernel, cotangent)
	got := outputsAndGradients(t, lowered, c, x, kernel, cotangent)
	compareFlat(t, []string{"output", "d/dinput", "d/dkernel"}, got, want)
	pads := 0
	for _, counter := range counting.counters {
		pads += counter.pads
	}
	// The forward's input, and the output gradient once.
	if pads != 2 {
		t.Errorf("%d Pads, want 2 (the input, and the output gradient once for both gradients)", pads)
	}
}
