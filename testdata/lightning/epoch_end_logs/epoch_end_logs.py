"""Record two facts of PyTorch Lightning 2.2.5 about one Trainer's runs.

On eval_state.py's data and Linear(4, 1) (torch.manual_seed(0)), SGD lr 0.1:

- a value logged in on_train_epoch_end (by the module, or by a callback that
  is not a monitor) is what EarlyStopping (check_on_train_epoch_end=True) and
  ModelCheckpoint read in the same hook: Lightning computes epoch values when
  callback_metrics is read. Recorded: the value each EarlyStopping check read,
  the epoch Fit stopped at, and the checkpoint files written.
- every fit calls configure_optimizers, a second fit on the same Trainer too
  (fit -> fit, fit -> validate -> test -> predict -> fit), and trains with
  what it returns: a fit stopped after epoch 0 (should_stop in
  on_train_epoch_end), then a fit whose configure_optimizers returns lr 0.01.
  Recorded: the calls, the learning rate at each training step, and the
  epoch and global step each fit returns with.

Usage: PYTHONPATH=<site with lightning>:<folder of torch_py311_shim.py> \
  /usr/bin/python3 epoch_end_logs.py > epoch_end_logs.json
"""
import json
import os
import sys
import tempfile
import warnings

try:  # torch 1.13 on Python 3.11 needs this shim (Debian bookworm)
    import torch_py311_shim

    torch_py311_shim.apply()
except ImportError:
    pass

import torch
from torch.utils.data import DataLoader, TensorDataset

import lightning.pytorch as pl
from lightning.pytorch.callbacks import Callback, EarlyStopping, ModelCheckpoint

warnings.filterwarnings("ignore")


def data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1
    return DataLoader(TensorDataset(x, y), batch_size=4, shuffle=False)


class Model(pl.LightningModule):
    """Logs train_loss per step; logs m = epoch + 0.25 in on_train_epoch_end
    when log_m; counts configure_optimizers calls."""

    def __init__(self, log_m, lr=0.1, stop_at_epoch=None):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
        self.log_m = log_m
        self.lr = lr
        self.stop_at_epoch = stop_at_epoch
        self.configure_calls = 0
        self.lrs = []  # (epoch, lr) at each training step

    def forward(self, x):
        return self.layer(x)

    def loss(self, batch):
        x, y = batch
        return torch.nn.functional.mse_loss(self(x), y)

    def training_step(self, batch, batch_idx):
        self.lrs.append([self.current_epoch, self.trainer.optimizers[0].param_groups[0]["lr"]])
        loss = self.loss(batch)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch))

    def test_step(self, batch, batch_idx):
        self.log("test_loss", self.loss(batch))

    def predict_step(self, batch, batch_idx):
        return self(batch[0])

    def on_train_epoch_end(self):
        if self.log_m:
            self.log("m", self.current_epoch + 0.25)
        if self.current_epoch == self.stop_at_epoch:
            self.trainer.should_stop = True

    def configure_optimizers(self):
        self.configure_calls += 1
        return torch.optim.SGD(self.parameters(), lr=self.lr)


class LogC(Callback):
    """A callback (not a monitor) that logs c = 10 - epoch in on_train_epoch_end."""

    def on_train_epoch_end(self, trainer, pl_module):
        pl_module.log("c", 10.0 - trainer.current_epoch)


class ESSpy(EarlyStopping):
    def __init__(self, checks, **kw):
        super().__init__(**kw)
        self.checks = checks

    def _run_early_stopping_check(self, trainer):
        v = trainer.callback_metrics.get(self.monitor)
        self.checks.append({"epoch": trainer.current_epoch, "value": None if v is None else float(v)})
        super()._run_early_stopping_check(trainer)


def epoch_end_log(monitor, mode):
    torch.manual_seed(0)
    model = Model(log_m=monitor == "m")
    checks = []
    ckpt_dir = tempfile.mkdtemp()
    callbacks = [LogC()] if monitor == "c" else []
    callbacks += [ESSpy(checks, monitor=monitor, mode=mode, patience=1, check_on_train_epoch_end=True),
                  ModelCheckpoint(dirpath=ckpt_dir, monitor=monitor, mode=mode, save_top_k=-1,
                                  filename="{epoch}-{" + monitor + ":.2f}")]
    trainer = pl.Trainer(max_epochs=4, logger=False, enable_progress_bar=False, enable_model_summary=False,
                         default_root_dir=tempfile.mkdtemp(), accelerator="cpu", devices=1,
                         limit_val_batches=0, callbacks=callbacks)
    trainer.fit(model, data(16, 0))
    return {"monitor": monitor, "mode": mode, "checks": checks, "current_epoch": trainer.current_epoch,
            "global_step": trainer.global_step, "checkpoints": sorted(os.listdir(ckpt_dir))}


def fits(stages, stop_at_epoch=None, second_lr=None):
    """Runs stages on one Trainer; before the second fit, the module's lr
    becomes second_lr when set (its configure_optimizers reads it)."""
    torch.manual_seed(0)
    model = Model(log_m=False, stop_at_epoch=stop_at_epoch)
    train, val = data(16, 0), data(8, 1)
    trainer = pl.Trainer(max_epochs=2, logger=False, enable_progress_bar=False, enable_model_summary=False,
                         enable_checkpointing=False, default_root_dir=tempfile.mkdtemp(), accelerator="cpu",
                         devices=1, num_sanity_val_steps=0)
    events = []
    for st in stages:
        if st == "fit":
            if events and second_lr is not None:
                model.lr, model.stop_at_epoch = second_lr, None
                # Lightning keeps the stop request between runs; volt starts
                # each with none (docs/from-lightning.md): clear it as volt does.
                trainer.should_stop = False
            model.lrs = []
            trainer.fit(model, train, val)
            events.append({"at": "fit returned", "configure_optimizers_calls": model.configure_calls,
                           "epoch": trainer.current_epoch, "global_step": trainer.global_step,
                           "lrs": model.lrs})
        elif st == "validate":
            trainer.validate(model, val, verbose=False)
        elif st == "test":
            trainer.test(model, val, verbose=False)
        elif st == "predict":
            trainer.predict(model, val)
    return {"stages": stages, "events": events}


def main():
    scenarios = {
        "module_logs_m": epoch_end_log("m", "min"),
        "callback_logs_c": epoch_end_log("c", "max"),
        "fit_fit": fits(["fit", "fit"]),
        "fit_validate_test_predict_fit": fits(["fit", "validate", "test", "predict", "fit"]),
        "stopped_fit_then_fit_lr_0.01": fits(["fit", "fit"], stop_at_epoch=0, second_lr=0.01),
    }
    json.dump({"lightning": pl.__version__, "torch": torch.__version__, "scenarios": scenarios},
              sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
