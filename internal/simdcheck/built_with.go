//go:build !amd64 || goexperiment.simd

package simdcheck

// BuiltWithoutSIMD reports whether this program was built for amd64 without
// GOEXPERIMENT=simd. Elsewhere GoMLX's Go backend has no SIMD kernels to miss.
const BuiltWithoutSIMD = false
