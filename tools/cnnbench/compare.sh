#!/bin/sh
# Times issue 16's CNN training step three ways in one run, for ratios:
# the Go backend's direct convolution, the golower lowering (both with
# GOMAXPROCS=1 and 2), and PyTorch on one thread. Run from the repository
# root: tools/cnnbench/compare.sh [steps]. Needs /usr/bin/python3 with
# Debian's python3-torch.
set -eu
steps=${1:-20}
export GOTOOLCHAIN=auto GOEXPERIMENT=simd
uptime
go test ./internal/golower -run '^$' -bench 'CNNStep/backend=golower' -benchtime "${steps}x" -cpu 1,2 |
	grep Benchmark
go test ./internal/golower -run '^$' -bench 'CNNStep/backend=direct' -benchtime 3x -cpu 1,2 | grep Benchmark
/usr/bin/python3 tools/cnnbench/torch_cnn_bench.py --steps "$steps"
uptime
