// Package gokernels installs faster float32 kernels for a few copying ops
// of GoMLX's pure-Go backend (github.com/gomlx/compute/gobackend): the 2-D
// transpose, Pad without interior padding, and Slice. The backend's own
// versions are generic loops (a scalar tiled transpose, a Pad that zeroes
// its whole output before copying, a Slice that copies element by
// element); together they were ~30% of the ResNet step and ~25% of the
// LSTM's (issue 38's profiles). Each kernel only moves bytes, so a graph
// computes the same bits with or without them (TestKernelsMatchBackend).
//
// # How they are installed
//
// The backend keeps a registry of executors per op and tries them by
// priority, moving on when one returns its ErrFallback; the registry is in
// an internal package, so this package reaches it by go:linkname
// (hook.go). That couples volt to the backend's internals, so nothing is
// installed unless all of these hold, checked once at start-up
// (layout.go): the compute module is the version these kernels were
// written against (PinnedComputeVersion), and reflection on live values
// finds the backend's Node and Buffer fields this package reads, the
// GetBuffer method and the Pad and Slice parameters with the types and
// offsets it expects. Otherwise the backend runs its own ops, and
// Installed says why. VOLT_KERNELS=off turns the kernels off for a
// process, SetEnabled for a while (benchmarks pair both in one process).
//
// Each executor takes only what it handles (float32; the transpose's
// swapped pair of axes, Pad's edges, unit-stride Slice) and falls back to
// the backend's own executor for the rest; the backend remembers the
// choice per node, so a fallback costs one call per node, not per step.
package gokernels
