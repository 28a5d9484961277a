package optim

import "github.com/gomlx/gomlx/ml/model"

// StateKinds returns the names of the per-parameter state o keeps, the
// suffixes of its state variables: exp_avg and exp_avg_sq for Adam and
// AdamW, momentum_buffer for SGD with momentum and for RMSProp with
// momentum (after square_avg), none for plain SGD.
func (o *Optimizer) StateKinds() []string {
	switch o.Kind {
	case KindAdam, KindAdamW:
		return []string{"exp_avg", "exp_avg_sq"}
	case KindSGD:
		if o.Momentum != 0 {
			return []string{"momentum_buffer"}
		}
	case KindRMSProp:
		if o.Momentum > 0 {
			return []string{"square_avg", "momentum_buffer"}
		}
		return []string{"square_avg"}
	}
	return nil
}

// Variables returns, creating them as Apply would, the variables an update
// of params by optimizer number index reads and writes besides the
// parameters: its step counter, its learning rate and each parameter's
// state in StateKinds order. An update computed elsewhere (on the host, by
// internal/fusedupdate) keeps its state in these, so that checkpoints do
// not depend on where the update ran.
func (o *Optimizer) Variables(store *model.Store, index int, params []*model.Variable) (step, lr *model.Variable, state [][]*model.Variable) {
	step = stepVariable(store, index)
	lr = o.lrVariableFor(store, index, params)
	kinds := o.StateKinds()
	state = make([][]*model.Variable, len(params))
	for i, p := range params {
		for _, kind := range kinds {
			state[i] = append(state[i], stateVariable(store, index, p, kind))
		}
	}
	return step, lr, state
}
