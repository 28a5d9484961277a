"""Golden values of Lightning 2.2.5's Trainer.estimated_stepping_batches.

Run (python3-torch from Debian, Lightning from the shared site tarball):
    PYTHONPATH=<lsite>:/work/shared/golden/lightning /usr/bin/python3 gen_stepping_batches.py > estimated_stepping_batches.json

For each case, a Linear(4, 1) module reads trainer.estimated_stepping_batches
in configure_optimizers (where OneCycle-style schedulers read it) and in
on_train_start; the run then stops. The training data is N rows of 4
features in batches of 4 (a map-style dataset, or an IterableDataset of the
same rows when "iterable"). Infinity is written as the string "inf".
"""
import json
import math
import sys

try:  # torch 1.13 on Python 3.11 needs this shim (Debian bookworm); harmless elsewhere
    import torch_py311_shim

    torch_py311_shim.apply()
except ImportError:
    pass

import torch
from torch.utils.data import DataLoader, IterableDataset, TensorDataset

import lightning.pytorch as pl


class Stop(Exception):
    pass


class Rows(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        for i in range(self.n):
            yield torch.full((4,), float(i)), torch.zeros(1)


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
        self.seen = {}

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        self.seen["configure_optimizers"] = self.trainer.estimated_stepping_batches
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def on_train_start(self):
        self.seen["on_train_start"] = self.trainer.estimated_stepping_batches
        raise Stop()


def encode(v):
    return "inf" if isinstance(v, float) and math.isinf(v) else int(v)


def run(name, rows, iterable=False, **trainer_args):
    torch.manual_seed(0)
    ds = Rows(rows) if iterable else TensorDataset(torch.randn(rows, 4), torch.randn(rows, 1))
    model = Model()
    trainer = pl.Trainer(logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, num_sanity_val_steps=0, **trainer_args)
    try:
        trainer.fit(model, DataLoader(ds, batch_size=4))
    except Stop:
        pass
    case = {"name": name, "rows": rows, "batch_size": 4, "iterable": iterable, "trainer": trainer_args,
            "num_training_batches": encode(trainer.num_training_batches)}
    case.update({k: encode(v) for k, v in model.seen.items()})
    return case


cases = [
    run("epochs", 40, max_epochs=3),
    run("accumulate_rounds_up", 40, max_epochs=3, accumulate_grad_batches=3),
    run("limit_batches_accumulate", 40, max_epochs=3, limit_train_batches=7, accumulate_grad_batches=4),
    run("limit_fraction", 40, max_epochs=2, limit_train_batches=0.5, accumulate_grad_batches=2),
    run("limit_fraction_rounds_down", 40, max_epochs=2, limit_train_batches=0.25),
    run("limit_larger_than_epoch", 40, max_epochs=2, limit_train_batches=25),
    run("max_steps_first", 40, max_epochs=3, max_steps=5),
    run("max_epochs_first", 40, max_epochs=3, max_steps=100),
    run("accumulate_and_max_steps", 40, max_epochs=5, accumulate_grad_batches=3, max_steps=3),
    run("infinite", 40, max_epochs=-1),
    run("infinite_epochs_max_steps", 40, max_epochs=-1, max_steps=7),
    run("only_max_steps", 40, max_steps=7),
    run("defaults_1000_epochs", 40),
    run("partial_last_batch", 42, max_epochs=2, accumulate_grad_batches=2),
    run("iterable_max_steps", 40, iterable=True, max_epochs=2, max_steps=12),
    run("iterable_limit", 40, iterable=True, max_epochs=2, limit_train_batches=3),
    run("iterable_no_limit", 40, iterable=True, max_epochs=2),
    run("overfit_batches", 40, max_epochs=3, overfit_batches=2),
    run("fast_dev_run", 40, fast_dev_run=2),
]
json.dump({"lightning": pl.__version__, "cases": cases}, sys.stdout, indent=1)
sys.stdout.write("\n")
