"""Writes the state dict examples/finetune starts from:

    /usr/bin/python3 examples/finetune/resnet18_weights.py resnet18.pt

torchvision.models.resnet18(weights=None) of Debian's python3-torchvision
0.14: ImageNet's shape (3-channel 7x7 stem, 1000-class fc) with
torchvision's own random initialisation, seeded (torch.manual_seed(0)),
saved with torch.save(model.state_dict()) (45 MB). No pretrained weights:
nothing can be downloaded here, so the backbone carries no knowledge, and
the example shows the path (load, freeze, unfreeze, per-group learning
rate), not a transfer. A pretrained file written the same way
(resnet18(weights="IMAGENET1K_V1").state_dict()) loads the same.
"""
import sys

import torch
import torchvision

torch.manual_seed(0)
model = torchvision.models.resnet18(weights=None)
torch.save(model.state_dict(), sys.argv[1])
print(f"wrote {sys.argv[1]}: torchvision {torchvision.__version__} resnet18(weights=None), "
      f"{sum(p.numel() for p in model.parameters())} parameters")
