#!/usr/bin/python3
"""PyTorch side of the LayerNorm parity case (package parity's TestLayerNormParity).

nn.Linear(8, 32), nn.LayerNorm(32) (eps 1e-5, its weight and bias perturbed
from 1 and 0 so that the converter's names matter), ReLU, nn.Linear(32, 1);
AdamW(lr 1e-2) with the no-decay group on biases and norm parameters,
clip norm 1.0; 50 steps of batch 8, trained by torch_parity.train. It checks
torch_parity.layer_norm and that GoMLX's LayerNorm with Epsilon(1e-5)
computes PyTorch's (GoMLX's default epsilon is 1e-3).

    /usr/bin/python3 tools/parity/layernorm.py [--out DIR]
"""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_parity  # noqa: E402

STEPS, BATCH, FEATURES, HIDDEN = 50, 8, 8, 32


def main():
    out = torch_parity.out_dir()
    torch.set_num_threads(1)  # the same rounding on every machine's thread count
    torch.manual_seed(5)
    first, norm, last = torch.nn.Linear(FEATURES, HIDDEN), torch.nn.LayerNorm(HIDDEN), torch.nn.Linear(HIDDEN, 1)
    with torch.no_grad():
        norm.weight.add_(0.1 * torch.randn(HIDDEN))
        norm.bias.add_(0.1 * torch.randn(HIDDEN))
    def weights():
        """The model's weights by GoMLX path."""
        return {**torch_parity.linear(first, "/ln/first"), **torch_parity.layer_norm(norm, "/ln/norm"),
                **torch_parity.linear(last, "/ln/last")}

    params = torch_parity.params(weights())
    model = torch.nn.Sequential(first, norm, torch.nn.ReLU(), last)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((STEPS * BATCH, FEATURES)).astype(np.float32)
    y = (np.sin(x[:, :1] * 2) + x[:, 1:2] * x[:, 2:3]).astype(np.float32)
    decay = [first.weight, last.weight]
    no_decay = [first.bias, norm.weight, norm.bias, last.bias]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}], lr=1e-2)
    losses = torch_parity.train(model, torch_parity.batches(STEPS, BATCH, x, y),
                                lambda m, xb, yb: torch.nn.functional.mse_loss(m(xb), yb), opt, clip=1.0)
    tensors = {**params, **torch_parity.trained(weights())}
    tensors["x"], tensors["y"], tensors["loss"] = x, y, losses
    torch_parity.save_safetensors(os.path.join(out, "layernorm_adamw.safetensors"), tensors,
                                  {"torch_version": torch.__version__, "batch_size": BATCH, "steps": STEPS})
    print(f"layernorm_adamw: loss {losses[0]:.6f} -> {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
