"""Writes golden.json: torch.nn.LayerNorm and torch.nn.functional.mse_loss
(PyTorch 1.13) on fixed inputs, for nn_test.go.

    /usr/bin/python3 nn/testdata/gen.py
"""
import json
import math
import os

import torch


def grid(rows, cols, a, b, c):
    # The same formula as grid in nn_test.go.
    return [[math.sin(a * i + b * j) * 2 + c * j for j in range(cols)] for i in range(rows)]


x = torch.tensor(grid(3, 5, 1.3, 0.7, 0.1), dtype=torch.float32)
ln = torch.nn.LayerNorm(5)
target = torch.tensor(grid(3, 5, 0.4, 1.1, -0.2), dtype=torch.float32)
out = {
    "layer_norm": ln(x).tolist(),
    "layer_norm_eps": ln.eps,
    "mse_loss": torch.nn.functional.mse_loss(x, target).item(),
    "linear_256_128_bound": 1 / math.sqrt(torch.nn.Linear(256, 128).in_features),
}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
