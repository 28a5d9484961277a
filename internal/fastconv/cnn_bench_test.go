package fastconv

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt/optim"
)

// The CNN of issue 16, as tools/torch_cnn_bench.py builds it in PyTorch:
// conv 3×3 32 + ReLU, 2×2 max-pool, conv 3×3 64 + ReLU, 2×2 max-pool,
// dense 128 + ReLU, dense 10; Adam; MNIST-shaped batches of 64.
const (
	cnnBatch  = 64
	cnnImage  = 28
	cnnSeed   = 42
	cnnLR     = 1e-3
	cnnWarmup = 2 // untimed steps: the first compiles
)

// cnnLoss builds the mean cross-entropy of the CNN on images [N, 28, 28, 1].
func cnnLoss(scope *model.Scope, images, labels *graph.Node) *graph.Node {
	x := images
	for i, filters := range []int{32, 64} {
		x = layers.Convolution(scope.In("conv_%d", i), x).Filters(filters).KernelSize(3).Done()
		x = graph.MaxPool(activation.Relu(x)).Window(2).Done()
	}
	x = graph.Reshape(x, x.Shape().Dimensions[0], -1)
	x = activation.Relu(layers.DenseWithBias(scope.In("dense_0"), x, 128))
	logits := layers.DenseWithBias(scope.In("dense_1"), x, 10)
	return loss.SparseCategoricalCrossEntropyLogits(
		[]*graph.Node{graph.ExpandAxes(labels, -1)}, []*graph.Node{logits})
}

// cnnTrainer compiles the CNN's Adam training step on backend.
func cnnTrainer(backend compute.Backend) (*model.Exec, error) {
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(cnnSeed); err != nil {
		return nil, err
	}
	opt := optim.Adam(cnnLR)
	return model.NewExec(backend, store, func(scope *model.Scope, in []*graph.Node) []*graph.Node {
		scope.SetTraining(in[0].Graph(), true)
		l := cnnLoss(scope, in[0], in[1])
		g := l.Graph()
		var vars []*model.Variable
		var values []*graph.Node
		for v := range store.IterVariables() {
			if v.Trainable && v.InUseByGraph(g) {
				vars = append(vars, v)
				values = append(values, v.NodeValue(g))
			}
		}
		opt.Apply(store, 0, vars, graph.Gradient(l, values...), nil)
		return []*graph.Node{l}
	})
}

// cnnBatchTensors returns one MNIST-shaped batch: uniform pixels, uniform
// labels.
func cnnBatchTensors(seed uint64) (images, labels *tensors.Tensor) {
	r := rand.New(rand.NewPCG(seed, 1))
	pixels := make([]float32, cnnBatch*cnnImage*cnnImage)
	for i := range pixels {
		pixels[i] = r.Float32()
	}
	classes := make([]int32, cnnBatch)
	for i := range classes {
		classes[i] = int32(r.IntN(10))
	}
	return tensors.FromFlatDataAndDimensions(pixels, cnnBatch, cnnImage, cnnImage, 1),
		tensors.FromFlatDataAndDimensions(classes, cnnBatch)
}

// BenchmarkCNNStep times one training step of the CNN per
// iteration, on the Go backend as is (direct) and wrapped by fastconv.
func BenchmarkCNNStep(b *testing.B) {
	for _, bc := range []struct {
		name    string
		backend func() compute.Backend
	}{
		{"backend=direct", gobackend.GetBackend},
		{"backend=fastconv", func() compute.Backend { return Wrap(gobackend.GetBackend()) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			exec, err := cnnTrainer(bc.backend())
			if err != nil {
				b.Fatal(err)
			}
			images, labels := cnnBatchTensors(cnnSeed)
			step := func() float32 {
				outs, err := exec.Exec(images, labels)
				if err != nil {
					b.Fatal(err)
				}
				return tensors.ToScalar[float32](outs[0])
			}
			for range cnnWarmup {
				step()
			}
			cpuBefore := processCPUTime(b)
			for b.Loop() {
				step()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
			// CPU time (user+system, all threads) per step: on a loaded
			// machine it varies less than the wall time.
			b.ReportMetric(float64((processCPUTime(b)-cpuBefore).Nanoseconds())/float64(b.N), "cpu-ns/step")
		})
	}
}

// processCPUTime returns the user and system CPU time of this process.
func processCPUTime(b testing.TB) time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		b.Fatal(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
