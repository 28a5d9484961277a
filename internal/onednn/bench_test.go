package onednn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/voltml/volt/internal/golower"
)

// benchConv is one convolution of a zoo network as GoMLX builds it:
// NHWC input and output, HWIO kernel, square size, kernel and stride.
type benchConv struct {
	batch, size, in, out, kernel, stride int
	padSame                              bool
	noInputGrad                          bool // the network's first layer: no BackwardData
}

func (bc benchConv) String() string {
	return fmt.Sprintf("%dx%dx%d->%d_k%d_s%d", bc.size, bc.size, bc.in, bc.out, bc.kernel, bc.stride)
}

// resnetBenchConvs are examples/resnet's convolutions at the zoo's batch
// 64 (the same list as internal/golower's BenchmarkResNetConvs): the
// stem, then per residual block the two 3×3 convolutions and, where the
// width doubles, the strided 1×1 shortcut. Each appears once per
// distinct shape and count times in the network.
var resnetBenchConvs = []struct {
	benchConv
	count int
}{
	{benchConv{64, 28, 1, 16, 3, 1, true, true}, 1},
	{benchConv{64, 28, 16, 16, 3, 1, true, false}, 2},
	{benchConv{64, 28, 16, 32, 3, 2, true, false}, 1},
	{benchConv{64, 28, 16, 32, 1, 2, true, false}, 1},
	{benchConv{64, 14, 32, 32, 3, 1, true, false}, 1},
	{benchConv{64, 14, 32, 64, 3, 2, true, false}, 1},
	{benchConv{64, 14, 32, 64, 1, 2, true, false}, 1},
	{benchConv{64, 7, 64, 64, 3, 1, true, false}, 1},
}

// cnnBenchConvs are examples/cnn's two valid 3×3 convolutions at batch 64
// (the second reads the first's 2×2-pooled output).
var cnnBenchConvs = []struct {
	benchConv
	count int
}{
	{benchConv{64, 28, 1, 32, 3, 1, false, true}, 1},
	{benchConv{64, 13, 32, 64, 3, 1, false, false}, 1},
}

// conv returns the Conv of bc in GoMLX's layout; padSame pads as
// GoMLX's PadSame does: (kernel-1)/2 low and kernel/2 high, whatever
// the stride.
func (bc benchConv) conv(format Format, threads int) Conv {
	c := Conv{Threads: threads, Batch: bc.batch, InChannels: bc.in, Height: bc.size, Width: bc.size, OutChannels: bc.out,
		KernelHeight: bc.kernel, KernelWidth: bc.kernel, Strides: [2]int{bc.stride, bc.stride}, Format: format}
	if bc.padSame {
		low, high := (bc.kernel-1)/2, bc.kernel/2
		c.PadLow, c.PadHigh = [2]int{low, low}, [2]int{high, high}
	}
	n := c.normalized()
	c.SrcStrides = Dense(n.srcDims(), [4]int{0, 2, 3, 1})
	c.WeightsStrides = Dense(n.weightsDims(), [4]int{2, 3, 1, 0})
	c.DstStrides = Dense(n.dstDims(), [4]int{0, 2, 3, 1})
	return c
}

// golowerConv builds one direction of bc with GoMLX on the Go backend
// wrapped by golower (volt's current path); its inputs are x, kernel and,
// for the gradients, the output gradient.
func golowerConv(b *testing.B, bc benchConv, dir direction) *Exec {
	backend := golower.WrapWith(gobackend.GetBackend(), golower.DefaultRules(), golower.Lowering{})
	convolve := func(x, k *Node) *Node {
		c := Convolve(x, k).Strides(bc.stride)
		if bc.padSame {
			c = c.PadSame()
		} else {
			c = c.NoPadding()
		}
		return c.Done()
	}
	var exec *Exec
	var err error
	switch dir {
	case directionForward:
		exec, err = NewExec(backend, func(x, k *Node) *Node { return convolve(x, k) })
	case directionBackwardData:
		exec, err = NewExec(backend, func(x, k, dy *Node) *Node { return Gradient(ReduceAllSum(Mul(convolve(x, k), dy)), x)[0] })
	case directionBackwardWeights:
		exec, err = NewExec(backend, func(x, k, dy *Node) *Node { return Gradient(ReduceAllSum(Mul(convolve(x, k), dy)), k)[0] })
	}
	if err != nil {
		b.Fatal(err)
	}
	return exec
}

// golowerNetwork builds one executable with every convolution of the
// network (each as often as it occurs) and its gradients, like volt's
// training step holds them; its inputs are x, kernel and output gradient
// per listed convolution.
func golowerNetwork(b *testing.B, convs []struct {
	benchConv
	count int
}) *Exec {
	backend := golower.WrapWith(gobackend.GetBackend(), golower.DefaultRules(), golower.Lowering{})
	exec, err := NewExec(backend, func(params []*Node) []*Node {
		var outs []*Node
		for i, nc := range convs {
			x, k, dy := params[3*i], params[3*i+1], params[3*i+2]
			for range nc.count {
				c := Convolve(x, k).Strides(nc.stride)
				if nc.padSame {
					c = c.PadSame()
				} else {
					c = c.NoPadding()
				}
				y := c.Done()
				wrt := []*Node{x, k}
				if nc.noInputGrad {
					wrt = wrt[1:]
				}
				outs = append(outs, y)
				outs = append(outs, Gradient(ReduceAllSum(Mul(y, dy)), wrt...)...)
			}
		}
		return outs
	})
	if err != nil {
		b.Fatal(err)
	}
	return exec
}

// pairedCase is one convolution direction timed both ways.
type pairedCase struct {
	bc    benchConv
	count int
	dir   direction
	exec  *Exec
	args  []any
	// onednn runs the direction on the same data with each format.
	src, weights, dstGrad []float32
	conv                  [len(benchFormats)]Conv
	out                   []float32
	samples               [1 + len(benchFormats)][]time.Duration // golower, then each format
}

// benchFormats are the formats the paired benchmarks time oneDNN in.
var benchFormats = [...]Format{FormatPlain, FormatBlocked, FormatWeightsBlocked}

// runGolower calls the golower executable; with copy it returns the
// result.
func (p *pairedCase) runGolower(b *testing.B, copy bool) []float32 {
	outs, err := p.exec.Call(p.args...)
	if err != nil {
		b.Fatal(err)
	}
	var flat []float32
	if copy {
		flat = tensors.MustCopyFlatData[float32](outs[0])
	}
	for _, o := range outs {
		o.FinalizeAll()
	}
	return flat
}

func (p *pairedCase) runOneDNN(b *testing.B, c Conv) {
	var err error
	switch p.dir {
	case directionForward:
		err = Forward(c, p.src, p.weights, p.out)
	case directionBackwardData:
		err = BackwardData(c, p.dstGrad, p.weights, p.out)
	case directionBackwardWeights:
		err = BackwardWeights(c, p.src, p.dstGrad, p.out)
	}
	if err != nil {
		b.Fatal(err)
	}
}

// benchPaired times each direction of each convolution through golower
// and through oneDNN (plain and blocked formats), one call of each in
// turn per round, and reports per-call medians, their sums over the
// network (each convolution counted as often as it occurs) and, on the
// first run in the process, the time to create all oneDNN primitives.
func benchPaired(b *testing.B, convs []struct {
	benchConv
	count int
}) {
	requireLibrary(b)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
			benchPairedAt(b, convs, threads)
		})
	}
}

// benchPairedAt is benchPaired at one thread count (GOMAXPROCS and
// oneDNN's).
func benchPairedAt(b *testing.B, convs []struct {
	benchConv
	count int
}, threads int) {
	var cases []*pairedCase
	rng := rand.New(rand.NewPCG(38, 1))
	// Creating every primitive (both formats) before anything else runs
	// measures oneDNN's one-time cost (JIT included) for the network.
	var create [len(benchFormats)]time.Duration
	for f, format := range benchFormats {
		before := CachedPrimitives()
		start := time.Now()
		for _, nc := range convs {
			for _, dir := range []direction{directionForward, directionBackwardData, directionBackwardWeights} {
				if _, err := Impl(nc.conv(format, threads), dir.String()); err != nil {
					b.Fatal(err)
				}
			}
		}
		if CachedPrimitives() > before {
			create[f] = time.Since(start)
		}
	}
	for _, nc := range convs {
		for _, dir := range []direction{directionForward, directionBackwardData, directionBackwardWeights} {
			if dir == directionBackwardData && nc.noInputGrad {
				continue
			}
			p := &pairedCase{bc: nc.benchConv, count: nc.count, dir: dir, exec: golowerConv(b, nc.benchConv, dir)}
			for f, format := range benchFormats {
				p.conv[f] = nc.conv(format, threads)
			}
			c := p.conv[0]
			p.src, p.weights, p.dstGrad = randomFloats(rng, c.SrcLen()), randomFloats(rng, c.WeightsLen()), randomFloats(rng, c.DstLen())
			n := c.normalized()
			x := tensors.FromFlatDataAndDimensions(slices.Clone(p.src), n.Batch, n.Height, n.Width, n.InChannels)
			k := tensors.FromFlatDataAndDimensions(slices.Clone(p.weights), n.KernelHeight, n.KernelWidth, n.InChannels, n.OutChannels)
			oh, ow := n.OutputSize()
			dy := tensors.FromFlatDataAndDimensions(slices.Clone(p.dstGrad), n.Batch, oh, ow, n.OutChannels)
			p.args = []any{x, k}
			outLen := c.DstLen()
			switch dir {
			case directionBackwardData:
				p.args, outLen = append(p.args, dy), c.SrcLen()
			case directionBackwardWeights:
				p.args, outLen = append(p.args, dy), c.WeightsLen()
			}
			// The first golower call compiles; its result checks that
			// both paths compute the same convolution.
			want := p.runGolower(b, true)
			for _, conv := range p.conv {
				p.out = make([]float32, outLen)
				p.runOneDNN(b, conv)
				if len(want) != len(p.out) {
					b.Fatalf("%v %v: golower gives %d elements, oneDNN %d", nc.benchConv, dir, len(want), len(p.out))
				}
				for i := range want {
					if d := math.Abs(float64(want[i] - p.out[i])); d > 1e-3*(1+math.Abs(float64(want[i]))) {
						b.Fatalf("%v %v (%v): element %d is %v with golower, %v with oneDNN", nc.benchConv, dir, conv.Format, i, want[i], p.out[i])
					}
				}
			}
			defer p.exec.Finalize()
			cases = append(cases, p)
		}
	}
	// The whole network in one golower executable against every oneDNN
	// call of the network in a row.
	network := golowerNetwork(b, convs)
	defer network.Finalize()
	var networkArgs []any
	for _, p := range cases {
		if p.dir == directionForward {
			// Fresh tensors: the per-case ones live on their own backends.
			n := p.conv[0].normalized()
			networkArgs = append(networkArgs,
				tensors.FromFlatDataAndDimensions(slices.Clone(p.src), n.Batch, n.Height, n.Width, n.InChannels),
				tensors.FromFlatDataAndDimensions(slices.Clone(p.weights), n.KernelHeight, n.KernelWidth, n.InChannels, n.OutChannels),
				tensors.FromFlatDataAndDimensions(slices.Clone(p.dstGrad), dstDimsNHWC(p.conv[0])...))
		}
	}
	runNetwork := func() {
		outs, err := network.Call(networkArgs...)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range outs {
			o.FinalizeAll()
		}
	}
	runNetwork() // compiles
	var whole [1 + len(benchFormats)][]time.Duration
	for b.Loop() {
		start := time.Now()
		runNetwork()
		whole[0] = append(whole[0], time.Since(start))
		for f := range benchFormats {
			start = time.Now()
			for _, p := range cases {
				for range p.count {
					p.runOneDNN(b, p.conv[f])
				}
			}
			whole[1+f] = append(whole[1+f], time.Since(start))
		}
		for _, p := range cases {
			start := time.Now()
			p.runGolower(b, false)
			p.samples[0] = append(p.samples[0], time.Since(start))
			for f, conv := range p.conv {
				start = time.Now()
				p.runOneDNN(b, conv)
				p.samples[1+f] = append(p.samples[1+f], time.Since(start))
			}
		}
	}
	median := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	var table strings.Builder
	fmt.Fprintf(&table, "threads=%d, %d rounds; medians in ms; ratio = oneDNN/golower\n", threads, len(cases[0].samples[0]))
	fmt.Fprintf(&table, "%-22s %-16s %8s", "conv", "direction", "golower")
	for _, f := range benchFormats {
		fmt.Fprintf(&table, " %15s %6s", f, "ratio")
	}
	fmt.Fprintf(&table, "  impl(default)\n")
	row := func(m [1 + len(benchFormats)]time.Duration) {
		fmt.Fprintf(&table, " %8.3f", ms(m[0]))
		for f := range benchFormats {
			fmt.Fprintf(&table, " %15.3f %6.2f", ms(m[1+f]), float64(m[1+f])/float64(m[0]))
		}
	}
	var sums [1 + len(benchFormats)]time.Duration
	for _, p := range cases {
		var m [1 + len(benchFormats)]time.Duration
		for i := range m {
			m[i] = median(p.samples[i])
			sums[i] += time.Duration(p.count) * m[i]
		}
		def := p.conv[0]
		def.Format = FormatDefault
		impl, _ := Impl(def.normalized(), p.dir.String())
		fmt.Fprintf(&table, "%-22v %-16v", p.bc, p.dir)
		row(m)
		fmt.Fprintf(&table, "  %s\n", impl)
	}
	fmt.Fprintf(&table, "%-39s", "network sum (x count)")
	row(sums)
	var w [1 + len(benchFormats)]time.Duration
	for i := range w {
		w[i] = median(whole[i])
	}
	fmt.Fprintf(&table, "\n%-39s", "network in one executable / in a row")
	row(w)
	fmt.Fprintln(&table)
	if create != [len(benchFormats)]time.Duration{} {
		fmt.Fprintf(&table, "creating all primitives (3 directions, cold):")
		for f, format := range benchFormats {
			fmt.Fprintf(&table, " %v %.1f ms", format, ms(create[f]))
		}
		fmt.Fprintln(&table)
	}
	fmt.Print(table.String()) // b.Log would cut the table to its first lines
	b.ReportMetric(ms(w[0]), "golower-ms/step")
	for f, format := range benchFormats {
		b.ReportMetric(ms(w[1+f]), format.String()+"-ms/step")
	}
}

// dstDimsNHWC returns the output dimensions of c in GoMLX's order.
func dstDimsNHWC(c Conv) []int {
	d := c.normalized().dstDims()
	return []int{d[0], d[2], d[3], d[1]}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// BenchmarkResNetConvsVsGolower compares examples/resnet's convolutions
// (each direction) under oneDNN and volt's current golower path; run
// at 1 and 2 threads (GOMAXPROCS and oneDNN's), as sub-benchmarks.
func BenchmarkResNetConvsVsGolower(b *testing.B) { benchPaired(b, resnetBenchConvs) }

// BenchmarkCNNConvsVsGolower is BenchmarkResNetConvsVsGolower's
// counterpart for examples/cnn.
func BenchmarkCNNConvsVsGolower(b *testing.B) { benchPaired(b, cnnBenchConvs) }
