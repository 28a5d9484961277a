#!/usr/bin/python3
"""PyTorch side of examples/cnn's parity case (package parity's TestCNNMNISTParity).

examples/cnn's network (digits.CNN, package examples/cnn/cnn): on 28×28
images of one channel, nn.Conv2d(1, 32, 3) + ReLU + 2×2 max-pooling,
nn.Conv2d(32, 64, 3) + ReLU + 2×2 max-pooling (28 -> 26 -> 13 -> 11 -> 5;
no padding, as GoMLX's defaults), flatten to 1600, nn.Linear(1600, 128) +
ReLU, nn.Linear(128, 10); cross-entropy (digits.TrainingStep's mean
sparse softmax cross-entropy), Adam(lr 1e-3) with PyTorch's defaults, no
clipping and no schedule, as the example trains it; 50 steps of batch 16,
trained by torch_parity.train. Batch 16, not the example's 64, keeps the
case file near 4 MB: the batches take 2.5 MB, the weights before and after
1.8 MB.

It trains in float64 (the Go test in Precision "64-true"), from PyTorch's
float32 initial weights: in float32, a pooling window whose two largest
values are a few float32 steps apart (about one of a batch's 112K) is
ranked by how the convolution rounds, and volt's matmul lowering of the
convolution, which sums in another order than PyTorch, sends such a
window's gradient elsewhere; Adam carries that into the losses (9.1e-3
apart by step 50): the case would compare rounding, not the model. The
trained weights are stored as float32 (6e-8 of rounding against the Go
test's 5e-4) to keep the file small.

The images are synthetic digits (class k: a stroke through 4 points of its
own, shifted and jittered per image, over uniform noise), flattened to 784
float32 values in [0, 0.95] as volt's MNIST dataset gives them; no pixel is
clipped, so that no 2×2 window of a convolution's output holds equal values
(on an exactly flat background every position would hold the bias, and
which of the tied positions max-pooling's gradient picks is each library's
own).

Flatten order: volt flattens the channels-last [N, 5, 5, 64] (row, column,
channel), PyTorch's NCHW [N, 64, 5, 5] would flatten channel first. The
PyTorch model permutes to NHWC before flattening, so that dense_0's weights
are the same 1600 inputs in the same order and torch_parity.linear maps
them as it maps every other nn.Linear, rather than the converter permuting
dense_0's rows.

    /usr/bin/python3 tools/parity/cnn_mnist.py [--out DIR]
"""

import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_parity  # noqa: E402

STEPS, BATCH, SIDE, CLASSES = 50, 16, 28, 10
LR = 1e-3


class CNN(torch.nn.Module):
    """digits.CNN; its layers are named after the Go scopes."""

    def __init__(self):
        super().__init__()
        self.conv_0 = torch.nn.Conv2d(1, 32, 3)
        self.conv_1 = torch.nn.Conv2d(32, 64, 3)
        self.dense_0 = torch.nn.Linear(5 * 5 * 64, 128)
        self.dense_1 = torch.nn.Linear(128, CLASSES)

    def forward(self, images):
        x = images.reshape(-1, 1, SIDE, SIDE)
        for conv in (self.conv_0, self.conv_1):
            x = F.max_pool2d(torch.relu(conv(x)), 2)
        x = x.permute(0, 2, 3, 1).flatten(1)  # volt's channels-last order: see the module's doc
        return self.dense_1(torch.relu(self.dense_0(x)))

    def gomlx_weights(self):
        return {**torch_parity.conv2d(self.conv_0, "/conv_0"), **torch_parity.conv2d(self.conv_1, "/conv_1"),
                **torch_parity.linear(self.dense_0, "/dense_0"), **torch_parity.linear(self.dense_1, "/dense_1")}


def images(rng, n):
    """n synthetic digits: class k is a stroke (a polyline through 4 points
    of its own in the middle of the image), shifted by up to 3 pixels and
    its points jittered per image, drawn with a Gaussian profile at a random
    contrast over uniform noise; flattened to 784 float32 in [0, 0.95],
    labels int32."""
    y = rng.integers(0, CLASSES, n)
    strokes = rng.uniform(7, 21, (CLASSES, 4, 2))
    points = strokes[y] + rng.integers(-3, 4, (n, 1, 2)) + rng.normal(0, 0.7, (n, 4, 2))
    pixels = np.stack(np.meshgrid(np.arange(SIDE), np.arange(SIDE), indexing="ij"), -1).reshape(1, -1, 2)
    dist = np.full((n, SIDE * SIDE), np.inf)
    for s in range(3):  # the segments
        a, b = points[:, s], points[:, s + 1]
        ab = (b - a)[:, None]
        t = np.clip(((pixels - a[:, None]) * ab).sum(-1) / (ab * ab).sum(-1), 0, 1)
        dist = np.minimum(dist, np.linalg.norm(pixels - (a[:, None] + t[..., None] * ab), axis=-1))
    stroke = rng.uniform(0.6, 0.8, (n, 1)) * np.exp(-dist ** 2 / (2 * 1.2 ** 2))
    x = stroke + rng.uniform(0, 0.15, (n, SIDE * SIDE))
    return x.astype(np.float32), y.astype(np.int32)


def train(model, x, y):
    """Trains model 50 steps in float64 and returns the loss before each step."""
    model.double().train()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    return torch_parity.train(model, torch_parity.batches(STEPS, BATCH, x, y),
                              lambda m, xb, yb: F.cross_entropy(m(xb.double()), yb.long()), opt)


def main():
    out = torch_parity.out_dir()
    torch.set_num_threads(1)  # the same rounding on every machine's thread count
    torch.manual_seed(6)
    model = CNN()
    params = torch_parity.params(model.gomlx_weights())  # float32, as PyTorch initialises them
    x, y = images(np.random.default_rng(6), STEPS * BATCH)
    losses = train(model, x, y)
    trained = {k: v.float() for k, v in torch_parity.trained(model.gomlx_weights()).items()}
    tensors = {**params, **trained}
    tensors["x"], tensors["y"], tensors["loss"] = x, y, losses
    torch_parity.save_safetensors(os.path.join(out, "cnn_mnist_adam.safetensors"), tensors,
                                  {"torch_version": torch.__version__, "batch_size": BATCH, "steps": STEPS,
                                   "dtype": "float64"})
    print(f"cnn_mnist_adam: loss {losses[0]:.6f} -> {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
