"""What Lightning 2.2.5's default TQDMProgressBar prints for a small run:
Linear(4, 1) on 64 samples (batch 4: 16 training batches), 8 validation
samples (2 batches), 3 epochs, train_loss and val_loss logged with
prog_bar=True, the default CSV logger (so v_num=0).

Usage (torch_py311_shim.py from testdata/lightning on PYTHONPATH):
  PYTHONPATH=<lsite>:testdata/lightning /usr/bin/python3 small_run.py ROOT_DIR
run in a tmux pane of 80 and of 160 columns; small_run.md records the screens.
"""
import sys
import time

try:  # torch 1.13 on Python 3.11 needs this shim (Debian bookworm); harmless elsewhere
    import torch_py311_shim
except ImportError:
    pass
else:
    torch_py311_shim.apply()
import torch
import lightning.pytorch as pl
from lightning.pytorch.loggers import CSVLogger
from torch.utils.data import DataLoader, TensorDataset


class M(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)

    def training_step(self, batch, i):
        x, y = batch
        time.sleep(0.05)  # slow enough for the bar to be seen redrawing
        loss = torch.nn.functional.mse_loss(self.lin(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, i):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.lin(x), y), prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


torch.manual_seed(0)
x = torch.randn(72, 4)
y = x.sum(1, keepdim=True)
train = DataLoader(TensorDataset(x[:64], y[:64]), batch_size=4)
val = DataLoader(TensorDataset(x[64:], y[64:]), batch_size=4)
trainer = pl.Trainer(max_epochs=3, logger=CSVLogger(sys.argv[1]), enable_model_summary=False,
                     accelerator="cpu", devices=1)
trainer.fit(M(), train, val)
