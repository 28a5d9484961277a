"""Golden values for volt's tuner from Lightning 2.2.5's own LR finder.

Run (python3-torch from Debian, Lightning from the shared site tarball):
    PYTHONPATH=<lsite>:/work/shared/golden/lightning /usr/bin/python3 gen_lr_find.py > lr_find.json

Writes, for a Linear(4, 1) regression (torch.manual_seed(0) initial weights,
the 16 training rows of volt/testdata/lightning/trace_hooks.py, batch 4, SGD
lr 0.1), the learning rates and smoothed losses Tuner.lr_find records and its
suggestion, for exponential and linear sweeps; and _LRFinder.suggestion on
fixed loss curves.
"""
import json
import math
import sys
import tempfile

try:  # torch 1.13 on Python 3.11 needs this shim (Debian bookworm); harmless elsewhere
    import torch_py311_shim

    torch_py311_shim.apply()
except ImportError:
    pass

import torch
from torch.utils.data import DataLoader, TensorDataset

import lightning.pytorch as pl
from lightning.pytorch.tuner import Tuner
from lightning.pytorch.tuner.lr_finder import _LRFinder


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def data(n, batch, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1
    return DataLoader(TensorDataset(x, y), batch_size=batch, shuffle=False)


def sweep(mode, min_lr, max_lr, num_training, threshold, accumulate=1):
    torch.manual_seed(0)
    model = Model()
    trainer = pl.Trainer(max_epochs=-1, logger=False, enable_progress_bar=False, enable_model_summary=False,
                         enable_checkpointing=False, default_root_dir=tempfile.mkdtemp(), accelerator="cpu",
                         devices=1, num_sanity_val_steps=0, accumulate_grad_batches=accumulate)
    f = Tuner(trainer).lr_find(model, train_dataloaders=data(16, 4), min_lr=min_lr, max_lr=max_lr,
                               num_training=num_training, mode=mode, early_stop_threshold=threshold, update_attr=False)
    sugg = f.suggestion()
    return {"mode": mode, "min_lr": min_lr, "max_lr": max_lr, "num_training": num_training,
            "early_stop_threshold": threshold, "accumulate_grad_batches": accumulate, "lr": f.results["lr"],
            "loss": [None if not math.isfinite(v) else v for v in f.results["loss"]],
            "suggestion": sugg, "suggestion_index": f._optimal_idx}


def curve(name, losses, skip_begin=10, skip_end=1):
    f = _LRFinder("exponential", 1e-8, 1.0, len(losses))
    f.results = {"lr": [1e-8 * 10 ** (i / 4) for i in range(len(losses))], "loss": losses}
    s = f.suggestion(skip_begin=skip_begin, skip_end=skip_end)
    return {"name": name, "loss": [v if math.isfinite(v) else str(v) for v in losses], "lr": f.results["lr"],
            "skip_begin": skip_begin, "skip_end": skip_end, "suggestion": s,
            "suggestion_index": f._optimal_idx}


def main():
    g = torch.Generator().manual_seed(3)
    noisy = [2.0 - math.tanh((i - 20) / 5) + 0.05 * float(torch.rand(1, generator=g)) for i in range(40)]
    out = {
        "source": "gen_lr_find.py, Lightning " + pl.__version__ + ", torch " + torch.__version__,
        "sweeps": [
            sweep("exponential", 1e-4, 1.0, 40, 4.0),
            sweep("linear", 1e-3, 0.3, 30, 4.0),
            sweep("exponential", 1e-3, 10.0, 50, 4.0),  # diverges: stops early
            sweep("exponential", 1e-5, 0.5, 25, None),
            sweep("exponential", 1e-4, 1.0, 20, 4.0, accumulate=2),
        ],
        "curves": [
            curve("noisy_tanh", noisy),
            curve("with_nan", [5.0 - 0.1 * i for i in range(15)] + [float("nan")] + [3.0 + 0.2 * i for i in range(10)]),
            curve("too_short", [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.01]),
            curve("skip_2_2", [1.0, 0.98, 0.9, 0.7, 0.4, 0.3, 0.28, 0.3, 0.6, 1.5], skip_begin=2, skip_end=2),
        ],
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
