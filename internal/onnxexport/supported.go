package onnxexport

import (
	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/gomlx/compute"
)

type onnxAttr = onnx.AttributeProto

// supported are the ops with a lowering (the Capabilities advertised).
var supported = map[compute.OpType]bool{}

func init() {
	for _, op := range []compute.OpType{
		compute.OpTypeParameter, compute.OpTypeConstant, compute.OpTypeIdentity,
		compute.OpTypeAbs, compute.OpTypeNeg, compute.OpTypeExp, compute.OpTypeLog, compute.OpTypeTanh, compute.OpTypeLogistic,
		compute.OpTypeSqrt, compute.OpTypeRsqrt, compute.OpTypeFloor, compute.OpTypeCeil, compute.OpTypeErf, compute.OpTypeSin,
		compute.OpTypeCos, compute.OpTypeSign, compute.OpTypeIsNaN, compute.OpTypeLogicalNot,
		compute.OpTypeAdd, compute.OpTypeSub, compute.OpTypeMul, compute.OpTypeDiv, compute.OpTypePow, compute.OpTypeMax,
		compute.OpTypeMin, compute.OpTypeRem, compute.OpTypeEqual, compute.OpTypeNotEqual, compute.OpTypeGreaterThan,
		compute.OpTypeGreaterOrEqual, compute.OpTypeLessThan, compute.OpTypeLessOrEqual, compute.OpTypeLogicalAnd,
		compute.OpTypeLogicalOr, compute.OpTypeLogicalXor, compute.OpTypeWhere,
		compute.OpTypeReshape, compute.OpTypeTranspose, compute.OpTypeBroadcastInDim, compute.OpTypeConvertDType,
		compute.OpTypeSlice, compute.OpTypeConcatenate, compute.OpTypeClamp, compute.OpTypeIota,
		compute.OpTypeDotGeneral, compute.OpTypeConvGeneral, compute.OpTypeReduceWindow,
		compute.OpTypeReduceMax, compute.OpTypeReduceMin, compute.OpTypeReduceSum, compute.OpTypeReduceProduct,
		compute.OpTypeArgMinMax, compute.OpTypeGather, compute.OpTypeBatchNormForInference, compute.OpTypePad, compute.OpTypeReverse,
	} {
		supported[op] = true
	}
}
