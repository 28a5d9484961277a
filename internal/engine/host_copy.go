package engine

import "github.com/gomlx/gomlx/core/tensors"

// ToHost gives each tensor a host copy (a transfer from the device, unless
// the backend shares its buffers with the host) and counts it: the trainer
// calls it for the step outputs a hook reads, and nowhere else, so that
// HostCopies tells whether a run paid for transfers nobody read.
func (e *Engine) ToHost(ts []*tensors.Tensor) {
	for _, t := range ts {
		t.MaterializeLocal()
		e.hostCopies.Add(1)
	}
}

// HostCopies returns how many tensors ToHost has brought to the host.
func (e *Engine) HostCopies() int64 { return e.hostCopies.Load() }
