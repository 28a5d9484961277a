package golower

import (
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// BenchmarkWrapperOverhead times a tiny executable (one Add of two
// 16-element vectors: the per-call cost dominates) on the Go backend and on
// its wrapper with lowering disabled, to size the cost of wrapping
// buffers and executables.
func BenchmarkWrapperOverhead(b *testing.B) {
	for _, bc := range []struct {
		name    string
		backend compute.Backend
	}{
		{"direct", gobackend.GetBackend()},
		{"wrapped", WrapWith(gobackend.GetBackend(), Rules{Disabled: true}, Lowering{})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			exec := MustNewExec(bc.backend, func(x, y *Node) *Node { return Add(x, y) })
			defer exec.Finalize()
			x := tensors.FromFlatDataAndDimensions(make([]float32, 16), 16)
			y := tensors.FromFlatDataAndDimensions(make([]float32, 16), 16)
			exec.MustCall(x, y)[0].FinalizeAll()
			for b.Loop() {
				exec.MustCall(x, y)[0].FinalizeAll()
			}
		})
	}
}
