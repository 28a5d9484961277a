"""Writes torchvision's ResNet-18 (python3-torchvision 0.14, weights=None:
torchvision's random initialisation, seeded) for torchvision's tests:

    /usr/bin/python3 resnet18.py OUT_DIR [CLASSES]

OUT_DIR/resnet18.pt    torch.save(model.state_dict()), 11.7M parameters
OUT_DIR/golden.pt      {"input": x [2, 3, 64, 64], "eval_logits": model.eval()(x),
                        "train_logits": model.train()(x) (batch statistics),
                        "train_running_mean": layer1.0.bn1's running mean after it,
                        "grad_fc_weight", "grad_conv1_weight": the gradients of
                        cross_entropy(train_logits, labels) (labels [1, 3])}

The batch norms' running statistics and affine parameters are drawn away
from their defaults first (as a trained model's are), so eval mode uses them.
The file is not committed (45 MB): the Go test runs this script.
"""
import os
import sys

import torch
import torchvision

out = sys.argv[1]
classes = int(sys.argv[2]) if len(sys.argv) > 2 else 10
torch.manual_seed(18)
model = torchvision.models.resnet18(weights=None, num_classes=classes)
with torch.no_grad():
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.2, 0.2)
            m.num_batches_tracked.fill_(100)
torch.save(model.state_dict(), os.path.join(out, "resnet18.pt"))

x = torch.randn(2, 3, 64, 64)
model.eval()
with torch.no_grad():
    eval_logits = model(x)
model.train()
train_logits = model(x)
loss = torch.nn.functional.cross_entropy(train_logits, torch.tensor([1, 3]))
loss.backward()
torch.save({"input": x, "eval_logits": eval_logits, "train_logits": train_logits.detach(), "loss": loss.detach(),
            "train_running_mean": model.layer1[0].bn1.running_mean.clone(),
            "grad_fc_weight": model.fc.weight.grad, "grad_conv1_weight": model.conv1.weight.grad},
           os.path.join(out, "golden.pt"))
