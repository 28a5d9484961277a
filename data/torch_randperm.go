package data

// TorchRandperm returns torch.randperm(n, generator=g) for a CPU generator
// seeded with g.manual_seed(seed): the permutation torch's
// DistributedSampler (and so Lightning under DDP) uses for an epoch, with
// seed = sampler seed + epoch.
//
// torch's CPU generator is a 32-bit Mersenne Twister (MT19937) seeded with
// the low 32 bits of the seed, and its randperm for n < 2^32/20 is this
// forward Fisher-Yates shuffle: for i in [0, n-1), swap i with
// i + random()%(n-i), random() being the generator's next 32-bit output.
// The tests check it against indices recorded from real Lightning 2.2.5
// (torch 1.13.1).
func TorchRandperm(n int, seed uint64) []int {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	mt := newMT19937(uint32(seed))
	for i := 0; i < n-1; i++ {
		z := int(uint64(mt.next()) % uint64(n-i))
		perm[i], perm[i+z] = perm[i+z], perm[i]
	}
	return perm
}

// mt19937 is the 32-bit Mersenne Twister of Matsumoto and Nishimura (1998),
// as std::mt19937 and torch's at::mt19937 define it. No module on the Go
// proxy list provides it, and it is short.
type mt19937 struct {
	state [mtN]uint32
	index int
}

// The MT19937 parameters.
const (
	mtN         = 624
	mtM         = 397
	mtMatrixA   = 0x9908b0df
	mtUpperMask = 0x80000000
	mtLowerMask = 0x7fffffff
)

// newMT19937 returns a generator initialised with seed (init_genrand).
func newMT19937(seed uint32) *mt19937 {
	mt := &mt19937{index: mtN}
	mt.state[0] = seed
	for i := 1; i < mtN; i++ {
		prev := mt.state[i-1]
		mt.state[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	return mt
}

// next returns the next 32-bit output.
func (mt *mt19937) next() uint32 {
	if mt.index >= mtN {
		mt.twist()
	}
	y := mt.state[mt.index]
	mt.index++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// twist regenerates the whole state.
func (mt *mt19937) twist() {
	for i := range mtN {
		y := (mt.state[i] & mtUpperMask) | (mt.state[(i+1)%mtN] & mtLowerMask)
		v := mt.state[(i+mtM)%mtN] ^ (y >> 1)
		if y&1 != 0 {
			v ^= mtMatrixA
		}
		mt.state[i] = v
	}
	mt.index = 0
}
