package data

import (
	"errors"
	"fmt"
)

// Sampler chooses the dataset indices a DataLoader reads in an epoch, in
// order, as a torch sampler does (DataLoader(sampler=...)). The samplers of
// this package draw their indices from torch's CPU generator seeded with
// their seed, continued from epoch to epoch as one torch.Generator is: for
// the same seed each yields, epoch after epoch, the indices the torch
// sampler yields with generator=torch.Generator().manual_seed(seed). An
// epoch's indices are a function of (seed, epoch) alone, so a run resumed
// mid-epoch reads exactly the rest of them (epoch e costs the generator
// draws of the epochs before it, skipped without building them).
type Sampler interface {
	// Len returns how many indices an epoch has for a dataset of n
	// examples (torch's len(sampler)).
	Len(n int) int
	// Indices returns the indices of epoch for a dataset of n examples;
	// seed is the loader's (a sampler with its own Seed uses that).
	Indices(n, epoch int, seed uint64) ([]int, error)
}

// samplerSeed returns own when it is set, else the loader's seed.
func samplerSeed(own *uint64, loader uint64) uint64 {
	if own != nil {
		return *own
	}
	return loader
}

// RandomSampler is torch's RandomSampler: a random permutation of the
// dataset (NumSamples of its indices: whole permutations, then the start
// of one more), or, with Replacement, NumSamples indices drawn uniformly
// with replacement.
type RandomSampler struct {
	// Replacement draws with replacement (torch's replacement=True).
	Replacement bool
	// NumSamples is the number of indices per epoch; 0 means the
	// dataset's length.
	NumSamples int
	// Seed is the generator's seed; nil means the loader's.
	Seed *uint64
}

// numSamples returns the effective NumSamples for n examples.
func (s RandomSampler) numSamples(n int) int {
	if s.NumSamples > 0 {
		return s.NumSamples
	}
	return n
}

// Len implements Sampler.
func (s RandomSampler) Len(n int) int { return s.numSamples(n) }

// Indices implements Sampler.
func (s RandomSampler) Indices(n, epoch int, seed uint64) ([]int, error) {
	if s.NumSamples < 0 {
		return nil, fmt.Errorf("data.RandomSampler.NumSamples: must be >= 0 (0 = the dataset's length), got %d", s.NumSamples)
	}
	if n == 0 {
		return nil, errors.New("data.RandomSampler: the dataset is empty")
	}
	k := s.numSamples(n)
	g := newTorchGenerator(samplerSeed(s.Seed, seed))
	// torch draws 32 values per randint call; the draw count is the same.
	perEpoch := k
	if !s.Replacement {
		perEpoch = (k/n + 1) * (n - 1) // randperm(n) k/n times, then once more
	} else if uint64(n) >= 1<<32 {
		perEpoch = 2 * k
	}
	g.discard(epoch * perEpoch)
	if s.Replacement {
		return g.randint(n, k), nil
	}
	out := make([]int, 0, k)
	for range k / n {
		out = append(out, g.randperm(n)...)
	}
	return append(out, g.randperm(n)[:k%n]...), nil
}

// SubsetRandomSampler is torch's SubsetRandomSampler: the given indices in
// a random order each epoch.
type SubsetRandomSampler struct {
	// Subset holds the dataset indices to read (torch's indices), each in
	// [0, n).
	Subset []int
	// Seed is the generator's seed; nil means the loader's.
	Seed *uint64
}

// Len implements Sampler.
func (s SubsetRandomSampler) Len(int) int { return len(s.Subset) }

// Indices implements Sampler.
func (s SubsetRandomSampler) Indices(n, epoch int, seed uint64) ([]int, error) {
	for i, idx := range s.Subset {
		if idx < 0 || idx >= n {
			return nil, fmt.Errorf("data.SubsetRandomSampler.Subset[%d]: %d is not an index of a dataset of %d examples", i, idx, n)
		}
	}
	g := newTorchGenerator(samplerSeed(s.Seed, seed))
	g.discard(epoch * max(len(s.Subset)-1, 0))
	out := make([]int, len(s.Subset))
	for i, p := range g.randperm(len(s.Subset)) {
		out[i] = s.Subset[p]
	}
	return out, nil
}
