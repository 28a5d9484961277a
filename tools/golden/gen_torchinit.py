#!/usr/bin/python3
"""PyTorch's default initialisation of the layers package torchinit covers.

For each layer it records, per parameter (PyTorch's name and shape): the
fan_in torch.nn.init computes, the bound (uniform) or standard deviation
(normal) of the layer's reset_parameters, and the moments torch's own
initialisation gives on that layer (seeded; PyTorch's numbers, not the
expectation). torchinit's TestBoundsMatchPyTorch compares the rule Apply
picks for the same GoMLX layer with these, and the moments of volt's draws
with the distribution's.

Regenerate (needs python3-torch):

    /usr/bin/python3 tools/golden/gen_torchinit.py

It writes torchinit/testdata/torch_init.json (deterministic).
"""

import json
import math
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "torchinit", "testdata", "torch_init.json")

LAYERS = [
    ("linear_8_64", lambda: torch.nn.Linear(8, 64)),
    ("linear_64_1", lambda: torch.nn.Linear(64, 1)),
    ("linear_256_512", lambda: torch.nn.Linear(256, 512)),
    ("conv2d_3_16_k3", lambda: torch.nn.Conv2d(3, 16, 3)),
    ("conv2d_16_32_k5x3", lambda: torch.nn.Conv2d(16, 32, (5, 3))),
    ("conv1d_4_6_k5", lambda: torch.nn.Conv1d(4, 6, 5)),
    ("embedding_1000_16", lambda: torch.nn.Embedding(1000, 16)),
    ("lstm_5_7", lambda: torch.nn.LSTM(5, 7, batch_first=True)),
    ("gru_5_7", lambda: torch.nn.GRU(5, 7, batch_first=True)),
    ("layernorm_64", lambda: torch.nn.LayerNorm(64)),
    ("batchnorm2d_16", lambda: torch.nn.BatchNorm2d(16)),
]


def expected(layer, name, p):
    """The bound or std of layer.reset_parameters for parameter p."""
    if isinstance(layer, (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d)):
        fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(layer.weight)
        return "uniform", 1 / math.sqrt(fan_in), fan_in
    if isinstance(layer, torch.nn.Embedding):
        return "normal", 1.0, None
    if isinstance(layer, (torch.nn.LSTM, torch.nn.GRU)):
        return "uniform", 1 / math.sqrt(layer.hidden_size), layer.hidden_size
    if isinstance(layer, (torch.nn.LayerNorm, torch.nn.BatchNorm2d)):
        return "constant", 1.0 if name == "weight" else 0.0, None
    raise ValueError(layer)


def main():
    torch.manual_seed(0)
    layers = []
    for key, build in LAYERS:
        layer = build()
        params = []
        for name, p in layer.named_parameters():
            dist, bound, fan_in = expected(layer, name, p)
            x = p.detach().double()
            params.append({
                "name": name,
                "shape": list(p.shape),
                "dist": dist,
                "bound": bound,
                "fan_in": fan_in,
                "max_abs": float(x.abs().max()),
                "mean": float(x.mean()),
                "std": float(x.std()) if x.numel() > 1 else 0.0,
            })
        layers.append({"layer": key, "params": params})
    with open(OUT, "w") as f:
        json.dump({"torch_version": torch.__version__, "layers": layers}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
