"""What Lightning 2.2.5 sends to its loggers for values logged in
validation_step and test_step with on_step=True: which rows, at which step,
under which keys, with log_every_n_steps 1 and 3, one and two evaluation
loaders, validation inside fit (with a sanity check) and trainer.validate /
trainer.test on their own, and a value logged per step in
on_validation_batch_end (val_step_hook). Each scenario records the calls a logger gets
(log_metrics: keys and step, in order) and the header of CSVLogger's
metrics.csv, and the keys of what trainer.validate and trainer.test return
per loader. TestEvalStepLogsMatchLightning (eval_step_logs_test.go) runs the
same scenarios in volt.

Usage (as /work/shared/golden/lightning/README.md says, torch_py311_shim.py
from there on PYTHONPATH):
  PYTHONPATH=<lsite>:<shim dir> /usr/bin/python3 eval_step_logs.py > eval_step_logs.json
"""
import csv
import json
import os
import sys
import tempfile

try:  # torch 1.13 on Python 3.11 needs this shim (Debian bookworm); harmless elsewhere
    import torch_py311_shim
except ImportError:
    pass
else:
    torch_py311_shim.apply()
import torch
import lightning.pytorch as pl
from lightning.pytorch.loggers import CSVLogger, Logger
from torch.utils.data import DataLoader, TensorDataset


class Recorder(Logger):
    """Records every log_metrics call: its step and its keys."""
    def __init__(self):
        super().__init__()
        self.calls = []
    @property
    def name(self):
        return "recorder"
    @property
    def version(self):
        return 0
    def log_hyperparams(self, params):
        pass
    def log_metrics(self, metrics, step=None):
        self.calls.append({"step": step, "keys": sorted(metrics)})


class M(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)
    def loss(self, batch):
        x, y = batch
        return torch.nn.functional.mse_loss(self.lin(x), y)
    def training_step(self, batch, i):
        loss = self.loss(batch)
        self.log("train_loss", loss, on_step=True, on_epoch=False)
        return loss
    def validation_step(self, batch, i, dataloader_idx=0):
        loss = self.loss(batch)
        self.log("val_both", loss, on_step=True, on_epoch=True)
        self.log("val_step_only", loss, on_step=True, on_epoch=False)
        self.log("val_epoch_only", loss, on_step=False, on_epoch=True)
    def on_validation_batch_end(self, outputs, batch, i, dataloader_idx=0):
        self.log("val_step_hook", float(i), on_step=True, on_epoch=False)
    def test_step(self, batch, i, dataloader_idx=0):
        loss = self.loss(batch)
        self.log("test_both", loss, on_step=True, on_epoch=True)
        self.log("test_step_only", loss, on_step=True, on_epoch=False)
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader(n):
    return DataLoader(TensorDataset(torch.randn(n, 4), torch.randn(n, 1)), batch_size=4)


def trainer(dirname, log_every):
    rec = Recorder()
    csvl = CSVLogger(dirname, name="csv", version=0)
    t = pl.Trainer(max_epochs=2, logger=[rec, csvl], log_every_n_steps=log_every,
                   enable_checkpointing=False, enable_model_summary=False,
                   enable_progress_bar=False, num_sanity_val_steps=2)
    return t, rec, csvl


def csv_header(csvl):
    csvl.save()
    path = os.path.join(csvl.log_dir, "metrics.csv")
    with open(path) as f:
        return next(csv.reader(f))


def sorted_keys(per_loader):
    return [sorted(d) for d in per_loader]


def run(name, log_every, n_val_loaders, calls):
    """calls: the trainer methods to call in order ("fit", "validate", "test")."""
    torch.manual_seed(0)
    train = loader(16)  # 4 training batches per epoch
    vals = [loader(12), loader(8)][:n_val_loaders]  # 3 and 2 batches
    val = vals[0] if n_val_loaders == 1 else vals
    test = loader(12) if n_val_loaders == 1 else [loader(12), loader(8)]
    with tempfile.TemporaryDirectory() as d:
        t, rec, csvl = trainer(d, log_every)
        m = M()
        returned = []  # the keys of each loader's dict returned by validate and test
        for c in calls:
            rec.calls.append({"call": c})
            if c == "fit":
                t.fit(m, train, val)
            elif c == "validate":
                returned.append(sorted_keys(t.validate(m, val, verbose=False)))
            else:
                returned.append(sorted_keys(t.test(m, test, verbose=False)))
        return {"name": name, "log_every_n_steps": log_every, "val_loaders": n_val_loaders,
                "train_batches": 4, "val_batches": [3, 2][:n_val_loaders], "max_epochs": 2,
                "num_sanity_val_steps": 2, "calls": calls,
                "log_metrics": rec.calls, "csv_header": csv_header(csvl),
                "returned": returned}


scenarios = [
    run("fit_one_loader", 1, 1, ["fit"]),
    run("fit_log_every_3", 3, 1, ["fit"]),
    run("fit_two_loaders", 1, 2, ["fit"]),
    run("validate_twice_then_test", 1, 1, ["validate", "validate", "test"]),
    run("fit_then_validate_test_two_loaders", 1, 2, ["fit", "validate", "test"]),
]
json.dump({"source": "Lightning 2.2.5 on torch 1.13 (CPU), eval_step_logs.py", "scenarios": scenarios},
          sys.stdout, indent=1)
print()
