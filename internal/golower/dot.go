package golower

import (
	"slices"

	"github.com/gomlx/compute"
)

// The Go backend's matmul takes lhs as [batch…, cross…, contracting…] and
// rhs as [batch…, contracting…, cross…] or [batch…, cross…, contracting…].
// Any other DotGeneral gets both operands transposed to the second form,
// even when one of them was already in the first or needs only a cheap
// move (attention's value [b, k, h, d] becomes [b, h, d, k] element by
// element where [b, h, k, d] is a run copy). planDot instead picks, over
// the order of the contracting pairs, the rhs form and whether to swap
// the operands (then transposing the product), the plan whose transposes
// planTranspose costs least, and emits those transposes itself, so the
// backend's DotGeneral receives operands it takes as they are.

// dotSide is one operand's target axis order.
type dotSide struct {
	perm []int // the operand's axes in the order the matmul reads them
	plan transposePlan
}

// dotPlan is a way to emit a DotGeneral.
type dotPlan struct {
	swap     bool // the product is computed as rhs·lhs and transposed
	lhs, rhs dotSide
	// numBatch and numContracting of the DotGeneral emitted; the lhs and
	// rhs contracting and batch axes follow from the permutations.
	numBatch, numContracting int
	rhsContractingFirst      bool // rhs is [batch, contracting, cross]
	out                      []int
	outPlan                  transposePlan // of the swapped product, if swap
	cost                     float64
}

// crossAxes returns the axes of a rank-rank operand that are neither
// batch nor contracting, in order.
func crossAxes(rank int, contracting, batch []int) []int {
	var cross []int
	for axis := range rank {
		if !slices.Contains(contracting, axis) && !slices.Contains(batch, axis) {
			cross = append(cross, axis)
		}
	}
	return cross
}

// planDot returns the cheapest plan for DotGeneral of lhs (dims) and rhs
// with the given axes.
func planDot(lhsDims, lc, lb, rhsDims, rc, rb []int) dotPlan {
	lcross := crossAxes(len(lhsDims), lc, lb)
	rcross := crossAxes(len(rhsDims), rc, rb)
	var best dotPlan
	best.cost = -1
	concat := func(parts ...[]int) []int {
		var out []int
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	consider := func(p dotPlan) {
		if best.cost < 0 || p.cost < best.cost {
			best = p
		}
	}
	side := func(dims, perm []int) dotSide {
		return dotSide{perm: perm, plan: planTranspose(dims, perm)}
	}
	k := len(lc)
	for order := range permutations(k) {
		olc, orc := make([]int, k), make([]int, k)
		for i, j := range order {
			olc[i], orc[i] = lc[j], rc[j]
		}
		for _, contractingFirst := range []bool{false, true} {
			// Not swapped: lhs [b, lcross, c]; rhs [b, c, rcross] or [b, rcross, c].
			l := side(lhsDims, concat(lb, lcross, olc))
			rperm := concat(rb, rcross, orc)
			if contractingFirst {
				rperm = concat(rb, orc, rcross)
			}
			r := side(rhsDims, rperm)
			consider(dotPlan{lhs: l, rhs: r, numBatch: len(lb), numContracting: k, rhsContractingFirst: contractingFirst,
				cost: l.plan.cost + r.plan.cost})

			// Swapped: rhs·lhs gives [b, rcross, lcross], transposed to [b, lcross, rcross].
			sl := side(rhsDims, concat(rb, rcross, orc))
			sperm := concat(lb, lcross, olc)
			if contractingFirst {
				sperm = concat(lb, olc, lcross)
			}
			sr := side(lhsDims, sperm)
			nb, nr, nl := len(lb), len(rcross), len(lcross)
			prodDims := make([]int, 0, nb+nr+nl)
			for _, a := range lb {
				prodDims = append(prodDims, lhsDims[a])
			}
			for _, a := range rcross {
				prodDims = append(prodDims, rhsDims[a])
			}
			for _, a := range lcross {
				prodDims = append(prodDims, lhsDims[a])
			}
			out := make([]int, 0, nb+nr+nl)
			for i := range nb {
				out = append(out, i)
			}
			for i := range nl {
				out = append(out, nb+nr+i)
			}
			for i := range nr {
				out = append(out, nb+i)
			}
			outPlan := planTranspose(prodDims, out)
			consider(dotPlan{swap: true, lhs: sl, rhs: sr, numBatch: nb, numContracting: k,
				rhsContractingFirst: contractingFirst, out: out, outPlan: outPlan,
				cost: sl.plan.cost + sr.plan.cost + outPlan.cost})
		}
	}
	return best
}

// backendDotCost is what the backend's DotGeneral would spend on
// transposes for these axes: none when its matmul takes the layout,
// else both operands to [batch, cross, contracting].
func backendDotCost(lhsDims, lc, lb, rhsDims, rc, rb []int) float64 {
	if dotLayoutSupported(len(lhsDims), lc, lb, len(rhsDims), rc, rb) {
		return 0
	}
	lperm := append(append(slices.Clone(lb), crossAxes(len(lhsDims), lc, lb)...), lc...)
	rperm := append(append(slices.Clone(rb), crossAxes(len(rhsDims), rc, rb)...), rc...)
	return backendTransposeCost(lhsDims, lperm) + backendTransposeCost(rhsDims, rperm)
}

// dotLayoutSupported mirrors the backend's test (dot.LayoutForDotGeneral):
// batch axes leading and in order on both sides, lhs contracting axes
// trailing in order, rhs contracting axes right after the batch axes or
// trailing, in order.
func dotLayoutSupported(lhsRank int, lc, lb []int, rhsRank int, rc, rb []int) bool {
	k, nb := len(lc), len(lb)
	if k == 0 || len(rc) != k || len(rb) != nb {
		return false
	}
	for i := range nb {
		if lb[i] != i || rb[i] != i {
			return false
		}
	}
	first, last := true, true
	for i := range k {
		if lc[i] != lhsRank-k+i {
			return false
		}
		first = first && rc[i] == nb+i
		last = last && rc[i] == rhsRank-k+i
	}
	return first || last
}

// dotGeneral emits DotGeneral on f by planDot when that costs less than
// the backend's own transposes (and DotLayouts are on).
func (l Lowering) dotGeneral(f compute.Function, lhs compute.Value, lc, lb []int, rhs compute.Value, rc, rb []int,
	config compute.DotGeneralConfig) (compute.Value, error) {
	inner := func() (compute.Value, error) { return f.DotGeneral(lhs, lc, lb, rhs, rc, rb, config) }
	if l.NoDotLayouts {
		return inner()
	}
	ls, err := f.Shape(lhs)
	if err != nil {
		return nil, err
	}
	rs, err := f.Shape(rhs)
	if err != nil {
		return nil, err
	}
	if ls.IsDynamic() || rs.IsDynamic() || !validDotAxes(ls.Rank(), lc, lb) || !validDotAxes(rs.Rank(), rc, rb) ||
		len(lc) != len(rc) || len(lb) != len(rb) || len(lc) == 0 || len(lc) > 4 {
		return inner() // the backend reports bad axes; no contraction: outer products stay its own
	}
	plan := planDot(ls.Dimensions, lc, lb, rs.Dimensions, rc, rb)
	if plan.cost >= backendDotCost(ls.Dimensions, lc, lb, rs.Dimensions, rc, rb) {
		return inner()
	}
	a, aDims, b, bDims := lhs, ls.Dimensions, rhs, rs.Dimensions
	if plan.swap {
		a, aDims, b, bDims = rhs, rs.Dimensions, lhs, ls.Dimensions
	}
	if a, err = emitTranspose(f, a, aDims, plan.lhs.perm, plan.lhs.plan); err != nil {
		return nil, err
	}
	if b, err = emitTranspose(f, b, bDims, plan.rhs.perm, plan.rhs.plan); err != nil {
		return nil, err
	}
	nb, k := plan.numBatch, plan.numContracting
	rankA, rankB := len(aDims), len(bDims)
	batch := make([]int, nb)
	for i := range batch {
		batch[i] = i
	}
	ac, bc := make([]int, k), make([]int, k)
	for i := range k {
		ac[i] = rankA - k + i
		bc[i] = rankB - k + i
		if plan.rhsContractingFirst {
			bc[i] = nb + i
		}
	}
	y, err := f.DotGeneral(a, ac, batch, b, bc, batch, config)
	if err != nil || !plan.swap {
		return y, err
	}
	ys, err := f.Shape(y)
	if err != nil {
		return nil, err
	}
	return emitTranspose(f, y, ys.Dimensions, plan.out, plan.outPlan)
}

// validDotAxes reports whether contracting and batch axes are distinct
// axes of a rank-rank operand.
func validDotAxes(rank int, contracting, batch []int) bool {
	seen := make([]bool, rank)
	for _, axis := range slices.Concat(contracting, batch) {
		if axis < 0 || axis >= rank || seen[axis] {
			return false
		}
		seen[axis] = true
	}
	return true
}

// DotGeneral implements compute.Function: operands are brought to a
// layout the backend's matmul takes by the cheapest transposes (planDot).
func (f *function) DotGeneral(lhs compute.Value, lhsContractingAxes, lhsBatchAxes []int, rhs compute.Value,
	rhsContractingAxes, rhsBatchAxes []int, config compute.DotGeneralConfig) (compute.Value, error) {
	f.countDotGeneral(lhs, rhs, rhsContractingAxes, rhsBatchAxes)
	return f.builder.backend.lowering.dotGeneral(f.Function, lhs, lhsContractingAxes, lhsBatchAxes, rhs,
		rhsContractingAxes, rhsBatchAxes, config)
}
