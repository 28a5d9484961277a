package main

import (
	"math"
	"math/rand/v2"

	"github.com/voltml/volt/data"
)

// radius is the radius of the ring of real points.
const radius = 2.0

// noiseDim is the size of the generator's noise vector.
const noiseDim = 4

// ringPoints returns n points near a circle of the given radius.
func ringPoints(n int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 2))
	out := make([][]float32, n)
	for i := range out {
		a := 2 * math.Pi * r.Float64()
		d := radius + 0.05*r.NormFloat64()
		out[i] = []float32{float32(d * math.Cos(a)), float32(d * math.Sin(a))}
	}
	return out
}

// noise returns a standard normal vector drawn from (seed, stream) alone.
func noise(seed, stream uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, stream))
	z := make([]float32, noiseDim)
	for i := range z {
		z[i] = float32(r.NormFloat64())
	}
	return z
}

// ring is the training set: real points, each with the generator's noise
// for it as a second input. It is a data.SeededDataset: example i of an
// epoch draws its noise from (seed, epoch, i) only, so the noise a sample
// gets is the same whichever rank, worker or batch reads it, and one
// process reading the union of the ranks' batches (data.ShardUnion) sees
// the noise the ranks saw. A new epoch draws new noise.
type ring struct{ points [][]float32 }

var _ data.SeededDataset = ring{}

// Len implements data.Dataset.
func (r ring) Len() int { return len(r.points) }

// Get implements data.Dataset: GetSeeded(i, 0, 0).
func (r ring) Get(i int) (data.Example, error) { return r.GetSeeded(i, 0, 0) }

// GetSeeded implements data.SeededDataset.
func (r ring) GetSeeded(i, epoch int, seed uint64) (data.Example, error) {
	return example(r.points[i], noise(seed, uint64(epoch)<<32|uint64(i))), nil
}

// example is one point and its noise.
func example(point, z []float32) data.Example {
	return data.Example{Inputs: []data.Field{{Value: point}, {Value: z}}}
}

// fixedRing is the validation set: points with fixed noise, the same in
// every validation, so that ring_distance before and after training
// measure the generator on the same inputs.
func fixedRing(n int, seed uint64) data.Slice {
	out := make(data.Slice, n)
	for i, p := range ringPoints(n, seed) {
		out[i] = example(p, noise(seed, uint64(i)))
	}
	return out
}
