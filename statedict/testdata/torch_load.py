"""Reads a safetensors file that Go's statedict.Save wrote, as PyTorch would,
and checks it against the torch.save file it came from:

    /usr/bin/python3 torch_load.py GO_FILE TORCH_FILE [net]

Debian has no python3-safetensors, so the file is parsed here by the
format's definition (8 bytes of little-endian header length, the JSON
header, the data) with torch.frombuffer. With "net", the tensors are loaded
into gen.py's Net with load_state_dict(strict=True), then compared with the
module's state_dict. Prints "ok N" (N tensors equal) or fails.
"""
import json
import struct
import sys

import torch

DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
          "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8,
          "U8": torch.uint8, "BOOL": torch.bool}


def load_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    assert header.pop("__metadata__", {}).get("format") == "pt", "metadata format is not pt"
    data = raw[8 + n:]
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        t = torch.frombuffer(bytearray(data[begin:end]), dtype=DTYPES[info["dtype"]]) if end > begin else torch.empty(0, dtype=DTYPES[info["dtype"]])
        out[name] = t.reshape(info["shape"])
    return out


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 3, 3)
        self.bn = torch.nn.BatchNorm2d(3)
        self.fc = torch.nn.Linear(4, 2)


go, want = load_safetensors(sys.argv[1]), torch.load(sys.argv[2])
if len(sys.argv) > 3 and sys.argv[3] == "net":
    net = Net()
    net.load_state_dict(go, strict=True)
    go = net.state_dict()
assert sorted(go) == sorted(want), f"keys {sorted(go)} != {sorted(want)}"
for k in want:
    a, b = go[k], want[k].contiguous()
    assert a.dtype == b.dtype and a.shape == b.shape, f"{k}: {a.dtype}{list(a.shape)} != {b.dtype}{list(b.shape)}"
    assert torch.equal(a, b), f"{k}: values differ"
print("ok", len(want))
