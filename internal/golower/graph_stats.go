package golower

import (
	"slices"
	"sync/atomic"

	"github.com/gomlx/compute"
)

// GraphStats is what the wrapper counted while one graph was built: enough
// for a scheduler to choose how the backend runs the graph (volt's is
// engine's ops_by_graph.go, which runs a graph's independent ops side by
// side only when that pays).
type GraphStats struct {
	// HasConvolution is set when the graph has a ConvGeneral, lowered or
	// left to the backend.
	HasConvolution bool
	// Matmuls counts the graph's matrix products (DotGeneral, FusedDense
	// and each of FusedDenseVJP's two), MatmulMACs their multiply-adds.
	Matmuls, MatmulMACs int64
}

// RunCounter chooses, when a graph is compiled, a counter that each run of
// its executable raises by one while it is in flight, or nil for none.
type RunCounter func(GraphStats) *atomic.Int32

// SetRunCounter makes every graph compiled on b from now on consult
// choose (nil: raise nothing, the default). engine uses it to raise the Go
// backend's own count of executions in flight, so that the backend runs
// the graph one op at a time.
func (b *Backend) SetRunCounter(choose RunCounter) {
	if choose == nil {
		b.runCounter.Store(nil)
		return
	}
	b.runCounter.Store(&choose)
}

// stats returns what bld counted so far.
func (bld *builder) stats() GraphStats {
	return GraphStats{
		HasConvolution: bld.hasConvolution.Load(),
		Matmuls:        bld.matmuls.Load(),
		MatmulMACs:     bld.matmulMACs.Load(),
	}
}

// runCounterFor returns the counter an executable of bld raises while it
// runs, or nil: what the backend's RunCounter chooses for its stats.
func (bld *builder) runCounterFor() *atomic.Int32 {
	choose := bld.backend.runCounter.Load()
	if choose == nil {
		return nil
	}
	return (*choose)(bld.stats())
}

// countDotGeneral counts a DotGeneral of lhs by rhs: lhs's size times the
// rhs axes that are neither contracted nor batch axes multiply-adds.
func (f *function) countDotGeneral(lhs, rhs compute.Value, rhsContractingAxes, rhsBatchAxes []int) {
	lhsShape, err := f.Function.Shape(lhs)
	if err != nil {
		return
	}
	rhsShape, err := f.Function.Shape(rhs)
	if err != nil {
		return
	}
	macs := int64(lhsShape.Size())
	for axis, dim := range rhsShape.Dimensions {
		if !slices.Contains(rhsContractingAxes, axis) && !slices.Contains(rhsBatchAxes, axis) {
			macs *= int64(dim)
		}
	}
	f.builder.matmuls.Add(1)
	f.builder.matmulMACs.Add(macs)
}

// countDense counts products matrix products of x [batch..., in] by weight
// (in·out values): x's size times out multiply-adds each.
func (f *function) countDense(x, weight compute.Value, products int64) {
	xShape, err := f.Function.Shape(x)
	if err != nil || xShape.Rank() == 0 {
		return
	}
	wShape, err := f.Function.Shape(weight)
	if err != nil {
		return
	}
	in := xShape.Dimensions[xShape.Rank()-1]
	if in == 0 {
		return
	}
	f.builder.matmuls.Add(products)
	f.builder.matmulMACs.Add(products * int64(xShape.Size()) * int64(wShape.Size()/in))
}
