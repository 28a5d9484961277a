"""Generate Trainer scenarios from seeds and record what real Lightning does in each.

A scenario is a pure function of its seed and GENERATOR_VERSION: spec(seed)
draws the Trainer arguments, the callbacks (EarlyStopping, ModelCheckpoint,
GradientAccumulationScheduler), the scheduler, a stop or a failure requested
in a random hook, the number of validation loaders and the sequence of
Fit/Validate/Test/Predict (and a resume from the run's last.ckpt). record()
runs it in Lightning with trace_hooks.py's recorders plus a logger spy, and
returns the trace: the spec, the hook events, the final counters, the error,
and every row each logger received. volt's TestConformanceGenerated reads the
same specs, runs them in volt and compares.

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
import shutil
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # trace_hooks.py
sys.path.insert(0, HERE)

import trace_hooks as th  # noqa: E402  (applies the torch shim)

import torch  # noqa: E402
import lightning.pytorch as pl  # noqa: E402
from lightning.pytorch.callbacks import GradientAccumulationScheduler  # noqa: E402
from lightning.pytorch.loggers.logger import Logger  # noqa: E402

# Bump when spec() draws differently or record() records differently: the
# cached traces are keyed by it.
GENERATOR_VERSION = 4  # 2: a stop or failure is asked by the module or by a callback
# 3: a logged value that turns non-finite (EarlyStopping's check_finite), two optimizers with frequencies
# 4: a value logged in on_train_epoch_end (by the module or a callback), often monitored; a second fit

# Hooks a stop (trainer.should_stop = True) or a failure (raise) may be
# requested in, as (module hook, needs a batch index). training_step and
# validation_step are failures only (volt runs them as graphs; its nearest
# host hook of the same batch fails instead).
STOP_HOOKS = [("on_train_epoch_start", False), ("on_train_batch_end", True), ("on_train_epoch_end", False),
              ("on_validation_epoch_end", False), ("on_validation_end", False)]
FAIL_HOOKS = STOP_HOOKS + [("training_step", True), ("validation_step", True), ("on_train_start", False)]


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
    return {"seed": seed, "generator_version": GENERATOR_VERSION, "n_train": n_train, "n_val_loaders": n_val,
            "trainer": tr, "model": model, "callbacks": callbacks, "stages": stages,
            "resume_max_epochs": resume_max_epochs}


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


class Actor(pl.Callback):
    """The callback that asks for the spec's stop or failure when its "by"
    is "callback"; it comes right after the Recorder."""

    def __init__(self, spec_model):
        self.stop, self.fail = spec_model.get("stop"), spec_model.get("fail")
        self.epoch_end = spec_model.get("epoch_end")

    def on_train_start(self, trainer, pl_module):
        act(trainer, "callback", self.stop, self.fail, "on_train_start", None)

    def on_train_epoch_start(self, trainer, pl_module):
        act(trainer, "callback", self.stop, self.fail, "on_train_epoch_start", None)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        act(trainer, "callback", self.stop, self.fail, "on_train_batch_end", batch_idx)

    def on_train_epoch_end(self, trainer, pl_module):
        log_epoch_end(pl_module, self.epoch_end, "callback")
        act(trainer, "callback", self.stop, self.fail, "on_train_epoch_end", None)

    def on_validation_epoch_end(self, trainer, pl_module):
        act(trainer, "callback", self.stop, self.fail, "on_validation_epoch_end", None)

    def on_validation_end(self, trainer, pl_module):
        act(trainer, "callback", self.stop, self.fail, "on_validation_end", None)


class GenModel(th.Model):
    """trace_hooks.py's Model with a stop or failure in any hook, a plateau
    patience, and one or two validation loaders."""

    def __init__(self, spec_model, n_val):
        sched = spec_model.get("sched")
        super().__init__(sched=tuple(sched) if sched else None, log_train_epoch=spec_model["log_train_epoch"])
        self.stop, self.fail = spec_model.get("stop"), spec_model.get("fail")
        self.plateau_patience = spec_model.get("plateau_patience", 0)
        self.guard = spec_model.get("guard")
        self.two_optimizers = spec_model.get("two_optimizers")
        self.epoch_end = spec_model.get("epoch_end")
        self.n_val = n_val

    def _act(self, hook, batch_idx=None):
        act(self.trainer, "module", self.stop, self.fail, hook, batch_idx)

    def training_step(self, batch, batch_idx):
        self._act("training_step", batch_idx)
        return super().training_step(batch, batch_idx)

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        self._act("validation_step", batch_idx)
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        th.ev("Model", "validation_step", self.trainer, batch_idx=batch_idx)
        self.log("val_loss", loss)

    def test_step(self, batch, batch_idx, dataloader_idx=0):
        return super().test_step(batch, batch_idx)

    def on_validation_epoch_end(self):
        super().on_validation_epoch_end()
        g = self.guard
        if g is not None and not self.trainer.sanity_checking:
            e = self.trainer.current_epoch
            self.log("guard", float(g["nonfinite"]) if e == g["nonfinite_epoch"] else g["values"][min(e, 7)])

    def configure_optimizers(self):
        if self.two_optimizers:
            th.ev("Model", "configure_optimizers", self.trainer)
            (f0, f1), ps = self.two_optimizers, list(self.parameters())
            return [{"optimizer": torch.optim.SGD(ps, lr=0.1), "frequency": f0},
                    {"optimizer": torch.optim.SGD(ps, lr=0.05), "frequency": f1}]
        out = super().configure_optimizers()
        if isinstance(out, dict) and isinstance(out["lr_scheduler"]["scheduler"],
                                                torch.optim.lr_scheduler.ReduceLROnPlateau):
            out["lr_scheduler"]["scheduler"].patience = self.plateau_patience
        return out

    def on_train_batch_end(self, outputs, batch, batch_idx):
        super().on_train_batch_end(outputs, batch, batch_idx)
        self._act("on_train_batch_end", batch_idx)

    def on_train_epoch_end(self):
        super().on_train_epoch_end()
        log_epoch_end(self, self.epoch_end, "module")


def _acting(name, with_batch):
    parent = getattr(GenModel, name)

    def f(self, *args, **kwargs):
        out = parent(self, *args, **kwargs)
        self._act(name, args[1] if with_batch else None)
        return out

    return f


for _h in ("on_train_start", "on_train_epoch_start", "on_train_epoch_end", "on_validation_epoch_end",
           "on_validation_end"):
    setattr(GenModel, _h, _acting(_h, False))


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


def _callbacks(sp, root):
    cb = sp["callbacks"]
    out = [Actor(sp["model"]), th.Monitor()]
    if "accumulation_scheduler" in cb:
        out.append(GradientAccumulationScheduler({int(k): v for k, v in cb["accumulation_scheduler"].items()}))
    if "early_stopping" in cb:
        out.append(ESSpy(**cb["early_stopping"]))
    if "checkpoint" in cb:
        out.append(CkptSpy(dirpath=tempfile.mkdtemp(dir=root), **cb["checkpoint"]))
    return out


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

    train = th.data(sp["n_train"], 4)
    val = [th.data(8, 4, seed=1) for _ in range(sp["n_val_loaders"])]
    if len(val) == 1:
        val = val[0]
    trainer, error = None, None
    try:
        trainer = trainer_for(kw)
        for st in sp["stages"]:
            if st == "fit":
                trainer.fit(model, train, val)
            elif st == "validate":
                trainer.validate(model, val)
            elif st == "test":
                trainer.test(model, val)
            elif st == "predict":
                trainer.predict(model, val)
            elif st == "resume":
                ckpt = next(c for c in callbacks if isinstance(c, th.ModelCheckpoint)).last_model_path
                kw["max_epochs"] = sp["resume_max_epochs"]
                trainer = trainer_for(kw)
                trainer.fit(model, train, val, ckpt_path=ckpt or None)
    except Exception as e:  # noqa: BLE001 - recorded: failures are part of the scenarios
        error = f"{type(e).__name__}: {e}"
    shutil.rmtree(root, ignore_errors=True)  # the run's files: checkpoints, Lightning's logs
    final = None
    if trainer is not None:
        final = {"epoch": trainer.current_epoch, "global_step": trainer.global_step,
                 "should_stop": bool(trainer.should_stop)}
    return {"scenario": "seed_%d" % sp["seed"], "spec": sp, "lightning": pl.__version__,
            "trainer": sp["trainer"], "model": {}, "stages": sp["stages"], "error": error,
            "final": final, "events": list(th.EVENTS), "logged": spy.rows}


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
