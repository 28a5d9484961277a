"""Writes torch_input_gradients.json: PyTorch's gradient with respect to the
input of sum(conv2d(x, k, stride, padding) * r), float64, for the
convolutions TestInputGradientMatchesPyTorch builds the same way
(x[i] = sin(i), k[i] = cos(0.7 i), r[i] = sin(0.3 i + 1), flat row-major
NCHW / OIHW). Run with Debian's python3-torch:

    /usr/bin/python3 internal/convgrad/testdata/gen_torch_golden.py
"""
import json, math, os
import torch

CASES = [  # name, x shape (N, C, H, W), kernel shape (O, I, kh, kw), stride, padding
    ("dcgan_4x4_s2_p1", (2, 3, 8, 8), (4, 3, 4, 4), 2, 1),
    ("2x2_s1_p0", (2, 2, 5, 6), (3, 2, 2, 2), 1, 0),
    ("2x4_s1_p2", (1, 2, 6, 7), (2, 2, 2, 4), 1, 2),
    ("3x3_s1_p3", (1, 2, 5, 5), (2, 2, 3, 3), 1, 3),
]

def tensor(shape, f):
    n = math.prod(shape)
    return torch.tensor([f(i) for i in range(n)], dtype=torch.float64).reshape(shape)

out = {}
for name, xs, ks, stride, padding in CASES:
    x = tensor(xs, lambda i: math.sin(i)).requires_grad_()
    k = tensor(ks, lambda i: math.cos(0.7 * i))
    y = torch.nn.functional.conv2d(x, k, stride=stride, padding=padding)
    r = tensor(tuple(y.shape), lambda i: math.sin(0.3 * i + 1))
    (y * r).sum().backward()
    out[name] = {"x": list(xs), "kernel": list(ks), "stride": stride, "padding": padding,
                 "output": list(y.shape), "input_gradient": x.grad.flatten().tolist()}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_input_gradients.json")
with open(path, "w") as f:
    json.dump(out, f)
    f.write("\n")
