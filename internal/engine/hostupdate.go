package engine

import (
	"fmt"
	"os"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/fusedupdate"
	"github.com/voltml/volt/internal/golower"
)

// HostUpdateEnvVar names the environment variable that, set to "off", keeps
// the optimizer step inside the traced training step on the pure-Go
// backend too (the update as graph operations, one pass over memory each).
const HostUpdateEnvVar = "VOLT_HOST_UPDATE"

// On the pure-Go backend a training step's optimizer step runs on the host,
// in place, one pass per parameter (internal/fusedupdate), instead of as
// the thirteen element-wise graph operations Adam traces to: the step
// program outputs the final gradients (after clipping and the
// BeforeOptimizerStep hooks, which stay in the graph) and hostUpdate
// applies them to the variables' buffers, which are host memory there.
// The kernels are bitwise equal to the traced update, so nothing a run
// computes depends on where its update ran, checkpoints included (the
// state lives in the same variables). Updates the kernels do not cover
// keep the traced one: RMSProp, parameters other than float32, mixed
// precision and loss scaling, TerminateOnNaN (its finite check follows the
// update), and the split step of data-parallel training.

// hostUpdate is the optimizer step of one traced graph, run on the host.
type hostUpdate struct {
	spec   *UpdateSpec
	step   *model.Variable
	lr     *model.Variable
	params []*model.Variable
	state  [][]*model.Variable
	// lrScales holds, per parameter, its group's learning-rate scale
	// variable (nil outside any group); weightDecay its weight decay.
	lrScales    []*model.Variable
	weightDecay []float64
	// stateFlat is run's reused list of one parameter's state slices.
	stateFlat [][]float32
}

// hostUpdates reports whether the engine's backend keeps buffers in host
// memory that the update may change in place: the pure-Go backend, unless
// HostUpdateEnvVar is "off".
func (e *Engine) hostUpdates() bool {
	if _, ok := e.Backend.(*golower.Backend); !ok {
		return false
	}
	return os.Getenv(HostUpdateEnvVar) != "off"
}

// planHostUpdate returns the host update of grads in graph g, creating the
// optimizer's variables as the traced update would, or nil where the
// traced update must run (see above).
func (e *Engine) planHostUpdate(g *graph.Graph, grads []Gradient, spec *UpdateSpec) *hostUpdate {
	if !e.hostUpdates() || !fusedupdate.Supported(spec.Optimizer) || spec.Precision.Mixed() || spec.Precision.LossScaling() ||
		spec.TerminateOnNaN || spec.Ranks > 1 {
		return nil
	}
	params := make([]*model.Variable, len(grads))
	for i, gr := range grads {
		if gr.Variable.DType() != dtypes.Float32 || gr.Value.DType() != dtypes.Float32 {
			return nil
		}
		params[i] = gr.Variable
	}
	h := &hostUpdate{spec: spec, params: params, weightDecay: make([]float64, len(params)), lrScales: make([]*model.Variable, len(params))}
	h.step, h.lr, h.state = spec.Optimizer.Variables(e.Store, spec.OptimizerIdx, params)
	for i, p := range params {
		h.weightDecay[i] = spec.Optimizer.WeightDecay
		if spec.WeightDecay != nil {
			if wd, ok := spec.WeightDecay(p); ok {
				h.weightDecay[i] = wd
			}
		}
	}
	if scales := lrScales(e.Store, g, spec, params); scales != nil {
		for i, p := range params {
			if group, _, ok := spec.LRScale(p); ok {
				h.lrScales[i] = e.Store.GetVariable(LRScalePath(spec.OptimizerIdx, group))
			}
		}
	}
	return h
}

// run applies grads (one tensor per parameter, in order) and releases them
// (recycleGradients).
func (h *hostUpdate) run(e *Engine, grads []*tensors.Tensor) error {
	defer recycleGradients(e, grads)
	if len(grads) != len(h.params) {
		return fmt.Errorf("host update: %d gradients for %d parameters", len(grads), len(h.params))
	}
	counter, err := hostFlat[int64](e, h.step)
	if err != nil {
		return err
	}
	counter[0]++
	t := counter[0]
	lr, err := scalarFloat32(h.lr)
	if err != nil {
		return err
	}
	o := h.spec.Optimizer
	for i, p := range h.params {
		paramLR := lr
		if h.lrScales[i] != nil {
			scale, err := scalarFloat32(h.lrScales[i])
			if err != nil {
				return err
			}
			paramLR = float32(paramLR * scale)
		}
		param, err := hostFlat[float32](e, p)
		if err != nil {
			return err
		}
		grad, err := tensorFlat[float32](e, grads[i])
		if err != nil {
			return fmt.Errorf("host update: gradient of %s: %w", p.Path(), err)
		}
		h.stateFlat = h.stateFlat[:0]
		for _, v := range h.state[i] {
			flat, err := hostFlat[float32](e, v)
			if err != nil {
				return err
			}
			h.stateFlat = append(h.stateFlat, flat)
		}
		fusedupdate.Apply(o, t, paramLR, h.weightDecay[i], param, grad, h.stateFlat)
	}
	e.hostWrites.Add(1)
	return nil
}

// hostFlat returns the host memory of v's value, to change in place: its
// backend buffer's, with any separate host copy dropped so that later
// reads see the change.
func hostFlat[T float32 | int64](e *Engine, v *model.Variable) ([]T, error) {
	value, err := v.Value()
	if err != nil {
		return nil, fmt.Errorf("host update: reading %s: %w", v.Path(), err)
	}
	flat, err := tensorFlat[T](e, value)
	if err != nil {
		return nil, fmt.Errorf("host update: %s: %w", v.Path(), err)
	}
	value.FinalizeLocal()
	return flat, nil
}

// tensorFlat returns the host memory of t's backend buffer.
func tensorFlat[T float32 | int64](e *Engine, t *tensors.Tensor) ([]T, error) {
	buf, err := t.Buffer(e.Backend, 0)
	if err != nil {
		return nil, err
	}
	data, err := buf.Data()
	if err != nil {
		return nil, err
	}
	flat, ok := data.([]T)
	if !ok {
		return nil, fmt.Errorf("buffer holds %T, not %T", data, flat)
	}
	if len(flat) != t.Shape().Size() {
		return nil, fmt.Errorf("buffer holds %d values for shape %s", len(flat), t.Shape())
	}
	return flat, nil
}

// scalarFloat32 returns a scalar variable's value as the traced update reads
// it for float32 parameters: converted to float32.
func scalarFloat32(v *model.Variable) (float32, error) {
	value, err := v.Value()
	if err != nil {
		return 0, fmt.Errorf("host update: reading %s: %w", v.Path(), err)
	}
	var x float32
	var dtypeErr error
	err = value.ConstFlatData(func(flat any) {
		switch f := flat.(type) {
		case []float32:
			x = f[0]
		case []float64:
			x = float32(f[0])
		default:
			dtypeErr = fmt.Errorf("host update: %s holds %T, not a float", v.Path(), flat)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("host update: reading %s: %w", v.Path(), err)
	}
	return x, dtypeErr
}

// recycleGradients releases grads, which the host update no longer needs:
// their buffers go back to the Go backend's pool by way of the next
// execution (golower's Recycle), so that the next step's outputs and
// scratch space reuse them instead of allocating them anew (~1.3 MB a step
// for the MNIST MLP; see golower's recycle.go). A gradient whose buffer
// cannot be taken is finalized as before.
func recycleGradients(e *Engine, grads []*tensors.Tensor) {
	wrapped, _ := e.Backend.(*golower.Backend)
	for _, g := range grads {
		if wrapped != nil && g.Ok() && g.IsOnDevice(0) && !g.IsShared() {
			if buf, err := g.DonateBuffer(e.Backend, 0); err == nil {
				_ = wrapped.Recycle(buf)
			}
		}
		_ = g.FinalizeAll()
	}
}
