package bench

import (
	"context"
	"iter"
	"log/slog"
	"math/rand/v2"
	"slices"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/optim"
)

const (
	seed       = 42
	batchSize  = 64
	numBatches = 32         // distinct pre-built batches, cycled
	epochLen   = 938        // batches per epoch: MNIST's 60000 examples in batches of 64
	warmup     = numBatches // untimed steps: the first compiles, each batch's tensors go to the backend once
	lr         = 1e-3
)

// net is a classifier of 784 pixels into 10 classes: for each entry of
// convs, a 3×3 convolution with that many channels (no padding) + ReLU and
// a 2×2 max-pool over the 28×28 image; then hidden dense ReLU layers of the
// given widths and a dense output layer. No layer at all is a logistic
// regression.
type net struct{ convs, hidden []int }

var (
	mlp    = net{hidden: []int{256, 256}}
	logReg = net{}
	cnn    = net{convs: []int{32, 64}, hidden: []int{128}}
)

// loss builds the mean sparse cross-entropy of a batch: the graph both loops
// compile (the hand-written loop through GoMLX directly, volt through
// Module.TrainingStep).
func (n net) loss(scope *model.Scope, images, labels *graph.Node) *graph.Node {
	x := images
	if len(n.convs) > 0 {
		x = graph.Reshape(x, -1, 28, 28, 1)
		for i, channels := range n.convs {
			x = layers.Convolution(scope.In("conv_%d", i), x).Channels(channels).KernelSize(3).NoPadding().Done()
			x = graph.MaxPool(activation.Relu(x)).Window(2).Done()
		}
		x = graph.Reshape(x, x.Shape().Dimensions[0], -1)
	}
	for i, width := range n.hidden {
		x = activation.Relu(layers.DenseWithBias(scope.In("hidden_%d", i), x, width))
	}
	logits := layers.DenseWithBias(scope.In("output"), x, 10)
	return loss.SparseCategoricalCrossEntropyLogits(
		[]*graph.Node{graph.ExpandAxes(labels, -1)}, []*graph.Node{logits})
}

// batches returns numBatches MNIST-shaped batches: uniform pixels in [0, 1)
// and uniform labels in 0..9, from a fixed seed.
func batches() []*data.Batch {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]*data.Batch, numBatches)
	for i := range out {
		pixels := make([]float32, batchSize*784)
		for j := range pixels {
			pixels[j] = r.Float32()
		}
		labels := make([]int32, batchSize)
		for j := range labels {
			labels[j] = int32(r.IntN(10))
		}
		out[i] = &data.Batch{
			Inputs: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(pixels, batchSize, 784)},
			Labels: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(labels, batchSize)},
			Size:   batchSize,
		}
	}
	return out
}

// handLoop is the hand-written training loop: one executor over the step
// graph, called batch after batch.
type handLoop struct {
	exec *model.Exec
}

// newHandLoop compiles (lazily, on the first step) the training step of n
// with Adam(lr), its weights initialised from seed, on the backend volt uses.
func newHandLoop(n net) (*handLoop, error) {
	backend, err := engine.Backend("") // the process-wide backend volt's trainers share
	if err != nil {
		return nil, err
	}
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(seed); err != nil {
		return nil, err
	}
	opt := optim.Adam(lr)
	exec, err := model.NewExec(backend, store, func(scope *model.Scope, in []*graph.Node) []*graph.Node {
		scope.SetTraining(in[0].Graph(), true) // as GoMLX's own train.Trainer does
		l := n.loss(scope, in[0], in[1])
		engine.MinimizeAll(store, opt, l)
		return []*graph.Node{l}
	})
	if err != nil {
		return nil, err
	}
	return &handLoop{exec: exec}, nil
}

// step trains on one batch and returns its loss, read back to the host.
func (h *handLoop) step(b *data.Batch) (float32, error) {
	outs, err := h.exec.Exec(b.Inputs[0], b.Labels[0])
	if err != nil {
		return 0, err
	}
	return tensors.ToScalar[float32](outs[0]), nil
}

// module is the same step as a volt Module.
type module struct{ net net }

func (m *module) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.net.loss(s.Scope(), b.Input(0), b.Label(0))
	s.Log("train_loss", l, volt.ProgBar)
	return l
}

func (m *module) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(lr)) }

// loader yields the pre-built batches cyclically, epochLen per epoch (batch
// i of epoch e is batches[(e*epochLen+i) % len]), for as long as more()
// allows (nil: always); the hand-written loop cycles through the same slice
// in the same order.
type loader struct {
	batches []*data.Batch
	more    func() bool
}

func (l *loader) NumBatches() int { return epochLen }

func (l *loader) Batches(ctx context.Context, epoch, skip int) iter.Seq2[*data.Batch, error] {
	return func(yield func(*data.Batch, error) bool) {
		for i := skip; i < epochLen; i++ {
			if l.more != nil && !l.more() {
				return
			}
			b := l.batches[(epoch*epochLen+i)%len(l.batches)]
			if !yield(b, nil) {
				return
			}
		}
	}
}

// newTrainer returns a trainer on volt's default backend with loggers,
// messages and the sanity check off, seeded with seed, that stops at
// maxSteps (0: when asked to).
func newTrainer(maxSteps int64, callbacks ...volt.Callback) (*volt.Trainer, error) {
	return newTrainerOn("", maxSteps, callbacks...)
}

// newTrainerOn is newTrainer on the backend named by backend ("": volt's
// default, as Config.Backend).
func newTrainerOn(backend string, maxSteps int64, callbacks ...volt.Callback) (*volt.Trainer, error) {
	return volt.NewTrainer(trainerConfig(backend, maxSteps, callbacks...))
}

// trainerConfig is newTrainerOn's configuration (and seeds the process).
func trainerConfig(backend string, maxSteps int64, callbacks ...volt.Callback) volt.Config {
	volt.SeedEverything(seed)
	// No default progress bar: the benchmarks measure volt's loops, with a
	// bar only where they pass one.
	bar := slices.ContainsFunc(callbacks, func(cb volt.Callback) bool { _, ok := cb.(volt.ProgressReporter); return ok })
	return volt.Config{
		EnableProgressBar:   volt.Ptr(bar),
		Backend:             backend,
		MaxEpochs:           -1,
		MaxSteps:            maxSteps,
		DisableLoggers:      true,
		DisableModelSummary: true,
		NumSanityValSteps:   volt.Ptr(0),
		Log:                 slog.New(slog.DiscardHandler),
		Callbacks:           callbacks,
	}
}
