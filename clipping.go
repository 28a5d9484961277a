package volt

import (
	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/optim"
)

// ClipAlgorithm selects how gradients are clipped.
type ClipAlgorithm string

// The clipping algorithms.
const (
	// ClipNorm rescales all gradients of an optimizer together so that their
	// global 2-norm is at most the clip value (torch.nn.utils.clip_grad_norm_).
	ClipNorm ClipAlgorithm = "norm"
	// ClipValue clamps each gradient element to [-v, v] (clip_grad_value_).
	ClipValue ClipAlgorithm = "value"
)

// GradientClipper is implemented by modules that clip gradients their own way
// (Lightning's configure_gradient_clipping). It runs at trace time, once per
// optimizer, with the configured value and algorithm (value 0 when clipping
// is off), and may replace the Gradient values; ClipGradients is the default.
type GradientClipper interface {
	ConfigureGradientClipping(s *Step, optimizerIdx int, grads []Gradient, clipVal float64, algorithm ClipAlgorithm)
}

// ClipGradients clips grads in place by norm or by value; a clipVal of 0
// does nothing.
func ClipGradients(grads []Gradient, clipVal float64, algorithm ClipAlgorithm) {
	if clipVal <= 0 || len(grads) == 0 {
		return
	}
	values := engine.Values(grads)
	var clipped []*graph.Node
	if algorithm == ClipValue {
		clipped = optim.ClipByValue(values, clipVal)
	} else {
		clipped, _ = optim.ClipByGlobalNorm(values, clipVal, 2)
	}
	for i := range grads {
		grads[i].Value = clipped[i]
	}
}
