package data

import "math"

// torchGenerator is torch's CPU generator (at::CPUGeneratorImpl) after
// manual_seed(seed): an MT19937 seeded with the seed's low 32 bits, whose
// draws the samplers use as torch 1.13's CPU kernels do.
type torchGenerator struct{ mt *mt19937 }

// newTorchGenerator returns torch.Generator().manual_seed(seed).
func newTorchGenerator(seed uint64) *torchGenerator {
	return &torchGenerator{mt: newMT19937(uint32(seed))}
}

// random is CPUGeneratorImpl::random: the next 32-bit output.
func (g *torchGenerator) random() uint32 { return g.mt.next() }

// random64 is CPUGeneratorImpl::random64: two outputs, the first the high
// half.
func (g *torchGenerator) random64() uint64 {
	hi := uint64(g.mt.next())
	return hi<<32 | uint64(g.mt.next())
}

// uniform is at::uniform_real_distribution<double>(0, 1): the low 53 bits
// of random64, scaled to [0, 1).
func (g *torchGenerator) uniform() float64 {
	return float64(g.random64()&(1<<53-1)) * (1.0 / (1 << 53))
}

// exponential is at::exponential_distribution<double>(1) on the CPU:
// -log(1 - u) for a uniform u.
func (g *torchGenerator) exponential() float64 { return -math.Log(1 - g.uniform()) }

// discard skips k outputs.
func (g *torchGenerator) discard(k int) {
	for k > 0 {
		if g.mt.index >= mtN {
			g.mt.twist()
		}
		step := min(k, mtN-g.mt.index)
		g.mt.index += step
		k -= step
	}
}

// randperm is torch.randperm(n, generator=g) (see TorchRandperm): n-1
// draws.
func (g *torchGenerator) randperm(n int) []int {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i := 0; i < n-1; i++ {
		z := int(uint64(g.random()) % uint64(n-i))
		perm[i], perm[i+z] = perm[i+z], perm[i]
	}
	return perm
}

// randint is torch.randint(high=n, size=(k,), generator=g): one draw per
// value (random64 when n >= 2^32).
func (g *torchGenerator) randint(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		if uint64(n) >= 1<<32 {
			out[i] = int(g.random64() % uint64(n))
		} else {
			out[i] = int(uint64(g.random()) % uint64(n))
		}
	}
	return out
}
