"""Generate Trainer scenarios from seeds and record what real Lightning does in each.

A scenario is a pure function of its seed and GENERATOR_VERSION: spec(seed)
draws the Trainer arguments, the callbacks (EarlyStopping, ModelCheckpoint,
GradientAccumulationScheduler), the optimizer and the scheduler with their
options, manual optimization, values logged from steps, hooks and callbacks
with their self.log options, a stop or a failure requested in a random hook,
the data (batch sizes, partial last batches, drop_last, the validation
loaders and their sizes) and the sequence of Fit/Validate/Test/Predict (and a
resume, as a restarted process, from a checkpoint the run saved), prog_bar
on logged values, a training loader over a seeded RandomSampler. record()
runs it in Lightning with trace_hooks.py's recorders plus a logger spy, and
returns the trace: the spec, the hook events, the final counters, the error,
every row each logger received, each stage's result, callback metrics and
progress bar metrics,
the final weights and the checkpoint a resume started from. volt's
TestConformanceGenerated reads the same specs, runs them in volt and
compares.

Usage (Debian's python3 with python3-torch, Lightning 2.2.5 on PYTHONPATH):
  PYTHONPATH=<lsite>:<dir of torch_py311_shim.py> /usr/bin/python3 gen_scenarios.py \
      --first 0 --count 300 --out traces.json.gz
  (or --seeds 20052,... for the seeds found beyond the fixed set: found-v<N>.json.gz)
"""
import argparse
import contextlib
import io
import gzip
import json
import logging
import math
import os
import random
import re
import shutil
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # trace_hooks.py
sys.path.insert(0, HERE)

import trace_hooks as th  # noqa: E402  (applies the torch shim)

import torch  # noqa: E402
from torch.utils.data import DataLoader, RandomSampler, TensorDataset  # noqa: E402
import lightning.pytorch as pl  # noqa: E402
from lightning.pytorch.callbacks import GradientAccumulationScheduler  # noqa: E402
from lightning.pytorch.loggers.logger import Logger  # noqa: E402

# Bump when spec() draws differently or record() records differently: the
# cached traces are keyed by it.
GENERATOR_VERSION = 6  # 2: a stop or failure is asked by the module or by a callback
# 3: a logged value that turns non-finite (EarlyStopping's check_finite), two optimizers with frequencies
# 4: a value logged in on_train_epoch_end (by the module or a callback), often monitored; a second fit
# 5: SGD with momentum, weight decay and Nesterov, Adam, AdamW, RMSprop; every scheduler volt has, with its
#    options; partial last batches, drop_last and unequal loaders; values logged with every option from
#    steps, module hooks and callbacks; manual optimization; any stage sequence; resume from any saved
#    checkpoint; and the final weights, predictions, stage results and callback metrics recorded
# 6: prog_bar on logged values (progress_bar_metrics recorded after each stage); on_step=True or
#    on_epoch=False in the hooks that log epoch values only (Lightning raises); OneCycleLR with fewer
#    total_steps than the run steps it (torch raises); a training loader over a seeded RandomSampler;
#    a resume with new loaders (a restarted process)

# Hooks a stop (trainer.should_stop = True) or a failure (raise) may be
# requested in, as (module hook, needs a batch index). training_step and
# validation_step are failures only (volt runs them as graphs; its nearest
# host hook of the same batch fails instead).
STOP_HOOKS = [("on_train_epoch_start", False), ("on_train_batch_end", True), ("on_train_epoch_end", False),
              ("on_validation_epoch_end", False), ("on_validation_end", False)]
FAIL_HOOKS = STOP_HOOKS + [("training_step", True), ("validation_step", True), ("on_train_start", False)]

# Where a value may be logged (version 5), as (hook, kind): "step" a step
# (module only; the value is a*loss + b), "epoch" a hook where Lightning
# allows on_epoch only, "any" a batch hook where it allows both (the value is
# a + b*epoch + c*batch_idx + d*global_step).
LOG_HOOKS = [("training_step", "step"), ("validation_step", "step"), ("test_step", "step"),
             ("on_train_start", "epoch"), ("on_train_epoch_start", "epoch"), ("on_train_epoch_end", "epoch"),
             ("on_train_batch_start", "any"), ("on_train_batch_end", "any"),
             ("on_validation_start", "epoch"), ("on_validation_epoch_start", "epoch"),
             ("on_validation_epoch_end", "epoch"), ("on_validation_batch_start", "any"),
             ("on_validation_batch_end", "any"), ("on_test_start", "epoch"), ("on_test_epoch_start", "epoch"),
             ("on_test_epoch_end", "epoch"), ("on_test_batch_start", "any"), ("on_test_batch_end", "any")]
SCHEDULERS = ["step", "multistep", "exponential", "cosine", "cosine_warm", "linear", "onecycle", "lambda", "plateau"]
# LambdaLR's factors by name (volt's genLambdas are the same functions).
LAMBDAS = {"exp09": lambda s: 0.9 ** s, "inv": lambda s: 1.0 / (1 + s), "warm3": lambda s: min(1.0, (s + 1) / 3)}


def spec(seed):
    """The scenario of a seed: only JSON values, everything record() needs."""
    r = random.Random(seed * 7919 + 1)  # version 1's draws, unchanged
    n_train = r.choice([16, 16, 20])
    n_batches = n_train // 4 + (n_train % 4 > 0)
    tr = {}
    tr["max_epochs"] = r.choice([1, 2, 2, 3, 3, 4])
    if r.random() < 0.15:
        tr["min_epochs"] = r.randint(1, 3)
    if r.random() < 0.2:
        tr["max_steps"] = r.randint(2, 12)
    if r.random() < 0.1:
        tr["min_steps"] = r.randint(2, 10)
    u = r.random()
    if u < 0.2:
        tr["limit_train_batches"] = r.randint(1, n_batches)
    elif u < 0.3:
        tr["limit_train_batches"] = r.choice([0.25, 0.5, 0.75])
    u = r.random()
    if u < 0.15:
        tr["limit_val_batches"] = r.randint(0, 2)
    elif u < 0.2:
        tr["limit_val_batches"] = 0.5
    train_batches = n_batches
    if isinstance(tr.get("limit_train_batches"), int):
        train_batches = tr["limit_train_batches"]
    elif "limit_train_batches" in tr:
        train_batches = int(n_batches * tr["limit_train_batches"])
    u = r.random()
    if u < 0.2:
        tr["val_check_interval"] = r.choice([0.25, 0.5, 1.0])
    elif u < 0.35 and train_batches >= 1:
        tr["val_check_interval"] = r.randint(1, max(1, train_batches))
    elif u < 0.42:
        tr["val_check_interval"] = r.randint(2, 7)
        tr["check_val_every_n_epoch"] = None
    if "check_val_every_n_epoch" not in tr and r.random() < 0.2:
        tr["check_val_every_n_epoch"] = 2
    tr["num_sanity_val_steps"] = r.choice([0, 0, 1, 2, -1])
    if r.random() < 0.3:
        tr["accumulate_grad_batches"] = r.choice([2, 3])
    if r.random() < 0.25:
        tr["gradient_clip_val"] = r.choice([0.05, 0.5])
        tr["gradient_clip_algorithm"] = r.choice(["norm", "value"])
    tr["log_every_n_steps"] = r.choice([1, 2, 3, 50])
    if r.random() < 0.12:
        tr["reload_dataloaders_every_n_epochs"] = r.choice([1, 2])
    u = r.random()
    if u < 0.04:
        tr = {"fast_dev_run": r.choice([1, 2]), "log_every_n_steps": 1, "num_sanity_val_steps": 2}
    elif u < 0.08:
        tr["overfit_batches"] = r.choice([1, 2, 0.5])
        tr.pop("limit_train_batches", None)
        tr.pop("limit_val_batches", None)

    n_val = r.choice([1, 1, 1, 2])
    val_key = "val_loss" if n_val == 1 else "val_loss/dataloader_idx_0"
    model = {"log_train_epoch": r.random() < 0.8, "plateau_patience": 0}
    u = r.random()
    monitors = [val_key]
    if model["log_train_epoch"]:
        monitors.append("train_loss_epoch")
    if u < 0.2:
        model["sched"] = ["step", r.choice(["epoch", "step"]), r.choice([1, 1, 2, 3])]
    elif u < 0.35:
        interval = r.choice(["epoch", "epoch", "step"])
        model["sched"] = ["plateau:" + r.choice(monitors + ["train_loss_step"] if interval == "step" else monitors),
                          interval, r.choice([1, 1, 2])]
        model["plateau_patience"] = r.choice([0, 1])
    u = r.random()
    if u < 0.15:
        hook, batched = r.choice(STOP_HOOKS)
        model["stop"] = {"hook": hook, "epoch": r.randint(0, 2), "batch": r.randint(0, 3) if batched else None}
    elif u < 0.25:
        hook, batched = r.choice(FAIL_HOOKS)
        model["fail"] = {"hook": hook, "epoch": r.randint(0, 2), "batch": r.randint(0, 2) if batched else None}

    # Who asks (version 2), from a stream of its own so that the rest of the
    # scenario is version 1's: the module, or a callback (steps are the
    # module's).
    who = random.Random(seed * 104729 + 2)
    for a in (model.get("stop"), model.get("fail")):
        if a is not None:
            a["by"] = "module" if a["hook"].endswith("_step") else who.choice(["module", "callback"])
    callbacks = {}
    if r.random() < 0.35:
        es = {"monitor": r.choice(monitors), "patience": r.randint(0, 2), "mode": r.choice(["min", "min", "max"])}
        if r.random() < 0.3:
            es["min_delta"] = r.choice([0.01, 0.5])
        if r.random() < 0.15:
            es["stopping_threshold"] = r.choice([0.5, 2.0])
        if r.random() < 0.1:
            es["divergence_threshold"] = r.choice([5.0, 20.0])
        if r.random() < 0.2:
            es["check_on_train_epoch_end"] = r.choice([True, False])
        callbacks["early_stopping"] = es
    if r.random() < 0.5:
        mc = {"save_top_k": r.choice([-1, 0, 1, 1, 2]), "save_last": r.random() < 0.4}
        if r.random() < 0.7:
            mc["monitor"] = r.choice(monitors)
            mc["mode"] = r.choice(["min", "min", "max"])
        elif mc["save_top_k"] not in (-1, 0, 1):
            mc["save_top_k"] = 1
        u = r.random()
        if u < 0.25:
            mc["every_n_train_steps"] = r.randint(1, 3)
        elif u < 0.4:
            mc["every_n_epochs"] = r.choice([1, 2])
        mon = mc.get("monitor")
        mc["filename"] = r.choice(["{epoch}-{step}", "{epoch}-{step}-{%s:.6f}" % mon if mon else "{epoch}"])
        callbacks["checkpoint"] = mc
    if r.random() < 0.1 and "accumulate_grad_batches" not in tr and "fast_dev_run" not in tr:
        callbacks["accumulation_scheduler"] = {"0": 1, "1": 2}

    stages = ["fit"]
    u = r.random()
    if u < 0.1:
        stages = ["validate", "fit"]
    elif u < 0.2:
        stages = ["fit", "validate", "test"]
    elif u < 0.27:
        stages = ["test", "fit", "test"]
    elif u < 0.33:
        stages = ["fit", "predict"]
    elif u < 0.45 and "fast_dev_run" not in tr:
        callbacks.setdefault("checkpoint", {"save_top_k": 1, "filename": "{epoch}-{step}"})["save_last"] = True
        stages = ["fit", "resume"]
    resume_max_epochs = tr.get("max_epochs", 1) + r.randint(0, 2)

    # Version 3, from a stream of its own so that the rest is version 2's:
    # "guard", a value the module logs at each validation's epoch end that
    # is NaN or infinite in one epoch, often EarlyStopping's monitor (with
    # or without check_finite); and two optimizers with frequencies.
    v3 = random.Random(seed * 15485863 + 3)
    if v3.random() < 0.15:
        model["guard"] = {"values": [round(v3.uniform(0.1, 3.0), 3) for _ in range(8)],
                          "nonfinite_epoch": v3.randint(0, 3), "nonfinite": v3.choice(["nan", "inf", "-inf"])}
        if v3.random() < 0.7:
            es = callbacks.setdefault("early_stopping", {"patience": v3.randint(0, 2),
                                                         "mode": v3.choice(["min", "max"])})
            es["monitor"] = "guard"
            es["check_finite"] = v3.choice([True, True, False])
    if v3.random() < 0.04:
        model["two_optimizers"] = [v3.randint(1, 3), v3.randint(1, 3)]

    # Version 4 (issue 40), from a stream of its own so that the rest is
    # version 3's: "epoch_end", a value logged in on_train_epoch_end by the
    # module or by a callback (the Actor), often what EarlyStopping or
    # ModelCheckpoint monitors in that same hook; and a second fit on the
    # same Trainer (configure_optimizers again).
    v4 = random.Random(seed * 32452843 + 4)
    if v4.random() < 0.2:
        model["epoch_end"] = {"by": v4.choice(["module", "callback"]),
                              "values": [round(v4.uniform(0.1, 3.0), 3) for _ in range(8)]}
        u = v4.random()
        if u < 0.4:
            es = callbacks.setdefault("early_stopping", {"patience": v4.randint(0, 2)})
            es["monitor"], es["mode"] = "epoch_end", v4.choice(["min", "max"])
            es.pop("stopping_threshold", None)
            es.pop("divergence_threshold", None)
        elif u < 0.7 and "checkpoint" in callbacks:
            mc = callbacks["checkpoint"]
            mc["monitor"], mc["mode"] = "epoch_end", v4.choice(["min", "max"])
            mc["filename"] = "{epoch}-{epoch_end:.3f}"
    if v4.random() < 0.1 and stages == ["fit"]:
        stages = v4.choice([["fit", "fit"], ["fit", "validate", "test", "predict", "fit"]])
    sp = {"seed": seed, "generator_version": GENERATOR_VERSION, "n_train": n_train, "n_val_loaders": n_val,
          "trainer": tr, "model": model, "callbacks": callbacks, "stages": stages,
          "resume_max_epochs": resume_max_epochs}
    spec_v5(seed, sp, monitors)
    spec_v6(seed, sp)
    return sp


def spec_v6(seed, sp):
    """Version 6's draws, from a stream of their own so that the rest is
    version 5's: prog_bar on logged values, on_step=True or on_epoch=False
    in a hook that logs epoch values only, a OneCycleLR too short for the
    run, and a training loader over a seeded RandomSampler."""
    v6 = random.Random(seed * 67867967 + 6)
    model = sp["model"]
    logs = model.get("logs", [])
    for e in logs:
        if v6.random() < 0.35:
            e["prog_bar"] = True
    epoch_only = [e for e in logs if dict(LOG_HOOKS)[e["hook"]] == "epoch"]
    if epoch_only and v6.random() < 0.15:
        e = v6.choice(epoch_only)
        if v6.random() < 0.6:
            e["on_step"] = True
        else:
            e["on_epoch"] = False
    s = model.get("scheduler")
    if s is None and not model.get("manual") and not model.get("two_optimizers") and v6.random() < 0.08:
        s = model["scheduler"] = {"kind": "onecycle", "max_lr": 0.1, "pct_start": 0.3, "anneal_strategy": "cos",
                                  "div_factor": 25.0, "final_div_factor": 1e4, "three_phase": False,
                                  "total_steps": 5, "interval": "step", "frequency": 1}
    if s is not None and s["kind"] == "onecycle" and v6.random() < 0.6:
        # Stepped at every batch, most runs step it more often than that.
        s.update(total_steps=v6.choice([5, 6]), interval="step", frequency=1)
    if v6.random() < 0.25:
        sp["shuffle_seed"] = v6.randint(0, 2**20)


def spec_v5(seed, sp, monitors):
    """Version 5's draws (issue 40), from a stream of their own so that the
    rest is version 4's: the optimizer, the scheduler, the data, logged
    values, manual optimization, the stage sequence and the checkpoint a
    resume starts from."""
    v5 = random.Random(seed * 49979687 + 5)
    tr, model, callbacks = sp["trainer"], sp["model"], sp["callbacks"]
    ch = v5.choice
    u = v5.random()
    if u < 0.3:
        opt = None  # SGD at lr 0.1, as versions 1-4
    elif u < 0.5:
        opt = {"kind": "sgd", "lr": ch([0.05, 0.1]), "momentum": ch([0.0, 0.5, 0.9]),
               "dampening": ch([0.0, 0.0, 0.1]), "weight_decay": ch([0.0, 0.01, 0.1])}
        opt["nesterov"] = opt["momentum"] > 0 and opt["dampening"] == 0 and v5.random() < 0.4
    elif u < 0.72:
        opt = {"kind": "adam", "lr": ch([0.01, 0.05, 0.1]), "betas": ch([[0.9, 0.999], [0.8, 0.99]]),
               "eps": ch([1e-8, 1e-6]), "weight_decay": ch([0.0, 0.0, 0.01])}
    elif u < 0.92:
        opt = {"kind": "adamw", "lr": ch([0.01, 0.05, 0.1]), "betas": ch([[0.9, 0.999], [0.8, 0.99]]),
               "eps": ch([1e-8, 1e-6]), "weight_decay": ch([0.01, 0.1, 0.0])}
    else:
        opt = {"kind": "rmsprop", "lr": ch([0.01, 0.05]), "alpha": ch([0.99, 0.9]), "eps": ch([1e-8, 1e-6]),
               "momentum": ch([0.0, 0.5]), "weight_decay": ch([0.0, 0.01])}
    if opt is not None:
        model["optimizer"] = opt

    # Version 1's scheduler in version 5's form.
    old, patience = model.pop("sched", None), model.pop("plateau_patience", 0)
    if old:
        kind, interval, freq = old
        s = {"kind": "step", "interval": interval, "frequency": freq, "step_size": 1, "gamma": 0.5}
        if kind != "step":
            s = {"kind": "plateau", "interval": interval, "frequency": freq, "monitor": kind.split(":", 1)[1],
                 "mode": "min", "factor": 0.5, "patience": patience, "threshold": 1e-4, "threshold_mode": "rel",
                 "cooldown": 0, "min_lr": 0.0, "eps": 1e-8}
        model["scheduler"] = s
    if v5.random() < 0.45:
        kind = ch(SCHEDULERS)
        s = {"kind": kind, "interval": ch(["epoch", "epoch", "step"]), "frequency": ch([1, 1, 2, 3])}
        if kind == "step":
            s.update(step_size=ch([1, 2, 3]), gamma=ch([0.5, 0.1, 0.9]))
        elif kind == "multistep":
            s.update(milestones=sorted(v5.sample(range(1, 8), v5.randint(1, 3))), gamma=ch([0.5, 0.1]))
        elif kind == "exponential":
            s.update(gamma=ch([0.5, 0.9]))
        elif kind == "cosine":
            s.update(t_max=ch([2, 3, 5, 10]), eta_min=ch([0.0, 0.001]))
        elif kind == "cosine_warm":
            s.update(t_0=ch([1, 2, 3]), t_mult=ch([1, 2]), eta_min=ch([0.0, 0.001]))
        elif kind == "linear":
            s.update(start_factor=ch([0.25, 0.5]), end_factor=ch([1.0, 0.5]), total_iters=ch([2, 3, 5]))
        elif kind == "onecycle":
            s.update(max_lr=ch([0.05, 0.1]), total_steps=ch([12, 24, 48, 48]), pct_start=ch([0.3, 0.25]),
                     anneal_strategy=ch(["cos", "linear"]), div_factor=ch([25.0, 10.0]),
                     final_div_factor=ch([1e4, 100.0]), three_phase=v5.random() < 0.3)
        elif kind == "lambda":
            s.update(fn=ch(sorted(LAMBDAS)))
        else:
            s.update(monitor=ch(monitors + ["train_loss_step"] if s["interval"] == "step" else monitors),
                     mode=ch(["min", "min", "max"]), factor=ch([0.5, 0.1]), patience=ch([0, 1, 2]),
                     threshold=ch([1e-4, 0.01, 0.0]), threshold_mode=ch(["rel", "abs"]), cooldown=ch([0, 0, 1]),
                     min_lr=ch([0.0, 0.02]), eps=ch([1e-8, 0.0, 0.01]))
        model["scheduler"] = s

    n_val = sp["n_val_loaders"]
    if v5.random() < 0.5:
        d = {"n_train": v5.randint(9, 20), "batch": ch([3, 4, 5, 6]), "drop_last": v5.random() < 0.3,
             "val": [ch([8, 8, 7, 6, 5]) for _ in range(n_val)], "val_batch": ch([3, 4, 5])}
        sp["data"] = d
        # An integer val_check_interval Lightning would refuse for the new
        # number of training batches: the largest it takes.
        batches = d["n_train"] // d["batch"] if d["drop_last"] else -(-d["n_train"] // d["batch"])
        lim = tr.get("limit_train_batches")
        if isinstance(lim, int):
            batches = min(batches, lim)
        elif lim is not None:
            batches = int(batches * lim)
        vci = tr.get("val_check_interval")
        if isinstance(vci, int) and tr.get("check_val_every_n_epoch", 1) is not None and vci > batches:
            tr["val_check_interval"] = max(1, batches)

    logs = []
    for i in range(ch([0, 0, 0, 1, 1, 2, 3])):
        hook, kind = ch(LOG_HOOKS)
        e = {"name": "h%d" % i, "hook": hook, "by": "module" if kind == "step" else ch(["module", "callback"]),
             "a": ch([0.5, 1.0, 2.0]), "b": ch([0.0, 0.25, -0.5]), "c": ch([0.0, 0.125]), "d": ch([0.0, 0.0625]),
             "reduce_fx": ch(["mean", "mean", "sum", "max", "min"]), "logger": v5.random() > 0.15}
        if kind == "epoch":
            e["on_step"], e["on_epoch"] = ch([None, False]), ch([None, True])
        else:
            e["on_step"], e["on_epoch"] = ch([None, True, False]), ch([None, True, False])
        logs.append(e)
    if logs:
        model["logs"] = logs
        # Often what EarlyStopping or ModelCheckpoint monitors.
        keys = [k for k in map(lambda e: epoch_key(e, n_val), logs) if k]
        if keys and v5.random() < 0.4:
            key = ch(keys)
            if "early_stopping" in callbacks and v5.random() < 0.6:
                es = callbacks["early_stopping"]
                es["monitor"] = key
                es.pop("check_finite", None)
            elif "checkpoint" in callbacks:
                mc = callbacks["checkpoint"]
                mc["monitor"], mc["mode"] = key, ch(["min", "max"])
                mc["filename"] = "{epoch}-{step}-{%s:.4f}" % key
                if mc.get("save_top_k") not in (-1, 0, 1, 2):
                    mc["save_top_k"] = 1

    if v5.random() < 0.1:
        model["manual"] = True
        for k in ("accumulate_grad_batches", "gradient_clip_val", "gradient_clip_algorithm"):
            tr.pop(k, None)
        callbacks.pop("accumulation_scheduler", None)
        model.pop("two_optimizers", None)
        if v5.random() < 0.4:
            model["two_optimizers"] = [1, 1]  # both step at every batch; no frequencies
        if v5.random() < 0.7:
            model.pop("scheduler", None)

    stages = sp["stages"]
    if stages == ["fit"] and v5.random() < 0.12:
        stages = [ch(["fit", "fit", "validate", "test", "predict"]) for _ in range(v5.randint(2, 4))]
    elif stages == ["fit"] and "fast_dev_run" not in tr and v5.random() < 0.12:
        stages = ["fit", "resume"]
        mc = callbacks.setdefault("checkpoint", {"save_top_k": ch([1, -1, -1]), "filename": "{epoch}-{step}"})
        if "every_n_epochs" not in mc and v5.random() < 0.5:
            mc["every_n_train_steps"] = v5.randint(1, 3)
    sp["stages"] = stages
    if "resume" in stages:
        if v5.random() < 0.5:
            # The save at this fraction of the first run's saves that left a
            # file of its own (resume_candidates).
            sp["resume_from"] = {"save": round(v5.random(), 3)}
        else:
            sp["resume_from"] = "last"
            callbacks["checkpoint"]["save_last"] = True


def epoch_key(e, n_val):
    """The name a logged value's epoch value has in callback_metrics, None
    if it has none that a monitor could read at a training epoch end or a
    validation end."""
    kind = dict(LOG_HOOKS)[e["hook"]]
    train = e["hook"].startswith("on_train") or e["hook"] == "training_step"
    val = "validation" in e["hook"]
    if not (train or val):
        return None
    on_step, on_epoch = resolved_options(e)
    if not on_epoch:
        return None
    key = e["name"] + ("_epoch" if on_step else "")
    if val and kind != "epoch" and n_val > 1:
        key += "/dataloader_idx_0"
    return key


def resolved_options(e):
    """Lightning's on_step and on_epoch for a logged value of the spec."""
    per_step = e["hook"] in ("training_step", "on_train_batch_start", "on_train_batch_end")
    on_step = per_step if e["on_step"] is None else e["on_step"]
    on_epoch = (not per_step) if e["on_epoch"] is None else e["on_epoch"]
    return on_step, on_epoch


class PlannedFailure(RuntimeError):
    pass


def act(t, by, stop, fail, hook, batch_idx):
    """Stops or fails if the spec asks `by` (module or callback) to in hook,
    now (never in the sanity check)."""
    if t.sanity_checking:
        return
    for kind, a in (("stop", stop), ("fail", fail)):
        if a and a.get("by", "module") == by and a["hook"] == hook and a["epoch"] == t.current_epoch \
                and a["batch"] in (None, batch_idx):
            if a["batch"] is not None and batch_idx is None:
                continue
            if kind == "stop":
                t.should_stop = True
            else:
                raise PlannedFailure("planned failure")


def log_epoch_end(module, spec, by):
    """Logs the spec's "epoch_end" value of the epoch when `by` logs it."""
    if spec and spec["by"] == by:
        module.log("epoch_end", spec["values"][min(module.trainer.current_epoch, 7)])


def log_options(e):
    """The self.log keyword arguments of a logged value of the spec."""
    kw = {"reduce_fx": e["reduce_fx"], "logger": e["logger"], "prog_bar": e.get("prog_bar", False)}
    if e["on_step"] is not None:
        kw["on_step"] = e["on_step"]
    if e["on_epoch"] is not None:
        kw["on_epoch"] = e["on_epoch"]
    return kw


def log_in_hook(module, logs, by, hook, batch_idx=None):
    """Logs the spec's values that `by` logs in hook: a + b*epoch +
    c*batch_idx + d*global_step."""
    t = module.trainer
    for e in logs:
        if e["hook"] == hook and e["by"] == by:
            v = e["a"] + e["b"] * t.current_epoch + e["c"] * (batch_idx or 0) + e["d"] * t.global_step
            module.log(e["name"], float(v), **log_options(e))


def log_in_step(module, logs, hook, loss):
    """Logs the spec's values logged in a step: a*loss + b."""
    for e in logs:
        if e["hook"] == hook:
            module.log(e["name"], e["a"] * loss + e["b"], **log_options(e))


class Actor(pl.Callback):
    """The callback that asks for the spec's stop or failure when its "by"
    is "callback", and logs the values the spec has a callback log; it comes
    right after the Recorder."""

    def __init__(self, spec_model):
        self.stop, self.fail = spec_model.get("stop"), spec_model.get("fail")
        self.epoch_end = spec_model.get("epoch_end")
        self.logs = spec_model.get("logs", [])

    def on_train_start(self, trainer, pl_module):
        log_in_hook(pl_module, self.logs, "callback", "on_train_start")
        act(trainer, "callback", self.stop, self.fail, "on_train_start", None)

    def on_train_epoch_start(self, trainer, pl_module):
        log_in_hook(pl_module, self.logs, "callback", "on_train_epoch_start")
        act(trainer, "callback", self.stop, self.fail, "on_train_epoch_start", None)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        log_in_hook(pl_module, self.logs, "callback", "on_train_batch_start", batch_idx)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        log_in_hook(pl_module, self.logs, "callback", "on_train_batch_end", batch_idx)
        act(trainer, "callback", self.stop, self.fail, "on_train_batch_end", batch_idx)

    def on_train_epoch_end(self, trainer, pl_module):
        log_epoch_end(pl_module, self.epoch_end, "callback")
        log_in_hook(pl_module, self.logs, "callback", "on_train_epoch_end")
        act(trainer, "callback", self.stop, self.fail, "on_train_epoch_end", None)

    def on_validation_start(self, trainer, pl_module):
        log_in_hook(pl_module, self.logs, "callback", "on_validation_start")

    def on_validation_epoch_start(self, trainer, pl_module):
        log_in_hook(pl_module, self.logs, "callback", "on_validation_epoch_start")

    def on_validation_batch_start(self, trainer, pl_module, batch, batch_idx, dataloader_idx=0):
        log_in_hook(pl_module, self.logs, "callback", "on_validation_batch_start", batch_idx)

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        log_in_hook(pl_module, self.logs, "callback", "on_validation_batch_end", batch_idx)

    def on_validation_epoch_end(self, trainer, pl_module):
        log_in_hook(pl_module, self.logs, "callback", "on_validation_epoch_end")
        act(trainer, "callback", self.stop, self.fail, "on_validation_epoch_end", None)

    def on_validation_end(self, trainer, pl_module):
        act(trainer, "callback", self.stop, self.fail, "on_validation_end", None)

    def on_test_start(self, trainer, pl_module):
        log_in_hook(pl_module, self.logs, "callback", "on_test_start")

    def on_test_epoch_start(self, trainer, pl_module):
        log_in_hook(pl_module, self.logs, "callback", "on_test_epoch_start")

    def on_test_batch_start(self, trainer, pl_module, batch, batch_idx, dataloader_idx=0):
        log_in_hook(pl_module, self.logs, "callback", "on_test_batch_start", batch_idx)

    def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        log_in_hook(pl_module, self.logs, "callback", "on_test_batch_end", batch_idx)

    def on_test_epoch_end(self, trainer, pl_module):
        log_in_hook(pl_module, self.logs, "callback", "on_test_epoch_end")


def make_optimizer(params, o):
    """The torch optimizer of a spec's "optimizer" (None: SGD at lr 0.1)."""
    if o is None:
        return torch.optim.SGD(params, lr=0.1)
    if o["kind"] == "sgd":
        return torch.optim.SGD(params, lr=o["lr"], momentum=o["momentum"], dampening=o["dampening"],
                               weight_decay=o["weight_decay"], nesterov=o["nesterov"])
    if o["kind"] == "rmsprop":
        return torch.optim.RMSprop(params, lr=o["lr"], alpha=o["alpha"], eps=o["eps"], momentum=o["momentum"],
                                   weight_decay=o["weight_decay"])
    cls = torch.optim.Adam if o["kind"] == "adam" else torch.optim.AdamW
    return cls(params, lr=o["lr"], betas=tuple(o["betas"]), eps=o["eps"], weight_decay=o["weight_decay"])


def make_scheduler(opt, s):
    """The torch scheduler of a spec's "scheduler" and its Lightning config."""
    L = torch.optim.lr_scheduler
    k = s["kind"]
    if k == "step":
        sch = L.StepLR(opt, step_size=s["step_size"], gamma=s["gamma"])
    elif k == "multistep":
        sch = L.MultiStepLR(opt, milestones=s["milestones"], gamma=s["gamma"])
    elif k == "exponential":
        sch = L.ExponentialLR(opt, gamma=s["gamma"])
    elif k == "cosine":
        sch = L.CosineAnnealingLR(opt, T_max=s["t_max"], eta_min=s["eta_min"])
    elif k == "cosine_warm":
        sch = L.CosineAnnealingWarmRestarts(opt, T_0=s["t_0"], T_mult=s["t_mult"], eta_min=s["eta_min"])
    elif k == "linear":
        sch = L.LinearLR(opt, start_factor=s["start_factor"], end_factor=s["end_factor"],
                         total_iters=s["total_iters"])
    elif k == "onecycle":
        sch = L.OneCycleLR(opt, max_lr=s["max_lr"], total_steps=s["total_steps"], pct_start=s["pct_start"],
                           anneal_strategy=s["anneal_strategy"], div_factor=s["div_factor"],
                           final_div_factor=s["final_div_factor"], three_phase=s["three_phase"],
                           cycle_momentum=False)
    elif k == "lambda":
        sch = L.LambdaLR(opt, LAMBDAS[s["fn"]])
    else:
        sch = L.ReduceLROnPlateau(opt, mode=s["mode"], factor=s["factor"], patience=s["patience"],
                                  threshold=s["threshold"], threshold_mode=s["threshold_mode"],
                                  cooldown=s["cooldown"], min_lr=s["min_lr"], eps=s["eps"])
    config = {"scheduler": sch, "interval": s["interval"], "frequency": s["frequency"]}
    if k == "plateau":
        config["monitor"] = s["monitor"]
    return config


class GenModel(th.Model):
    """trace_hooks.py's Model with a stop or failure in any hook, a plateau
    patience, one or two validation loaders, the spec's optimizer and
    scheduler, values logged in steps and hooks, and manual optimization."""

    def __init__(self, spec_model, n_val):
        super().__init__(log_train_epoch=spec_model["log_train_epoch"])
        self.stop, self.fail = spec_model.get("stop"), spec_model.get("fail")
        self.guard = spec_model.get("guard")
        self.two_optimizers = spec_model.get("two_optimizers")
        self.epoch_end = spec_model.get("epoch_end")
        self.opt_spec, self.sched_spec = spec_model.get("optimizer"), spec_model.get("scheduler")
        self.logs = spec_model.get("logs", [])
        self.manual = spec_model.get("manual", False)
        if self.manual:
            self.automatic_optimization = False
        self.n_val = n_val

    def _act(self, hook, batch_idx=None):
        act(self.trainer, "module", self.stop, self.fail, hook, batch_idx)

    def _log(self, hook, batch_idx=None):
        log_in_hook(self, self.logs, "module", hook, batch_idx)

    def training_step(self, batch, batch_idx):
        self._act("training_step", batch_idx)
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        th.ev("Model", "training_step", self.trainer, batch_idx=batch_idx,
              lr=self.trainer.optimizers[0].param_groups[0]["lr"])
        self.log("train_loss", loss, on_step=True, on_epoch=self.log_train_epoch)
        log_in_step(self, self.logs, "training_step", loss)
        if not self.manual:
            return loss
        # Manual optimization: each optimizer steps on the loss of the
        # weights as they are when it steps.
        opts = self.optimizers()
        opts = opts if isinstance(opts, list) else [opts]
        for i, opt in enumerate(opts):
            if i > 0:
                loss = torch.nn.functional.mse_loss(self(x), y)
            self.manual_backward(loss)
            opt.step()
            opt.zero_grad()

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        self._act("validation_step", batch_idx)
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        th.ev("Model", "validation_step", self.trainer, batch_idx=batch_idx)
        self.log("val_loss", loss)
        log_in_step(self, self.logs, "validation_step", loss)

    def test_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        th.ev("Model", "test_step", self.trainer, batch_idx=batch_idx)
        self.log("test_loss", loss)
        log_in_step(self, self.logs, "test_step", loss)

    def on_validation_epoch_end(self):
        super().on_validation_epoch_end()
        g = self.guard
        if g is not None and not self.trainer.sanity_checking:
            e = self.trainer.current_epoch
            self.log("guard", float(g["nonfinite"]) if e == g["nonfinite_epoch"] else g["values"][min(e, 7)])

    def configure_optimizers(self):
        th.ev("Model", "configure_optimizers", self.trainer)
        ps = list(self.parameters())
        if self.two_optimizers and not self.manual:
            (f0, f1) = self.two_optimizers
            return [{"optimizer": torch.optim.SGD(ps, lr=0.1), "frequency": f0},
                    {"optimizer": torch.optim.SGD(ps, lr=0.05), "frequency": f1}]
        opt = make_optimizer(ps, self.opt_spec)
        first = {"optimizer": opt}
        if self.sched_spec is not None:
            first["lr_scheduler"] = make_scheduler(opt, self.sched_spec)
        if self.two_optimizers:
            return [first, {"optimizer": torch.optim.SGD(ps, lr=0.05)}]
        return first

    def on_train_batch_end(self, outputs, batch, batch_idx):
        super().on_train_batch_end(outputs, batch, batch_idx)
        self._log("on_train_batch_end", batch_idx)
        self._act("on_train_batch_end", batch_idx)

    def on_train_epoch_end(self):
        super().on_train_epoch_end()
        log_epoch_end(self, self.epoch_end, "module")


def _acting(name, with_batch):
    parent = getattr(GenModel, name)

    def f(self, *args, **kwargs):
        out = parent(self, *args, **kwargs)
        self._log(name, args[1] if with_batch else None)
        self._act(name, args[1] if with_batch else None)
        return out

    return f


for _h in ("on_train_start", "on_train_epoch_start", "on_train_epoch_end", "on_validation_epoch_end",
           "on_validation_end"):
    setattr(GenModel, _h, _acting(_h, False))


def _logging(name, with_batch):
    parent = getattr(GenModel, name)

    def f(self, *args, **kwargs):
        out = parent(self, *args, **kwargs)
        self._log(name, args[1] if with_batch else None)
        return out

    return f


for _h, _b in (("on_train_batch_start", True), ("on_validation_start", False), ("on_validation_epoch_start", False),
               ("on_validation_batch_start", True), ("on_test_start", False),
               ("on_test_epoch_start", False), ("on_test_batch_start", True), ("on_test_epoch_end", False)):
    setattr(GenModel, _h, _logging(_h, _b))


def _logging_after(name):
    """A batch-end hook (outputs, batch, batch_idx, ...) that logs."""
    parent = getattr(GenModel, name)

    def f(self, outputs, batch, batch_idx, *args, **kwargs):
        out = parent(self, outputs, batch, batch_idx, *args, **kwargs)
        self._log(name, batch_idx)
        return out

    return f


for _h in ("on_validation_batch_end", "on_test_batch_end"):
    setattr(GenModel, _h, _logging_after(_h))


class SpyLogger(Logger):
    """Records every row Lightning's logger connector sends: step and metrics."""

    def __init__(self):
        super().__init__()
        self.rows = []

    @property
    def name(self):
        return "spy"

    @property
    def version(self):
        return 0

    def log_metrics(self, metrics, step=None):
        self.rows.append({"step": step, "metrics": {k: round(float(v), 6) for k, v in sorted(metrics.items())}})

    def log_hyperparams(self, params, *args, **kwargs):
        pass


class CkptSpy(th.CkptSpy):
    """trace_hooks.py's CkptSpy, recording the path under dirpath: a "/" in
    a monitored name (val_loss/dataloader_idx_0) makes a folder in Lightning."""

    def _save_checkpoint(self, trainer, filepath):
        th.ev("ModelCheckpoint", "save", trainer, file=os.path.relpath(filepath, self.dirpath))
        th.ModelCheckpoint._save_checkpoint(self, trainer, filepath)


class ESSpy(th.ESSpy):
    """trace_hooks.py's ESSpy, not recording in fast_dev_run, where
    _run_early_stopping_check returns before checking anything."""

    def _run_early_stopping_check(self, trainer):
        if trainer.fast_dev_run:
            return th.EarlyStopping._run_early_stopping_check(self, trainer)
        return super()._run_early_stopping_check(trainer)


def _callbacks(sp, root, dirpath=None):
    """The spec's callbacks (the checkpoints in dirpath, or a new directory
    under root)."""
    cb = sp["callbacks"]
    out = [Actor(sp["model"]), th.Monitor()]
    if "accumulation_scheduler" in cb:
        out.append(GradientAccumulationScheduler({int(k): v for k, v in cb["accumulation_scheduler"].items()}))
    if "early_stopping" in cb:
        out.append(ESSpy(**cb["early_stopping"]))
    if "checkpoint" in cb:
        out.append(CkptSpy(dirpath=dirpath or tempfile.mkdtemp(dir=root), **cb["checkpoint"]))
    return out


def loaders(sp):
    """The training loader and the validation loaders of a spec: version
    5's "data" takes the first rows of trace_hooks.py's data(20) and
    data(8, seed=1) with its batch sizes and drop_last; version 6's
    "shuffle_seed" reads the training set through a RandomSampler with a
    generator of that seed."""
    d = sp.get("data")

    def train_loader(ds, batch, drop_last=False):
        sampler = None
        if "shuffle_seed" in sp:
            sampler = RandomSampler(ds, generator=torch.Generator().manual_seed(sp["shuffle_seed"]))
        return DataLoader(ds, batch_size=batch, sampler=sampler, drop_last=drop_last)

    if d is None:
        return (train_loader(th.data(sp["n_train"], 4).dataset, 4),
                [th.data(8, 4, seed=1) for _ in range(sp["n_val_loaders"])])

    def first(n, rows, seed):
        x, y = th.data(rows, 4, seed=seed).dataset.tensors
        return TensorDataset(x[:n], y[:n])

    return (train_loader(first(d["n_train"], 20, 0), d["batch"], d["drop_last"]),
            [DataLoader(first(n, 8, 1), batch_size=d["val_batch"], shuffle=False) for n in d["val"]])


def norm_name(f):
    """A checkpoint name as both sides compare it: a "/" is "_" (volt) and
    no -vN (volt keeps a file per save where Lightning overwrites)."""
    return re.sub(r"-v[0-9]+\.ckpt$", ".ckpt", f.replace("/", "_"))


def resume_candidates(saves, exists):
    """The saves (index, file) of a run a resume may start from by name: not
    last.ckpt, with the file still there and no later save of the same
    name."""
    out = []
    for i, (at, f) in enumerate(saves):
        if f != "last.ckpt" and exists(f) and all(norm_name(g) != norm_name(f) for _, g in saves[i + 1:]):
            out.append((at, f))
    return out


def metrics_of(d):
    return {k: round(float(v), 6) for k, v in sorted(d.items())}


def record(sp):
    """Runs a spec in Lightning and returns its trace."""
    th.EVENTS.clear()
    torch.manual_seed(0)
    model = GenModel(sp["model"], sp["n_val_loaders"])
    root = tempfile.mkdtemp()
    kw = dict(max_epochs=2, enable_progress_bar=False, enable_model_summary=False, enable_checkpointing=False,
              default_root_dir=root, accelerator="cpu", devices=1, num_sanity_val_steps=2)
    kw.update(sp["trainer"])
    callbacks = _callbacks(sp, root)
    if "checkpoint" in sp["callbacks"]:
        kw["enable_checkpointing"] = True
    spy = SpyLogger()
    loggers = [spy]

    def trainer_for(kw):
        return pl.Trainer(callbacks=[th.Recorder()] + callbacks, logger=loggers, **kw)

    train, val = loaders(sp)
    if len(val) == 1:
        val = val[0]
    trainer, error, stages, resumed_from = None, None, [], None
    try:
        trainer = trainer_for(kw)
        for st in sp["stages"]:
            result = None
            try:
                if st == "fit":
                    trainer.fit(model, train, val)
                elif st == "validate":
                    result = [metrics_of(r) for r in trainer.validate(model, val)]
                elif st == "test":
                    result = [metrics_of(r) for r in trainer.test(model, val)]
                elif st == "predict":
                    out = trainer.predict(model, val)
                    per_loader = out if isinstance(val, list) else [out]
                    result = [[round(float(v), 6) for b in batches for v in b.reshape(-1)] for batches in per_loader]
                elif st == "resume":
                    mc = next(c for c in callbacks if isinstance(c, th.ModelCheckpoint))
                    ckpt = mc.last_model_path or None
                    if sp["resume_from"] != "last":
                        saves = [(i, e["file"]) for i, e in enumerate(th.EVENTS) if e["who"] == "ModelCheckpoint"]
                        cands = resume_candidates(saves, lambda f: os.path.exists(os.path.join(mc.dirpath, f)))
                        ckpt = None
                        if cands:
                            at, f = cands[min(int(sp["resume_from"]["save"] * len(cands)), len(cands) - 1)]
                            ckpt, resumed_from = os.path.join(mc.dirpath, f), {"event": at, "file": f}
                    elif ckpt:
                        resumed_from = {"event": max(i for i, e in enumerate(th.EVENTS)
                                                     if e["who"] == "ModelCheckpoint" and e["file"] == "last.ckpt"),
                                        "file": "last.ckpt"}
                    # A restarted process: new callbacks (the checkpoints
                    # in the same directory), a new module, new loaders, a
                    # new Trainer.
                    callbacks = _callbacks(sp, root, mc.dirpath)
                    train, val = loaders(sp)
                    if len(val) == 1:
                        val = val[0]
                    torch.manual_seed(0)
                    model = GenModel(sp["model"], sp["n_val_loaders"])
                    kw["max_epochs"] = sp["resume_max_epochs"]
                    trainer = trainer_for(kw)
                    trainer.fit(model, train, val, ckpt_path=ckpt)
            finally:
                stages.append({"stage": st, "result": result, "callback_metrics": metrics_of(trainer.callback_metrics),
                               "progress_bar_metrics": metrics_of(trainer.progress_bar_metrics)})
    except Exception as e:  # noqa: BLE001 - recorded: failures are part of the scenarios
        error = f"{type(e).__name__}: {e}"
    shutil.rmtree(root, ignore_errors=True)  # the run's files: checkpoints, Lightning's logs
    final = None
    if trainer is not None:
        final = {"epoch": trainer.current_epoch, "global_step": trainer.global_step,
                 "should_stop": bool(trainer.should_stop)}
    weights = {"weight": [float(v) for v in model.layer.weight.detach().reshape(-1)],
               "bias": [float(v) for v in model.layer.bias.detach().reshape(-1)]}
    return {"scenario": "seed_%d" % sp["seed"], "spec": sp, "lightning": pl.__version__,
            "trainer": sp["trainer"], "model": {}, "stages": sp["stages"], "error": error,
            "final": final, "events": list(th.EVENTS), "logged": spy.rows, "stage_results": stages,
            "weights": weights, "resumed_from": resumed_from}


def finite_json(v):
    """v with every NaN or infinite float written as the string "NaN",
    "Infinity" or "-Infinity" (JSON has no such numbers)."""
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, dict):
        return {k: finite_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [finite_json(x) for x in v]
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seeds", help="comma-separated seeds to record instead of --first/--count (found-v<N>.json.gz)")
    ap.add_argument("--out", required=True, help="a .json.gz file: one trace per line")
    ap.add_argument("--specs-only", action="store_true", help="write the specs, run nothing")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    logging.getLogger("lightning").setLevel(logging.ERROR)
    # mtime=0: the same traces give the same bytes, so the cache diffs cleanly.
    with open(args.out + ".tmp", "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz:
        seeds = range(args.first, args.first + args.count)
        if args.seeds:
            seeds = [int(x) for x in args.seeds.split(",")]
        for seed in seeds:
            sp = spec(seed)
            if args.specs_only:
                out = {"spec": sp}
            else:
                with contextlib.redirect_stdout(io.StringIO()):  # Lightning's result tables
                    out = record(sp)
            line = json.dumps(finite_json(out), sort_keys=True, separators=(",", ":"), allow_nan=False)
            gz.write((line + "\n").encode())
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
