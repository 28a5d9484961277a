#!/usr/bin/python3
"""Lightning's side of the initialisation experiment (tools/initgap).

Writes the data (OUT/data.safetensors: train_x [2048, 8], train_y [2048, 1],
val_x [512, 8], val_y [512, 1], float32) and trains, with real Lightning
2.2.5, an 8-64-64-1 ReLU MLP (nn.Linear's default initialisation) with Adam
1e-3, batch 32 (shuffled), MSE, 10 epochs, once per seed; prints one JSON
line per seed with the val_loss after each epoch.

    PYTHONPATH=<lightning site>:testdata/lightning /usr/bin/python3 \\
        tools/initgap/lightning_mlp.py --out DIR --seeds 5

(tools/initgap/run.sh does this and runs volt's side on the same data.)
"""

import argparse
import json
import logging
import os
import sys
import warnings

try:  # torch 1.13 on Python 3.11 needs this shim (Debian bookworm); harmless elsewhere
    import torch_py311_shim

    torch_py311_shim.apply()
except ImportError:
    pass

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

import lightning.pytorch as pl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parity"))
import torch_parity  # noqa: E402

FEATURES, HIDDEN, TRAIN, VAL, BATCH, EPOCHS = 8, 64, 2048, 512, 32, 10


def make_data(seed=2026):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((TRAIN + VAL, FEATURES)).astype(np.float32)
    w = rng.standard_normal((FEATURES, 1)).astype(np.float32) / np.sqrt(FEATURES)
    v = rng.standard_normal((FEATURES, 1)).astype(np.float32) / np.sqrt(FEATURES)
    y = np.sin(2 * (x @ w)) + (x @ v) ** 2 - 1 + 0.5 * x[:, :1] * x[:, 1:2] + 0.05 * rng.standard_normal((TRAIN + VAL, 1))
    y = y.astype(np.float32)
    return x[:TRAIN], y[:TRAIN], x[TRAIN:], y[TRAIN:]


class MLP(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(),
                                       torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 1))
        self.val_losses = []

    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, _):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), y))

    def on_validation_epoch_end(self):
        if not self.trainer.sanity_checking:
            self.val_losses.append(float(self.trainer.callback_metrics["val_loss"]))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tx, ty, vx, vy = make_data()
    torch_parity.save_safetensors(os.path.join(args.out, "data.safetensors"),
                                  {"train_x": tx, "train_y": ty, "val_x": vx, "val_y": vy})
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    for seed in range(args.seeds):
        pl.seed_everything(seed, workers=True)
        model = MLP()
        train = DataLoader(TensorDataset(torch.from_numpy(tx), torch.from_numpy(ty)), batch_size=BATCH, shuffle=True)
        val = DataLoader(TensorDataset(torch.from_numpy(vx), torch.from_numpy(vy)), batch_size=BATCH)
        trainer = pl.Trainer(max_epochs=EPOCHS, accelerator="cpu", logger=False, enable_checkpointing=False,
                             enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
                             default_root_dir=args.out)
        trainer.fit(model, train, val)
        print(json.dumps({"seed": seed, "val_loss": model.val_losses}), flush=True)


if __name__ == "__main__":
    main()
