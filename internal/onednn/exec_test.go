package onednn

import (
	"errors"
	"fmt"
	"testing"
)

// tinyConv is a 1×1 convolution of two 1×1 images: an execution that is
// nearly all call overhead.
func tinyConv(chunk int) Conv {
	return Conv{Batch: 2, InChannels: 1, Height: 1, Width: 1, OutChannels: 1, KernelHeight: 1, KernelWidth: 1,
		Threads: 1, BatchChunk: chunk}
}

// TestExecutionAllocations bounds what one execution allocates: the calls
// it makes into oneDNN go through purego.SyscallN (bindHotCalls), not
// reflection-based bindings, which took a 1×1 convolution to 30
// allocations (69 in two chunks); now 7 and 19.
func TestExecutionAllocations(t *testing.T) {
	requireLibrary(t)
	src, w, dst := make([]float32, 2), make([]float32, 1), make([]float32, 2)
	for _, tc := range []struct{ chunk, most int }{{0, 12}, {1, 30}} {
		c := tinyConv(tc.chunk)
		allocs := testing.AllocsPerRun(200, func() {
			if err := Forward(c, src, w, dst); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > float64(tc.most) {
			t.Errorf("chunk %d: %.0f allocations per execution, want at most %d", tc.chunk, allocs, tc.most)
		}
	}
}

// TestUnavailableIsAnError checks that every entry point reports a
// library that cannot be loaded, chunked or not, instead of calling it.
func TestUnavailableIsAnError(t *testing.T) {
	missing := errors.New("no libdnnl.so.2 here")
	defer SetUnavailableForTest(missing)()
	src, w, dst := make([]float32, 2), make([]float32, 1), make([]float32, 2)
	for _, chunk := range []int{0, 1} {
		c := tinyConv(chunk)
		for name, call := range map[string]func() error{
			"Forward":         func() error { return Forward(c, src, w, dst) },
			"BackwardData":    func() error { return BackwardData(c, dst, w, src) },
			"BackwardWeights": func() error { return BackwardWeights(c, src, dst, w) },
		} {
			t.Run(fmt.Sprintf("%s_chunk%d", name, chunk), func(t *testing.T) {
				if err := call(); !errors.Is(err, missing) {
					t.Errorf("got %v, want the unavailability", err)
				}
			})
		}
	}
}
