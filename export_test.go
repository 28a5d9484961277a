package volt

import (
	"os"
	"reflect"

	"github.com/voltml/volt/internal/engine"

	"github.com/gomlx/gomlx/core/tensors"
)

// SetGradientReducer makes t's training steps run as a gradient program
// (dividing by ranks), sum on the host, and an apply program (what data
// parallelism does).
func SetGradientReducer(t *Trainer, ranks int, sum func([]*tensors.Tensor) ([]*tensors.Tensor, error)) {
	t.cfg.reduceGradients = &engine.Reducer{Sum: sum, Ranks: ranks}
}

// RunInProgress reports whether t holds any state of a run (Trainer.run is
// not empty).
func RunInProgress(t *Trainer) bool { return !reflect.ValueOf(*t.run).IsZero() }

// HostCopies returns how many tensors t's engine has brought to the host
// for hooks (step outputs).
func HostCopies(t *Trainer) int64 { return t.eng.HostCopies() }

// SignalReceived returns the signal t's running Fit has taken
// (Config.HandleSignals), nil before one: what the loops read after each
// step.
func SignalReceived(t *Trainer) os.Signal { return t.run.signals.signalled() }
