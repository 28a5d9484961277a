"""Writes torchvision's ResNet-18 fine-tuning goldens for
TestResNet18FineTuningAsTorch* (python3-torchvision 0.14):

    /usr/bin/python3 finetune.py OUT_DIR MNIST_DIR BATCH SIZE LR MOMENTUM STEPS DTYPES TRAIN

OUT_DIR/finetune.pt         torch.save(model.state_dict()): resnet18(weights=None,
                            num_classes=10) seeded, its batch norms' statistics and
                            affine parameters drawn away from their defaults (as
                            resnet18.py does)
OUT_DIR/finetune_golden.pt  {"inputs": [STEPS*BATCH, 3, SIZE, SIZE] float32,
                            "labels": [STEPS*BATCH] int64, and for each of DTYPES
                            ("float32", "float64", comma-separated) "losses_DTYPE":
                            float64 [STEPS], the loss of each of STEPS steps of
                            SGD(lr=LR, momentum=MOMENTUM), the model in train mode
                            (batch statistics), batch i being
                            inputs[i*BATCH:(i+1)*BATCH], model and data cast to DTYPE}

The inputs are MNIST's first STEPS*BATCH training digits (MNIST_DIR holds
its IDX .gz files), normalised with MNIST's mean and standard deviation,
resized to SIZE (bilinear) and repeated over 3 channels, with their labels.
TRAIN says which parameters the optimizer gets: "all", or "head_bn": fc
and the batch norms' weights and biases, the convolutions frozen
(requires_grad False), which is what Lightning's BackboneFinetuning trains
before it unfreezes the backbone (its freeze leaves batch norms trainable).

Running the same steps in float32 and float64 measures how far torch's own
float32 arithmetic carries the losses: the comparison with volt is only as
sharp as that.
"""
import copy
import gzip
import os
import sys

import torch
import torchvision

out, mnist = sys.argv[1], sys.argv[2]
batch, size, lr, momentum, steps = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
dtypes, train = sys.argv[8].split(","), sys.argv[9]
torch.manual_seed(18)
model = torchvision.models.resnet18(weights=None, num_classes=10)
with torch.no_grad():
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.2, 0.2)
            m.num_batches_tracked.fill_(100)
torch.save(model.state_dict(), os.path.join(out, "finetune.pt"))

n = steps * batch
with gzip.open(os.path.join(mnist, "train-images-idx3-ubyte.gz")) as f:
    pixels = torch.frombuffer(bytearray(f.read()[16:16 + n * 784]), dtype=torch.uint8)
with gzip.open(os.path.join(mnist, "train-labels-idx1-ubyte.gz")) as f:
    labels = torch.frombuffer(bytearray(f.read()[8:8 + n]), dtype=torch.uint8).to(torch.int64)
digits = (pixels.to(torch.float32).reshape(n, 1, 28, 28) / 255 - 0.1307) / 0.3081
inputs = torch.nn.functional.interpolate(digits, size=(size, size), mode="bilinear", align_corners=False)
inputs = inputs.repeat(1, 3, 1, 1).contiguous()


def trained(module, name):
    if train == "all":
        return True
    if train == "head_bn":
        return name.startswith("fc.") or isinstance(module, torch.nn.BatchNorm2d)
    raise SystemExit(f"TRAIN {train!r}: want all or head_bn")


golden = {"inputs": inputs, "labels": labels}
for name in dtypes:
    dtype = getattr(torch, name)
    m = copy.deepcopy(model).to(dtype).train()
    params = [p for mod_name, mod in m.named_modules() for p_name, p in mod.named_parameters(recurse=False)
              if trained(mod, f"{mod_name}.{p_name}")]
    opt = torch.optim.SGD(params, lr=lr, momentum=momentum)
    losses = []
    for i in range(steps):
        x, y = inputs[i * batch:(i + 1) * batch].to(dtype), labels[i * batch:(i + 1) * batch]
        loss = torch.nn.functional.cross_entropy(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    golden["losses_" + name] = torch.tensor(losses, dtype=torch.float64)
torch.save(golden, os.path.join(out, "finetune_golden.pt"))
