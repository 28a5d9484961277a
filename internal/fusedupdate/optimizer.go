package fusedupdate

import (
	"fmt"

	"github.com/voltml/volt/optim"
)

// Supported reports whether o has a fused kernel: SGD (with or without
// momentum, Nesterov, dampening, weight decay), Adam and AdamW. RMSProp
// keeps the traced update.
func Supported(o *optim.Optimizer) bool {
	switch o.Kind {
	case optim.KindSGD, optim.KindAdam, optim.KindAdamW:
		return true
	}
	return false
}

// Apply runs step t (the optimizer's step counter after this step: 1 for
// the first) of o on one parameter in place: lr is its learning rate (a
// parameter group's scale applied, rounded to float32 as the traced update
// rounds it), weightDecay its weight decay, state its state slices in o.StateKinds() order.
func Apply(o *optim.Optimizer, t int64, lr float32, weightDecay float64, param, grad []float32, state [][]float32) {
	if want := len(o.StateKinds()); len(state) != want {
		panic(fmt.Sprintf("fusedupdate.Apply: %s takes %d state slices, got %d", o.Kind, want, len(state)))
	}
	switch o.Kind {
	case optim.KindAdam, optim.KindAdamW:
		c := Coefficients(lr, o.Betas[0], o.Betas[1], o.Eps, t, o.Kind == optim.KindAdamW, weightDecay)
		Adam(param, grad, state[0], state[1], c)
	case optim.KindSGD:
		var buf []float32
		if o.Momentum != 0 {
			buf = state[0]
		}
		SGD(param, grad, buf, lr, float32(o.Momentum), float32(o.Dampening), float32(weightDecay), o.Nesterov, t == 1)
	default:
		panic(fmt.Sprintf("fusedupdate.Apply: no fused kernel for %s", o.Kind))
	}
}
