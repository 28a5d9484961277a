package engine

import (
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
)

// TestStagingCopiesEachBatch: on the pure-Go backend a program feeds each
// batch through one staging tensor per batch tensor, made once and reused
// while the shape stays, remade when it changes; every run computes from
// its own batch's values (not a stale copy), and the batch tensors the
// caller passed are left as they were.
func TestStagingCopiesEachBatch(t *testing.T) {
	eng, err := New(goBackend(t), dtypes.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := eng.Compile("double", Evaluation, func(_ *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
		return []*graph.Node{graph.MulScalar(inputs[0], 2), graph.Neg(labels[0])}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var first *tensors.Tensor
	for i, n := range []int{3, 3, 3, 5, 5} {
		x := make([]float32, n)
		for j := range x {
			x[j] = float32(10*i + j)
		}
		y := []int32{int32(i), -int32(i)}
		in, label := tensors.FromValue(x), tensors.FromValue(y)
		outs, _, err := p.Run(&data.Batch{Inputs: []*tensors.Tensor{in}, Labels: []*tensors.Tensor{label}})
		if err != nil {
			t.Fatal(err)
		}
		got := tensors.MustCopyFlatData[float32](outs[0])
		for j, v := range x {
			if got[j] != 2*v {
				t.Fatalf("run %d: output[%d] = %g, want %g", i, j, got[j], 2*v)
			}
		}
		if neg := tensors.MustCopyFlatData[int32](outs[1]); !slices.Equal(neg, []int32{-int32(i), int32(i)}) {
			t.Fatalf("run %d: labels gave %v", i, neg)
		}
		if in.IsOnAnyDevice() || !slices.Equal(tensors.MustCopyFlatData[float32](in), x) {
			t.Fatalf("run %d: the batch tensor was moved or changed", i)
		}
		if len(p.staging) != 2 || p.staging[0] == nil || !p.staging[0].IsShared() {
			t.Fatalf("run %d: staging %v, want a shared tensor per batch tensor", i, p.staging)
		}
		switch i {
		case 0:
			first = p.staging[0]
		case 1, 2:
			if p.staging[0] != first {
				t.Fatalf("run %d: a new staging tensor for the same shape", i)
			}
		case 3:
			if p.staging[0] == first || first.Ok() {
				t.Fatalf("run %d: the staging tensor of the old shape was kept", i)
			}
		}
	}
}
