package golower

import (
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
