"""Writes the state dicts statedict's tests read, with PyTorch 1.13:

    /usr/bin/python3 statedict/testdata/gen.py

net.pt           torch.save(Net().state_dict()), the zip format (PyTorch ≥ 1.6)
net_legacy.pt    the same, _use_new_zipfile_serialization=False (the old pickle)
net.safetensors  the same, in safetensors' layout (written here: Debian has no
                 python3-safetensors; the layout is 8 bytes of header length,
                 the JSON header, the data)
lightning.ckpt   {"state_dict": {"model." + key: ...}, "epoch": 3}, as a
                 LightningModule holding the net as self.model saves it
module.pt        torch.save(Net()): a pickled module, not a state dict
dtypes.pt        one tensor of each dtype, and views: a transpose, a slice
                 with a storage offset, two views of one storage, a scalar
gpt2.pt          a Hugging Face GPT-2-style Conv1D weight [in, out]
golden.json      every tensor above: dtype, shape and values (row-major)
"""
import collections
import json
import os
import struct

import torch

here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(39)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 3, 3)
        self.bn = torch.nn.BatchNorm2d(3)
        self.fc = torch.nn.Linear(4, 2)


net = Net()
with torch.no_grad():  # buffers that are not their defaults, so loading them shows
    net.bn.running_mean.uniform_(-1, 1)
    net.bn.running_var.uniform_(0.5, 2)
    net.bn.num_batches_tracked.fill_(7)
sd = net.state_dict()
torch.save(sd, os.path.join(here, "net.pt"))
torch.save(sd, os.path.join(here, "net_legacy.pt"), _use_new_zipfile_serialization=False)
torch.save({"state_dict": collections.OrderedDict(("model." + k, v) for k, v in sd.items()), "epoch": 3},
           os.path.join(here, "lightning.ckpt"))
torch.save(net, os.path.join(here, "module.pt"))

ST_NAMES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
            torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
            torch.uint8: "U8", torch.bool: "BOOL"}


def write_safetensors(path, tensors):
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        raw = t.view(torch.uint8).numpy().tobytes() if t.dim() else t.reshape(1).view(torch.uint8).numpy().tobytes()
        header[name] = {"dtype": ST_NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(chunks))


write_safetensors(os.path.join(here, "net.safetensors"), sd)

base = torch.arange(24, dtype=torch.float32).reshape(4, 6) / 8 - 1
shared = torch.linspace(-2, 2, 10)
dt = collections.OrderedDict([
    ("f64", torch.randn(2, 3, dtype=torch.float64)),
    ("f32", torch.randn(3, 2)),
    ("f16", torch.randn(5).half()),
    ("bf16", torch.randn(2, 2).bfloat16()),
    ("i64", torch.tensor([[-3, 2**40], [7, 0]])),
    ("i32", torch.tensor([1, -2, 3], dtype=torch.int32)),
    ("i16", torch.tensor([-300, 300], dtype=torch.int16)),
    ("i8", torch.tensor([-128, 127], dtype=torch.int8)),
    ("u8", torch.tensor([0, 255, 9], dtype=torch.uint8)),
    ("bool", torch.tensor([True, False, True])),
    ("scalar", torch.tensor(3.25)),
    ("transposed", base.t()),
    ("sliced", base[1:3, 2:5]),
    ("shared_a", shared[2:6]),
    ("shared_b", shared[::3]),
])
torch.save(dt, os.path.join(here, "dtypes.pt"))

# Conv1D(nf=6, nx=4).weight is [nx, nf] = [in, out]; nn.Linear(4, 6).weight is [6, 4].
gpt2 = collections.OrderedDict([("h.0.attn.c_attn.weight", torch.randn(4, 6)), ("h.0.attn.c_attn.bias", torch.randn(6))])
torch.save(gpt2, os.path.join(here, "gpt2.pt"))

golden = {}
for group, d in (("net", sd), ("dtypes", dt), ("gpt2", gpt2)):
    golden[group] = {k: {"dtype": str(v.dtype).replace("torch.", ""), "shape": list(v.shape),
                         "values": v.double().reshape(-1).tolist()} for k, v in d.items()}
    golden[group + "_keys"] = list(d.keys())
with open(os.path.join(here, "golden.json"), "w") as f:
    json.dump(golden, f)
    f.write("\n")
