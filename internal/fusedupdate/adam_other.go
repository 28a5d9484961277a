//go:build !(goexperiment.simd && amd64)

package fusedupdate

// adamVector does nothing without GOEXPERIMENT=simd on amd64: adamScalar
// does every element.
func adamVector(param, grad, expAvg, expAvgSq []float32, c AdamCoefficients) int { return 0 }
