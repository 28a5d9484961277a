#!/usr/bin/python3
"""examples/mnist in PyTorch Lightning 2.2.5, for bench/mnist_vs_lightning.sh.

The same run as `go run ./examples/mnist`: a 784-256-256-10 ReLU MLP, Adam
1e-3, batch 64, training on the first 55000 MNIST training images
(shuffled), validation on the last 5000 after each epoch, a test run at the
end; train_loss on the progress bar, train_acc per epoch, val_loss, val_acc
and val_f1 (torchmetrics, micro accuracy and macro F1), test_loss,
test_acc, test_f1 and the test confusion matrix. Lightning's defaults
otherwise, as a user gets them: its progress bar, CSV logger (no
TensorBoard here), checkpointing and model summary. The images are the
same IDX files volt reads (the GoMNIST module's), as float32 pixel/255.

    PYTHONPATH=<lightning site>:testdata/lightning /usr/bin/python3 bench/lightning_mnist.py --data DIR --root DIR [--epochs 3]

Prints, as examples/mnist -timing does, last on stderr:
timing: first_step_s=F step_us=S steps=N wall_s=W (process start to the
end of the first training step, the median time between two training
batch ends in one epoch with no validation between, their count, process
start to the end) and on stdout test_acc=A test_f1=F.
"""
import argparse
import gzip
import os
import statistics
import struct
import sys
import time


def process_start():
    """The wall-clock time this process started (from /proc), so that the
    interpreter's start and the imports count as volt's start-up does."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return time.time() - uptime + start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.time()


START = process_start()

try:  # torch 1.13 on Python 3.11 needs this shim (Debian bookworm); harmless elsewhere
    import torch_py311_shim  # testdata/lightning, on PYTHONPATH
except ImportError:
    pass
else:
    torch_py311_shim.apply()

import torch  # noqa: E402
import lightning.pytorch as pl  # noqa: E402
import torchmetrics  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402


def idx(path):
    """The array in an IDX file (gzipped), as a uint8 tensor."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return torch.frombuffer(bytearray(raw[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)


def datasets(data_dir):
    def images(name):
        return idx(os.path.join(data_dir, name)).reshape(-1, 784).float() / 255

    def labels(name):
        return idx(os.path.join(data_dir, name)).long()

    x, y = images("train-images-idx3-ubyte.gz"), labels("train-labels-idx1-ubyte.gz")
    tx, ty = images("t10k-images-idx3-ubyte.gz"), labels("t10k-labels-idx1-ubyte.gz")
    return TensorDataset(x[:55000], y[:55000]), TensorDataset(x[55000:], y[55000:]), TensorDataset(tx, ty)


class MLP(pl.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
        self.val_acc = torchmetrics.classification.MulticlassAccuracy(10, average="micro")
        self.val_f1 = torchmetrics.classification.MulticlassF1Score(10, average="macro")
        self.test_acc = torchmetrics.classification.MulticlassAccuracy(10, average="micro")
        self.test_f1 = torchmetrics.classification.MulticlassF1Score(10, average="macro")
        self.test_confmat = torchmetrics.classification.MulticlassConfusionMatrix(10)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, _):
        x, y = batch
        logits = self(x)
        loss = nn.functional.cross_entropy(logits, y)
        self.log("train_loss", loss, prog_bar=True)
        self.log("train_acc", (logits.argmax(-1) == y).float().mean(), on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch, _):
        x, y = batch
        logits = self(x)
        self.log("val_loss", nn.functional.cross_entropy(logits, y), prog_bar=True, sync_dist=True)
        self.val_acc(logits, y)
        self.val_f1(logits, y)
        self.log("val_acc", self.val_acc, prog_bar=True)
        self.log("val_f1", self.val_f1)

    def test_step(self, batch, _):
        x, y = batch
        logits = self(x)
        self.log("test_loss", nn.functional.cross_entropy(logits, y))
        self.test_acc(logits, y)
        self.test_f1(logits, y)
        self.test_confmat.update(logits, y)
        self.log("test_acc", self.test_acc)
        self.log("test_f1", self.test_f1)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


class StepClock(pl.Callback):
    """Training batch ends, as examples/mnist's stepClock records them."""

    def __init__(self):
        self.ends, self.steps, self.valid = [], [], False

    def on_train_batch_end(self, *_):
        now = time.time()
        if self.valid:
            self.steps.append(now - self.ends[-1])
        self.ends.append(now)
        self.valid = True

    def on_train_epoch_start(self, *_):
        self.valid = False

    def on_validation_start(self, *_):
        self.valid = False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="directory of the MNIST IDX files")
    ap.add_argument("--root", required=True, help="Lightning's default_root_dir")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--max-steps", type=int, default=-1, help="stop after this many steps (-1: no limit)")
    args = ap.parse_args()
    pl.seed_everything(args.seed, workers=True)
    train, val, test = datasets(args.data)
    clock = StepClock()
    trainer = pl.Trainer(max_epochs=args.epochs, accelerator="cpu", devices=1, default_root_dir=args.root,
                         max_steps=args.max_steps, callbacks=[clock])
    model = MLP()
    trainer.fit(model, DataLoader(train, batch_size=64, shuffle=True), DataLoader(val, batch_size=64))
    results = trainer.test(model, DataLoader(test, batch_size=64), verbose=False)[0]
    print(f"test_acc={results['test_acc']:.4f} test_f1={results['test_f1']:.4f}")
    step = statistics.median(clock.steps) if clock.steps else 0.0
    print(f"timing: first_step_s={clock.ends[0] - START:.3f} step_us={step * 1e6:.1f} steps={len(clock.steps)} "
          f"wall_s={time.time() - START:.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
