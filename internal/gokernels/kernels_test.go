package gokernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
)

// opCase is one op on one operand, built on a Go backend's function.
type opCase struct {
	name   string
	dims   []int
	build  func(fn compute.Function, x compute.Value) (compute.Value, error)
	kernel bool                // whether a kernel here takes it (else the backend's own executor does)
	values func(i int) float32 // the operand's values (nil: i + 0.5)
}

// runCase compiles c and runs it on a seeded operand with the kernels on
// or off, returning the output and how many nodes the kernels ran.
func runCase(t *testing.T, backend compute.Backend, c opCase, kernels bool) ([]float32, int64) {
	t.Helper()
	exec, err := compileOp(backend, c)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	defer exec.Finalize()
	values := make([]float32, shapes.Make(dtypes.Float32, c.dims...).Size())
	for i := range values {
		values[i] = float32(i) + 0.5
		if c.values != nil {
			values[i] = c.values(i)
		}
	}
	in, err := backend.BufferFromFlatData(0, values, shapes.Make(dtypes.Float32, c.dims...))
	if err != nil {
		t.Fatal(err)
	}
	return executeCounting(t, exec, []compute.Buffer{in}, kernels)
}

// executeCounting runs exec on inputs with the kernels on or off and
// returns its first output and how many nodes the kernels ran.
func executeCounting(t *testing.T, exec compute.Executable, inputs []compute.Buffer, kernels bool) ([]float32, int64) {
	t.Helper()
	was := SetEnabled(kernels)
	defer SetEnabled(was)
	before := ran.Load()
	outs, err := exec.Execute(inputs, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	count := ran.Load() - before
	shape, err := outs[0].Shape()
	if err != nil {
		t.Fatal(err)
	}
	flat := make([]float32, shape.Size())
	if err := outs[0].ToFlatData(flat); err != nil {
		t.Fatal(err)
	}
	return flat, count
}

// TestKernelsMatchBackend runs seeded random transposes, pads and slices
// with the kernels on and off: the outputs must be bitwise equal, and the
// kernels must run exactly the cases they claim (so that a case meant for
// a kernel cannot pass by falling back).
func TestKernelsMatchBackend(t *testing.T) {
	if err := Installed(); err != nil {
		t.Fatalf("kernels not installed: %v", err)
	}
	backend, err := gobackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Finalize()
	rng := rand.New(rand.NewPCG(38, 1))
	var cases []opCase
	for i := range 150 {
		cases = append(cases, transposeCase(rng, i), padCase(rng, i), sliceCase(rng, i), poolCase(rng, i))
	}
	kernelCases := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, _ := runCase(t, backend, c, false)
			got, count := runCase(t, backend, c, true)
			if wantCount := map[bool]int64{true: 1, false: 0}[c.kernel]; count != wantCount {
				t.Errorf("kernels ran %d nodes, want %d", count, wantCount)
			}
			if len(got) != len(want) {
				t.Fatalf("%d values, want %d", len(got), len(want))
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("value %d: %v, the backend's %v", i, got[i], want[i])
				}
			}
		})
		if c.kernel {
			kernelCases++
		}
	}
	if kernelCases < len(cases)/2 {
		t.Errorf("only %d of %d cases reached a kernel", kernelCases, len(cases))
	}
}

// randomDims draws rank dimensions in 1..max, some of them 1.
func randomDims(rng *rand.Rand, rank, max int) []int {
	dims := make([]int, rank)
	for i := range dims {
		dims[i] = 1 + rng.IntN(max)
		if rng.IntN(6) == 0 {
			dims[i] = 1
		}
	}
	return dims
}

// transposeCase draws a permutation of a rank-2…5 operand.
func transposeCase(rng *rand.Rand, i int) opCase {
	rank := 2 + rng.IntN(4)
	dims := randomDims(rng, rank, []int{0, 0, 70, 20, 9, 6}[rank])
	perm := rng.Perm(rank)
	if rng.IntN(2) == 0 { // the convolutions' moves, often
		perm = []int{0, 2, 1}
		if rank > 3 {
			perm = append([]int{0}, append(seq(2, rank), 1)...)
		}
		if rank == 2 {
			perm = []int{1, 0}
		}
	}
	_, _, _, kernel := swapOfLastTwo(dims, perm)
	return opCase{
		name:   fmt.Sprintf("%03d_transpose_%v_%v", i, dims, perm),
		dims:   dims,
		build:  func(fn compute.Function, x compute.Value) (compute.Value, error) { return fn.Transpose(x, perm...) },
		kernel: kernel,
	}
}

// seq returns from, from+1, …, to-1.
func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// padCase draws a Pad of a rank-1…4 operand, with a zero or another fill,
// and now and then interior padding or a crop (left to the backend).
func padCase(rng *rand.Rand, i int) opCase {
	rank := 1 + rng.IntN(4)
	dims := randomDims(rng, rank, []int{0, 50, 20, 9, 7}[rank])
	axes := make([]compute.PadAxis, rank)
	kernel := true
	for a := range axes {
		if rng.IntN(3) > 0 {
			axes[a] = compute.PadAxis{Start: rng.IntN(3), End: rng.IntN(3)}
		}
		switch rng.IntN(12) {
		case 0:
			axes[a].Interior = 1
			kernel = false
		case 1:
			axes[a].Start = -1
			if dims[a] < 2 {
				dims[a] = 2
			}
			kernel = false
		}
	}
	fill := float32(0)
	if rng.IntN(3) == 0 {
		fill = -1.25
	}
	return opCase{
		name: fmt.Sprintf("%03d_pad_%v_%v_fill%v", i, dims, axes, fill),
		dims: dims,
		build: func(fn compute.Function, x compute.Value) (compute.Value, error) {
			f, err := fn.Constant([]float32{fill})
			if err != nil {
				return nil, err
			}
			return fn.Pad(x, f, axes...)
		},
		kernel: kernel,
	}
}

// sliceCase draws a Slice of a rank-1…4 operand with strides 1 to 3.
func sliceCase(rng *rand.Rand, i int) opCase {
	rank := 1 + rng.IntN(4)
	dims := randomDims(rng, rank, []int{0, 60, 20, 9, 7}[rank])
	starts, limits, strides := make([]int, rank), make([]int, rank), make([]int, rank)
	for a, d := range dims {
		starts[a] = rng.IntN(d)
		limits[a] = starts[a] + 1 + rng.IntN(d-starts[a])
		strides[a] = 1
		if rng.IntN(4) == 0 {
			strides[a] = 1 + rng.IntN(3)
		}
		if rng.IntN(3) == 0 {
			starts[a], limits[a], strides[a] = 0, d, 1
		}
	}
	return opCase{
		name: fmt.Sprintf("%03d_slice_%v_%v_%v_%v", i, dims, starts, limits, strides),
		dims: dims,
		build: func(fn compute.Function, x compute.Value) (compute.Value, error) {
			return fn.Slice(x, slices.Clone(starts), slices.Clone(limits), slices.Clone(strides))
		},
		kernel: true,
	}
}

// poolCase draws a max or min pooling of a rank-2…4 operand, or its
// gradient (SelectAndScatter), over values with ties, signed zeros,
// infinities and NaNs; mostly channels-last with rows of 16, 32 or 48
// values (the kernels' case), now and then with overlapping or padded
// windows or shorter rows (left to the backend).
func poolCase(rng *rand.Rand, i int) opCase {
	rank := 2 + rng.IntN(3)
	dims := randomDims(rng, rank, []int{0, 0, 12, 9, 7}[rank])
	if rng.IntN(4) > 0 { // channels last, rows of a multiple of 16 values, as the kernels take
		dims[rank-1] = 16 * (1 + rng.IntN(3))
	}
	window, strides := make([]int, rank), make([]int, rank)
	var paddings [][2]int
	kernel := true
	for a, d := range dims {
		window[a] = 1
		if rng.IntN(2) == 0 && (a < rank-1 || d < 16) {
			window[a] = 1 + rng.IntN(min(d, 3))
		}
		strides[a] = window[a]
		if rng.IntN(15) == 0 && window[a] > 1 {
			strides[a], kernel = 1, false
		}
	}
	if rng.IntN(15) == 0 {
		paddings = make([][2]int, rank)
		paddings[0] = [2]int{1, 0}
		kernel = false
	}
	if w, ok := poolWindows(dims, window, strides, paddings, nil, nil); !ok || !w.vectorRows() {
		kernel = false
	}
	pooledDims := make([]int, rank)
	for a, d := range dims {
		pad := 0
		if paddings != nil {
			pad = paddings[a][0] + paddings[a][1]
		}
		pooledDims[a] = (d+pad-window[a])/strides[a] + 1
	}
	special := []float32{-1, 0, float32(math.Copysign(0, -1)), 1, 2, float32(math.NaN()), float32(math.Inf(-1)),
		float32(math.Inf(1)), -math.MaxFloat32}
	seed := rng.Uint64()
	values := func(i int) float32 {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		if r.IntN(3) == 0 {
			return special[r.IntN(len(special))]
		}
		return float32(r.IntN(5)) - 2
	}
	op := []string{"max", "min", "scattermax", "scattermin"}[rng.IntN(4)]
	return opCase{
		name:   fmt.Sprintf("%03d_pool_%s_%v_window%v_strides%v_pad%v", i, op, dims, window, strides, paddings),
		dims:   dims,
		values: values,
		kernel: kernel,
		build: func(fn compute.Function, x compute.Value) (compute.Value, error) {
			switch op {
			case "max":
				return fn.ReduceWindow(x, compute.ReduceOpMax, window, strides, nil, nil, paddings)
			case "min":
				return fn.ReduceWindow(x, compute.ReduceOpMin, window, strides, nil, nil, paddings)
			}
			n := 1
			for _, d := range pooledDims {
				n *= d
			}
			src := make([]float32, n)
			for j := range src {
				src[j] = values(j+7919) + float32(j%3)
			}
			source, err := fn.Constant(src, pooledDims...)
			if err != nil {
				return nil, err
			}
			if op == "scattermax" {
				return fn.SelectAndScatterMax(x, source, window, strides, paddings)
			}
			return fn.SelectAndScatterMin(x, source, window, strides, paddings)
		},
	}
}
