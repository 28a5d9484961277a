"""Writes the .safetensors fixtures of data/safetensors_test.go and
expected.json (each tensor's dtype, shape and values in C order as
float64). The writer follows the format's specification
(https://github.com/huggingface/safetensors#format) with numpy only, as the
safetensors Python package is not packaged by Debian: an 8-byte
little-endian header length N, N bytes of JSON (padded with spaces to a
multiple of 8), then each tensor's little-endian bytes in header order.

Run from the repository root: /usr/bin/python3 data/testdata/safetensors/gen_safetensors.py
"""
import json
import os
import struct

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))

# name -> (safetensors dtype, numpy array of the stored values)
base = np.arange(24).reshape(4, 3, 2) - 7
tensors = {}
for st, npdt in [("I8", "i1"), ("I16", "i2"), ("I32", "i4"), ("I64", "i8"), ("U8", "u1"), ("U16", "u2"),
                 ("U32", "u4"), ("U64", "u8"), ("F16", "f2"), ("F32", "f4"), ("F64", "f8")]:
    a = (base if npdt[0] in "if" else base + 7).astype(npdt)
    if npdt[0] == "f":
        a = a / np.array(4, dtype=npdt)
    tensors[st.lower()] = (st, a)
tensors["bool"] = ("BOOL", base % 3 == 0)
tensors["labels"] = ("I64", np.array([3, 1, 4, 1], dtype="i8"))
# bfloat16: the high 16 bits of float32 values that bf16 holds exactly.
bf = (base / 8).astype("<f4")
tensors["bf16"] = ("BF16", bf)


def raw(st, a):
    if st == "BF16":
        return (a.astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()


def write(path, items, metadata=None):
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, (st, a) in items:
        b = raw(st, a)
        header[name] = dict(dtype=st, shape=list(a.shape), data_offsets=[off, off + len(b)])
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    data = struct.pack("<Q", len(h)) + h + b"".join(blobs)
    open(path, "wb").write(data)
    return data


good = write(os.path.join(here, "arrays.safetensors"), sorted(tensors.items()), metadata={"format": "pt"})
expected = {name: dict(dtype=st, shape=list(a.shape), values=[float(v) for v in np.asarray(a, dtype="f8").reshape(-1)])
            for name, (st, a) in tensors.items()}

# Bad files.
open(os.path.join(here, "bad_truncated.safetensors"), "wb").write(good[:-10])
n = struct.unpack("<Q", good[:8])[0]
open(os.path.join(here, "bad_header_json.safetensors"), "wb").write(good[:8] + b"{" * n + good[8 + n:])
open(os.path.join(here, "bad_header_length.safetensors"), "wb").write(struct.pack("<Q", 1 << 40) + good[8:])
# Offsets that do not match the shape: a header saying F32 [4] over 8 bytes.
h = json.dumps({"x": dict(dtype="F32", shape=[4], data_offsets=[0, 8])}).encode()
h += b" " * (-len(h) % 8)
open(os.path.join(here, "bad_offsets.safetensors"), "wb").write(struct.pack("<Q", len(h)) + h + b"\0" * 8)
with open(os.path.join(here, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
    f.write("\n")
