#!/usr/bin/env python3
"""PyTorch's step time for examples/resnet's network (digits.ResNet):
stem conv3x3 16 + BN + ReLU, residual blocks of 16, 32, 64 channels
(stride 2 and a 1x1 projection where the width changes), global average
pooling, linear 10; Adam 1e-3, batch 64 of 28x28 images, NHWC in volt and
NCHW here (PyTorch's native layout).

    /usr/bin/python3 tools/resnetbench/torch_step.py [threads] [steps]

Prints the median and mean process CPU time and wall time per training
step after 5 warm-up steps.
"""
import statistics
import sys
import time

import torch
import torch.nn as nn

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
torch.set_num_threads(threads)
torch.manual_seed(0)


def conv_bn(cin, cout, k, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), nn.BatchNorm2d(cout))


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        stride = 1 if cin == cout else 2
        self.a = conv_bn(cin, cout, 3, stride)
        self.b = conv_bn(cout, cout, 3, 1)
        self.shortcut = nn.Identity() if cin == cout else conv_bn(cin, cout, 1, 2)

    def forward(self, x):
        y = torch.relu(self.a(x))
        return torch.relu(self.b(y) + self.shortcut(x))


net = nn.Sequential(conv_bn(1, 16, 3, 1), nn.ReLU(), Block(16, 16), Block(16, 32), Block(32, 64),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
x = torch.randn(64, 1, 28, 28)
y = torch.randint(0, 10, (64,))
cpu, wall = [], []
for i in range(5 + steps):
    c0, w0 = time.process_time(), time.perf_counter()
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    if i >= 5:
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
print(f"torch {torch.__version__} threads={threads} steps={steps} "
      f"cpu_median_ms={1e3 * statistics.median(cpu):.1f} cpu_mean_ms={1e3 * statistics.mean(cpu):.1f} "
      f"wall_median_ms={1e3 * statistics.median(wall):.1f}")
