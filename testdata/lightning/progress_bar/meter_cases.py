"""Bar lines formatted by tqdm 4.64 (Debian's python3-tqdm) with Lightning
2.2.5's TQDMProgressBar.BAR_FORMAT and its Tqdm.format_num, for seeded cases;
internal/tqdm's TestMeterMatchesTqdm compares.

Usage: PYTHONPATH=<lsite>:testdata/lightning /usr/bin/python3 meter_cases.py > meter_cases.json
"""
import json
import random

try:  # torch 1.13 on Python 3.11 needs this shim (Debian bookworm); harmless elsewhere
    import torch_py311_shim
except ImportError:
    pass
else:
    torch_py311_shim.apply()
import tqdm
from lightning.pytorch.callbacks.progress.tqdm_progress import Tqdm, TQDMProgressBar

rng = random.Random(24)
cases = []
for i in range(300):
    total = rng.choice([0, 1, 2, 16, 157, 860, 1000, 12345])
    n = rng.randint(0, total) if total else rng.randint(0, 50)
    elapsed = rng.choice([0.0, 0.004, 0.5, 1.3, 59.99, 61.0, 3599.0, 3601.5, rng.uniform(0, 5000)])
    ncols = rng.choice([0, 20, 40, 80, 120, 160])
    desc = rng.choice(["Epoch 0", "Epoch 12", "Sanity Checking", "Validation DataLoader 0", "Testing DataLoader 0", ""])
    vals = []
    for k in range(rng.randint(0, 4)):
        v = rng.choice([0.0, 1.0, 2.0, 0.5, 100.0, rng.uniform(0, 10), 10 ** rng.uniform(-9, 6),
                        -rng.uniform(0, 3), float(rng.randint(0, 20))])
        vals.append(["m%d" % k, v])
    vnum = rng.choice([None, 0, 3, 12])
    items = ([["v_num", vnum]] if vnum is not None else []) + vals
    postfix = ", ".join("%s=%s" % (k, Tqdm.format_num(v)) for k, v in items)
    line = tqdm.tqdm.format_meter(n, total or None, elapsed, ncols=ncols or None, prefix=desc,
                                  postfix=postfix, bar_format=TQDMProgressBar.BAR_FORMAT)
    cases.append({"n": n, "total": total, "elapsed": elapsed, "ncols": ncols, "desc": desc,
                  "v_num": vnum, "values": vals, "line": line})
print(json.dumps({"tqdm": tqdm.__version__, "cases": cases}, indent=0, ensure_ascii=False))
