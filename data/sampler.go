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
// sampler yields with generator=torch.Generator().manual_seed(seed) to a
// loop that reads each epoch to its end; a DataLoader whose caller says
// how far it reads each epoch (WithBatchesRead, as volt.Trainer does for
// its training loader) yields a RandomSampler's indices as torch's
// DataLoader yields them to such a loop (Lightning's fit loop). An epoch's
// indices are a function of (seed, epoch) and how each epoch is read, so a
// run resumed mid-epoch reads exactly the rest of them (epoch e costs the
// generator draws of the epochs before it, skipped without building them).
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

// Indices implements Sampler: the indices torch's sampler yields to a
// loop that reads each epoch to its end.
func (s RandomSampler) Indices(n, epoch int, seed uint64) ([]int, error) {
	return s.indicesRead(n, epoch, seed, toTheEnd(s.numSamples(n)))
}

// epochRead is how far a loop reads a sampler's indices in each epoch:
// the first count of them, and whether it then asks for one more (past),
// as a loop to the sampler's end does.
type epochRead struct {
	count int
	past  bool
}

// toTheEnd is the epochRead of a loop over all k indices of an epoch.
func toTheEnd(k int) epochRead { return epochRead{count: k, past: true} }

// drawsPerEpoch is the number of generator draws an epoch of k indices
// costs when read as r: torch's RandomSampler draws each randperm(n) (n-1
// draws), or each randint chunk of 32 indices (one draw each, two for
// n >= 2^32), when the loop first reads into it; the last one, of k%n (or
// k%32) indices, also when the loop asks past the end.
func (s RandomSampler) drawsPerEpoch(n, k int, r epochRead) int {
	chunk, cost, per := n, n-1, 1
	if s.Replacement {
		chunk, cost = 32, 32
		if uint64(n) >= 1<<32 {
			per = 2
		}
	}
	full := k / chunk
	draws := min(full, (r.count+chunk-1)/chunk) * cost
	if r.count > full*chunk || r.past {
		if s.Replacement {
			draws += k % chunk
		} else {
			draws += cost
		}
	}
	return draws * per
}

// indicesRead returns epoch's indices when every earlier epoch was read as r.
func (s RandomSampler) indicesRead(n, epoch int, seed uint64, r epochRead) ([]int, error) {
	if s.NumSamples < 0 {
		return nil, fmt.Errorf("data.RandomSampler.NumSamples: must be >= 0 (0 = the dataset's length), got %d", s.NumSamples)
	}
	if n == 0 {
		return nil, errors.New("data.RandomSampler: the dataset is empty")
	}
	k := s.numSamples(n)
	g := newTorchGenerator(samplerSeed(s.Seed, seed))
	g.discard(epoch * s.drawsPerEpoch(n, k, r))
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
