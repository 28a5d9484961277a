// Package onnxexport turns a GoMLX graph into an ONNX model. Backend wraps
// a compute.Backend (the pure-Go one): every graph built on it is also
// recorded, op by op, and Model lowers the recorded main function of a
// traced graph into an ONNX graph (opset 13). Nothing is executed: the
// wrapped backend only answers shapes and compiles.
//
// Lowering emits only what the outputs need (the decomposed branch of a
// GoMLX fused op is what is kept: the fused ops themselves answer "not
// implemented", which makes GoMLX fall back). Constants become
// initializers. A broadcast (BroadcastInDim) feeding an elementwise op is
// left to ONNX's multidirectional broadcasting instead of being
// materialised, and Max(x, 0) is written as Relu, so that the graph stays
// free of the batch size where it can, and runs on small ONNX runtimes
// that lack Expand or Max. Export takes the graph traced at two batch
// sizes and pairs their values: a shape that differs between the two only
// by the batch is written to follow it (-1 in a Reshape, the input's
// Shape in an Expand), so that the batch axis stays dynamic. Ops the
// lowering has no ONNX counterpart for fail when the graph is traced, with
// an *UnsupportedOpError naming them and the model's code that built them.
package onnxexport
