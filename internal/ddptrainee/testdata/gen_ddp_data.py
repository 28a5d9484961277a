"""Write the data of Lightning's DDP goldens (the project's shared/golden/lightning/ddp,
trace_ddp.py's IndexedData: 21 training samples from generator seed 0, 9 validation
samples from seed 1) and the initial weights of rank 0's Linear(4, 1) (torch.manual_seed(0)),
so that volt's data-parallel tests train on the same numbers without Python.

Usage: /usr/bin/python3 gen_ddp_data.py > data.json   (needs python3-torch)
"""
import json

import torch


def data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1
    return {"x": x.tolist(), "y": y.tolist()}


def main():
    torch.manual_seed(0)  # trace_ddp.py: rank r seeds torch.manual_seed(r) before Linear(4, 1)
    layer = torch.nn.Linear(4, 1)
    out = {
        "source": "trace_ddp.py IndexedData(21, 0), IndexedData(9, 1) and rank 0's Linear(4, 1), torch " + torch.__version__,
        "weight": layer.weight.detach().reshape(-1).tolist(),
        "bias": layer.bias.detach().tolist(),
        "train": data(21, 0),
        "val": data(9, 1),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
