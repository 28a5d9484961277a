"""Writes init.json: the statistics of torch's default initialisation
(PyTorch 1.13) of each torch-named layer's parameters, for
torch_init_test.go: per parameter the standard deviation, the largest
|value| and the mean, over large enough layers that they are stable.

    /usr/bin/python3 nn/testdata/init_gen.py
"""
import json
import os

import torch

torch.manual_seed(7)
layers = {
    "conv2d_64_128_3": torch.nn.Conv2d(64, 128, 3),
    "conv2d_groups_32_64_3_g4": torch.nn.Conv2d(32, 64, 3, groups=4),
    "conv1d_16_256_5": torch.nn.Conv1d(16, 256, 5),
    "linear_256_512": torch.nn.Linear(256, 512),
    "embedding_1000_64": torch.nn.Embedding(1000, 64),
    "groupnorm_4_64": torch.nn.GroupNorm(4, 64),
    "layernorm_64": torch.nn.LayerNorm(64),
    "mha_128_4": torch.nn.MultiheadAttention(128, 4, batch_first=True),
}
out = {}
for name, m in layers.items():
    out[name] = {k: {"std": v.float().std(unbiased=False).item(), "max_abs": v.abs().max().item(), "mean": v.float().mean().item(),
                     "shape": list(v.shape)} for k, v in m.state_dict().items()}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "init.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
