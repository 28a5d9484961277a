//go:build amd64 && !goexperiment.simd

package simdcheck

// BuiltWithoutSIMD reports whether this program was built for amd64 without
// GOEXPERIMENT=simd: the go command defines the build tag goexperiment.simd
// when the experiment is on, and GoMLX's Go backend compiles its AVX2 and
// AVX-512 kernels only then.
const BuiltWithoutSIMD = true
