#!/usr/bin/python3
"""Generates the golden values that package optim's tests compare against.

The values come from the real PyTorch (Debian's python3-torch, 1.13.1), so the
Go tests check volt's optimizers, gradient clipping, learning-rate schedulers
and dynamic loss scaler against PyTorch's own implementation. The tests only
read the JSON files this script writes; CI never needs PyTorch.

Regenerate (from the repository root):

    apt-get install -y python3-torch      # PyTorch 1.13.1
    /usr/bin/python3 tools/golden/gen_optim.py

It writes, into optim/testdata/:

    optimizers_golden.json   SGD/Adam/AdamW/RMSProp parameters after 5 steps
    clip_golden.json         clip_grad_norm_ (p = 1, 2, 3, inf) and clip_grad_value_
    schedulers_golden.json   LR sequences of the LR schedulers over 20 steps
    loss_scaler_golden.json  GradScaler.update scale / growth-tracker sequences

Everything is float64 and deterministic; the files are stable across runs.
"""

import json
import math
import os
import sys

import numpy as np
import torch

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "optim", "testdata")
SHAPES = [[3, 2], [2]]
NUM_STEPS = 5
SCHEDULER_STEPS = 20


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def initial_params():
    """Fixed initial parameters, one tensor per entry of SHAPES."""
    return [
        torch.tensor([[0.5, -1.25], [2.0, 0.75], [-0.3, 1.1]], dtype=torch.float64),
        torch.tensor([0.2, -0.6], dtype=torch.float64),
    ]


def gradient(step, index):
    """Deterministic gradient of parameter index at step (0-based)."""
    n = int(np.prod(SHAPES[index]))
    vals = [math.sin(1.3 * (step + 1) + 0.7 * i + 2.1 * index) * (1.0 + 0.25 * step) for i in range(n)]
    return torch.tensor(vals, dtype=torch.float64).reshape(SHAPES[index])


OPTIMIZER_CASES = [
    # name, torch class, kwargs
    ("sgd", torch.optim.SGD, dict(lr=0.1)),
    ("sgd_momentum", torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
    ("sgd_momentum_dampening", torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.1)),
    ("sgd_nesterov", torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("sgd_weight_decay", torch.optim.SGD, dict(lr=0.1, weight_decay=0.01)),
    ("sgd_momentum_weight_decay", torch.optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    ("adam", torch.optim.Adam, dict(lr=0.01)),
    ("adam_weight_decay", torch.optim.Adam, dict(lr=0.01, weight_decay=0.1)),
    ("adamw", torch.optim.AdamW, dict(lr=0.01)),
    ("adamw_betas", torch.optim.AdamW, dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.05)),
    ("rmsprop", torch.optim.RMSprop, dict(lr=0.01)),
    ("rmsprop_momentum", torch.optim.RMSprop, dict(lr=0.01, momentum=0.9)),
    ("rmsprop_weight_decay", torch.optim.RMSprop, dict(lr=0.01, weight_decay=0.01)),
]

KINDS = {torch.optim.SGD: "sgd", torch.optim.Adam: "adam", torch.optim.AdamW: "adamw", torch.optim.RMSprop: "rmsprop"}


def gen_optimizers():
    grads = [[flat(gradient(s, i)) for i in range(len(SHAPES))] for s in range(NUM_STEPS)]
    cases = []
    for name, cls, kwargs in OPTIMIZER_CASES:
        params = [torch.nn.Parameter(p.clone()) for p in initial_params()]
        opt = cls(params, **kwargs)
        after = []
        for s in range(NUM_STEPS):
            for i, p in enumerate(params):
                p.grad = gradient(s, i).clone()
            opt.step()
            after.append([flat(p) for p in params])
        group = opt.param_groups[0]
        hyper = {
            "lr": group["lr"],
            "weight_decay": group["weight_decay"],
            "momentum": group.get("momentum", 0.0),
            "dampening": group.get("dampening", 0.0),
            "nesterov": bool(group.get("nesterov", False)),
            "betas": list(group.get("betas", (0.0, 0.0))),
            "eps": group.get("eps", 0.0),
            "alpha": group.get("alpha", 0.0),
        }
        cases.append({"name": name, "kind": KINDS[cls], "hyper": hyper, "params_after": after})
    return {
        "torch_version": torch.__version__,
        "shapes": SHAPES,
        "initial": [flat(p) for p in initial_params()],
        "grads": grads,
        "cases": cases,
    }


def clip_grads():
    return [
        torch.tensor([[0.3, -1.2], [0.05, 2.4], [-0.7, 0.9]], dtype=torch.float64),
        torch.tensor([-1.5, 0.25], dtype=torch.float64),
    ]


def gen_clip():
    norm_cases = []
    for p in [1.0, 2.0, 3.0, math.inf]:
        for max_norm in [0.5, 100.0]:
            params = [torch.nn.Parameter(torch.zeros(s, dtype=torch.float64)) for s in SHAPES]
            for param, g in zip(params, clip_grads()):
                param.grad = g.clone()
            total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type=p)
            norm_cases.append({
                "p": "inf" if math.isinf(p) else p,
                "max_norm": max_norm,
                "total": float(total),
                "clipped": [flat(param.grad) for param in params],
            })
    value_cases = []
    for v in [0.5, 1.0, 10.0]:
        params = [torch.nn.Parameter(torch.zeros(s, dtype=torch.float64)) for s in SHAPES]
        for param, g in zip(params, clip_grads()):
            param.grad = g.clone()
        torch.nn.utils.clip_grad_value_(params, v)
        value_cases.append({"value": v, "clipped": [flat(param.grad) for param in params]})
    return {
        "torch_version": torch.__version__,
        "shapes": SHAPES,
        "grads": [flat(g) for g in clip_grads()],
        "norm_cases": norm_cases,
        "value_cases": value_cases,
    }


S = torch.optim.lr_scheduler

# name, factory(optimizer), params recorded for the Go test (its own names).
SCHEDULER_CASES = [
    ("step_lr", lambda o: S.StepLR(o, step_size=3, gamma=0.5), dict(step_size=3, gamma=0.5)),
    ("multistep_lr", lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.5),
     dict(milestones=[2, 5, 5, 9], gamma=0.5)),
    ("exponential_lr", lambda o: S.ExponentialLR(o, gamma=0.9), dict(gamma=0.9)),
    ("cosine_annealing_lr", lambda o: S.CosineAnnealingLR(o, T_max=7, eta_min=0.001), dict(t_max=7, eta_min=0.001)),
    ("cosine_annealing_lr_tmax10", lambda o: S.CosineAnnealingLR(o, T_max=10), dict(t_max=10, eta_min=0.0)),
    ("cosine_warm_restarts", lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01),
     dict(t0=3, t_mult=2, eta_min=0.01)),
    ("cosine_warm_restarts_tmult1", lambda o: S.CosineAnnealingWarmRestarts(o, T_0=5),
     dict(t0=5, t_mult=1, eta_min=0.0)),
    ("linear_warmup", lambda o: S.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=6),
     dict(start_factor=0.25, end_factor=1.0, total_iters=6)),
    ("linear_decay", lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=10),
     dict(start_factor=1.0, end_factor=0.1, total_iters=10)),
    ("linear_decay_to_zero", lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.0, total_iters=4),
     dict(start_factor=1.0, end_factor=0.0, total_iters=4)),
    ("one_cycle_cos", lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=20),
     dict(max_lr=1.0, total_steps=20, pct_start=0.3, anneal="cos", div_factor=25.0,
          final_div_factor=1e4, three_phase=False)),
    ("one_cycle_linear", lambda o: S.OneCycleLR(o, max_lr=0.5, total_steps=24, pct_start=0.25,
                                                 anneal_strategy="linear", div_factor=10.0, final_div_factor=100.0),
     dict(max_lr=0.5, total_steps=24, pct_start=0.25, anneal="linear", div_factor=10.0,
          final_div_factor=100.0, three_phase=False)),
    ("one_cycle_three_phase", lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=20, three_phase=True),
     dict(max_lr=1.0, total_steps=20, pct_start=0.3, anneal="cos", div_factor=25.0,
          final_div_factor=1e4, three_phase=True)),
    # The Go test pairs each lambda name with the same function.
    ("lambda_pow", lambda o: S.LambdaLR(o, lambda e: 0.95 ** e), dict(fn="0.95^step")),
    ("lambda_inverse", lambda o: S.LambdaLR(o, lambda e: 1.0 / (e + 1)), dict(fn="1/(step+1)")),
]

PLATEAU_CASES = [
    ("plateau_min_rel", dict(mode="min", factor=0.5, patience=2, threshold=1e-4, threshold_mode="rel",
                             cooldown=1, min_lr=0.0, eps=1e-8),
     [1.0, 0.9, 0.9, 0.9, 0.9, 0.8, 0.8, 0.8, 0.8, 0.8, 0.79999, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.6, 0.6, 0.6]),
    ("plateau_max_abs_min_lr", dict(mode="max", factor=0.1, patience=1, threshold=0.05, threshold_mode="abs",
                                    cooldown=2, min_lr=0.0005, eps=1e-8),
     [0.1, 0.2, 0.22, 0.23, 0.24, 0.3, 0.31, 0.32, 0.33, 0.4, 0.41, 0.41, 0.41, 0.41, 0.41, 0.41, 0.5, 0.5, 0.5,
      0.5]),
    ("plateau_defaults", dict(mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                              cooldown=0, min_lr=0.0, eps=1e-8),
     [5.0 - 0.1 * i if i < 4 else 4.6 for i in range(20)]),
    # Literal zeros (volt spells them as negative values; its zero values mean the defaults).
    ("plateau_zero_patience_threshold_eps", dict(mode="min", factor=0.5, patience=0, threshold=0.0,
                                                 threshold_mode="rel", cooldown=0, min_lr=0.0, eps=0.0),
     [1.0, 0.9, 0.9, 0.8, 0.85, 0.8, 0.7, 0.7, 0.7, 0.6]),
]


def dummy_optimizer(lr=0.1):
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))], lr=lr)


def gen_schedulers():
    cases = []
    for name, factory, params in SCHEDULER_CASES:
        opt = dummy_optimizer()
        sched = factory(opt)
        lrs = [opt.param_groups[0]["lr"]]
        for _ in range(SCHEDULER_STEPS):
            opt.step()
            sched.step()
            lrs.append(opt.param_groups[0]["lr"])
        cases.append({"name": name, "base_lr": 0.1, "params": params, "lrs": lrs})
    for name, kwargs, metrics in PLATEAU_CASES:
        opt = dummy_optimizer()
        sched = S.ReduceLROnPlateau(opt, **kwargs)
        lrs = [opt.param_groups[0]["lr"]]
        for m in metrics:
            opt.step()
            sched.step(m)
            lrs.append(opt.param_groups[0]["lr"])
        cases.append({"name": name, "base_lr": 0.1, "params": kwargs, "metrics": metrics, "lrs": lrs})
    return {"torch_version": torch.__version__, "cases": cases}


def amp_update_scale(scale, tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """torch._amp_update_scale_ (aten/src/ATen/native/cuda/AmpKernels.cu in 1.13), which has no CPU
    kernel in 1.13: the scale is a float32 tensor, the factors are doubles."""
    if found_inf:
        return float(np.float32(scale * backoff_factor)), 0
    successful = tracker + 1
    if successful == growth_interval:
        with np.errstate(over="ignore"):  # float32 overflow is the case being guarded.
            new_scale = np.float32(scale * growth_factor)
        if np.isfinite(new_scale):
            scale = float(new_scale)
        return scale, 0
    return scale, successful


LOSS_SCALER_CASES = [
    ("interval3", dict(init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=3),
     [False, False, False, False, True, False, False, False, False, False, False, True, True, False, False,
      False, True, False, False, False, False, False, False, False]),
    ("overflow_guard", dict(init_scale=2.0 ** 126, growth_factor=2.0, backoff_factor=0.5, growth_interval=3),
     [False] * 9 + [True] + [False] * 6),
    ("odd_factors", dict(init_scale=1000.0, growth_factor=1.7, backoff_factor=0.3, growth_interval=2),
     [True, False, False, True, True, False, False, False, False, False, True, False, False]),
]


def gen_loss_scaler():
    # GradScaler's constructor checks; kept here so the goldens stay valid inputs.
    cases = []
    for name, cfg, pattern in LOSS_SCALER_CASES:
        assert cfg["growth_factor"] > 1.0 and cfg["backoff_factor"] < 1.0
        scale = float(np.float32(cfg["init_scale"]))
        tracker = 0
        scales, trackers = [], []
        for found_inf in pattern:
            scale, tracker = amp_update_scale(scale, tracker, found_inf, cfg["growth_factor"],
                                              cfg["backoff_factor"], cfg["growth_interval"])
            scales.append(scale)
            trackers.append(tracker)
        cases.append({"name": name, "config": cfg, "found_inf": pattern, "scales": scales,
                      "growth_trackers": trackers})
    return {"torch_version": torch.__version__, "cases": cases}


def write(name, payload):
    path = os.path.join(OUT_DIR, name)
    with open(path, "w") as f:
        json.dump(payload, f, indent=1, allow_nan=False)
        f.write("\n")
    print("wrote", os.path.normpath(path), file=sys.stderr)


def main():
    torch.set_default_dtype(torch.float64)
    os.makedirs(OUT_DIR, exist_ok=True)
    write("optimizers_golden.json", gen_optimizers())
    write("clip_golden.json", gen_clip())
    write("schedulers_golden.json", gen_schedulers())
    write("loss_scaler_golden.json", gen_loss_scaler())


if __name__ == "__main__":
    main()
