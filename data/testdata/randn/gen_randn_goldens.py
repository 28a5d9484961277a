"""Writes goldens.json: torch.randn(rows, cols, generator=g) draws in
sequence from torch.Generator().manual_seed(seed), as data.Generator.Randn
must reproduce them (torch 1.13, CPU capability AVX2). Small draws keep
their float32 bit patterns, every draw the SHA-256 of its little-endian
float32 bytes.

    /usr/bin/python3 data/testdata/randn/gen_randn_goldens.py
"""
import hashlib
import json
import os

import torch

CASES = [
    # examples/firsthour's data after the small draws: the double path
    # (5 values, one cached), the float path with a redrawn tail (21), the
    # cached value used by the next small draw (6), then the program's
    # inputs and noise.
    (0, [(1, 5), (3, 7), (2, 3), (2000, 8), (2000, 1)]),
    (12345, [(500, 1000), (1, 33)]),
    (2**32 + 7, [(4, 4), (1, 1), (1, 1)]),  # the seed's low 32 bits; a cached value
]

out = {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability()
       if hasattr(torch.backends, "cpu") else "AVX2", "cases": []}
for seed, draws in CASES:
    g = torch.Generator().manual_seed(seed)
    case = {"seed": seed, "draws": []}
    for rows, cols in draws:
        x = torch.randn(rows, cols, generator=g).contiguous().numpy().astype("<f4")
        d = {"rows": rows, "cols": cols, "sha256": hashlib.sha256(x.tobytes()).hexdigest()}
        if x.size <= 64:
            d["bits"] = [int(v) for v in x.view("<u4").ravel()]
        case["draws"].append(d)
    out["cases"].append(case)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
