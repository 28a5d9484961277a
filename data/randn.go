package data

import (
	"fmt"
	"math"
)

// Generator is torch's CPU random generator after
// torch.Generator().manual_seed(seed) (a 32-bit Mersenne Twister seeded
// with the seed's low 32 bits), for drawing a synthetic dataset that is the
// same one a PyTorch script draws from the same seed. Successive draws
// continue one stream, as successive calls with generator=g do. A Generator
// is not safe for concurrent use.
type Generator struct {
	g *torchGenerator
	// next is the second value of the last Box-Muller pair a small draw
	// made (torch's next_double_normal_sample), used by the next one.
	next    float64
	hasNext bool
}

// NewGenerator returns torch.Generator().manual_seed(seed).
func NewGenerator(seed uint64) *Generator { return &Generator{g: newTorchGenerator(seed)} }

// Randn is torch.randn(rows, cols, generator=g): rows×cols values of the
// standard normal distribution, as rows of cols values (the inputs or
// labels of data.Rows), the same float32 values torch 1.13's CPU kernel
// draws on an x86-64 machine with AVX2 (what torch uses wherever the CPU
// has it): a draw of 16 values or more fills them with uniforms and
// transforms them 16 at a time by a float32 Box-Muller with Cephes' log
// and sincos (normal_fill_AVX2); a smaller one draws each value by a
// float64 Box-Muller, keeping the pair's second value for the next small
// draw. The tests check them bit for bit against torch's (4 million values
// of one seed when they were written). A torch without AVX2 (an arm64
// machine) calls the C library's logf, sinf and cosf instead, and its
// values differ in their last bits. Go's results are the same on every
// platform. It panics on a negative size, as make does.
//
//	g := data.NewGenerator(0)
//	xs, noise := g.Randn(2000, 8), g.Randn(2000, 1)
func (g *Generator) Randn(rows, cols int) [][]float32 {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("data.Generator.Randn(%d, %d): a size is negative", rows, cols))
	}
	flat := make([]float32, rows*cols)
	if len(flat) >= 16 {
		g.normalFill(flat)
	} else {
		for i := range flat {
			flat[i] = float32(g.normal())
		}
	}
	out := make([][]float32, rows)
	for i := range out {
		out[i] = flat[i*cols : (i+1)*cols : (i+1)*cols]
	}
	return out
}

// uniformFloat is at::uniform_real_distribution<float>(0, 1): the low 24
// bits of one 32-bit output, scaled to [0, 1).
func (g *Generator) uniformFloat() float32 {
	return float32(g.g.random()&(1<<24-1)) * (1.0 / (1 << 24))
}

// normalFill is torch's normal_fill for a float tensor of 16 values or
// more: uniforms everywhere, Box-Muller 16 at a time, and for a size not a
// multiple of 16 the last 16 values drawn again and transformed.
func (g *Generator) normalFill(data []float32) {
	for i := range data {
		data[i] = g.uniformFloat()
	}
	for i := 0; i+16 <= len(data); i += 16 {
		normalFill16(data[i : i+16])
	}
	if len(data)%16 != 0 {
		tail := data[len(data)-16:]
		for i := range tail {
			tail[i] = g.uniformFloat()
		}
		normalFill16(tail)
	}
}

// normal is at::normal_distribution<double>(0, 1): the cached second value
// of the last pair, or a new Box-Muller pair from two double uniforms.
func (g *Generator) normal() float64 {
	if g.hasNext {
		g.hasNext = false
		return g.next
	}
	u1, u2 := g.g.uniform(), g.g.uniform()
	r := math.Sqrt(-2 * math.Log(1-u2))
	theta := 2 * math.Pi * u1
	g.next, g.hasNext = r*math.Sin(theta), true
	return r * math.Cos(theta)
}
