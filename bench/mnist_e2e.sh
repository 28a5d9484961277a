#!/usr/bin/env bash
# Whole-process benchmark of the MNIST example against a raw GoMLX loop.
#
# Runs, RUNS times each (default 3), alternating:
#   volt: examples/mnist -epochs $EPOCHS (default 1) -timing, all defaults on (2 loader
#         workers, validation after the epoch and the sanity check, CSV
#         logger, checkpointing, model summary, progress bar), stderr on a
#         pseudo-terminal (script -qfc), so the bars are drawn as a user sees them;
#   raw:  bench/rawloop, the same MLP, data, order, validation and test
#         with GoMLX alone, on a pseudo-terminal too, run by the same binary
#         (the example built with -tags e2ebench, VOLT_E2E_RAW=1): the same
#         raw loop in a binary of its own (bench/cmd/rawmnist) ran 2-3%
#         faster than inside the example's binary on the development
#         machine, as much as the overhead being measured. RAW=separate
#         uses bench/cmd/rawmnist instead.
# and prints, per program, the median over the runs of: wall time, CPU time
# (user + system), time from the process start to the end of the first
# training step, steady step time (median time between two consecutive
# training steps), peak RSS and test accuracy; the minima of wall, CPU and
# step over the runs (less exposed to load from other processes); then
# volt's overhead against the raw loop: steady step difference, and whole-
# process wall and CPU differences per training step ((volt - raw) / steps).
# On a machine shared with other work, run it several times (RUNS=9) and
# compare CPU time first: wall-time differences of a few percent are noise.
#
#   GOTOOLCHAIN=auto GOEXPERIMENT=simd bench/mnist_e2e.sh        # from the repository root
#   RUNS=5 bench/mnist_e2e.sh
#   EPOCHS=3 RUNS=5 bench/mnist_e2e.sh  # several epochs, so one-off costs weigh less
#   VOLT_ARGS='-refresh 1ns' bench/mnist_e2e.sh  # extra flags for the example (here: redraw per batch)
#   RAW=separate bench/mnist_e2e.sh  # the raw loop as a program of its own (bench/cmd/rawmnist)
#
# Needs script (util-linux) and /usr/bin/time (GNU time).
set -euo pipefail
export GOEXPERIMENT="${GOEXPERIMENT:-simd}"
runs="${RUNS:-3}"
epochs="${EPOCHS:-1}"
volt_args="${VOLT_ARGS:-}"
for tool in script /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "mnist_e2e.sh: $tool is needed" >&2; exit 2; }
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -tags e2ebench -o "$tmp/mnist" ./examples/mnist
raw_cmd="env VOLT_E2E_RAW=1 $tmp/mnist"
if [[ "${RAW:-}" == separate ]]; then
	go build -o "$tmp/rawmnist" ./bench/cmd/rawmnist
	raw_cmd="$tmp/rawmnist"
fi

script_name=mnist_e2e.sh
# shellcheck source=bench/measure.sh
source "$(dirname "$0")/measure.sh"

for run in $(seq "$runs"); do
	if ((run % 2)); then
		measure volt "$run" "$tmp/mnist" -epochs "$epochs" -timing -root "$tmp/root" $volt_args
		measure raw "$run" "$raw_cmd" -epochs "$epochs"
	else
		measure raw "$run" "$raw_cmd" -epochs "$epochs"
		measure volt "$run" "$tmp/mnist" -epochs "$epochs" -timing -root "$tmp/root" $volt_args
	fi
done


printf '%-5s %8s %8s %14s %12s %10s %9s\n' program wall_s cpu_s first_step_s step_us rss_MiB test_acc
for name in volt raw; do
	printf '%-5s %8.2f %8.2f %14.2f %12.1f %10.1f %9s\n' "$name" "$(median 1 "$tmp/$name")" "$(median 7 "$tmp/$name")" \
		"$(median 2 "$tmp/$name")" \
		"$(median 3 "$tmp/$name")" "$(awk -v k="$(median 4 "$tmp/$name")" 'BEGIN {print k / 1024}')" "$(median 6 "$tmp/$name")"
done
# minimum COLUMN FILE: the least value, less exposed to load from other processes.
minimum() { cut -d' ' -f"$1" "$2" | sort -g | head -1; }
for name in volt raw; do
	printf '%-5s min: wall_s %.2f, cpu_s %.2f, step_us %.1f\n' "$name" "$(minimum 1 "$tmp/$name")" \
		"$(minimum 7 "$tmp/$name")" "$(minimum 3 "$tmp/$name")"
done
steps="$(median 5 "$tmp/raw")"
awk -v vs="$(median 3 "$tmp/volt")" -v rs="$(median 3 "$tmp/raw")" -v vw="$(median 1 "$tmp/volt")" \
	-v rw="$(median 1 "$tmp/raw")" -v vc="$(median 7 "$tmp/volt")" -v rc="$(median 7 "$tmp/raw")" -v n="$steps" 'BEGIN {
	printf "steady step overhead: %.1f us/step (%.2f%% of the raw step)\n", vs - rs, 100 * (vs - rs) / rs
	printf "whole-process overhead: %.1f us per training step ((wall volt - wall raw) / %d steps; %.2f%% of the raw step)\n", 1e6 * (vw - rw) / (n + 1), n + 1, 100 * 1e6 * (vw - rw) / (n + 1) / rs
	printf "whole-process CPU overhead: %.1f us per training step ((cpu volt - cpu raw) / %d steps)\n", 1e6 * (vc - rc) / (n + 1), n + 1
}'
# Paired: run k of volt and run k of raw ran back to back, so their difference
# cancels most of the machine's drift between runs. The median of the
# per-pair step differences, with a distribution-free 95% interval for it
# (order statistics of the sign test; at least 6 pairs).
paste -d' ' <(cut -d' ' -f3 "$tmp/volt") <(cut -d' ' -f3 "$tmp/raw") | awk '{print 100 * ($1 - $2) / $2}' | sort -g |
	awk '{d[NR] = $1} END {
		n = NR; med = (d[int((n + 1) / 2)] + d[int(n / 2) + 1]) / 2
		# the largest k with P(Binomial(n, 1/2) < k) <= 2.5%: [d_k, d_(n+1-k)] covers the median with >= 95%.
		p = 0.5 ^ n; cum = 0; k = 0
		for (j = 0; j <= n; j++) { cum += p; if (cum > 0.025) break; k = j + 1; p = p * (n - j) / (j + 1) }
		if (k >= 1) printf "paired steady step overhead: median %.2f%% over %d pairs, 95%% interval %.2f%% .. %.2f%%\n", med, n, d[k], d[n + 1 - k]
		else printf "paired steady step overhead: median %.2f%% over %d pairs (6 or more give a 95%% interval)\n", med, n
	}'
