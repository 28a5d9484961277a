"""Record what PyTorch Lightning keeps between the runs of one Trainer.

Two facts, on trace_hooks.py's data and Linear(4, 1) (torch.manual_seed(0)):

- the losses an evaluation reports after training, when the trainer
  validated or tested before it trained (Lightning evaluates the trained
  weights: the values equal those of a trainer that only trained);
- the callback, logged and progress-bar metrics each entry point (fit,
  validate, test, predict) starts with: Trainer._run clears them (and the
  result collection) after the setup hooks, so every run starts empty; a
  ModelCheckpoint(every_n_train_steps=3, monitor="val_loss") in a fit after a
  validate finds no val_loss at step 3 and saves nothing.

Usage: PYTHONPATH=<site with lightning>:<folder of torch_py311_shim.py> \
  /usr/bin/python3 eval_state.py > eval_state.json
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
    """trace_hooks.py's model, its values also in the progress bar."""

    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.layer(x)

    def loss(self, batch):
        x, y = batch
        return torch.nn.functional.mse_loss(self(x), y)

    def training_step(self, batch, batch_idx):
        loss = self.loss(batch)
        self.log("train_loss", loss, on_step=True, on_epoch=True, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch), prog_bar=True)

    def test_step(self, batch, batch_idx):
        self.log("test_loss", self.loss(batch), prog_bar=True)

    def predict_step(self, batch, batch_idx):
        return self(batch[0])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def metric_keys(trainer):
    return {"callback": sorted(trainer.callback_metrics), "logged": sorted(trainer.logged_metrics),
            "progress_bar": sorted(trainer.progress_bar_metrics)}


class Recorder(Callback):
    """Records the metric names each run starts with, and val_loss per epoch."""

    def __init__(self, out):
        self.out = out

    def on_fit_start(self, trainer, pl_module):
        self.out.append({"at": "on_fit_start", **metric_keys(trainer)})

    def on_validation_start(self, trainer, pl_module):
        if trainer.state.fn == "validate":
            self.out.append({"at": "on_validation_start", **metric_keys(trainer)})

    def on_test_start(self, trainer, pl_module):
        self.out.append({"at": "on_test_start", **metric_keys(trainer)})

    def on_predict_start(self, trainer, pl_module):
        self.out.append({"at": "on_predict_start", **metric_keys(trainer)})

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.global_step == 3:
            self.out.append({"at": "on_train_batch_end step 3", **metric_keys(trainer)})

    def on_validation_epoch_end(self, trainer, pl_module):
        if trainer.state.fn == "fit" and not trainer.sanity_checking:
            self.out.append({"at": "fit validation epoch end", "epoch": trainer.current_epoch,
                             "val_loss": float(trainer.callback_metrics["val_loss"])})


def run(stages, checkpoint_every_3_steps=False):
    torch.manual_seed(0)
    model = Model()
    train, val = data(16, 0), data(8, 1)
    events = []
    ckpt_dir = tempfile.mkdtemp()
    callbacks = [Recorder(events), EarlyStopping(monitor="val_loss", patience=1)]
    if checkpoint_every_3_steps:
        callbacks.append(ModelCheckpoint(dirpath=ckpt_dir, every_n_train_steps=3, monitor="val_loss",
                                         save_top_k=-1, filename="{step}"))
    trainer = pl.Trainer(max_epochs=3, logger=False, enable_progress_bar=False, enable_model_summary=False,
                         enable_checkpointing=checkpoint_every_3_steps, default_root_dir=tempfile.mkdtemp(),
                         accelerator="cpu", devices=1, num_sanity_val_steps=0, callbacks=callbacks)
    for st in stages:
        if st == "fit":
            trainer.fit(model, train, val)
            events.append({"at": "fit returned", "epoch": trainer.current_epoch,
                           "global_step": trainer.global_step, **metric_keys(trainer)})
        elif st == "validate":
            res = trainer.validate(model, val, verbose=False)
            events.append({"at": "validate returned", "result": res, **metric_keys(trainer)})
        elif st == "test":
            res = trainer.test(model, val, verbose=False)
            events.append({"at": "test returned", "result": res, **metric_keys(trainer)})
        elif st == "predict":
            trainer.predict(model, val)
            events.append({"at": "predict returned", **metric_keys(trainer)})
    out = {"stages": stages, "events": events}
    if checkpoint_every_3_steps:
        out["checkpoints"] = sorted(os.listdir(ckpt_dir))
    return out


def main():
    scenarios = {
        "fit_test": run(["fit", "test"]),
        "validate_fit_test": run(["validate", "fit", "test"]),
        "test_fit_test": run(["test", "fit", "test"]),
        "fit_validate_test_predict_fit": run(["fit", "validate", "test", "predict", "fit"]),
        "validate_fit_checkpoint_every_3_steps": run(["validate", "fit"], checkpoint_every_3_steps=True),
    }
    json.dump({"lightning": pl.__version__, "torch": torch.__version__, "scenarios": scenarios},
              sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
