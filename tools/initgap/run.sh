#!/bin/sh
# Issue 23's initialisation experiment: the same 8-64-64-1 MLP, Adam 1e-3,
# 10 epochs, on the same data, trained by real Lightning 2.2.5 (nn.Linear's
# default initialisation) and by volt with GoMLX's default and with
# PyTorch's initialisation (torchinit), SEEDS seeds each; prints the
# val_loss after each epoch, averaged over the seeds, and the final one per
# seed. Needs /usr/bin/python3 with python3-torch. About 2 minutes.
#
#   sh tools/initgap/run.sh [SEEDS]
set -eu
SEEDS=${1:-5}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/site"
tar -xJf "$ROOT/testdata/lightning/lightning-2.2.5-site.tar.xz" -C "$WORK/site"
SITE=$(dirname "$(find "$WORK/site" -maxdepth 3 -type d -name lightning | head -1)")
PYTHONPATH="$SITE:$ROOT/testdata/lightning" /usr/bin/python3 "$ROOT/tools/initgap/lightning_mlp.py" \
	--out "$WORK" --seeds "$SEEDS" 2>/dev/null | grep '^{' | sed 's/^{/{"init": "lightning", /' >"$WORK/runs.jsonl"
(cd "$ROOT" && GOTOOLCHAIN=auto GOEXPERIMENT=simd go run ./tools/initgap -data "$WORK/data.safetensors" -seeds "$SEEDS") >>"$WORK/runs.jsonl"
/usr/bin/python3 - "$WORK/runs.jsonl" <<'PY'
import json, sys, statistics as st
runs = [json.loads(l) for l in open(sys.argv[1])]
names = {"lightning": "Lightning 2.2.5 (nn.Linear init)", "gomlx": "volt, GoMLX default init", "torch": "volt, torchinit.Apply"}
print("val_loss after each epoch, mean over seeds")
for init in ["lightning", "gomlx", "torch"]:
    rs = [r["val_loss"] for r in runs if r["init"] == init]
    means = [st.mean(e) for e in zip(*rs)]
    print(f"  {names[init]:34s}", " ".join(f"{m:.3f}" for m in means))
print("final val_loss per seed (mean ± stdev)")
for init in ["lightning", "gomlx", "torch"]:
    fin = [r["val_loss"][-1] for r in runs if r["init"] == init]
    print(f"  {names[init]:34s}", " ".join(f"{v:.4f}" for v in fin), f" {st.mean(fin):.4f} ± {st.stdev(fin) if len(fin) > 1 else 0:.4f}")
PY
