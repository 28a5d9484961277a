//go:build !amd64

package gokernels

// hasVectorKernels reports whether the machine runs the pooling kernels'
// vector code: amd64 only.
func hasVectorKernels() bool { return false }

// poolRows is never called without vector kernels.
func poolRows(windows, []float32, []float32, bool) { panic("gokernels: no vector pooling here") }

// scatterRows is never called without vector kernels.
func scatterRows(windows, []float32, []float32, []float32, bool) {
	panic("gokernels: no vector pooling here")
}
