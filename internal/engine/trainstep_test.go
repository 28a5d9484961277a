package engine

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// linearForward is a 4→1 linear regression with its MSE loss.
func linearForward(scope *model.Scope, inputs, labels []*graph.Node) Forward {
	pred := layers.DenseWithBias(scope.In("dense"), inputs[0], 1)
	loss := graph.ReduceAllMean(graph.Square(graph.Sub(pred, labels[0])))
	return Forward{Loss: loss, Outputs: func() []*graph.Node { return []*graph.Node{loss} }, Trailing: []*graph.Node{graph.ReduceAllSum(pred)}}
}

func linearBatch(i int) *data.Batch {
	x := make([]float64, 8*4)
	y := make([]float64, 8)
	for j := range x {
		x[j] = float64((j*7+i*3)%11)/11 - 0.5
	}
	for j := range y {
		y[j] = x[4*j] - 2*x[4*j+1] + 0.5
	}
	return &data.Batch{Inputs: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(x, 8, 4)},
		Labels: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(y, 8, 1)}, Size: 8}
}

// trainLinear runs steps of a linear regression with SGD(lr) and returns
// every variable's bytes and the outputs of the last step. hooked adds an
// AfterBackward hook that leaves the gradients as they are.
func trainLinear(t *testing.T, lr float64, mode Accumulation, reduce *Reducer, hooked bool, steps int) (map[string][]byte, []*tensors.Tensor) {
	t.Helper()
	e, err := New(goBackend(t), dtypes.Float64, 7)
	if err != nil {
		t.Fatal(err)
	}
	opt := optim.SGD(lr)
	update := func(g *graph.Graph) *UpdateSpec {
		spec := &UpdateSpec{Optimizer: opt, TrackGradNorm: 2, Vars: func() []*model.Variable {
			return TrainableVariables(e.Store, g)
		}}
		if hooked {
			spec.AfterBackward = func([]Gradient) {}
		}
		return spec
	}
	ts, err := e.CompileTrainStep("step", mode, linearForward, update, reduce)
	if err != nil {
		t.Fatal(err)
	}
	if err := SetAccumulationFactor(e.Store, 2); err != nil {
		t.Fatal(err)
	}
	var outs []*tensors.Tensor
	for i := range steps {
		var trace UpdateTrace
		outs, _, trace, err = ts.Run(linearBatch(i))
		if err != nil {
			t.Fatal(err)
		}
		if mode != AccumulateOnly && len(trace.NormNames) != 3 {
			t.Fatalf("update trace %+v, want 3 norms (2 variables and the total)", trace)
		}
	}
	out := map[string][]byte{}
	for v := range e.Store.IterVariables() {
		val, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		_ = val.ConstBytes(func(b []byte) { out[v.Path()] = append([]byte(nil), b...) })
	}
	return out, outs
}

// TestSplitStepEqualsFusedStep: gradients, then a host reducer, then the
// apply program give bitwise the fused step's weights and outputs; a
// reducer that doubles the gradients equals SGD with twice the rate, and
// equals the fused step when it is the sum of 2 ranks with the same
// gradients (which the gradient program divided by 2, in the loss or, when
// an AfterBackward hook is there, after it).
func TestSplitStepEqualsFusedStep(t *testing.T) {
	identity := func(g []*tensors.Tensor) ([]*tensors.Tensor, error) { return g, nil }
	double := func(g []*tensors.Tensor) ([]*tensors.Tensor, error) {
		out := make([]*tensors.Tensor, len(g))
		for i, x := range g {
			flat := tensors.MustCopyFlatData[float64](x)
			for j := range flat {
				flat[j] *= 2
			}
			out[i] = tensors.FromFlatDataAndDimensions(flat, x.Shape().Dimensions...)
		}
		return out, nil
	}
	for _, c := range []struct {
		name       string
		lr, splitL float64
		mode       Accumulation
		reduce     Reducer
		hooked     bool
	}{
		{"identity", 0.1, 0.1, ApplyAtOnce, Reducer{identity, 1}, false},
		{"doubled gradients", 0.2, 0.1, ApplyAtOnce, Reducer{double, 1}, false},
		{"accumulated window", 0.1, 0.1, AccumulateAndApply, Reducer{identity, 1}, false},
		{"2 equal ranks", 0.1, 0.1, ApplyAtOnce, Reducer{double, 2}, false},
		{"2 equal ranks, hooked", 0.1, 0.1, ApplyAtOnce, Reducer{double, 2}, true},
		{"2 equal ranks, accumulated window", 0.1, 0.1, AccumulateAndApply, Reducer{double, 2}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fused, fusedOuts := trainLinear(t, c.lr, c.mode, nil, c.hooked, 3)
			split, splitOuts := trainLinear(t, c.splitL, c.mode, &c.reduce, c.hooked, 3)
			for path, b := range fused {
				if path == "/volt/optimizer_0/lr" && c.lr != c.splitL {
					continue
				}
				if string(split[path]) != string(b) {
					t.Errorf("%s differs between the fused and the split step", path)
				}
			}
			if len(fusedOuts) != len(splitOuts) || len(fusedOuts) != 5 { // loss, 3 norms, trailing sum
				t.Fatalf("outputs: fused %d, split %d, want 5", len(fusedOuts), len(splitOuts))
			}
			for i := range fusedOuts {
				if isNorm := i >= 1 && i <= 3; isNorm && c.lr != c.splitL {
					continue // the norms of doubled gradients differ
				}
				a, _ := Float64(fusedOuts[i])
				b, _ := Float64(splitOuts[i])
				if a != b {
					t.Errorf("output %d: fused %v, split %v", i, a, b)
				}
			}
		})
	}
}
