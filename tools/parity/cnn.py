#!/usr/bin/python3
"""PyTorch side of the CNN parity case (package parity's TestCNNParity).

nn.Conv2d(2, 4, 3) + ReLU, global average pooling, nn.Linear(4, 1), on 5×5
images with 2 channels; Adam(lr 1e-2), clip norm 1.0, ExponentialLR(0.95)
per step; 50 steps of batch 4, trained by torch_parity.train. It checks
torch_parity.conv2d (PyTorch's [out, in, kh, kw] kernel in GoMLX's
channels-last [kh, kw, in, out]) and volt's convolution against PyTorch's.
The images are stored channels-last ("x" [200, 5, 5, 2]) as the Go model
reads them; PyTorch trains on their NCHW transpose.

    /usr/bin/python3 tools/parity/cnn.py [--out DIR]
"""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_parity  # noqa: E402

STEPS, BATCH, SIZE, CHANNELS = 50, 4, 5, 2


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(CHANNELS, 4, 3)
        self.head = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.head(torch.relu(self.conv(x)).mean(dim=(2, 3)))


def main():
    out = torch_parity.out_dir()
    torch.set_num_threads(1)  # the same rounding on every machine's thread count
    torch.manual_seed(4)
    model = CNN()
    def weights():
        """The model's weights by GoMLX path."""
        return {**torch_parity.conv2d(model.conv, "/cnn/conv1"),
                **torch_parity.linear(model.head, "/cnn/head")}

    params = torch_parity.params(weights())
    rng = np.random.default_rng(4)
    x = rng.standard_normal((STEPS * BATCH, SIZE, SIZE, CHANNELS)).astype(np.float32)  # NHWC
    y = (x[:, 1:4, 1:4, 0].mean(axis=(1, 2)) - 0.5 * x[:, :, :, 1].std(axis=(1, 2)))[:, None].astype(np.float32)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.95)
    losses = torch_parity.train(model, torch_parity.batches(STEPS, BATCH, x, y),
                                lambda m, xb, yb: torch.nn.functional.mse_loss(m(xb.permute(0, 3, 1, 2)), yb),
                                opt, sched, clip=1.0)
    tensors = {**params, **torch_parity.trained(weights())}
    tensors["x"], tensors["y"], tensors["loss"] = x, y, losses
    torch_parity.save_safetensors(os.path.join(out, "cnn_adam.safetensors"), tensors,
                                  {"torch_version": torch.__version__, "batch_size": BATCH, "steps": STEPS})
    print(f"cnn_adam: loss {losses[0]:.6f} -> {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
