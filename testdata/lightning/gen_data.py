"""Write the data and initial weights of the Lightning traces (trace_hooks.py
in /work/shared/golden/lightning) as JSON, so that volt's conformance test
runs the same numbers without Python.

Usage: /usr/bin/python3 gen_data.py > data.json   (needs python3-torch)
"""
import json

import torch


def data(n, seed):
    # trace_hooks.py's data(): the same generator, shapes and targets.
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1
    return {"x": x.tolist(), "y": y.tolist()}


def main():
    torch.manual_seed(0)  # trace_hooks.py's run(): seed, then Model() builds Linear(4, 1)
    layer = torch.nn.Linear(4, 1)
    out = {
        "source": "trace_hooks.py data() and Linear(4, 1) after torch.manual_seed(0), torch " + torch.__version__,
        "weight": layer.weight.detach().reshape(-1).tolist(),  # [out=1, in=4] flattened
        "bias": layer.bias.detach().tolist(),
        "train16": data(16, 0),
        "train20": data(20, 0),  # accumulate_2_partial_window uses n_train=20
        "val8": data(8, 1),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
