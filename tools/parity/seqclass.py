#!/usr/bin/python3
"""PyTorch side of the LSTM sequence-classifier parity case (package
parity's TestSeqClassParity; the Go model is examples/seqclass/classifier).

nn.Embedding(6, 8) -> nn.LSTM(8, 16, batch_first) -> the last hidden state
-> nn.Linear(16, 4), F.cross_entropy, PyTorch's default initialisation
(seed 11). The task is examples/seqclass's temporal order, small: 12 tokens,
noise symbols 0-3, 2 marked positions holding X (4) or Y (5); the class is
the marks in order read as binary, X = 0, the first mark the high bit (the
Go test checks every label against classifier.Task.ClassOf). Adam(lr 1e-2)
with OneCycleLR(max_lr 1e-2, total_steps 50, cycle_momentum=False: volt's
OneCycleLR does not cycle momentum) stepped every batch, clip_grad_norm_
1.0; 50 steps of batch 16.

Writes parity/testdata/seqclass_adam.safetensors ("x" int32 [800, 12],
"y" int32 [800], "loss" [50], "params/...").

    /usr/bin/python3 tools/parity/seqclass.py [--out DIR]
"""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_parity  # noqa: E402

STEPS, BATCH, LENGTH, MARKS, DISTRACTORS, EMBED, HIDDEN = 50, 16, 12, 2, 4, 8, 16
VOCAB, CLASSES = DISTRACTORS + 2, 2 ** MARKS


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, EMBED)
        self.lstm = torch.nn.LSTM(EMBED, HIDDEN, batch_first=True)
        self.head = torch.nn.Linear(HIDDEN, CLASSES)

    def forward(self, tokens):
        _, (h, _) = self.lstm(self.embed(tokens))
        return self.head(h[0])


def temporal_order(n, rng):
    """n sequences of the task and their classes."""
    x = rng.integers(0, DISTRACTORS, size=(n, LENGTH))
    y = np.zeros(n, dtype=np.int64)
    for i in range(n):
        positions = np.sort(rng.choice(LENGTH, MARKS, replace=False))
        bits = rng.integers(0, 2, MARKS)
        x[i, positions] = DISTRACTORS + bits
        for b in bits:
            y[i] = y[i] * 2 + b
    return x, y


def main():
    out = torch_parity.out_dir()
    torch.set_num_threads(1)  # the same rounding on every machine's thread count
    torch.manual_seed(11)
    model = Classifier()
    def weights():
        """The model's weights by GoMLX path."""
        return {**torch_parity.embedding(model.embed, "/seqclass/embed"),
                **torch_parity.lstm(model.lstm, "/seqclass/lstm"),
                **torch_parity.linear(model.head, "/seqclass/head")}

    params = torch_parity.params(weights())
    x, y = temporal_order(STEPS * BATCH, np.random.default_rng(11))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=STEPS, cycle_momentum=False)
    losses = torch_parity.train(model, torch_parity.batches(STEPS, BATCH, x, y),
                                lambda m, xb, yb: torch.nn.functional.cross_entropy(m(xb), yb), opt, sched, clip=1.0)
    tensors = {**params, **torch_parity.trained(weights())}
    tensors["x"], tensors["y"], tensors["loss"] = x.astype(np.int32), y.astype(np.int32), losses
    torch_parity.save_safetensors(os.path.join(out, "seqclass_adam.safetensors"), tensors,
                                  {"torch_version": torch.__version__, "batch_size": BATCH, "steps": STEPS})
    print(f"seqclass_adam: loss {losses[0]:.6f} -> {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
