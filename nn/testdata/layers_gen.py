"""Writes layers.json: torch.nn layers (PyTorch 1.13) on seeded random
inputs, several shapes and options each, for torch_layers_test.go: each
case holds the layer's arguments, its state_dict (the Go layer loads it
by the same keys, strictly), the input, the output, and the gradients of
Σ output·r (r a seeded random upstream, stored too) with respect to the
input and to every parameter.

    /usr/bin/python3 nn/testdata/layers_gen.py
"""
import json
import os

import torch

torch.manual_seed(3939)
cases = []


def tensor(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "values": t.detach().double().reshape(-1).tolist()}


def add(name, layer, module, x, args, forward=None):
    module.train()
    with torch.no_grad():  # non-default affine values, so their use shows
        for n, p in module.named_parameters():
            if n.endswith("weight") and isinstance(module, (torch.nn.GroupNorm, torch.nn.LayerNorm)):
                p.uniform_(0.5, 1.5)
            elif n.endswith("bias") and isinstance(module, (torch.nn.GroupNorm, torch.nn.LayerNorm)):
                p.uniform_(-0.5, 0.5)
    float_input = x.is_floating_point()
    if float_input:
        x = x.clone().requires_grad_(True)
    out = forward(module, x) if forward else module(x)
    r = torch.randn(out.shape)
    (out * r).sum().backward()
    cases.append({
        "name": name, "layer": layer, "args": args, "input": tensor(x),
        "params": {k: tensor(v) for k, v in module.state_dict().items()},
        "upstream": tensor(r), "output": tensor(out),
        "grad_input": tensor(x.grad) if float_input else None,
        "grad_params": {k: tensor(p.grad) for k, p in module.named_parameters()},
    })


C2 = torch.nn.Conv2d
add("conv2d_basic", "Conv2d", C2(3, 4, 3), torch.randn(2, 3, 6, 5), {"out": 4, "kernel": [3]})
add("conv2d_stride_padding_rect", "Conv2d", C2(4, 6, (3, 2), stride=2, padding=1), torch.randn(2, 4, 7, 6),
    {"out": 6, "kernel": [3, 2], "stride": [2], "padding": [1]})
add("conv2d_dilation_and_stride", "Conv2d", C2(2, 4, 3, stride=2, dilation=2, padding=2), torch.randn(1, 2, 9, 9),
    {"out": 4, "kernel": [3], "stride": [2], "dilation": [2], "padding": [2]})
add("conv2d_groups_no_bias", "Conv2d", C2(4, 6, 3, groups=2, padding=1, bias=False), torch.randn(2, 4, 5, 5),
    {"out": 6, "kernel": [3], "groups": 2, "padding": [1], "bias": False})
add("conv2d_depthwise_stride_per_axis", "Conv2d", C2(3, 6, 3, groups=3, stride=(1, 2)), torch.randn(2, 3, 6, 7),
    {"out": 6, "kernel": [3], "groups": 3, "stride": [1, 2]})
add("conv2d_even_kernel", "Conv2d", C2(2, 3, 4, stride=2, padding=1), torch.randn(2, 2, 8, 8),
    {"out": 3, "kernel": [4], "stride": [2], "padding": [1]})
add("conv2d_7x7_stride2_pad3", "Conv2d", C2(3, 4, 7, stride=2, padding=3, bias=False), torch.randn(1, 3, 12, 12),
    {"out": 4, "kernel": [7], "stride": [2], "padding": [3], "bias": False})
C1 = torch.nn.Conv1d
add("conv1d_padding", "Conv1d", C1(3, 5, 3, padding=1), torch.randn(2, 3, 8), {"out": 5, "kernel": [3], "padding": [1]})
add("conv1d_stride_dilation_groups", "Conv1d", C1(4, 4, 5, stride=2, dilation=2, groups=2), torch.randn(1, 4, 15),
    {"out": 4, "kernel": [5], "stride": [2], "dilation": [2], "groups": 2})

add("maxpool2d_2", "MaxPool2d", torch.nn.MaxPool2d(2), torch.randn(2, 3, 6, 4), {"kernel": [2]})
add("maxpool2d_3_stride2_pad1", "MaxPool2d", torch.nn.MaxPool2d(3, stride=2, padding=1), torch.randn(2, 3, 7, 7),
    {"kernel": [3], "stride": [2], "padding": [1]})
add("maxpool2d_rect", "MaxPool2d", torch.nn.MaxPool2d((2, 3), stride=(1, 2)), torch.randn(1, 2, 5, 7),
    {"kernel": [2, 3], "stride": [1, 2]})
add("avgpool2d_2", "AvgPool2d", torch.nn.AvgPool2d(2), torch.randn(2, 3, 6, 4), {"kernel": [2]})
add("avgpool2d_pad_included", "AvgPool2d", torch.nn.AvgPool2d(3, stride=2, padding=1), torch.randn(2, 2, 7, 6),
    {"kernel": [3], "stride": [2], "padding": [1]})
add("avgpool2d_pad_excluded", "AvgPool2d", torch.nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), torch.randn(2, 2, 7, 6),
    {"kernel": [3], "stride": [2], "padding": [1], "count_include_pad": False})
add("adaptive_avgpool2d_1x1", "AdaptiveAvgPool2d", torch.nn.AdaptiveAvgPool2d(1), torch.randn(2, 3, 7, 5), {"size": [1, 1]})
add("adaptive_avgpool2d_3x2", "AdaptiveAvgPool2d", torch.nn.AdaptiveAvgPool2d((3, 2)), torch.randn(2, 3, 7, 5), {"size": [3, 2]})
add("adaptive_avgpool2d_up", "AdaptiveAvgPool2d", torch.nn.AdaptiveAvgPool2d((4, 6)), torch.randn(1, 2, 3, 5), {"size": [4, 6]})

add("linear", "Linear", torch.nn.Linear(5, 3), torch.randn(4, 5), {"out": 3})
add("linear_3d_no_bias", "Linear", torch.nn.Linear(4, 2, bias=False), torch.randn(2, 3, 4), {"out": 2, "bias": False})

add("embedding", "Embedding", torch.nn.Embedding(10, 4), torch.tensor([[1, 2, 1, 9, 0], [3, 3, 3, 7, 1], [0, 5, 6, 2, 8]]),
    {"num": 10, "dim": 4})
add("embedding_1d", "Embedding", torch.nn.Embedding(6, 3), torch.tensor([5, 0, 5]), {"num": 6, "dim": 3})

add("groupnorm_2_of_4", "GroupNorm", torch.nn.GroupNorm(2, 4), torch.randn(2, 4, 3, 3) * 3 + 1, {"groups": 2})
add("groupnorm_3_of_6_1d", "GroupNorm", torch.nn.GroupNorm(3, 6), torch.randn(3, 6, 5), {"groups": 3})
add("groupnorm_1_of_3", "GroupNorm", torch.nn.GroupNorm(1, 3), torch.randn(2, 3, 4, 4), {"groups": 1})

# torch.nn.GRU's keys end in "_l0" (layer 0); nn.GRU's variables do not: the Go test loads with a rename.
add("gru", "GRU", torch.nn.GRU(4, 5, batch_first=True), torch.randn(2, 6, 4), {"hidden": 5, "strip_l0": True},
    forward=lambda m, x: m(x)[0])

act = torch.randn(3, 4, 5) * 3
add("relu", "ReLU", torch.nn.ReLU(), act, {})
add("gelu", "GELU", torch.nn.GELU(), act, {})
add("gelu_tanh", "GELUTanh", torch.nn.GELU(approximate="tanh"), act, {})
add("silu", "SiLU", torch.nn.SiLU(), act, {})
add("sigmoid", "Sigmoid", torch.nn.Sigmoid(), act, {})
add("tanh", "Tanh", torch.nn.Tanh(), act, {})
add("leaky_relu_0.2", "LeakyReLU", torch.nn.LeakyReLU(0.2), act, {"slope": 0.2})
add("elu_0.7", "ELU", torch.nn.ELU(0.7), act, {"alpha": 0.7})
add("softmax_dim1", "Softmax", torch.nn.Softmax(dim=1), act, {"dim": 1})
add("log_softmax_last", "LogSoftmax", torch.nn.LogSoftmax(dim=-1), act, {"dim": -1})

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers.json"), "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f)
    f.write("\n")
