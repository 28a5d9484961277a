package gokernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"

	"github.com/voltml/volt/internal/onednn/onednntest"
)

// TestConvGeneralMatchesBackend runs seeded random float32 ConvGeneral
// ops (NCHW or NHWC, strides, kernel and input dilations, paddings with
// crops) with the kernels on and off, and compares the outputs within
// float32 rounding of the backend's own convolution; the kernels must
// take exactly the ones planConv maps and RunsConv accepts.
func TestConvGeneralMatchesBackend(t *testing.T) {
	onednntest.Require(t)
	backend, err := gobackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Finalize()
	rng := rand.New(rand.NewPCG(38, 2))
	taken := 0
	const cases = 120
	for i := range cases {
		c := randomConv(rng)
		t.Run(fmt.Sprintf("%03d_%s", i, c), func(t *testing.T) {
			in := shapes.Make(dtypes.Float32, c.inDims...)
			k := shapes.Make(dtypes.Float32, c.kDims...)
			runs := RunsConv(in, k, c.axes, c.strides, c.paddings, c.inDil, c.kDil, 1, 1)
			want, _ := runConv(t, backend, c, false)
			got, count := runConv(t, backend, c, true)
			if (count == 1) != runs {
				t.Errorf("the kernel ran %d times; RunsConv said %v", count, runs)
			}
			if runs {
				taken++
			}
			scale := 1.0
			for _, w := range want {
				scale = max(scale, math.Abs(float64(w)))
			}
			for j := range want {
				if d := math.Abs(float64(got[j] - want[j])); d > 1e-5*scale {
					t.Fatalf("value %d: %v, the backend's %v", j, got[j], want[j])
				}
			}
		})
	}
	if taken < cases/2 {
		t.Errorf("only %d of %d convolutions ran on oneDNN", taken, cases)
	}
}

// convArgs is one random ConvGeneral.
type convArgs struct {
	inDims, kDims        []int
	axes                 compute.ConvolveAxesConfig
	strides, inDil, kDil []int
	paddings             [][2]int
}

func (c convArgs) String() string {
	return fmt.Sprintf("in%v_k%v_s%v_id%v_kd%v_p%v", c.inDims, c.kDims, c.strides, c.inDil, c.kDil, c.paddings)
}

// randomConv draws a 2-D convolution: layout, sizes, strides (or input
// dilations), kernel dilations and paddings whose high side may crop.
func randomConv(rng *rand.Rand) convArgs {
	n, ci, co := 1+rng.IntN(20), 1+rng.IntN(6), 1+rng.IntN(6)
	var c convArgs
	c.strides, c.inDil, c.kDil = []int{1, 1}, []int{1, 1}, []int{1, 1}
	var sp, ksp [2]int
	for i := range 2 {
		ksp[i] = 1 + rng.IntN(4)
		sp[i] = ksp[i] + rng.IntN(10)
		switch rng.IntN(4) {
		case 0:
			c.strides[i] = 2 + rng.IntN(2)
		case 1:
			c.inDil[i] = 2
		case 2:
			c.kDil[i] = 2
			sp[i] += ksp[i]
		}
		low, high := rng.IntN(3), rng.IntN(3)
		if rng.IntN(4) == 0 {
			high = -1
		}
		c.paddings = append(c.paddings, [2]int{low, high})
	}
	if rng.IntN(2) == 0 { // NCHW, OIHW
		c.inDims, c.kDims = []int{n, ci, sp[0], sp[1]}, []int{co, ci, ksp[0], ksp[1]}
		c.axes = compute.ConvolveAxesConfig{InputBatch: 0, InputChannels: 1, InputSpatial: []int{2, 3},
			KernelOutputChannels: 0, KernelInputChannels: 1, KernelSpatial: []int{2, 3},
			OutputBatch: 0, OutputChannels: 1, OutputSpatial: []int{2, 3}}
	} else { // NHWC, HWIO
		c.inDims, c.kDims = []int{n, sp[0], sp[1], ci}, []int{ksp[0], ksp[1], ci, co}
		c.axes = compute.ConvolveAxesConfig{InputBatch: 0, InputChannels: 3, InputSpatial: []int{1, 2},
			KernelInputChannels: 2, KernelOutputChannels: 3, KernelSpatial: []int{0, 1},
			OutputBatch: 0, OutputChannels: 3, OutputSpatial: []int{1, 2}}
	}
	return c
}

// runConv runs c on seeded operands with the kernels on or off and
// returns the output and how many nodes the kernels ran.
func runConv(t *testing.T, backend compute.Backend, c convArgs, kernels bool) ([]float32, int64) {
	t.Helper()
	bld := backend.Builder("conv")
	fn := bld.Main()
	x, err := fn.Parameter("x", shapes.Make(dtypes.Float32, c.inDims...), nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := fn.Parameter("k", shapes.Make(dtypes.Float32, c.kDims...), nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := fn.ConvGeneral(x, k, c.axes, c.strides, c.paddings, c.inDil, c.kDil, 1, 1)
	if err != nil {
		t.Skipf("not a valid convolution: %v", err)
	}
	if err := fn.Return([]compute.Value{y}, nil); err != nil {
		t.Fatal(err)
	}
	exec, err := bld.Compile()
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	rng := rand.New(rand.NewPCG(1, 2))
	var inputs []compute.Buffer
	for _, dims := range [][]int{c.inDims, c.kDims} {
		shape := shapes.Make(dtypes.Float32, dims...)
		values := make([]float32, shape.Size())
		for i := range values {
			values[i] = 2*rng.Float32() - 1
		}
		buf, err := backend.BufferFromFlatData(0, values, shape)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, buf)
	}
	return executeCounting(t, exec, inputs, kernels)
}
