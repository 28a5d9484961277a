"""Checks an ONNX model with the onnx package's checker (full_check: the
shapes are inferred too) and prints, as JSON, what the test compares: the
IR version, the opsets, the inputs' and outputs' names, types and
dimensions (an int, or the dim_param's name), the node types and the
doc_string. Exits non-zero, with the checker's message, on an invalid
model."""
import json
import sys

import onnx


def dims(vi):
    out = []
    for d in vi.type.tensor_type.shape.dim:
        out.append(d.dim_param if d.HasField("dim_param") else d.dim_value)
    return out


def main(path):
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    info = {
        "onnx_version": onnx.__version__,
        "ir_version": model.ir_version,
        "opsets": {o.domain or "ai.onnx": o.version for o in model.opset_import},
        "inputs": [{"name": i.name, "elem_type": i.type.tensor_type.elem_type, "dims": dims(i)} for i in model.graph.input],
        "outputs": [{"name": o.name, "elem_type": o.type.tensor_type.elem_type, "dims": dims(o)} for o in model.graph.output],
        "ops": sorted({n.op_type for n in model.graph.node}),
        "doc_string": model.doc_string,
    }
    print(json.dumps(info))


if __name__ == "__main__":
    main(sys.argv[1])
