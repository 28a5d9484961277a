"""Record PyTorch Lightning's hook order and monitor semantics as JSON.

(volt's copy of /work/shared/golden/lightning/trace_hooks.py, with one more
scenario: resume_from_last_checkpoint.)

Runs real Lightning (2.2.5 here) on a tiny regression model in several
scenarios and writes, per scenario, the sequence of hook calls (callbacks
first, as Lightning calls them, then the module), the learning rate seen at
every training batch, which values the monitoring callbacks read, and the
counters at the end. volt's hook-order and semantics tests compare against
these files; see README.md beside this script.

Usage: PYTHONPATH=<site with lightning> python3 trace_hooks.py OUT_DIR
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:  # torch 1.13 on Python 3.11 needs this shim (Debian bookworm); harmless elsewhere
    import torch_py311_shim

    torch_py311_shim.apply()
except ImportError:
    pass

import torch
from torch.utils.data import DataLoader, TensorDataset

import lightning.pytorch as pl
from lightning.pytorch.callbacks import Callback, EarlyStopping, ModelCheckpoint

EVENTS = []


def ev(who, hook, trainer=None, **kw):
    e = {"who": who, "hook": hook}
    if trainer is not None:
        e["epoch"] = trainer.current_epoch
        e["global_step"] = trainer.global_step
        e["sanity"] = bool(trainer.sanity_checking)
    e.update(kw)
    EVENTS.append(e)


PER_EVENT_HOOKS = [
    "setup", "teardown", "on_fit_start", "on_fit_end",
    "on_sanity_check_start", "on_sanity_check_end",
    "on_train_start", "on_train_end", "on_train_epoch_start", "on_train_epoch_end",
    "on_validation_start", "on_validation_end", "on_validation_epoch_start", "on_validation_epoch_end",
    "on_test_start", "on_test_end", "on_test_epoch_start", "on_test_epoch_end",
    "on_predict_start", "on_predict_end", "on_predict_epoch_start", "on_predict_epoch_end",
    "on_exception", "on_save_checkpoint", "on_load_checkpoint",
]
BATCH_HOOKS = [
    "on_train_batch_start", "on_train_batch_end",
    "on_validation_batch_start", "on_validation_batch_end",
    "on_test_batch_start", "on_test_batch_end",
    "on_predict_batch_start", "on_predict_batch_end",
]
STEP_HOOKS = ["on_before_backward", "on_after_backward", "on_before_optimizer_step", "on_before_zero_grad"]


class Recorder(Callback):
    """A callback that records every hook it gets."""

    def __init__(self, name="Callback"):
        self.name = name


def _callback_hook(name):
    def f(self, trainer, pl_module, *args, **kwargs):
        kw = {}
        if name in BATCH_HOOKS:
            # (outputs?, batch, batch_idx, dataloader_idx?)
            a = list(args)
            if name.endswith("_end"):
                a = a[1:]
            kw["batch_idx"] = a[1] if len(a) > 1 else kwargs.get("batch_idx")
        if name in ("setup", "teardown"):
            kw["stage"] = args[0] if args else kwargs.get("stage")
        ev(self.name, name, trainer, **kw)

    return f


for _h in PER_EVENT_HOOKS + BATCH_HOOKS + STEP_HOOKS:
    setattr(Recorder, _h, _callback_hook(_h))


class Model(pl.LightningModule):
    """Linear regression 4 -> 1 with every hook recorded."""

    def __init__(self, opt="sgd", sched=None, log_train_epoch=True, stop_at=None, fail_at=None):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
        self.opt, self.sched = opt, sched
        self.log_train_epoch = log_train_epoch
        self.stop_at = stop_at  # (epoch, batch_idx): request a stop in on_train_batch_end
        self.fail_at = fail_at  # (epoch, batch_idx): raise in training_step

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch, batch_idx):
        if self.fail_at == (self.current_epoch, batch_idx):
            raise RuntimeError("planned failure")
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        ev("Model", "training_step", self.trainer, batch_idx=batch_idx,
           lr=self.trainer.optimizers[0].param_groups[0]["lr"])
        self.log("train_loss", loss, on_step=True, on_epoch=self.log_train_epoch)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        ev("Model", "validation_step", self.trainer, batch_idx=batch_idx)
        self.log("val_loss", loss)

    def test_step(self, batch, batch_idx):
        x, y = batch
        ev("Model", "test_step", self.trainer, batch_idx=batch_idx)
        self.log("test_loss", torch.nn.functional.mse_loss(self(x), y))

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        ev("Model", "predict_step", self.trainer, batch_idx=batch_idx)
        return self(batch[0])

    def configure_optimizers(self):
        ev("Model", "configure_optimizers", self.trainer if self._trainer else None)
        opt = torch.optim.SGD(self.parameters(), lr=0.1)
        if self.sched is None:
            return opt
        kind, interval, freq = self.sched
        if kind == "step":
            s = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
            return {"optimizer": opt, "lr_scheduler": {"scheduler": s, "interval": interval, "frequency": freq}}
        s = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=0)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": s, "interval": interval, "frequency": freq,
                                                     "monitor": kind.split(":", 1)[1]}}

    def lr_scheduler_step(self, scheduler, metric):
        ev("Model", "lr_scheduler_step", self.trainer, metric=None if metric is None else float(metric))
        super().lr_scheduler_step(scheduler, metric)

    def optimizer_step(self, *args, **kwargs):
        ev("Model", "optimizer_step", self.trainer)
        super().optimizer_step(*args, **kwargs)

    def configure_gradient_clipping(self, optimizer, gradient_clip_val=None, gradient_clip_algorithm=None):
        ev("Model", "configure_gradient_clipping", self.trainer)
        super().configure_gradient_clipping(optimizer, gradient_clip_val, gradient_clip_algorithm)

    def on_train_batch_end(self, outputs, batch, batch_idx):
        ev("Model", "on_train_batch_end", self.trainer, batch_idx=batch_idx)
        if self.stop_at == (self.current_epoch, batch_idx):
            self.trainer.should_stop = True


def _module_hook(name):
    def f(self, *args, **kwargs):
        kw = {}
        if name in BATCH_HOOKS:
            a = list(args)
            if name.endswith("_end"):
                a = a[1:]
            kw["batch_idx"] = a[1] if len(a) > 1 else kwargs.get("batch_idx")
        if name in ("setup", "teardown"):
            kw["stage"] = args[0] if args else kwargs.get("stage")
        ev("Model", name, self.trainer if self._trainer else None, **kw)
        parent = getattr(super(Model, self), name, None)
        if parent is not None:
            return parent(*args, **kwargs)

    return f


for _h in PER_EVENT_HOOKS + BATCH_HOOKS + STEP_HOOKS:
    if _h in ("on_train_batch_end", "on_exception"):
        continue
    setattr(Model, _h, _module_hook(_h))


class Monitor(Callback):
    """Records what a monitoring callback would read: callback_metrics at
    on_validation_end and on_train_epoch_end."""

    def on_validation_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            ev("Monitor", "metrics@on_validation_end", trainer, metrics=_metrics(trainer))

    def on_train_epoch_end(self, trainer, pl_module):
        ev("Monitor", "metrics@on_train_epoch_end", trainer, metrics=_metrics(trainer))


def _metrics(trainer):
    return {k: round(float(v), 6) for k, v in sorted(trainer.callback_metrics.items())}


class CkptSpy(ModelCheckpoint):
    def _save_checkpoint(self, trainer, filepath):
        ev("ModelCheckpoint", "save", trainer, file=os.path.basename(filepath))
        super()._save_checkpoint(trainer, filepath)


class ESSpy(EarlyStopping):
    def _run_early_stopping_check(self, trainer):
        ev("EarlyStopping", "check", trainer,
           value=round(float(trainer.callback_metrics[self.monitor]), 6) if self.monitor in trainer.callback_metrics else None)
        super()._run_early_stopping_check(trainer)


def data(n, batch, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1
    return DataLoader(TensorDataset(x, y), batch_size=batch, shuffle=False)


def run(name, out_dir, trainer_kw, model_kw=None, callbacks=(), stages=("fit",), n_train=16, n_val=8, batch=4,
        resume_max_epochs=None):
    EVENTS.clear()
    torch.manual_seed(0)
    model = Model(**(model_kw or {}))
    root = tempfile.mkdtemp()
    kw = dict(max_epochs=2, logger=False, enable_progress_bar=False, enable_model_summary=False,
              enable_checkpointing=False, default_root_dir=root, accelerator="cpu", devices=1,
              num_sanity_val_steps=2)
    kw.update(trainer_kw)
    if any(isinstance(c, ModelCheckpoint) for c in callbacks):
        kw["enable_checkpointing"] = True
    trainer = pl.Trainer(callbacks=[Recorder()] + list(callbacks), **kw)
    train, val = data(n_train, batch), data(n_val, batch, seed=1)
    error = None
    try:
        for st in stages:
            if st == "fit":
                trainer.fit(model, train, val)
            elif st == "validate":
                trainer.validate(model, val)
            elif st == "test":
                trainer.test(model, val)
            elif st == "predict":
                trainer.predict(model, val)
            elif st == "resume":
                # A new Trainer (a restarted process) resumes from the
                # ModelCheckpoint's last.ckpt and trains to resume_max_epochs.
                ckpt = next(c for c in callbacks if isinstance(c, ModelCheckpoint)).last_model_path
                kw["max_epochs"] = resume_max_epochs
                trainer = pl.Trainer(callbacks=[Recorder()] + list(callbacks), **kw)
                trainer.fit(model, train, val, ckpt_path=ckpt)
    except Exception as e:  # noqa: BLE001 - recorded, the scenario is about failures
        error = f"{type(e).__name__}: {e}"
    result = {
        "scenario": name,
        "lightning": pl.__version__,
        "trainer": {k: v for k, v in trainer_kw.items()},
        "model": model_kw or {},
        "stages": list(stages),
        "train_batches_per_epoch": (n_train + batch - 1) // batch,
        "val_batches": (n_val + batch - 1) // batch,
        "error": error,
        "final": {"epoch": trainer.current_epoch, "global_step": trainer.global_step,
                  "should_stop": bool(trainer.should_stop)},
        "events": list(EVENTS),
    }
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(result, f, indent=1)
    print(f"{name}: {len(EVENTS)} events, error={error}")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    run("fit_validate_test_predict", out, {}, stages=("fit", "validate", "test", "predict"))
    run("accumulate_2_partial_window", out, {"accumulate_grad_batches": 2, "max_epochs": 1}, n_train=20)
    run("val_check_interval_half", out, {"val_check_interval": 0.5, "max_epochs": 1, "num_sanity_val_steps": 0})
    run("check_val_every_2_epochs", out, {"check_val_every_n_epoch": 2, "max_epochs": 3, "num_sanity_val_steps": 0})
    run("monitor_train_epoch_metric", out, {"max_epochs": 3, "num_sanity_val_steps": 0},
        callbacks=[Monitor(), CkptSpy(dirpath=tempfile.mkdtemp(), monitor="train_loss_epoch", save_top_k=-1,
                                      filename="{epoch}-{train_loss_epoch:.6f}"),
                   ESSpy(monitor="train_loss_epoch", patience=5)])
    run("monitor_val_metric", out, {"max_epochs": 3, "num_sanity_val_steps": 0},
        callbacks=[Monitor(), CkptSpy(dirpath=tempfile.mkdtemp(), monitor="val_loss", save_top_k=-1,
                                      filename="{epoch}-{val_loss:.6f}"),
                   ESSpy(monitor="val_loss", patience=5)])
    run("monitor_val_metric_half_epoch", out, {"max_epochs": 2, "num_sanity_val_steps": 0, "val_check_interval": 0.5},
        callbacks=[Monitor(), CkptSpy(dirpath=tempfile.mkdtemp(), monitor="val_loss", save_top_k=-1,
                                      filename="{epoch}-{step}-{val_loss:.6f}"),
                   ESSpy(monitor="val_loss", patience=5)])
    run("scheduler_step_per_epoch", out, {"max_epochs": 3, "num_sanity_val_steps": 0},
        model_kw={"sched": ("step", "epoch", 1)})
    run("scheduler_step_per_2_steps", out, {"max_epochs": 2, "num_sanity_val_steps": 0},
        model_kw={"sched": ("step", "step", 2)})
    run("scheduler_plateau_on_train_epoch_metric", out, {"max_epochs": 3, "num_sanity_val_steps": 0},
        model_kw={"sched": ("plateau:train_loss_epoch", "epoch", 1)})
    run("scheduler_plateau_on_val_metric", out, {"max_epochs": 3, "num_sanity_val_steps": 0},
        model_kw={"sched": ("plateau:val_loss", "epoch", 1)})
    run("stop_requested_mid_epoch", out, {"max_epochs": 3, "num_sanity_val_steps": 0},
        model_kw={"stop_at": (0, 1)})
    run("stop_requested_mid_epoch_min_epochs_2", out, {"max_epochs": 3, "min_epochs": 2, "num_sanity_val_steps": 0},
        model_kw={"stop_at": (0, 1)})
    run("failure_in_training_step", out, {"max_epochs": 2, "num_sanity_val_steps": 0},
        model_kw={"fail_at": (1, 2)})
    run("resume_from_last_checkpoint", out, {"max_epochs": 1},
        callbacks=[CkptSpy(dirpath=tempfile.mkdtemp(), save_last=True)], stages=("fit", "resume"), resume_max_epochs=2)
    run("gradient_clipping", out, {"max_epochs": 1, "num_sanity_val_steps": 0, "gradient_clip_val": 0.5,
                                   "limit_train_batches": 2, "limit_val_batches": 0})


if __name__ == "__main__":
    main()
