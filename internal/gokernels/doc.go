// Package gokernels installs faster float32 executors for a few ops of
// GoMLX's pure-Go backend (github.com/gomlx/compute/gobackend):
//
//   - copies (transpose.go, pad.go, slice.go): the transpose that swaps
//     two groups of axes (channels-first ↔ channels-last, batched or
//     not), Pad without interior padding or crops, and Slice. The
//     backend's own are generic loops (a scalar tiled transpose, a Pad
//     that zeroes its whole output before copying, a Slice that copies
//     element by element): ~30% of the ResNet step and ~25% of the LSTM's
//     in issue 38's profiles. They only move bytes, so a graph computes
//     the same bits with or without them (TestKernelsMatchBackend).
//   - 2-D convolutions on oneDNN (conv.go, internal/onednn): a ConvGeneral
//     read as oneDNN's forward convolution, its kernel gradient or its
//     input gradient (planConv), in fixed batch chunks (convBatchChunk) so
//     that the bits do not depend on the cores. Where oneDNN is absent,
//     or for what planConv does not map, the backend's own executor runs.
//   - non-overlapping max and min pooling and its gradient on AVX-512
//     (pool.go, pool_amd64.go): the backend's per-element loops, 16
//     channels at a time, with the same bits (Go's max and min rebuilt
//     lane by lane).
//   - small float32 matrix products on one core (dot.go): the backend's
//     own implementation, handed a backend whose worker pool has one
//     worker, where the backend would split a product of under
//     serialDotMACs multiply-adds over the cores, which costs more than
//     it gives back on such products (the MLP's step at two threads
//     0.55×, the autoencoder's 0.66×, whole processes). Same bits.
//
// Convolutions and pooling are lowered onto other ops by internal/golower
// unless RunsConv or RunsPooling, which volt's engine gives it, says the
// executor here takes them: the decision is made as the graph is built.
//
// # How they are installed
//
// The backend keeps a registry of executors per op and tries them by
// priority, moving on when one returns its ErrFallback; the registry is in
// an internal package, so this package reaches it by go:linkname
// (hook.go), and so the table of matrix product implementations, whose
// float32 entries dot.go wraps (checking each entry's function type by
// reflection first). That couples volt to the backend's internals, so nothing is
// installed unless all of these hold, checked once at start-up
// (layout.go): the compute module is the version these executors were
// written against (PinnedComputeVersion), and reflection on live values
// finds the backend's Node and Buffer fields this package reads, the
// GetBuffer method and the parameters of every op it runs with the types
// and offsets it expects. Otherwise the backend runs its own ops, and
// Installed says why. VOLT_KERNELS=off turns them all off for a process
// (VOLT_ONEDNN=off oneDNN alone), SetEnabled for a while (tests and
// benchmarks compare both in one process).
//
// Each executor takes only what it handles and falls back to the
// backend's own executor for the rest; the backend remembers the choice
// per node, so a fallback costs one call per node, not per step.
package gokernels
