#!/usr/bin/python3
"""Golden values for parameter groups: torch.optim with two param groups.

Three float64 parameters in two groups, as nanoGPT splits them: "decay" (the
matrices, the optimizer's lr and weight decay) and "no_decay" (the vector,
weight decay 0 and its own lr). Each case runs NUM_STEPS steps on fixed
gradients and records every parameter after each step; package optim's
TestApplyWithOptionsMatchesPyTorchGroups compares.

Regenerate (from the repository root, needs python3-torch):

    /usr/bin/python3 tools/golden/gen_param_groups.py

It writes optim/testdata/param_groups_golden.json (deterministic).
"""

import json
import math
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "optim", "testdata",
                   "param_groups_golden.json")
SHAPES = [[3, 2], [2], [2, 2]]
GROUP_OF = [0, 1, 0]  # parameter index -> group index
NUM_STEPS = 5


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def initial(i):
    n = math.prod(SHAPES[i])
    return torch.tensor([math.cos(0.9 * k + 1.7 * i) for k in range(n)], dtype=torch.float64).reshape(SHAPES[i])


def gradient(step, i):
    n = math.prod(SHAPES[i])
    vals = [math.sin(1.3 * (step + 1) + 0.7 * k + 2.1 * i) * (1.0 + 0.25 * step) for k in range(n)]
    return torch.tensor(vals, dtype=torch.float64).reshape(SHAPES[i])


# name, class, optimizer kwargs, per-group overrides (decay group, no-decay group)
CASES = [
    ("adamw", torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1), [{}, dict(weight_decay=0.0, lr=0.02)]),
    ("adam_l2", torch.optim.Adam, dict(lr=0.01, weight_decay=0.1), [{}, dict(weight_decay=0.0, lr=0.005)]),
    ("sgd_momentum", torch.optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.05),
     [{}, dict(weight_decay=0.0, lr=0.2)]),
    ("rmsprop", torch.optim.RMSprop, dict(lr=0.01, weight_decay=0.05), [dict(weight_decay=0.2), dict(weight_decay=0.0)]),
]


def main():
    cases = []
    for name, cls, kwargs, overrides in CASES:
        params = [torch.nn.Parameter(initial(i).clone()) for i in range(len(SHAPES))]
        groups = []
        for g, extra in enumerate(overrides):
            groups.append(dict(params=[p for i, p in enumerate(params) if GROUP_OF[i] == g], **extra))
        opt = cls(groups, **kwargs)
        after = []
        for s in range(NUM_STEPS):
            for i, p in enumerate(params):
                p.grad = gradient(s, i).clone()
            opt.step()
            after.append([flat(p) for p in params])
        cases.append({
            "name": name,
            "lr": kwargs["lr"],
            "weight_decay": kwargs["weight_decay"],
            "groups": [{"lr": pg["lr"], "weight_decay": pg["weight_decay"]} for pg in opt.param_groups],
            "params_after": after,
        })
    out = {
        "torch_version": torch.__version__,
        "shapes": SHAPES,
        "group_of": GROUP_OF,
        "initial": [flat(initial(i)) for i in range(len(SHAPES))],
        "grads": [[flat(gradient(s, i)) for i in range(len(SHAPES))] for s in range(NUM_STEPS)],
        "cases": cases,
    }
    with open(OUT, "w") as f:
        json.dump(out, f)
        f.write("\n")


if __name__ == "__main__":
    main()
