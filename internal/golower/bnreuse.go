package golower

import "github.com/gomlx/compute"

// BatchNormGradient from the forward's intermediate values.
//
// GoMLX's gradient of BatchNormForTraining is BatchNormGradient of the
// same operand with the forward's own mean and variance outputs (see
// batchNormForTrainingVJP in gomlx/core/graph), and its first step,
// x - mean, is an elementwise pass over the operand that the forward has
// already made. So the wrapper keeps, per function, the centered operand
// and the inverse standard deviation of each lowered BatchNormForTraining
// under its operand, mean, variance, epsilon and feature axis, and a
// BatchNormGradient with all five equal uses them (batchNormGradient):
// one pass fewer, with batchNormGradient's rewriting (no x̂) two fewer
// than before, of the seven elementwise passes (and two reductions) of a
// float32 gradient. The price is memory: the centered operand lives until
// the backward pass. Lowering.NoBatchNormReuse turns both off.

// bnKey names one BatchNormForTraining's statistics on a function.
type bnKey struct {
	operand, mean, variance compute.Value
	epsilon                 float32
	featureAxis             int
}

// bnSaved is what batchNormForTraining hands to batchNormGradient.
type bnSaved struct {
	centered compute.Value // x - mean, in the operand's shape
	invStd   compute.Value // rsqrt(variance + epsilon), per feature
}

// bnCache holds the saved values of the batch normalizations lowered on
// one function, used only from the goroutine building it.
type bnCache map[bnKey]*bnSaved

// normalizeAxis returns a feature axis counted from the front, as
// newBNOps does (out-of-range axes are left for it to report).
func normalizeAxis(f compute.Function, operand compute.Value, axis int) int {
	if axis >= 0 {
		return axis
	}
	shape, err := f.Shape(operand)
	if err != nil {
		return axis
	}
	return axis + shape.Rank()
}
