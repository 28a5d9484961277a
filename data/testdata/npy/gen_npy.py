"""Writes the .npy fixtures of data/npy_test.go with numpy (Debian's
python3-numpy) and expected.json, each array's shape and values (C order,
as float64; bools as 0/1).

Run from the repository root: /usr/bin/python3 data/testdata/npy/gen_npy.py
"""
import json
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
expected = {}


def save(name, a, **kw):
    np.save(os.path.join(here, name + ".npy"), a, **kw)
    expected[name] = dict(shape=list(a.shape), values=[float(v) for v in np.ascontiguousarray(a).reshape(-1)])


base = np.arange(24).reshape(4, 3, 2) - 7
for dt in ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"]:
    a = (base if dt[0] in "if" else base + 7).astype(dt)
    if dt[0] == "f":
        a = a / np.array(4, dtype=dt)
    save(dt, a)
save("b1", (base % 3 == 0))
save("f8_big_endian", (base / 8).astype(">f8"))
save("f4_fortran", np.asfortranarray((base / 2).astype("f4")))
save("i4_vector", np.array([5, -1, 3, 9, 0], dtype="i4"))
save("u8_large", np.array([2**63 + 5, 1], dtype="u8"))
# Version 2 header (a dtype description over 65535 bytes forces it; here: write it by hand).
a = np.arange(6, dtype="<f4").reshape(3, 2)
with open(os.path.join(here, "f4_v2.npy"), "wb") as f:
    np.lib.format.write_array(f, a, version=(2, 0))
expected["f4_v2"] = dict(shape=[3, 2], values=[float(v) for v in a.reshape(-1)])

# Bad files.
np.save(os.path.join(here, "bad_complex.npy"), np.zeros((2, 2), dtype="c8"))
np.save(os.path.join(here, "bad_structured.npy"), np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]))
np.save(os.path.join(here, "bad_object.npy"), np.array([None, 1], dtype=object), allow_pickle=True)
np.save(os.path.join(here, "bad_scalar.npy"), np.float32(3))
raw = open(os.path.join(here, "f4.npy"), "rb").read()
open(os.path.join(here, "bad_truncated.npy"), "wb").write(raw[:-10])
open(os.path.join(here, "bad_magic.npy"), "wb").write(b"PK\x03\x04" + raw[4:])
with open(os.path.join(here, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
    f.write("\n")
