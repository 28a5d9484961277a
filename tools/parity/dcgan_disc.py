#!/usr/bin/python3
"""PyTorch side of the even-kernel parity case (package parity's
TestEvenKernelParity).

A DCGAN-style discriminator whose every convolution has an even kernel, the
case GoMLX v0.28.16 differentiates one position off with respect to the
input (internal/convgrad corrects it): on 16×16 images with 3 channels,
nn.Conv2d(3, 8, 4, stride=2, padding=1) (→ 8×8) and LeakyReLU(0.2),
nn.Conv2d(8, 16, 4, stride=2, padding=1) (→ 4×4) and LeakyReLU(0.2), and
nn.Conv2d(16, 1, 2, stride=2, padding=1) (→ 3×3), a PatchGAN-style map of
logits, each scored with binary cross-entropy against its image's label
(the mean over images and patches). GoMLX's own gradient of the last
convolution fails to build (it pads the transposed convolution by
2⌊(K−1)/2⌋−p = −1). The first layer's weights train right only if the
input gradients of the two convolutions behind it are right.

Adam(lr 1e-3, betas (0.5, 0.999)) as DCGAN trains, no clipping; 50 steps
of batch 8, trained by torch_parity.train. The images ("x" [400, 16, 16,
3], channels-last as the Go model reads them; PyTorch trains on their NCHW
transpose) are sinusoidal gratings of random orientation, phase and colour
plus uniform noise, in [-1, 1]: label 1 ("real") for wavelengths of 6 to
10 pixels and a colour cast of (0.2, 0.1, -0.1), 0 for wavelengths of 2.5
to 4 and the opposite cast (the wavelength alone leaves the loss near
log 2 for the 50 steps). It also trains a copy in float64 and refuses
a case whose float32 losses stray from those (torch_parity.check_stable).

    /usr/bin/python3 tools/parity/dcgan_disc.py [--out DIR]
"""

import copy
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_parity  # noqa: E402

STEPS, BATCH, SIDE, CHANNELS = 50, 8, 16, 3


class Discriminator(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(CHANNELS, 8, 4, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 16, 4, stride=2, padding=1)
        self.conv3 = torch.nn.Conv2d(16, 1, 2, stride=2, padding=1)

    def forward(self, x):
        x = F.leaky_relu(self.conv1(x), 0.2)
        x = F.leaky_relu(self.conv2(x), 0.2)
        return self.conv3(x)

    def gomlx_weights(self):
        """The weights by GoMLX path."""
        return {**torch_parity.conv2d(self.conv1, "/disc/conv1"),
                **torch_parity.conv2d(self.conv2, "/disc/conv2"),
                **torch_parity.conv2d(self.conv3, "/disc/conv3")}


def images(rng, n):
    """n gratings (NHWC float32 in [-1, 1]) and their labels ([n, 1]
    float32): 1 for a long wavelength and a warm cast, 0 for a short one
    and a cold cast."""
    y = rng.integers(0, 2, n)
    wavelength = np.where(y == 1, rng.uniform(6, 10, n), rng.uniform(2.5, 4, n))
    theta = rng.uniform(0, np.pi, n)
    phase = rng.uniform(0, 2 * np.pi, n)
    i, j = np.meshgrid(np.arange(SIDE), np.arange(SIDE), indexing="ij")
    along = i[None] * np.cos(theta)[:, None, None] + j[None] * np.sin(theta)[:, None, None]
    wave = np.sin(2 * np.pi * along / wavelength[:, None, None] + phase[:, None, None])
    colour = rng.uniform(-0.7, 0.7, (n, 1, 1, CHANNELS))
    cast = np.where(y == 1, 1.0, -1.0)[:, None, None, None] * np.array([0.2, 0.1, -0.1])
    x = np.clip(wave[..., None] * colour + cast + rng.uniform(-0.3, 0.3, (n, SIDE, SIDE, CHANNELS)), -1, 1)
    return x.astype(np.float32), y[:, None].astype(np.float32)


def loss_fn(model, xb, yb):
    """Binary cross-entropy of every patch's logit against its image's label."""
    logits = model(xb.to(model.conv1.weight.dtype).permute(0, 3, 1, 2))
    return F.binary_cross_entropy_with_logits(logits, yb.to(logits.dtype)[:, :, None, None].expand_as(logits))


def train(model, x, y, dtype):
    """Trains model 50 steps in dtype and returns the loss before each step."""
    model.to(dtype)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.5, 0.999))
    return torch_parity.train(model, torch_parity.batches(STEPS, BATCH, x, y), loss_fn, opt)


def main():
    out = torch_parity.out_dir()
    torch.set_num_threads(1)  # the same rounding on every machine's thread count
    torch.manual_seed(6)
    model = Discriminator()
    reference = copy.deepcopy(model)
    params = torch_parity.params(model.gomlx_weights())
    x, y = images(np.random.default_rng(6), STEPS * BATCH)
    losses = train(model, x, y, torch.float32)
    stray = torch_parity.check_stable("dcgan_disc_adam", losses, train(reference, x, y, torch.float64))
    tensors = {**params, **torch_parity.trained(model.gomlx_weights())}
    tensors["x"], tensors["y"], tensors["loss"] = x, y, losses
    torch_parity.save_safetensors(os.path.join(out, "dcgan_disc_adam.safetensors"), tensors,
                                  {"torch_version": torch.__version__, "batch_size": BATCH, "steps": STEPS})
    print(f"dcgan_disc_adam: loss {losses[0]:.6f} -> {losses[-1]:.6f}, float32 against float64 {stray:.3g}")


if __name__ == "__main__":
    main()
