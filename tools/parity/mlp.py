#!/usr/bin/python3
"""PyTorch side of the MLP parity cases (package parity's TestMLPParity).

An 8-64-64-1 ReLU MLP regressing a fixed synthetic target, trained by plain
PyTorch for 50 steps, each as Lightning's automatic optimization does it:
forward, loss, zero_grad, backward, clip_grad_norm_, optimizer.step(),
scheduler.step() (interval "step"). Two cases:

  mlp_adam:        Adam(lr 1e-2), clip norm 1.0, StepLR(step_size 10, gamma 0.5)
  mlp_adamw_groups: AdamW(lr 1e-2, weight_decay 0.1) with nanoGPT's no-decay
                    group (the biases, weight_decay 0), clip norm 0.5,
                    CosineAnnealingLR(T_max 50)

Each writes parity/testdata/<case>.safetensors: the initial weights under
the GoMLX paths of the Go model ("params/mlp/layer_0/dense/weights", ...),
the batches ("x" [50*16, 8], "y" [50*16, 1], float32, in training order,
batch size 16) and PyTorch's loss before each step ("loss" [50], float64 of
the float32 loss).

Regenerate (from the repository root, needs python3-torch):

    /usr/bin/python3 tools/parity/mlp.py [--out DIR]

TestMLPCasesAreCurrent runs it into a temporary folder and compares.
"""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_parity  # noqa: E402

STEPS, BATCH, FEATURES, HIDDEN = 50, 16, 8, 64


def data(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((STEPS * BATCH, FEATURES)).astype(np.float32)
    w = rng.standard_normal((FEATURES, 1)).astype(np.float32)
    y = (np.tanh(x @ w) + 0.5 * np.sin(2 * x[:, :1]) * x[:, 1:2] + 0.1).astype(np.float32)
    return x, y


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(FEATURES, HIDDEN), torch.nn.Linear(HIDDEN, HIDDEN),
                                           torch.nn.Linear(HIDDEN, 1)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x

    def gomlx_weights(self):
        out = {}
        for i, layer in enumerate(self.layers):
            out.update(torch_parity.linear(layer, f"/mlp/layer_{i}"))
        return out


def run(out, name, seed, make_optimizer, clip, make_scheduler):
    torch.set_num_threads(1)  # the same rounding on every machine's thread count
    torch.manual_seed(seed)
    model = MLP()
    initial = torch_parity.params(model.gomlx_weights())
    x, y = data(seed)
    opt = make_optimizer(model)
    sched = make_scheduler(opt)
    losses = torch_parity.train(model, torch_parity.batches(STEPS, BATCH, x, y),
                                lambda m, xb, yb: torch.nn.functional.mse_loss(m(xb), yb), opt, sched, clip)
    tensors = {**initial, **torch_parity.trained(model.gomlx_weights())}
    tensors["x"], tensors["y"], tensors["loss"] = x, y, losses
    torch_parity.save_safetensors(os.path.join(out, name + ".safetensors"), tensors,
                                  {"torch_version": torch.__version__, "batch_size": BATCH, "steps": STEPS})
    print(f"{name}: loss {losses[0]:.6f} -> {losses[-1]:.6f}")


def adamw_groups(model):
    decay = [p for n, p in model.named_parameters() if not n.endswith("bias")]
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias")]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                             lr=1e-2)


def main():
    out = torch_parity.out_dir()
    run(out, "mlp_adam", 1, lambda m: torch.optim.Adam(m.parameters(), lr=1e-2), 1.0,
        lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=10, gamma=0.5))
    run(out, "mlp_adamw_groups", 2, adamw_groups, 0.5,
        lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=STEPS))


if __name__ == "__main__":
    main()
