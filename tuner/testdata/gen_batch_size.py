"""Golden values for volt's batch-size search from Lightning 2.2.5's own
_run_power_scaling and _run_binary_scaling.

Run (python3-torch from Debian, Lightning from the shared site tarball):
    PYTHONPATH=<lsite>:/work/shared/golden/lightning /usr/bin/python3 gen_batch_size.py > batch_size.json

Each case replaces the training run of a trial by "fails with an out-of-memory
error when the batch size exceeds limit" and records the sizes Lightning
tried, in order, and the size it chose, as _scale_batch_size does it
(_adjust_batch_size to init_val first, then the mode's search).
"""
import json
import sys

try:  # torch 1.13 on Python 3.11 needs this shim (Debian bookworm); harmless elsewhere
    import torch_py311_shim

    torch_py311_shim.apply()
except ImportError:
    pass

from types import SimpleNamespace

import lightning.pytorch as pl
from lightning.pytorch.tuner import batch_size_scaling as bss


class _Combined:
    def __init__(self, n):
        self.n = n

    def _dataset_length(self):
        if self.n is None:
            raise NotImplementedError
        return self.n


def case(mode, limit, dataset_len, init_val=2, max_trials=25):
    model = SimpleNamespace(batch_size=init_val)
    trainer = SimpleNamespace(lightning_module=model,
                              _active_loop=SimpleNamespace(setup_data=lambda: None, _combined_loader=_Combined(dataset_len)))
    tried = []

    def try_run(trainer, params):
        tried.append(model.batch_size)
        if model.batch_size > limit:
            raise RuntimeError("CUDA out of memory.")

    bss._try_loop_run = try_run
    bss._reset_progress = lambda t: None
    bss._reset_dataloaders = lambda t: None
    bss.garbage_collection_cuda = lambda: None
    bss.lightning_getattr = lambda m, name: getattr(m, name)
    bss.lightning_setattr = lambda m, name, v: setattr(m, name, v)
    new_size, _ = bss._adjust_batch_size(trainer, "batch_size", value=init_val)
    run = bss._run_power_scaling if mode == "power" else bss._run_binary_scaling
    result = run(trainer, new_size, "batch_size", max_trials, {})
    return {"mode": mode, "limit": limit, "dataset_len": dataset_len, "init_val": init_val,
            "max_trials": max_trials, "tried": tried, "result": result}


def main():
    cases = []
    for mode in ("power", "binsearch"):
        for limit, n, init, trials in [(37, 1000, 2, 25), (64, 1000, 2, 25), (1, 1000, 2, 25), (0, 1000, 2, 25),
                                       (1000, 100, 2, 25), (37, None, 2, 25), (100, 10000, 3, 25),
                                       (37, 1000, 2, 3), (5000, 100000, 2, 4), (37, 1000, 64, 25)]:
            cases.append(case(mode, limit, n, init, trials))
    json.dump({"source": "gen_batch_size.py, Lightning " + pl.__version__, "cases": cases}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
