"""examples/firsthour in Lightning 2.2.5: an MLP with LayerNorm and dropout on a
synthetic regression, a LightningDataModule, ModelCheckpoint on val_loss,
EarlyStopping, TensorBoard, load_from_checkpoint and predict. Issue 24 counts
its lines and imports against the Go program's.

    mkdir -p /tmp/lsite && tar -xJf testdata/lightning/lightning-2.2.5-site.tar.xz -C /tmp/lsite
    PYTHONPATH=/tmp/lsite/lsite:testdata/lightning /usr/bin/python3 tools/firsthour/lightning_firsthour.py
"""
import argparse

import torch_py311_shim

torch_py311_shim.apply()

import lightning as L  # noqa: E402
import torch  # noqa: E402
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint  # noqa: E402
from lightning.pytorch.loggers import TensorBoardLogger  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402


class MLP(L.LightningModule):
    def __init__(self, hidden=(64, 64), dropout=0.1, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        layers, width = [], 8
        for h in hidden:
            layers += [nn.Linear(width, h), nn.LayerNorm(h), nn.ReLU(), nn.Dropout(dropout)]
            width = h
        self.net = nn.Sequential(*layers, nn.Linear(width, 1))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, _):
        loss = nn.functional.mse_loss(self(batch[0]), batch[1])
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, _):
        self.log("val_loss", nn.functional.mse_loss(self(batch[0]), batch[1]), prog_bar=True)

    def predict_step(self, batch, _):
        return self(batch[0])

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


class Regression(L.LightningDataModule):
    def __init__(self, n=2000, batch_size=32):
        super().__init__()
        self.n, self.batch_size = n, batch_size

    def setup(self, stage):
        g = torch.Generator().manual_seed(0)  # data.NewGenerator(0) in the Go program: the same x and noise
        w = torch.full((8, 1), 8 ** -0.5)  # x @ w is N(0, 1), as in the Go program
        x = torch.randn(self.n, 8, generator=g)
        y = torch.sin(x @ w) + 0.1 * torch.randn(self.n, 1, generator=g)
        cut = self.n * 8 // 10
        self.train, self.val = TensorDataset(x[:cut], y[:cut]), TensorDataset(x[cut:], y[cut:])

    def train_dataloader(self):
        return DataLoader(self.train, batch_size=self.batch_size, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val, batch_size=self.batch_size)

    def predict_dataloader(self):
        return self.val_dataloader()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--dir", default=".")
    args = ap.parse_args()
    L.seed_everything(42)
    ckpt = ModelCheckpoint(monitor="val_loss", filename="{epoch}-{val_loss:.4f}")
    trainer = L.Trainer(max_epochs=args.epochs, default_root_dir=args.dir, logger=TensorBoardLogger(args.dir),
                        callbacks=[ckpt, EarlyStopping(monitor="val_loss", patience=5)])
    dm = Regression(n=args.n)
    trainer.fit(MLP(), dm)
    print("best:", ckpt.best_model_path)
    best = MLP.load_from_checkpoint(ckpt.best_model_path)
    preds = torch.cat(trainer.predict(best, dm))
    print("predictions:", len(preds), "first:", preds[0].tolist())


if __name__ == "__main__":
    main()
