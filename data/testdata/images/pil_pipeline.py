"""The PIL side of data/image_folder_pil_test.go and of the throughput
comparison in notes (torchvision is not packaged by Debian; its transforms
on PIL images are these PIL calls). Needs Debian's python3-pil and numpy.

  pil_pipeline.py tensors FOLDER SET...     prints JSON {SET: {relpath: [shape, flat values]}}
  pil_pipeline.py bench FOLDER REPEATS      prints images/s of decode+transform
  pil_pipeline.py make FOLDER N SIZE        writes N JPEGs per class (2 classes), SIZE x SIZE

SET: steps joined by "+" ("" for none), each one of: gray | resize=W,H | resizeshort=S | centercrop=W,H | flip | normalize (mean .5, std .25)
"""
import json
import os
import sys
import time

import numpy as np
from PIL import Image


def files(folder):
    out = []
    for cls in sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d))):
        for dirpath, _, names in os.walk(os.path.join(folder, cls)):
            for n in names:
                if n.lower().endswith((".png", ".jpg", ".jpeg")):
                    out.append(os.path.join(dirpath, n))
    return sorted(out)


def pipeline(path, steps):
    img = Image.open(path).convert("RGB")  # torchvision's default_loader
    gray, norm = False, False
    for s in steps:
        name, _, arg = s.partition("=")
        if name == "gray":
            gray = True
        elif name == "resize":
            w, h = map(int, arg.split(","))
            img = img.resize((w, h), Image.BILINEAR)
        elif name == "resizeshort":
            size = int(arg)
            w, h = img.size
            img = img.resize((size, int(size * h / w)) if w <= h else (int(size * w / h), size), Image.BILINEAR)
        elif name == "centercrop":
            cw, ch = map(int, arg.split(","))
            w, h = img.size
            top, left = int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0))
            img = img.crop((left, top, left + cw, top + ch))
        elif name == "flip":
            img = img.transpose(Image.FLIP_LEFT_RIGHT)
        elif name == "normalize":
            norm = True
        else:
            raise SystemExit("unknown step " + s)
    if gray:
        img = img.convert("L")
    a = np.asarray(img, dtype=np.float32) / 255  # ToTensor
    a = a[None] if a.ndim == 2 else a.transpose(2, 0, 1)
    if norm:
        a = (a - 0.5) / 0.25
    return np.ascontiguousarray(a)


def main():
    mode, folder = sys.argv[1], sys.argv[2]
    if mode == "tensors":
        out = {}
        for steps in sys.argv[3:]:
            out[steps] = {}
            for p in files(folder):
                a = pipeline(p, [s for s in steps.split("+") if s])
                out[steps][os.path.relpath(p, folder)] = [list(a.shape), [float(v) for v in a.reshape(-1)]]
        json.dump(out, sys.stdout)
    elif mode == "bench":
        paths, repeats = files(folder), int(sys.argv[3])
        steps = ["resizeshort=64", "centercrop=56,56", "flip", "normalize"]
        pipeline(paths[0], steps)
        t0 = time.perf_counter()
        for _ in range(repeats):
            for p in paths:
                pipeline(p, steps)
        dt = time.perf_counter() - t0
        print(json.dumps(dict(images=len(paths) * repeats, seconds=dt, images_per_s=len(paths) * repeats / dt)))
    elif mode == "make":
        n, size = int(sys.argv[3]), int(sys.argv[4])
        rng = np.random.default_rng(0)
        yy, xx = np.mgrid[0:size, 0:size]
        for c, cls in enumerate(["cat", "dog"]):
            os.makedirs(os.path.join(folder, cls), exist_ok=True)
            for i in range(n):
                k = c * n + i
                a = np.stack([(xx * 3 + yy + k * 7) % 256, (yy * 2 + k * 13) % 256, (xx + yy * 5) % 256], -1)
                a = (a + rng.integers(0, 32, a.shape)).clip(0, 255).astype(np.uint8)
                Image.fromarray(a, "RGB").save(os.path.join(folder, cls, "%04d.jpg" % i), quality=90)


main()
