package fusedupdate_test

import (
	"math/rand/v2"
	"testing"

	"github.com/voltml/volt/internal/fusedupdate"
	"github.com/voltml/volt/optim"
)

// mlpSizes are the parameters of the zoo's MLP (784-256-256-10).
var mlpSizes = []int{784 * 256, 256, 256 * 256, 256, 256 * 10, 10}

// BenchmarkAdamMLP is one Adam step of the MLP's 269,322 parameters:
// optim's traced update on the pure-Go backend against the fused kernel.
func BenchmarkAdamMLP(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	params := randomSlices(rng, mlpSizes, 1)
	grads := randomSlices(rng, mlpSizes, 0.1)
	b.Run("traced", func(b *testing.B) {
		u := newTracedUpdate(b, optim.Adam(1e-3), params)
		u.step(b, grads)
		b.ResetTimer()
		for range b.N {
			u.step(b, grads)
		}
	})
	b.Run("fused", func(b *testing.B) {
		o := optim.Adam(1e-3)
		state := make([][][]float32, len(mlpSizes))
		for i, n := range mlpSizes {
			state[i] = [][]float32{make([]float32, n), make([]float32, n)}
		}
		b.ResetTimer()
		for step := range b.N {
			for i := range params {
				fusedupdate.Apply(o, int64(step+1), float32(o.LR), 0, params[i], grads[i], state[i])
			}
		}
	})
}
