package fusedupdate_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	_ "github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/fusedupdate"
	"github.com/voltml/volt/optim"
)

var (
	backendOnce sync.Once
	backend     compute.Backend
	backendErr  error
)

func goBackend(tb testing.TB) compute.Backend {
	tb.Helper()
	backendOnce.Do(func() { backend, backendErr = compute.NewWithConfig("go") })
	if backendErr != nil {
		tb.Fatalf("creating the go backend: %v", backendErr)
	}
	return backend
}

// tracedUpdate is optim's traced update of float32 parameters, compiled on
// the pure-Go backend: the reference the kernels must equal bitwise.
type tracedUpdate struct {
	store  *model.Store
	params []*model.Variable
	exec   *model.Exec
	dims   []int
}

func newTracedUpdate(tb testing.TB, o *optim.Optimizer, initial [][]float32) *tracedUpdate {
	tb.Helper()
	u := &tracedUpdate{store: model.NewStore()}
	for i, values := range initial {
		v, err := u.store.CreateVariable(fmt.Sprintf("/model/p%d", i), tensors.FromFlatDataAndDimensions(append([]float32(nil), values...), len(values)))
		if err != nil {
			tb.Fatal(err)
		}
		u.params = append(u.params, v)
		u.dims = append(u.dims, len(values))
	}
	exec, err := model.NewExec(goBackend(tb), u.store, func(_ *model.Scope, inputs []*graph.Node) []*graph.Node {
		u.store.SetTraining(inputs[0].Graph(), true)
		o.Apply(u.store, 0, u.params, inputs, nil)
		return []*graph.Node{graph.ScalarZero(inputs[0].Graph(), dtypes.Float32)}
	})
	if err != nil {
		tb.Fatal(err)
	}
	u.exec = exec
	return u
}

func (u *tracedUpdate) step(tb testing.TB, grads [][]float32) {
	tb.Helper()
	args := make([]any, len(grads))
	for i, g := range grads {
		args[i] = tensors.FromFlatDataAndDimensions(append([]float32(nil), g...), u.dims[i])
	}
	if _, err := u.exec.Call(args...); err != nil {
		tb.Fatal(err)
	}
}

func (u *tracedUpdate) value(tb testing.TB, path string) []float32 {
	tb.Helper()
	v := u.store.GetVariable(path)
	if v == nil {
		tb.Fatalf("no variable %s", path)
	}
	t, err := v.Value()
	if err != nil {
		tb.Fatal(err)
	}
	return tensors.MustCopyFlatData[float32](t)
}

func randomSlices(rng *rand.Rand, sizes []int, scale float64) [][]float32 {
	out := make([][]float32, len(sizes))
	for i, n := range sizes {
		out[i] = make([]float32, n)
		for j := range out[i] {
			out[i][j] = float32(rng.NormFloat64() * scale)
		}
	}
	return out
}

// TestKernelsEqualTracedUpdate runs six steps of each optimizer
// configuration through optim's traced update and through the fused
// kernels, from the same parameters and gradients (sizes around the
// 16-lane vector width, and one large), and requires every parameter and
// every state value to be bitwise equal after every step.
func TestKernelsEqualTracedUpdate(t *testing.T) {
	sizes := []int{1, 15, 16, 17, 48, 1003}
	cases := []struct {
		name string
		opt  func() *optim.Optimizer
	}{
		{"adam", func() *optim.Optimizer { return optim.Adam(1e-3) }},
		{"adam-lr1e-2-l2", func() *optim.Optimizer { return optim.Adam(1e-2).WithWeightDecay(0.01) }},
		{"adam-betas-eps", func() *optim.Optimizer { return optim.Adam(3e-3).WithBetas(0.8, 0.95).WithEps(1e-6) }},
		{"adamw", func() *optim.Optimizer { return optim.AdamW(1e-3) }},
		{"adamw-chargpt", func() *optim.Optimizer { return optim.AdamW(1e-3).WithBetas(0.9, 0.99).WithWeightDecay(0.1) }},
		{"sgd", func() *optim.Optimizer { return optim.SGD(0.1) }},
		{"sgd-momentum", func() *optim.Optimizer { return optim.SGD(0.05).WithMomentum(0.9) }},
		{"sgd-momentum-dampening-wd", func() *optim.Optimizer {
			return optim.SGD(0.05).WithMomentum(0.9).WithDampening(0.1).WithWeightDecay(5e-4)
		}},
		{"sgd-nesterov-wd", func() *optim.Optimizer { return optim.SGD(0.01).WithMomentum(0.9).WithNesterov().WithWeightDecay(1e-4) }},
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 7))
			o := tc.opt()
			params := randomSlices(rng, sizes, 1)
			traced := newTracedUpdate(t, o, params)
			kinds := o.StateKinds()
			state := make([][][]float32, len(sizes))
			for i, n := range sizes {
				for range kinds {
					state[i] = append(state[i], make([]float32, n))
				}
			}
			for step := int64(1); step <= 6; step++ {
				grads := randomSlices(rng, sizes, 0.1)
				traced.step(t, grads)
				for i := range params {
					fusedupdate.Apply(o, step, float32(o.LR), o.WeightDecay, params[i], grads[i], state[i])
				}
				for i := range params {
					path := fmt.Sprintf("/model/p%d", i)
					requireBitwise(t, fmt.Sprintf("step %d %s", step, path), params[i], traced.value(t, path))
					for k, kind := range kinds {
						spath := optim.StatePrefix(0) + path + "/" + kind
						requireBitwise(t, fmt.Sprintf("step %d %s", step, spath), state[i][k], traced.value(t, spath))
					}
				}
			}
		})
	}
}

func requireBitwise(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for j := range want {
		if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
			t.Fatalf("%s[%d]: fused %v (%#08x), traced %v (%#08x)", what, j, got[j], math.Float32bits(got[j]), want[j], math.Float32bits(want[j]))
		}
	}
}
