#!/usr/bin/python3
"""Times one training step of issue 16's CNN in PyTorch on one thread.

The network matches BenchmarkCNNStep in internal/golower/cnn_bench_test.go:
conv 3x3 32 + ReLU, 2x2 max-pool, conv 3x3 64 + ReLU, 2x2 max-pool,
dense 128 + ReLU, dense 10; cross-entropy; Adam(lr=1e-3); batches of 64
MNIST-shaped images (uniform pixels, uniform labels).

Usage: /usr/bin/python3 tools/cnnbench/torch_cnn_bench.py [--steps N] [--threads T]
Prints wall and CPU milliseconds per step (medians over the timed steps).
Needs Debian's python3-torch (apt-get install -y python3-torch), hence /usr/bin/python3
rather than a pyenv python.
"""
import argparse
import statistics
import time

import torch
from torch import nn


def build():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 5 * 5, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50, help="timed steps")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(42)
    model = build()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    images = torch.rand(64, 1, 28, 28)
    labels = torch.randint(0, 10, (64,))

    def step():
        opt.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(args.warmup):
        step()
    wall, cpu = [], []
    for _ in range(args.steps):
        w0, c0 = time.perf_counter(), time.process_time()
        step()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    print(f"torch {torch.__version__} threads={args.threads} steps={args.steps}: "
          f"wall {statistics.median(wall) * 1e3:.1f} ms/step (mean {statistics.mean(wall) * 1e3:.1f}), "
          f"cpu {statistics.median(cpu) * 1e3:.1f} ms/step (mean {statistics.mean(cpu) * 1e3:.1f})")


if __name__ == "__main__":
    main()
