package golower

import (
	"slices"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
)

// recycleGraph compiles, on b, x [32, 64] → (x+x, x·x, -x[0:1]): two outputs
// big enough for recycle slots and one too small for one.
func recycleGraph(t *testing.T, b *Backend) compute.Executable {
	t.Helper()
	bld := b.Builder("recycle")
	main := bld.Main()
	x, err := main.Parameter("x", shapes.Make(dtypes.Float32, 32, 64), nil)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := main.Add(x, x)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := main.Mul(x, x)
	if err != nil {
		t.Fatal(err)
	}
	first, err := main.Slice(x, []int{0, 0}, []int{1, 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	neg, err := main.Neg(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := main.Return([]compute.Value{sum, prod, neg}, nil); err != nil {
		t.Fatal(err)
	}
	exec, err := bld.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

// flatOf returns buf's values.
func flatOf(t *testing.T, buf compute.Buffer) []float32 {
	t.Helper()
	s, err := buf.Shape()
	if err != nil {
		t.Fatal(err)
	}
	flat := make([]float32, s.Size())
	if err := buf.ToFlatData(flat); err != nil {
		t.Fatal(err)
	}
	return flat
}

// TestRecycle: a graph's recycle slots are hidden from Inputs; an output
// given to Recycle goes back to the pool through the next execution
// (Recycled), every execution's outputs hold their own values, and an
// output kept across executions is not overwritten. With NoRecycle the
// graph has no slots and Recycle finalizes.
func TestRecycle(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lowering Lowering
		recycled int64
	}{{"recycle", Lowering{}, 7}, {"NoRecycle", Lowering{NoRecycle: true}, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			inner, err := compute.NewWithConfig("go")
			if err != nil {
				t.Fatal(err)
			}
			b := WrapWith(inner, DefaultRules(), tc.lowering).(*Backend)
			exec := recycleGraph(t, b)
			names, inputShapes := exec.Inputs()
			if len(names) != 1 || len(inputShapes) != 1 || names[0] != "x" {
				t.Fatalf("Inputs() = %v %v, want the graph's one parameter x", names, inputShapes)
			}
			var kept compute.Buffer
			var keptWant []float32
			for step := range 5 {
				x := make([]float32, 32*64)
				for i := range x {
					x[i] = float32(step*7 + i%13)
				}
				in, err := b.BufferFromFlatData(0, x, shapes.Make(dtypes.Float32, 32, 64))
				if err != nil {
					t.Fatal(err)
				}
				outs, err := exec.Execute([]compute.Buffer{in}, nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				sum, prod, neg := flatOf(t, outs[0]), flatOf(t, outs[1]), flatOf(t, outs[2])
				for i, v := range x {
					if sum[i] != v+v || prod[i] != v*v || (i < 64 && neg[i] != -v) {
						t.Fatalf("step %d: outputs at %d are %g %g, want %g %g", step, i, sum[i], prod[i], v+v, v*v)
					}
				}
				if kept != nil && !slices.Equal(flatOf(t, kept), keptWant) {
					t.Fatalf("step %d: the output kept from step 0 changed", step)
				}
				if step == 0 {
					kept, keptWant = outs[1], prod
				} else if err := b.Recycle(outs[1]); err != nil {
					t.Fatal(err)
				}
				for _, out := range []compute.Buffer{outs[0], outs[2]} {
					if err := b.Recycle(out); err != nil {
						t.Fatal(err)
					}
				}
				if err := in.Finalize(); err != nil {
					t.Fatal(err)
				}
			}
			// Both outputs of [32, 64] have a slot; step 0 recycles one,
			// the later steps two, each taken by the next execution.
			if got := b.Recycled(); got != tc.recycled {
				t.Errorf("Recycled() = %d, want %d", got, tc.recycled)
			}
		})
	}
}
