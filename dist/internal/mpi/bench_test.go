//go:build mpi

package mpi

import (
	"fmt"
	"os"
	"testing"
	"unsafe"
)

// TestMain initialises MPI once for the benchmarks (as a singleton: run
// without mpirun, `go test -tags mpi -bench . ./dist/internal/mpi`).
func TestMain(m *testing.M) {
	if _, err := Init(ThreadSerialized); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// BenchmarkCallOverhead is the binding's cost around an MPI call (lock,
// state check) with an empty call.
func BenchmarkCallOverhead(b *testing.B) {
	for range b.N {
		if err := do("bench", func() error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAllReduceOneFloat is a 1-element all-reduce through the binding.
func BenchmarkAllReduceOneFloat(b *testing.B) {
	buf := []float32{1}
	for range b.N {
		if err := AllReduce(buf, Sum); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAllReduceOneFloatRaw is the same MPI call made directly, for
// comparison with BenchmarkAllReduceOneFloat.
func BenchmarkAllReduceOneFloatRaw(b *testing.B) {
	buf := []float32{1}
	for range b.N {
		if err := cgoAllReduce(unsafe.Pointer(&buf[0]), 1, Float32, Sum); err != nil {
			b.Fatal(err)
		}
	}
}
