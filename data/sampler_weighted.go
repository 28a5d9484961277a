package data

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// WeightedRandomSampler is torch's WeightedRandomSampler: NumSamples
// indices in [0, len(Weights)) drawn with probabilities proportional to
// Weights, with replacement unless WithoutReplacement (torch's
// torch.multinomial(weights, num_samples, replacement) on the CPU, in
// double precision).
type WeightedRandomSampler struct {
	// Weights are the examples' relative weights: finite, >= 0, not all
	// 0; len(Weights) <= the dataset's length.
	Weights []float64
	// NumSamples is the number of indices per epoch; 0 means
	// len(Weights).
	NumSamples int
	// WithoutReplacement draws each index at most once (torch's
	// replacement=False; torch's default, replacement=True, is the zero
	// value here).
	WithoutReplacement bool
	// Seed is the generator's seed; nil means the loader's.
	Seed *uint64
}

// numSamples returns the effective NumSamples.
func (s WeightedRandomSampler) numSamples() int {
	if s.NumSamples > 0 {
		return s.NumSamples
	}
	return len(s.Weights)
}

// Len implements Sampler.
func (s WeightedRandomSampler) Len(int) int { return s.numSamples() }

// validate checks the weights and NumSamples for a dataset of n examples.
func (s WeightedRandomSampler) validate(n int) error {
	if len(s.Weights) == 0 {
		return fmt.Errorf("data.WeightedRandomSampler.Weights: must not be empty")
	}
	if len(s.Weights) > n {
		return fmt.Errorf("data.WeightedRandomSampler.Weights: %d weights for a dataset of %d examples", len(s.Weights), n)
	}
	positive := 0
	for i, w := range s.Weights {
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("data.WeightedRandomSampler.Weights[%d]: %v; weights must be finite and >= 0", i, w)
		}
		if w > 0 {
			positive++
		}
	}
	switch {
	case positive == 0:
		return fmt.Errorf("data.WeightedRandomSampler.Weights: all %d are 0", len(s.Weights))
	case s.NumSamples < 0:
		return fmt.Errorf("data.WeightedRandomSampler.NumSamples: must be >= 0 (0 = len(Weights)), got %d", s.NumSamples)
	case s.WithoutReplacement && s.numSamples() > positive:
		return fmt.Errorf("data.WeightedRandomSampler.NumSamples: %d indices without replacement, but only %d weights are > 0", s.numSamples(), positive)
	}
	return nil
}

// Indices implements Sampler.
func (s WeightedRandomSampler) Indices(n, epoch int, seed uint64) ([]int, error) {
	if err := s.validate(n); err != nil {
		return nil, err
	}
	k := s.numSamples()
	g := newTorchGenerator(samplerSeed(s.Seed, seed))
	// torch.multinomial draws one double (two outputs) per sample with
	// replacement, and one exponential per weight without.
	exponential := s.WithoutReplacement
	perEpoch := 2 * k
	if exponential {
		perEpoch = 2 * len(s.Weights)
	}
	g.discard(epoch * perEpoch)
	if exponential {
		return s.topK(g, k), nil
	}
	// The normalised cumulative distribution and a binary search per draw,
	// as multinomial_with_replacement_apply.
	cum := make([]float64, len(s.Weights))
	sum := 0.0
	for i, w := range s.Weights {
		sum += w
		cum[i] = sum
	}
	for i := range cum {
		cum[i] /= sum
	}
	out := make([]int, k)
	for i := range out {
		u := g.uniform()
		left, right := 0, len(cum)
		for right-left > 0 {
			mid := left + (right-left)/2
			if cum[mid] < u {
				left = mid + 1
			} else {
				right = mid
			}
		}
		out[i] = left
	}
	return out, nil
}

// topK is torch.multinomial's path without replacement: the k largest of
// weight / q, q ~ Exp(1) drawn per weight, in descending order.
func (s WeightedRandomSampler) topK(g *torchGenerator, k int) []int {
	keys := make([]float64, len(s.Weights))
	for i, w := range s.Weights {
		keys[i] = w / g.exponential()
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(keys[b], keys[a]) })
	return order[:k]
}
