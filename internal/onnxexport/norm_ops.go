package onnxexport

import (
	"github.com/gomlx/compute"
	"github.com/voltml/volt/internal/golower"
)

// BatchNormForInference implements compute.Function as volt's own backend
// computes it (golower.LowerBatchNormForInference), op by op on this
// function: (x - mean)·(scale/√(variance + ε)) + offset along the feature
// axis, written as ONNX elementwise nodes that broadcast the per-feature
// vectors. A channels-last model so needs no transposes around ONNX's
// BatchNormalization, which takes the features on axis 1.
func (f *function) BatchNormForInference(operand, scale, offset, mean, variance compute.Value, epsilon float32,
	featureAxis int) (compute.Value, error) {
	return golower.LowerBatchNormForInference(f, operand, scale, offset, mean, variance, epsilon, featureAxis)
}
