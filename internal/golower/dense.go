package golower

import (
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
)

// The Go backend's FusedDenseVJP (the gradient of layers.Dense) computes
// the weight gradient xᵀ·dy after transposing x with an untiled loop into a
// freshly allocated slice, and the bias gradient with a column-strided
// loop. lowerDenseVJP emits the same three results as DotGenerals (through
// planDot, which transposes whichever of x and dy is cheaper) and a
// leading-axes ReduceSum, which the backend runs with its SIMD kernels.

// lowerDenseVJP returns dx, dWeight and dBias (nil without bias) of
// FusedDense(x, weight, bias) for the incoming gradient dOutput, or
// ok=false when it does not apply (an activation, a dtype other than
// float32/float64, dynamic shapes).
func (l Lowering) lowerDenseVJP(f compute.Function, x, weight, bias, dOutput compute.Value,
	options compute.DenseConfig) (dx, dWeight, dBias compute.Value, ok bool, err error) {
	if l.NoDenseVJP || options.Activation.Type != compute.ActivationNone {
		return nil, nil, nil, false, nil
	}
	xs, err := f.Shape(x)
	if err != nil {
		return nil, nil, nil, false, err
	}
	ws, err := f.Shape(weight)
	if err != nil {
		return nil, nil, nil, false, err
	}
	ds, err := f.Shape(dOutput)
	if err != nil {
		return nil, nil, nil, false, err
	}
	if xs.IsDynamic() || ws.IsDynamic() || ds.IsDynamic() || xs.Rank() < 2 || ws.Rank() < 2 ||
		(xs.DType != dtypes.Float32 && xs.DType != dtypes.Float64) || ds.DType != xs.DType || ws.DType != xs.DType {
		return nil, nil, nil, false, nil
	}
	// weight is [in, out…] (DenseLayoutInputOutputs) or [out…, in]; dOutput
	// is [batch…, out…] with x [batch…, in] (rank ≥ 2).
	numBatch := xs.Rank() - 1
	numOut := ws.Rank() - 1
	if ds.Rank() != numBatch+numOut {
		return nil, nil, nil, false, nil
	}
	batchAxes := make([]int, numBatch)
	for i := range batchAxes {
		batchAxes[i] = i
	}
	outAxes := make([]int, numOut) // of dOutput
	for i := range outAxes {
		outAxes[i] = numBatch + i
	}
	var wOut []int // the out axes of weight
	switch options.WeightLayout {
	case compute.DenseLayoutInputOutputs:
		for i := range numOut {
			wOut = append(wOut, 1+i)
		}
	case compute.DenseLayoutOutputsInput:
		for i := range numOut {
			wOut = append(wOut, i)
		}
	default:
		return nil, nil, nil, false, nil
	}
	// dx [batch…, in] = Σ_out dOutput[batch…, out…] · weight[in, out…].
	if dx, err = l.dotGeneral(f, dOutput, outAxes, nil, weight, wOut, nil, compute.DotGeneralConfig{}); err != nil {
		return nil, nil, nil, false, err
	}
	// dWeight = Σ_batch x[batch…, in] · dOutput[batch…, out…], in weight's layout.
	if options.WeightLayout == compute.DenseLayoutInputOutputs {
		dWeight, err = l.dotGeneral(f, x, batchAxes, nil, dOutput, batchAxes, nil, compute.DotGeneralConfig{})
	} else {
		dWeight, err = l.dotGeneral(f, dOutput, batchAxes, nil, x, batchAxes, nil, compute.DotGeneralConfig{})
	}
	if err != nil {
		return nil, nil, nil, false, err
	}
	if bias != nil {
		if dBias, err = f.ReduceSum(dOutput, batchAxes...); err != nil {
			return nil, nil, nil, false, err
		}
	}
	return dx, dWeight, dBias, true, nil
}

// FusedDenseVJP implements compute.Function: lowered by lowerDenseVJP
// where it applies, else the backend's.
func (f *function) FusedDenseVJP(x, weight, bias, y, dOutput compute.Value,
	options compute.DenseConfig) (dx, dWeight, dBias compute.Value, err error) {
	f.countDense(x, weight, 2)
	dx, dWeight, dBias, ok, err := f.builder.backend.lowering.lowerDenseVJP(f.Function, x, weight, bias, dOutput, options)
	if err != nil || ok {
		return dx, dWeight, dBias, err
	}
	return f.Function.FusedDenseVJP(x, weight, bias, y, dOutput, options)
}

// FusedDense implements compute.Function: the backend's, counted as a
// matrix product (graph_stats.go).
func (f *function) FusedDense(x, weight, bias compute.Value, options compute.DenseConfig) (compute.Value, error) {
	f.countDense(x, weight, 1)
	return f.Function.FusedDense(x, weight, bias, options)
}
