// Package bench measures what volt's fit loop costs per training step.
//
// It holds benchmarks only. Each compares two loops over the same compiled
// training step (forward, sparse softmax cross-entropy, gradients and an
// Adam(1e-3) update in one GoMLX graph), on the same synthetic MNIST-shaped
// batches (64 × 784 float32 pixels, int32 labels, fixed seed), with the
// weights initialised from the same seed:
//
//   - handwritten: what a user writes with GoMLX alone: model.NewExec over a
//     store seeded with the seed, then, per step, exec.Exec(images, labels)
//     and reading the loss back to the host;
//   - volt: Trainer.Fit on a Module whose TrainingStep builds the same graph
//     and logs the loss (loggers and volt's messages off, no validation),
//     so every step goes through the loader iterator, the batch hooks,
//     the progress counters, the logged-value bookkeeping and the epoch ends
//     (an epoch is 938 batches, as MNIST's 60000 examples in batches of 64).
//
// Both loops read the same pre-built batches in the same order, so neither
// pays for batch building. One benchmark iteration is one training step, so
// ns/op (repeated as ns/step) is the time per step; compilation and a few
// warm-up steps happen before the timer starts. Two models are measured:
//
//   - BenchmarkMLP: the MNIST example's MLP 784-256-256-10, where the step's
//     compute dominates (target: volt adds ≤ 1% to the step time);
//   - BenchmarkLogReg: a 784-10 logistic regression, where the per-step
//     overhead dominates (target: volt adds ≤ 20 µs per step).
//
// A third sub-benchmark, loop=paired, runs both inside one Fit, alternating
// a volt step and a hand-written step (each on its own model and batches),
// and times each step separately; it reports the medians hand-ns/step,
// volt-ns/step and, of the per-pair differences, overhead-ns/step and
// overhead-%. Load from other processes then hits both loops alike, which
// the separate sub-benchmarks cannot guarantee on a busy machine.
//
// TestBenchLoopsAgree checks that both loops produce bitwise-identical
// losses for the first steps, i.e. that they run the same step on the same
// data from the same initial weights.
//
// BenchmarkBackendModes (backend_test.go) compares volt's fit loop on the
// Go backend's default execution mode and on ops_sequential, the two fits
// taking turns step by step, for the MLP, the logistic regression and a
// small CNN; with examples/internal/speedtable's BenchmarkZooBackendModes
// (every zoo model, and volt's per-graph choice) it decided
// engine.DefaultBackend. BenchmarkIntraOpParallelism
// (parallelism_test.go) compares, the same way, ops_sequential with each op
// split over the cores (the default) and kept on one (parallelism=1), at
// the process's GOMAXPROCS. BenchmarkProgressBar
// (progress_test.go) measures, the same way, what callback.ProgressBar
// adds to a step and how often it writes.
//
// Outside the test binary, mnist_e2e.sh measures whole processes: the MNIST
// example (one epoch, validation, test, every default on, its progress bar
// on a pseudo-terminal) against package rawloop, the same run written with
// GoMLX alone, which the example's binary runs when built with -tags
// e2ebench and started with VOLT_E2E_RAW=1 (cmd/rawmnist runs it as a
// program of its own). It prints the paired steady-step overhead with a
// 95% interval.
//
// Run, and compare the handwritten/volt pairs with benchstat:
//
//	GOEXPERIMENT=simd go test -run '^$' -bench . -count 6 ./bench | tee new.txt
//	benchstat -col /loop new.txt
//
// (add -benchtime 4s to give loop=paired more samples), and
//
//	GOEXPERIMENT=simd go test -run '^$' -bench 'BackendModes/model=(mlp|logreg)' -benchtime 300x -count 6 ./bench
//	GOEXPERIMENT=simd go test -run '^$' -bench 'BackendModes/model=cnn' -benchtime 4x -count 3 ./bench
//	GOEXPERIMENT=simd bench/mnist_e2e.sh
package bench
