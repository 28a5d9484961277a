"""Writes losses.json: torch.nn's losses (PyTorch 1.13) on seeded random
inputs, several shapes and options each, with their outputs and the
gradients with respect to the input, for losses_test.go.

    /usr/bin/python3 nn/testdata/losses_gen.py

Each case holds its inputs (so Go needs no torch), the loss's output, and
d(Σ output·r)/d input for a seeded random upstream r of the output's shape
(r is stored too): "none" reductions are checked element by element.
"""
import json
import os

import torch
import torch.nn.functional as F

torch.manual_seed(390)
cases = []


def tensor(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "values": t.double().reshape(-1).tolist()}


def add(name, fn, x, target, opts, weight=None, pos_weight=None):
    x = x.float().clone().requires_grad_(True)
    kwargs = dict(opts)
    if weight is not None:
        kwargs["weight"] = weight
    if pos_weight is not None:
        kwargs["pos_weight"] = pos_weight
    out = fn(x, target, **kwargs)
    r = torch.randn(out.shape)
    (out * r).sum().backward()
    case = {"name": name, "loss": fn.__name__, "options": opts, "input": tensor(x.detach()), "target": tensor(target),
            "upstream": tensor(r), "output": tensor(out.detach()), "grad": tensor(x.grad)}
    if weight is not None:
        case["weight"] = tensor(weight)
    if pos_weight is not None:
        case["pos_weight"] = tensor(pos_weight)
    cases.append(case)


def classes(shape, c, ignore=None, n_ignored=0):
    t = torch.randint(0, c, shape)
    if ignore is not None:
        flat = t.view(-1)
        flat[torch.randperm(flat.numel())[:n_ignored]] = ignore
    return t


ce = F.cross_entropy
add("ce_mean", ce, torch.randn(5, 4) * 2, classes((5,), 4), {})
add("ce_sum_weight", ce, torch.randn(6, 3), classes((6,), 3), {"reduction": "sum"}, weight=torch.rand(3) + 0.5)
add("ce_none_spatial_ignored", ce, torch.randn(4, 5, 3), classes((4, 3), 5, -100, 3), {"reduction": "none"})
add("ce_mean_smooth_weight_ignore2", ce, torch.randn(7, 4), classes((7,), 4, 2, 2),
    {"label_smoothing": 0.2, "ignore_index": 2}, weight=torch.rand(4) + 0.5)
add("ce_mean_smooth_spatial_ignored", ce, torch.randn(3, 4, 2, 2), classes((3, 2, 2), 4, -100, 3), {"label_smoothing": 0.1})
add("ce_none_smooth", ce, torch.randn(5, 6) * 3, classes((5,), 6), {"reduction": "none", "label_smoothing": 0.3})
add("ce_sum_smooth_weight_spatial", ce, torch.randn(2, 3, 4), classes((2, 4), 3, -100, 2),
    {"reduction": "sum", "label_smoothing": 0.25}, weight=torch.rand(3) + 0.5)

nll = F.nll_loss
add("nll_mean", nll, torch.log_softmax(torch.randn(5, 4), 1), classes((5,), 4), {})
add("nll_sum_weight_spatial_ignored", nll, torch.log_softmax(torch.randn(4, 3, 5), 1), classes((4, 5), 3, -100, 4),
    {"reduction": "sum"}, weight=torch.rand(3) + 0.5)
add("nll_none_weight_ignore0", nll, torch.log_softmax(torch.randn(6, 4), 1), classes((6,), 4, 0, 2),
    {"reduction": "none", "ignore_index": 0}, weight=torch.rand(4) + 0.5)
add("nll_mean_weight", nll, torch.log_softmax(torch.randn(8, 5), 1), classes((8,), 5), {}, weight=torch.rand(5) + 0.5)

bce = F.binary_cross_entropy
add("bce_mean", bce, torch.sigmoid(torch.randn(4, 3)), torch.rand(4, 3).round(), {})
add("bce_sum_weight", bce, torch.sigmoid(torch.randn(6)), torch.rand(6), {"reduction": "sum"}, weight=torch.rand(6))
add("bce_none_weight_broadcast", bce, torch.sigmoid(torch.randn(2, 3, 4) * 2), torch.rand(2, 3, 4).round(),
    {"reduction": "none"}, weight=torch.rand(4))

bcel = F.binary_cross_entropy_with_logits
add("bcel_mean", bcel, torch.randn(4, 3) * 2, torch.rand(4, 3).round(), {})
add("bcel_sum_pos_weight", bcel, torch.randn(5, 4) * 3, torch.rand(5, 4).round(), {"reduction": "sum"}, pos_weight=torch.rand(4) * 3)
add("bcel_none_weight_pos_weight", bcel, torch.randn(2, 3, 4), torch.rand(2, 3, 4), {"reduction": "none"},
    weight=torch.rand(3, 4), pos_weight=torch.rand(4) * 2)
add("bcel_mean_large_logits", bcel, torch.tensor([[30.0, -30.0, 80.0], [-80.0, 0.5, -0.5]]), torch.tensor([[0.0, 1.0, 1.0], [0.0, 1.0, 0.0]]),
    {}, pos_weight=torch.tensor([2.0, 0.5, 1.5]))

for fn in (F.mse_loss, F.l1_loss):
    short = {"mse_loss": "mse", "l1_loss": "l1"}[fn.__name__]
    add(short + "_mean", fn, torch.randn(4, 3), torch.randn(4, 3), {})
    add(short + "_sum", fn, torch.randn(5), torch.randn(5), {"reduction": "sum"})
    add(short + "_none", fn, torch.randn(2, 3, 2), torch.randn(2, 3, 2), {"reduction": "none"})

sl1 = F.smooth_l1_loss
add("smooth_l1_mean", sl1, torch.randn(6, 3) * 2, torch.randn(6, 3), {})
add("smooth_l1_sum_beta_half", sl1, torch.randn(8), torch.randn(8), {"reduction": "sum", "beta": 0.5})
add("smooth_l1_none_beta0", sl1, torch.randn(3, 4), torch.randn(3, 4), {"reduction": "none", "beta": 0.0})
add("smooth_l1_mean_beta2", sl1, torch.randn(4, 5) * 2, torch.randn(4, 5), {"beta": 2.0})

kl = F.kl_div
probs = torch.softmax(torch.randn(4, 5), 1)
probs[0, 1] = 0.0
probs[2, 3] = 0.0
add("kl_mean", kl, torch.log_softmax(torch.randn(4, 5), 1), probs, {})
add("kl_batchmean", kl, torch.log_softmax(torch.randn(4, 5), 1), probs, {"reduction": "batchmean"})
add("kl_sum", kl, torch.log_softmax(torch.randn(3, 2, 4), 2), torch.softmax(torch.randn(3, 2, 4), 2), {"reduction": "sum"})
add("kl_none", kl, torch.log_softmax(torch.randn(4, 5), 1), probs, {"reduction": "none"})
add("kl_batchmean_log_target", kl, torch.log_softmax(torch.randn(6, 3), 1), torch.log_softmax(torch.randn(6, 3), 1),
    {"reduction": "batchmean", "log_target": True})

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "losses.json"), "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f)
    f.write("\n")
