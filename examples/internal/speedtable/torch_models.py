#!/usr/bin/python3
"""PyTorch's side of examples/internal/speedtable: the same zoo models,
optimizers and batch sizes as models.go, trained on synthetic batches.

    OMP_NUM_THREADS=T /usr/bin/python3 torch_models.py --model NAME --threads T --steps N

Prints "ms_per_step=X": the median wall time of a training step (forward,
loss, zero_grad, backward, clipping where the model has it, optimizer step,
loss.item()) after 5 untimed warm-up steps. Needs Debian's python3-torch
(and libopenblas0-pthread, without which torch uses the reference BLAS).
"""
import argparse
import os
import statistics
import sys
import time

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "parity"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "cnnbench"))

from torch_cnn_bench import build as cnn  # noqa: E402  examples/cnn's network

WARMUP = 5
CHARGPT_VOCAB = 80


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10))


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


def resnet():
    return nn.Sequential(conv_bn(1, 16, 3, 1), nn.ReLU(), Block(16, 16), Block(16, 32), Block(32, 64),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


def adam_step(model, lr, loss_of, clip=None):
    """One training step of model with Adam(lr): loss_of(model), backward,
    clipping by norm when clip is set, the update, loss.item()."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def step():
        loss = loss_of(model)
        opt.zero_grad()
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        return loss.item()
    return step


def image_step(build):
    x, y = torch.rand(64, 1, 28, 28), torch.randint(0, 10, (64,))
    return adam_step(build(), 1e-3, lambda m: nn.functional.cross_entropy(m(x), y))


def chargpt_step():
    import chargpt
    chargpt.LAYERS, chargpt.HEADS, chargpt.WIDTH, chargpt.BLOCK = 4, 4, 128, 64
    model = chargpt.GPT(CHARGPT_VOCAB)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99))
    seq = torch.randint(0, CHARGPT_VOCAB, (12, 65))
    x, y = seq[:, :64].contiguous(), seq[:, 1:].contiguous()

    def step():
        loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()
    return step


class SeqClassifier(nn.Module):
    """examples/seqclass: Embedding(6, 8) -> LSTM(8, 32) -> last hidden state -> Linear(32, 8)."""

    def __init__(self, vocab=6, embed=8, hidden=32, classes=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, tokens):
        _, (h, _) = self.lstm(self.embed(tokens))
        return self.head(h[0])


def seqclass_step():
    x, y = torch.randint(0, 6, (32, 32)), torch.randint(0, 8, (32,))
    return adam_step(SeqClassifier(), 1e-2, lambda m: nn.functional.cross_entropy(m(x), y), clip=1.0)


def autoencoder():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 32), nn.Linear(32, 256),
                         nn.ReLU(), nn.Linear(256, 784), nn.Sigmoid())


def autoencoder_step():
    x = torch.rand(64, 784)
    return adam_step(autoencoder(), 1e-3, lambda m: nn.functional.mse_loss(m(x), x))


STEPS = {"mlp": lambda: image_step(mlp), "cnn": lambda: image_step(cnn), "resnet": lambda: image_step(resnet),
         "chargpt": chargpt_step, "seqclass": seqclass_step, "autoencoder": autoencoder_step}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, choices=sorted(STEPS))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=50)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    step = STEPS[args.model]()
    wall = []
    for i in range(WARMUP + args.steps):
        t0 = time.perf_counter()
        step()
        if i >= WARMUP:
            wall.append(time.perf_counter() - t0)
    print(f"torch={torch.__version__} threads={torch.get_num_threads()} ms_per_step={statistics.median(wall) * 1e3:.3f}")


if __name__ == "__main__":
    main()
