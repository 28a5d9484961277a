package golower

import (
	"slices"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
)

// gatherRecorder records the largest Gather output (the patch matrix) that
// a lowering builds.
type gatherRecorder struct {
	compute.Function
	largest, count int
}

func (r *gatherRecorder) Gather(operand, startIndices compute.Value, indexVectorAxis int,
	offsetOutputAxes, collapsedSliceAxes, startIndexMap, sliceSizes []int, sorted bool) (compute.Value, error) {
	v, err := r.Function.Gather(operand, startIndices, indexVectorAxis, offsetOutputAxes, collapsedSliceAxes,
		startIndexMap, sliceSizes, sorted)
	if err != nil {
		return nil, err
	}
	shape, err := r.Function.Shape(v)
	if err != nil {
		return nil, err
	}
	r.largest = max(r.largest, int(shape.ByteSize()))
	r.count++
	return v, nil
}

// TestPatchMatrixStaysBounded builds (without running) the lowering of
// large convolutions and checks that no patch matrix passes MaxPatchBytes,
// where an untiled one would be many times larger.
func TestPatchMatrixStaysBounded(t *testing.T) {
	const bound = 1 << 20
	for _, tc := range []struct {
		name          string
		input, kernel []int
		stride        int
		untiledBytes  int
	}{
		{"one large image", []int{1, 200, 200, 8}, []int{7, 7, 8, 16}, 1, 194 * 194 * 49 * 8 * 4},
		{"large batch", []int{256, 32, 32, 16}, []int{3, 3, 16, 16}, 1, 256 * 30 * 30 * 9 * 16 * 4},
		{"strided", []int{2, 300, 300, 4}, []int{5, 5, 4, 8}, 2, 2 * 148 * 148 * 25 * 4 * 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			builder := gobackend.GetBackend().Builder(t.Name())
			rec := &gatherRecorder{Function: builder.Main()}
			x, err := rec.Parameter("x", shapes.Make(dtypes.Float32, tc.input...), nil)
			if err != nil {
				t.Fatal(err)
			}
			k, err := rec.Parameter("kernel", shapes.Make(dtypes.Float32, tc.kernel...), nil)
			if err != nil {
				t.Fatal(err)
			}
			c := nhwc(dtypes.Float32, 1, 1, 1, 1, 1, 1, 1) // for its axes
			_, err = Lowering{MaxPatchBytes: bound}.ConvGeneral(rec, x, k, c.Axes, []int{tc.stride, tc.stride},
				nil, nil, nil, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			if rec.largest > bound {
				t.Errorf("largest patch matrix is %d bytes, bound %d", rec.largest, bound)
			}
			if rec.count < tc.untiledBytes/bound {
				t.Errorf("%d tiles for an untiled patch matrix of %d bytes and a bound of %d", rec.count,
					tc.untiledBytes, bound)
			}
		})
	}
}

// TestRowRangeMatchesSlice: rowRange (one Gather) returns the very values
// of the Slice of the same rows, bit for bit, first, middle and last tiles.
func TestRowRangeMatchesSlice(t *testing.T) {
	const rows, cols = 10, 3
	data := make([]float32, rows*cols)
	for i := range data {
		data[i] = float32(i) * 1.5
	}
	for _, tile := range []shiftTile{{0, 4}, {4, 3}, {7, 3}, {0, rows}} {
		bld := gobackend.GetBackend().Builder(t.Name())
		f := bld.Main()
		x, err := f.Constant(data, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rowRange(f, x, tile, cols)
		if err != nil {
			t.Fatal(err)
		}
		shape, err := f.Shape(got)
		if err != nil || !slices.Equal(shape.Dimensions, []int{tile.size, cols}) {
			t.Fatalf("tile %v: shape %s (err %v), want [%d %d]", tile, shape, err, tile.size, cols)
		}
		if err := f.Return([]compute.Value{got}, nil); err != nil {
			t.Fatal(err)
		}
		exec, err := bld.Compile()
		if err != nil {
			t.Fatal(err)
		}
		outs, err := exec.Execute(nil, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		flat := make([]float32, tile.size*cols)
		if err := outs[0].ToFlatData(flat); err != nil {
			t.Fatal(err)
		}
		if want := data[tile.start*cols : (tile.start+tile.size)*cols]; !slices.Equal(flat, want) {
			t.Errorf("tile %v: %v, want %v", tile, flat, want)
		}
	}
}
