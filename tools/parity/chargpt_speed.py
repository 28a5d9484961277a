#!/usr/bin/python3
"""PyTorch's step time for examples/chargpt's default model (nanoGPT's CPU
configuration: 4 layers, 4 heads, width 128, block 64, batch 12, the
corpus's 80-byte vocabulary), trained as examples/chargpt trains it: AdamW
1e-3 betas (0.9, 0.99), weight decay 0.1 on rank >= 2 parameters, clip 1.0.
Prints the mean step time after the first 10 steps, as the example's
ms_per_step.

    OMP_NUM_THREADS=1 /usr/bin/python3 tools/parity/chargpt_speed.py [--steps N] [--threads T]
"""

import argparse
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chargpt  # noqa: E402
import torch_parity  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=110)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    chargpt.LAYERS, chargpt.HEADS, chargpt.WIDTH, chargpt.BLOCK = 4, 4, 128, 64
    batch = 12
    with open(chargpt.CORPUS, "rb") as f:
        corpus = np.frombuffer(f.read(), dtype=np.uint8)
    vocab = np.unique(corpus)
    tokens = np.searchsorted(vocab, corpus).astype(np.int64)
    torch.manual_seed(0)
    model = chargpt.GPT(len(vocab))
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99))
    rng = np.random.default_rng(0)
    start = None

    def batches():
        nonlocal start
        for s in range(args.steps):
            if s == 10:  # the first 10 steps done
                start = time.perf_counter()
            idx = rng.integers(0, len(tokens) - chargpt.BLOCK - 1, size=batch)
            yield (torch.from_numpy(np.stack([tokens[i:i + chargpt.BLOCK] for i in idx])),
                   torch.from_numpy(np.stack([tokens[i + 1:i + 1 + chargpt.BLOCK] for i in idx])))

    losses = torch_parity.train(model, batches(), lambda m, x, y: m(x, y), opt, clip=1.0)
    per_step = (time.perf_counter() - start) / (args.steps - 10)
    params = sum(p.numel() for p in model.parameters())
    print(f"torch {torch.__version__} threads={torch.get_num_threads()} params={params} "
          f"loss={losses[-1]:.4f} ms_per_step={1e3 * per_step:.2f}")


if __name__ == "__main__":
    main()
