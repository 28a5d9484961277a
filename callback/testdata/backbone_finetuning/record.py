"""Records Lightning 2.2.5's BackboneFinetuning, and fine-tuning without
it (discriminative learning rates, parameters frozen by name), on a small
module, for callback's TestBackboneFinetuningAsLightning:

    PYTHONPATH=<lsite>:<folder of torch_py311_shim.py> /usr/bin/python3 record.py > lightning.json

(<lsite>: testdata/lightning/lightning-2.2.5-site.tar.xz unpacked.) The
module has a backbone (Linear(4, 8), BatchNorm1d(8), ReLU, Linear(8, 8))
and a head (Linear(8, 1)) after a ReLU, trained on 16 fixed examples in
batches of 4 with MSE and SGD(lr=0.1, momentum=0.9) over the parameters
that require gradients when configure_optimizers runs, as Lightning's
documentation says to write it. For each case it writes the data, the
initial state_dict, every step's loss, each epoch's learning rates of the
optimizer's param groups and the names of the parameters in each, and the
final state_dict.
"""
import json
import sys

try:  # torch 1.13 on Python 3.11 needs this shim (Debian bookworm); harmless elsewhere
    import torch_py311_shim

    torch_py311_shim.apply()
except ImportError:
    pass

import logging

import torch
from torch.utils.data import DataLoader, TensorDataset

import lightning.pytorch as pl
from lightning.pytorch.callbacks import BackboneFinetuning, BaseFinetuning, Callback

logging.getLogger("lightning").setLevel(logging.ERROR)
logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)

torch.manual_seed(0)
X = torch.randn(16, 4)
Y = torch.tanh(X @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])) + 0.1 * torch.randn(16, 1)


class Net(pl.LightningModule):
    def __init__(self, step_lr=False, backbone_lr=None, freeze=None):
        super().__init__()
        self.backbone = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(),
                                            torch.nn.Linear(8, 8))
        self.head = torch.nn.Linear(8, 1)
        self.step_lr = step_lr
        self.backbone_lr = backbone_lr
        if freeze:
            for name, p in self.named_parameters():
                if name.startswith(freeze + "."):
                    p.requires_grad = False
        self.losses = []

    def forward(self, x):
        return self.head(torch.relu(self.backbone(x)))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.losses.append(loss.item())
        return loss

    def configure_optimizers(self):
        params = filter(lambda p: p.requires_grad, self.parameters())
        if self.backbone_lr:
            params = [{"params": self.backbone.parameters(), "lr": self.backbone_lr}, {"params": self.head.parameters()}]
        opt = torch.optim.SGD(params, lr=0.1, momentum=0.9)
        if self.step_lr:
            return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)}
        return opt


class Groups(Callback):
    """Records, at each epoch's first batch (after BackboneFinetuning's
    on_train_epoch_start), each param group's lr and parameter names."""

    def __init__(self):
        self.epochs = []

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if batch_idx != 0:
            return
        names = {p: n for n, p in pl_module.named_parameters()}
        opt = trainer.optimizers[0]
        self.epochs.append([{"lr": g["lr"], "params": sorted(names[p] for p in g["params"])} for g in opt.param_groups])


class FreezeBackbone(BaseFinetuning):
    """Freezes the backbone with train_bn=False for good: its batch norm's
    weight and bias too, and its running statistics
    (track_running_stats=False)."""

    def freeze_before_training(self, pl_module):
        self.freeze(pl_module.backbone, train_bn=False)

    def finetune_function(self, pl_module, current_epoch, optimizer):
        pass


class FreezeThenUnfreeze(FreezeBackbone):
    """FreezeBackbone, unfrozen at epoch 2 (train_bn=False: the batch
    norm's weight and bias stay out of the new group, its running
    statistics track again)."""

    def finetune_function(self, pl_module, current_epoch, optimizer):
        if current_epoch == 2:
            self.unfreeze_and_add_param_group(pl_module.backbone, optimizer, train_bn=False)


def state(module):
    return {k: v.tolist() for k, v in module.state_dict().items()}


# Each case: BackboneFinetuning's arguments (None: no callback; a class:
# that callback) and Net's.
CASES = {
    "defaults": (dict(unfreeze_backbone_at_epoch=2), {}),
    "lambda_noalign_initial_lr": (dict(unfreeze_backbone_at_epoch=1, lambda_func=lambda e: 1 + e / 4,
                                       should_align=False, backbone_initial_lr=0.02), {}),
    "train_bn_false": (dict(unfreeze_backbone_at_epoch=1, train_bn=False), {}),
    "step_lr": (dict(unfreeze_backbone_at_epoch=1, backbone_initial_ratio_lr=0.5), dict(step_lr=True)),
    # No callback: torch's param groups with their own "lr", and
    # requires_grad=False on backbone.0's parameters.
    "discriminative_lr": (None, dict(backbone_lr=0.01)),
    "frozen_by_name": (None, dict(freeze="backbone.0")),
    "freeze_train_bn_false": (FreezeBackbone, {}),
    "freeze_train_bn_false_unfreeze": (FreezeThenUnfreeze, {}),
}

out = {"x": X.tolist(), "y": Y.tolist(), "epochs": 6, "batch_size": 4, "cases": {}}
for name, (finetuning, net_args) in CASES.items():
    torch.manual_seed(1)
    net = Net(**net_args)
    initial = state(net)
    groups = Groups()
    if finetuning is None:
        callbacks = [groups]
    elif isinstance(finetuning, dict):
        callbacks = [BackboneFinetuning(**finetuning), groups]
    else:
        callbacks = [finetuning(), groups]
    trainer = pl.Trainer(max_epochs=out["epochs"], callbacks=callbacks,
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, num_sanity_val_steps=0, accelerator="cpu", devices=1)
    trainer.fit(net, DataLoader(TensorDataset(X, Y), batch_size=out["batch_size"], shuffle=False))
    out["cases"][name] = {"initial": initial, "losses": net.losses, "groups": groups.epochs, "final": state(net)}
json.dump(out, sys.stdout)
sys.stdout.write("\n")
