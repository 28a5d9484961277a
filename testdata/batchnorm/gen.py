#!/usr/bin/env python3
"""Writes goldens.json: PyTorch's BatchNorm1d/2d on seeded inputs, for volt's
batchnorm tests (package batchnorm and internal/golower).

Run from the repository root with Debian's python3-torch (/usr/bin/python3):

    /usr/bin/python3 testdata/batchnorm/gen.py

Each case trains one BatchNorm module for a few forward/backward passes
(no optimizer step: the weights stay as drawn) and records, per pass, the
input x, the output gradient grad_y (the loss is sum(y * grad_y)), the
output y, the gradients with respect to x, weight and bias, the batch's
mean and biased variance (what the normalisation used) and the running
mean and variance after the pass; then one pass in eval mode.
"""
import json
import os

import torch

torch.manual_seed(23)
torch.set_num_threads(1)


def flat(t):
    return t.detach().reshape(-1).tolist()


def case(name, module_cls, shape, momentum=0.1, eps=1e-5, affine=True, steps=3):
    channels = shape[1]
    bn = module_cls(channels, eps=eps, momentum=momentum, affine=affine)
    if affine:
        with torch.no_grad():
            bn.weight.copy_(torch.rand(channels) + 0.5)
            bn.bias.copy_(torch.randn(channels))
    # Per-channel offsets and scales, so that the means and variances differ.
    view = [1, channels] + [1] * (len(shape) - 2)
    loc = (torch.randn(channels) * 3).reshape(view)
    spread = (torch.rand(channels) * 2 + 0.5).reshape(view)
    out = {"name": name, "shape": list(shape), "feature_axis": 1, "eps": eps,
           "momentum": momentum, "affine": affine, "steps": []}
    if affine:
        out["weight"], out["bias"] = flat(bn.weight), flat(bn.bias)
    reduce_dims = [d for d in range(len(shape)) if d != 1]
    bn.train()
    for _ in range(steps):
        x = (torch.randn(shape) * spread + loc).requires_grad_(True)
        grad_y = torch.randn(shape)
        bn.zero_grad()
        y = bn(x)
        (y * grad_y).sum().backward()
        step = {"x": flat(x), "grad_y": flat(grad_y), "y": flat(y), "grad_x": flat(x.grad),
                "batch_mean": flat(x.mean(dim=reduce_dims)),
                "batch_var": flat(x.var(dim=reduce_dims, unbiased=False)),
                "running_mean": flat(bn.running_mean), "running_var": flat(bn.running_var),
                "num_batches_tracked": int(bn.num_batches_tracked)}
        if affine:
            step["grad_weight"], step["grad_bias"] = flat(bn.weight.grad), flat(bn.bias.grad)
        out["steps"].append(step)
    bn.eval()
    x = torch.randn(shape) * spread + loc
    with torch.no_grad():
        out["eval"] = {"x": flat(x), "y": flat(bn(x))}
    return out


cases = [
    case("bn1d", torch.nn.BatchNorm1d, (16, 6)),
    case("bn1d_sequence", torch.nn.BatchNorm1d, (4, 6, 9), momentum=0.3),
    case("bn2d", torch.nn.BatchNorm2d, (4, 3, 5, 7)),
    case("bn2d_cumulative", torch.nn.BatchNorm2d, (3, 4, 3, 3), momentum=None),
    case("bn1d_not_affine", torch.nn.BatchNorm1d, (10, 4), affine=False),
]
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens.json")
with open(path, "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f, separators=(",", ":"))
    f.write("\n")
print("wrote", path)
