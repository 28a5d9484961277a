#!/usr/bin/python3
"""PyTorch side of the GRU parity case (package parity's TestGRUParity).

A sequence regressor: nn.GRU(5, 16, batch_first) over 6 steps, its last
hidden state into nn.Linear(16, 1); Adam(lr 1e-2), clip norm 1.0, no
schedule; 50 steps of batch 8, trained by torch_parity.train. It checks
volt's nn.GRU cell (torch_parity.gru: PyTorch's tensors as they are)
against PyTorch's.

Writes parity/testdata/gru_adam.safetensors ("x" [400, 6, 5], "y" [400, 1],
"loss" [50], "params/...").

    /usr/bin/python3 tools/parity/gru.py [--out DIR]
"""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_parity  # noqa: E402

STEPS, BATCH, SEQ, FEATURES, HIDDEN = 50, 8, 6, 5, 16


class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(FEATURES, HIDDEN, batch_first=True)
        self.head = torch.nn.Linear(HIDDEN, 1)

    def forward(self, x):
        _, h = self.gru(x)
        return self.head(h[0])


def main():
    out = torch_parity.out_dir()
    torch.set_num_threads(1)  # the same rounding on every machine's thread count
    torch.manual_seed(4)
    model = Regressor()
    def weights():
        """The model's weights by GoMLX path."""
        return {**torch_parity.gru(model.gru, "/rnn/gru"),
                **torch_parity.linear(model.head, "/rnn/head")}

    params = torch_parity.params(weights())
    rng = np.random.default_rng(4)
    x = rng.standard_normal((STEPS * BATCH, SEQ, FEATURES)).astype(np.float32)
    y = (np.tanh(x[:, :, 0].sum(axis=1, keepdims=True) / 2) + 0.3 * x[:, -1, 1:2]).astype(np.float32)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = torch_parity.train(model, torch_parity.batches(STEPS, BATCH, x, y),
                                lambda m, xb, yb: torch.nn.functional.mse_loss(m(xb), yb), opt, clip=1.0)
    tensors = {**params, **torch_parity.trained(weights())}
    tensors["x"], tensors["y"], tensors["loss"] = x, y, losses
    torch_parity.save_safetensors(os.path.join(out, "gru_adam.safetensors"), tensors,
                                  {"torch_version": torch.__version__, "batch_size": BATCH, "steps": STEPS})
    print(f"gru_adam: loss {losses[0]:.6f} -> {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
