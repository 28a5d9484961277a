#!/usr/bin/python3
"""PyTorch side of the autoencoder parity case (package parity's
TestAutoencoderParity).

examples/autoencoder's network (package examples/autoencoder/ae) in a small
config: nn.Linear(64, 32), ReLU, nn.Linear(32, 8) (the code), nn.Linear(8,
32), ReLU, nn.Linear(32, 64), sigmoid; the mean squared error of the
reconstruction (F.mse_loss). It trains on 8×8 synthetic images (64 pixels
in (0, 1): a sigmoid of a random rank-4 mixture, so that an 8-number code
can hold them), batch 16, 50 steps, each as Lightning's automatic
optimization does it: Adam(lr 1e-2), clip norm 1.0, OneCycleLR(max_lr
1e-2, total_steps 50, cycle_momentum False) per step. It trains a float64
copy too and refuses a chaotic case (torch_parity.check_stable).

It writes parity/testdata/autoencoder_adam.safetensors: the initial weights
under the Go model's paths ("params/encoder/hidden/dense/weights", ...),
the batches ("x" [800, 64] float32; no labels) and PyTorch's loss before
each step ("loss" [50]).

    /usr/bin/python3 tools/parity/autoencoder.py [--out DIR]
"""

import copy
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_parity  # noqa: E402

STEPS, BATCH, PIXELS, HIDDEN, CODE = 50, 16, 64, 32, 8


class Autoencoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc_hidden = torch.nn.Linear(PIXELS, HIDDEN)
        self.enc_code = torch.nn.Linear(HIDDEN, CODE)
        self.dec_hidden = torch.nn.Linear(CODE, HIDDEN)
        self.dec_output = torch.nn.Linear(HIDDEN, PIXELS)

    def forward(self, x):
        code = self.enc_code(torch.relu(self.enc_hidden(x)))
        return torch.sigmoid(self.dec_output(torch.relu(self.dec_hidden(code))))

    def gomlx_weights(self):
        out = {}
        for layer, scope in [(self.enc_hidden, "/encoder/hidden"), (self.enc_code, "/encoder/code"),
                             (self.dec_hidden, "/decoder/hidden"), (self.dec_output, "/decoder/output")]:
            out.update(torch_parity.linear(layer, scope))
        return out


def images(rng, n):
    """n images of 64 pixels in (0, 1): sigmoid(2·(z·B) + c), z ~ N(0, 1)^4."""
    basis = rng.standard_normal((4, PIXELS)) / 2
    offset = rng.standard_normal(PIXELS) / 2
    z = rng.standard_normal((n, 4))
    return (1 / (1 + np.exp(-(2 * z @ basis + offset)))).astype(np.float32)


def train(model, x, dtype):
    """Trains model 50 steps in dtype and returns the loss before each step."""
    model.to(dtype)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=STEPS, cycle_momentum=False)

    def loss(model, xb):
        xb = xb.to(dtype)
        return F.mse_loss(model(xb), xb)

    return torch_parity.train(model, torch_parity.batches(STEPS, BATCH, x), loss, opt, sched, clip=1.0)


def main():
    out = torch_parity.out_dir()
    torch.set_num_threads(1)
    torch.manual_seed(6)
    model = Autoencoder()
    reference = copy.deepcopy(model)
    params = torch_parity.params(model.gomlx_weights())
    x = images(np.random.default_rng(6), STEPS * BATCH)
    losses = train(model, x, torch.float32)
    stray = torch_parity.check_stable("autoencoder_adam", losses, train(reference, x, torch.float64))
    tensors = {**params, **torch_parity.trained(model.gomlx_weights())}
    tensors["x"], tensors["loss"] = x, losses
    torch_parity.save_safetensors(os.path.join(out, "autoencoder_adam.safetensors"), tensors,
                                  {"torch_version": torch.__version__, "batch_size": BATCH, "steps": STEPS})
    print(f"autoencoder_adam: loss {losses[0]:.6f} -> {losses[-1]:.6f}, float32 against float64 {stray:.3g}")


if __name__ == "__main__":
    main()
