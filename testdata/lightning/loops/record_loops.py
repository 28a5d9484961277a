"""Record what Lightning's loops do in the cases of issue 21, bugs 3-5.

Uses trace_hooks.py (one folder up) for the recorder, the model and the
data, and adds what it lacks: a stop requested in on_train_epoch_start (by
the module or by a callback) and a LightningDataModule that records every
train_dataloader / val_dataloader request. Writes one trace per scenario,
in trace_hooks.py's format, to OUT_DIR (default: this folder); compared with
volt by TestLoopsMatchLightning (loops_conformance_test.go).

Usage: PYTHONPATH=<site with lightning>:<folder of torch_py311_shim.py> \
    python3 record_loops.py [OUT_DIR]
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # trace_hooks.py
import trace_hooks as th  # noqa: E402  (applies the torch shim)

import torch  # noqa: E402
import lightning.pytorch as pl  # noqa: E402
from lightning.pytorch.callbacks import Callback  # noqa: E402


class LoopModel(th.Model):
    """trace_hooks' Model that can also request a stop in on_train_epoch_start."""

    def __init__(self, stop_at_epoch_start=None, **kw):
        super().__init__(**kw)
        self.stop_at_epoch_start = stop_at_epoch_start

    def on_train_epoch_start(self):
        super().on_train_epoch_start()  # recorded
        if self.stop_at_epoch_start == self.current_epoch:
            self.trainer.should_stop = True


class StopAtEpochStart(Callback):
    """A callback that requests a stop in on_train_epoch_start of one epoch."""

    def __init__(self, epoch):
        self.epoch = epoch

    def on_train_epoch_start(self, trainer, pl_module):
        if trainer.current_epoch == self.epoch:
            trainer.should_stop = True


class RecordingData(pl.LightningDataModule):
    """Gives trace_hooks' data and records when Lightning asks for it."""

    def __init__(self, n_train, n_val, batch):
        super().__init__()
        self.n_train, self.n_val, self.batch = n_train, n_val, batch

    def train_dataloader(self):
        th.ev("DataModule", "train_dataloader", self.trainer)
        return th.data(self.n_train, self.batch)

    def val_dataloader(self):
        th.ev("DataModule", "val_dataloader", self.trainer)
        return th.data(self.n_val, self.batch, seed=1)


def run(name, out_dir, trainer_kw, model_kw=None, stop_callback_at=None, datamodule=False,
        n_train=16, n_val=8, batch=4, resume_max_epochs=None):
    th.EVENTS.clear()
    torch.manual_seed(0)
    model = LoopModel(**(model_kw or {}))
    kw = dict(max_epochs=2, logger=False, enable_progress_bar=False, enable_model_summary=False,
              enable_checkpointing=False, default_root_dir=tempfile.mkdtemp(), accelerator="cpu", devices=1,
              num_sanity_val_steps=2)
    kw.update(trainer_kw)
    callbacks = [th.Recorder()]
    if stop_callback_at is not None:
        callbacks.append(StopAtEpochStart(stop_callback_at))
    ckpt = None
    if resume_max_epochs is not None:
        # A new Trainer (a restarted process) resumes from last.ckpt.
        ckpt = th.CkptSpy(dirpath=tempfile.mkdtemp(), save_last=True)
        callbacks.append(ckpt)
        kw["enable_checkpointing"] = True
    trainer = pl.Trainer(callbacks=callbacks, **kw)
    error = None
    try:
        if datamodule:
            trainer.fit(model, datamodule=RecordingData(n_train, n_val, batch))
        else:
            trainer.fit(model, th.data(n_train, batch), th.data(n_val, batch, seed=1))
        if ckpt is not None:
            kw["max_epochs"] = resume_max_epochs
            trainer = pl.Trainer(callbacks=[th.Recorder(), ckpt], **kw)
            trainer.fit(model, datamodule=RecordingData(n_train, n_val, batch), ckpt_path=ckpt.last_model_path)
    except Exception as e:  # noqa: BLE001 - recorded
        error = f"{type(e).__name__}: {e}"
    result = {
        "scenario": name,
        "lightning": pl.__version__,
        "trainer": dict(trainer_kw),
        "model": model_kw or {},
        "stop_callback_at": stop_callback_at,
        "datamodule": datamodule,
        "stages": ["fit"] if resume_max_epochs is None else ["fit", "resume"],
        "resume_max_epochs": resume_max_epochs,
        "train_batches_per_epoch": (n_train + batch - 1) // batch,
        "val_batches": (n_val + batch - 1) // batch,
        "error": error,
        "final": {"epoch": trainer.current_epoch, "global_step": trainer.global_step,
                  "should_stop": bool(trainer.should_stop)},
        "events": list(th.EVENTS),
    }
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(result, f, indent=1)
    steps = [e["global_step"] for e in th.EVENTS if e["hook"] == "lr_scheduler_step"]
    print(f"{name}: {len(th.EVENTS)} events, scheduler steps at global steps {steps}, error={error}")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    os.makedirs(out, exist_ok=True)
    quiet = {"num_sanity_val_steps": 0}
    # Bug 3: scheduler frequency counts the batch index within the epoch.
    run("sched_step_freq_3", out, {**quiet, "max_epochs": 3}, model_kw={"sched": ("step", "step", 3)})
    run("sched_step_freq_2_accumulate_2", out, {**quiet, "max_epochs": 2, "accumulate_grad_batches": 2},
        model_kw={"sched": ("step", "step", 2)})
    run("sched_step_freq_3_accumulate_2", out, {**quiet, "max_epochs": 2, "accumulate_grad_batches": 2},
        model_kw={"sched": ("step", "step", 3)}, n_train=20)
    run("sched_epoch_freq_2", out, {**quiet, "max_epochs": 4}, model_kw={"sched": ("step", "epoch", 2)})
    run("sched_plateau_epoch_freq_2", out, {**quiet, "max_epochs": 4},
        model_kw={"sched": ("plateau:train_loss_epoch", "epoch", 2)})
    run("sched_plateau_step_freq_3", out, {**quiet, "max_epochs": 2},
        model_kw={"sched": ("plateau:train_loss_step", "step", 3)})
    run("sched_plateau_val_step_freq_2", out, {**quiet, "max_epochs": 2, "val_check_interval": 2},
        model_kw={"sched": ("plateau:val_loss", "step", 2)})
    # Bug 4: a stop requested in on_train_epoch_start.
    run("stop_at_train_epoch_start_by_module", out, {"max_epochs": 3}, model_kw={"stop_at_epoch_start": 1})
    run("stop_at_train_epoch_start_by_callback", out, {"max_epochs": 3}, stop_callback_at=1)
    run("stop_at_train_epoch_start_0_min_epochs_2", out, {**quiet, "max_epochs": 4, "min_epochs": 2},
        model_kw={"stop_at_epoch_start": 0})
    run("stop_at_train_epoch_start_step_scheduler", out, {**quiet, "max_epochs": 3},
        model_kw={"stop_at_epoch_start": 1, "sched": ("step", "epoch", 1)})
    # Bug 5: when the loaders are asked for again.
    run("reload_every_2_epochs", out, {**quiet, "max_epochs": 5, "reload_dataloaders_every_n_epochs": 2},
        datamodule=True)
    run("reload_every_2_check_val_every_3", out,
        {**quiet, "max_epochs": 6, "reload_dataloaders_every_n_epochs": 2, "check_val_every_n_epoch": 3},
        datamodule=True)
    run("reload_every_1_val_check_half", out,
        {"max_epochs": 2, "reload_dataloaders_every_n_epochs": 1, "val_check_interval": 0.5}, datamodule=True)
    run("reload_every_2_resumed_at_epoch_3", out, {**quiet, "max_epochs": 3, "reload_dataloaders_every_n_epochs": 2},
        datamodule=True, resume_max_epochs=6)


if __name__ == "__main__":
    main()
