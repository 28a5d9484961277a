#!/usr/bin/python3
"""PyTorch side of the recurrent parity cases (package parity's
TestLSTMParity and TestGRUParity).

A sequence regressor: nn.LSTM(5, 16, batch_first), or nn.GRU, over 6
steps, its last hidden state into nn.Linear(16, 1); Adam(lr 1e-2), clip
norm 1.0, no schedule; 50 steps of batch 8, trained by torch_parity.train.
It checks torch_parity.lstm (PyTorch's gate order and biases in GoMLX's
layout) with GoMLX's LSTM cell and nn.LSTM, and torch_parity.gru (PyTorch's
tensors as they are) with volt's nn.GRU, against PyTorch's cells.

Writes parity/testdata/lstm_adam.safetensors and gru_adam.safetensors ("x"
[400, 6, 5], "y" [400, 1], "loss" [50], "params/...", "trained/...").

    /usr/bin/python3 tools/parity/lstm.py [--out DIR]
"""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_parity  # noqa: E402

STEPS, BATCH, SEQ, FEATURES, HIDDEN = 50, 8, 6, 5, 16


class Regressor(torch.nn.Module):
    """The recurrent layer (nn.LSTM or nn.GRU) over the sequence, its last
    hidden state into nn.Linear(HIDDEN, 1)."""

    def __init__(self, layer):
        super().__init__()
        self.rnn = layer(FEATURES, HIDDEN, batch_first=True)
        self.head = torch.nn.Linear(HIDDEN, 1)

    def forward(self, x):
        _, state = self.rnn(x)
        h = state[0] if isinstance(state, tuple) else state  # LSTM: (h, c); GRU: h
        return self.head(h[0])


# The cases: name, layer, its converter and GoMLX scope, seed.
CASES = [("lstm_adam", torch.nn.LSTM, torch_parity.lstm, "/rnn/lstm", 3),
         ("gru_adam", torch.nn.GRU, torch_parity.gru, "/rnn/gru", 4)]


def write_case(out, name, layer, convert, scope, seed):
    torch.manual_seed(seed)
    model = Regressor(layer)

    def weights():
        """The model's weights by GoMLX path."""
        return {**convert(model.rnn, scope), **torch_parity.linear(model.head, "/rnn/head")}

    params = torch_parity.params(weights())
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((STEPS * BATCH, SEQ, FEATURES)).astype(np.float32)
    y = (np.tanh(x[:, :, 0].sum(axis=1, keepdims=True) / 2) + 0.3 * x[:, -1, 1:2]).astype(np.float32)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = torch_parity.train(model, torch_parity.batches(STEPS, BATCH, x, y),
                                lambda m, xb, yb: torch.nn.functional.mse_loss(m(xb), yb), opt, clip=1.0)
    tensors = {**params, **torch_parity.trained(weights())}
    tensors["x"], tensors["y"], tensors["loss"] = x, y, losses
    torch_parity.save_safetensors(os.path.join(out, name + ".safetensors"), tensors,
                                  {"torch_version": torch.__version__, "batch_size": BATCH, "steps": STEPS})
    print(f"{name}: loss {losses[0]:.6f} -> {losses[-1]:.6f}")


def main():
    out = torch_parity.out_dir()
    torch.set_num_threads(1)  # the same rounding on every machine's thread count
    for case in CASES:
        write_case(out, *case)


if __name__ == "__main__":
    main()
