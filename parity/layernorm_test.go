package parity_test

import (
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/layers/norm"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
)

// lnNet is tools/parity/layernorm.py's model; epsilon is the LayerNorm's.
type lnNet struct {
	weights *parity.Tensors
	epsilon float64
}

func (m *lnNet) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	scope := s.Scope().In("ln")
	defer m.weights.Apply(scope)
	x := layers.DenseWithBias(scope.In("first"), b.Input(0), 32)
	x = norm.LayerNorm(scope.In("norm"), x, -1).Epsilon(m.epsilon).Done()
	pred := layers.DenseWithBias(scope.In("last"), activation.Relu(x), 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (m *lnNet) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimizers{{Optimizer: optim.AdamW(1e-2).WithWeightDecay(0.1),
		Groups: []volt.ParamGroup{volt.NoWeightDecay("biases", "gain", "offset")}}}
}

// TestLayerNormParity: LayerNorm with PyTorch's epsilon (1e-5), loaded
// from PyTorch's weights, under AdamW with nanoGPT's no-decay group,
// matches PyTorch's loss at every step (1e-4 relative); GoMLX's default
// epsilon (1e-3) does not.
func TestLayerNormParity(t *testing.T) {
	c := readCase(t, "layernorm_adamw", "layernorm.py")
	for _, tc := range []struct {
		epsilon float64
		match   bool
	}{{1e-5, true}, {1e-3, false}} {
		tr, got := c.fit(t, volt.Config{GradientClipVal: 1}, &lnNet{weights: c.file, epsilon: tc.epsilon}, nil)
		bad, maxRel, err := parity.Compare(got, c.want, 1e-4)
		if err != nil {
			t.Fatal(err)
		}
		if tc.match {
			for _, m := range bad {
				t.Error(m)
			}
			c.compareTrained(t, tr, trainedRel)
		} else if len(bad) == 0 {
			t.Errorf("epsilon %g (GoMLX's default) also matched PyTorch's eps 1e-5 (largest difference %.3g): the case cannot tell them apart", tc.epsilon, maxRel)
		}
		t.Logf("epsilon %g: largest relative difference %.3g over %d steps", tc.epsilon, maxRel, len(c.want))
	}
}
