"""Which keys Lightning 2.2.5 puts in progress_bar_metrics, callback_metrics and
logged_metrics for values logged with prog_bar=True and each on_step/on_epoch
combination: in on_train_batch_end of epoch 1, batch 1, and after fit.
TestProgressBarMetricsKeysMatchLightning (progress_bar_keys_test.go) runs the
same module in volt.

Usage (as /work/shared/golden/lightning/README.md says, torch_py311_shim.py
from there on PYTHONPATH):
  PYTHONPATH=<lsite>:<shim dir> /usr/bin/python3 progress_bar_keys.py > progress_bar_keys.json
"""
import json

try:  # torch 1.13 on Python 3.11 needs this shim (Debian bookworm); harmless elsewhere
    import torch_py311_shim
except ImportError:
    pass
else:
    torch_py311_shim.apply()
import torch
import lightning.pytorch as pl
from torch.utils.data import DataLoader, TensorDataset

class M(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)
    def training_step(self, batch, i):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.lin(x), y)
        self.log("both", loss, on_step=True, on_epoch=True, prog_bar=True)
        self.log("step_only", loss, on_step=True, on_epoch=False, prog_bar=True)
        self.log("epoch_only", loss, on_step=False, on_epoch=True, prog_bar=True)
        self.log("not_in_bar", loss, on_step=True, on_epoch=True, prog_bar=False)
        return loss
    def validation_step(self, batch, i):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.lin(x), y)
        self.log("val_default", loss, prog_bar=True)
        self.log("val_both", loss, on_step=True, on_epoch=True, prog_bar=True)
    def on_train_batch_end(self, out, batch, i):
        if self.current_epoch == 1 and i == 1:
            snap["mid_epoch_1_batch_1"] = sorted(self.trainer.progress_bar_metrics)
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

snap = {}
torch.manual_seed(0)
ds = TensorDataset(torch.randn(16, 4), torch.randn(16, 1))
t = pl.Trainer(max_epochs=2, logger=False, enable_checkpointing=False, enable_model_summary=False,
               enable_progress_bar=False, num_sanity_val_steps=0)
t.fit(M(), DataLoader(ds, batch_size=4), DataLoader(ds, batch_size=4))
snap["after_fit"] = {"progress_bar_metrics": sorted(t.progress_bar_metrics),
                     "callback_metrics": sorted(t.callback_metrics),
                     "logged_metrics": sorted(t.logged_metrics)}
print(json.dumps(snap, indent=1))
