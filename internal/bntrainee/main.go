// Command bntrainee trains a batch-normalized regression on seeded data, for
// the data-parallel batch normalization tests (bn_test.go), which run it
// under mpirun -np 2 and as one process. -model input (default) is
// batchnorm on the input, then a dense layer; mlp2 is two batchnorm layers
// (input, hidden); conv2 a convolution with BatchNorm2d, then a dense layer
// with BatchNorm1d. -sync sets Config.SyncBatchNorm. It writes each rank's
// running statistics, weights and losses to <out>/rank<r>.json.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors/images"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/batchnorm"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// examples and features size the seeded training set.
const examples, features = 24, 3

type options struct {
	devices, batch, epochs, accumulate int
	shardOf, shard                     int // one process reading only rank shard's part of shardOf ranks
	union                              int // one process reading data.ShardUnion of this many ranks
	out                                string
	sync                               bool
	model, optimizer                   string
}

// result is one rank's outcome.
type result struct {
	Rank                    int
	RunningMean, RunningVar []float32
	MeanBits, VarBits       []string
	NumBatchesTracked       int64
	Weights                 []float32
	GlobalStep              int64
	// Losses are the training losses, step by step; Variables every
	// variable of the module by path (weights and running statistics).
	Losses    []float64
	Variables map[string][]float64
	// StepSeconds is the wall time of the training steps after the first.
	StepSeconds float64
}

func main() {
	var o options
	flag.IntVar(&o.devices, "devices", 0, "Config.Devices")
	flag.IntVar(&o.batch, "batch", 4, "batch size per rank")
	flag.IntVar(&o.epochs, "epochs", 2, "MaxEpochs")
	flag.IntVar(&o.accumulate, "accumulate", 1, "AccumulateGradBatches")
	flag.IntVar(&o.shardOf, "shard-of", 0, "train one process on the part of -shard of this many ranks (indices r, r+n, r+2n, …)")
	flag.IntVar(&o.shard, "shard", 0, "the rank whose part -shard-of reads")
	flag.IntVar(&o.union, "union", 0, "train one process on data.ShardUnion of this many ranks")
	flag.StringVar(&o.out, "out", "", "directory of the rank<r>.json results")
	flag.BoolVar(&o.sync, "sync", false, "Config.SyncBatchNorm")
	flag.StringVar(&o.model, "model", "input", "input, mlp2, conv2 or dense (no batchnorm)")
	flag.StringVar(&o.optimizer, "optim", "sgd", "sgd (0.01), sgdm (0.05, momentum 0.9) or adam (0.01)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bntrainee:", err)
		os.Exit(volt.ExitCode(err))
	}
}

// dataset draws the training set: per-feature offsets and spreads, so the
// running statistics move far from 0 and 1; the label is a linear function.
func dataset() data.Slice {
	rng := rand.New(rand.NewPCG(23, 1))
	out := make(data.Slice, examples)
	for i := range out {
		x := make([]float32, features)
		y := float32(0)
		for j := range x {
			x[j] = float32(rng.NormFloat64()*float64(j+1) + 3*float64(j) - 2)
			y += 0.1 * float32(j+1) * x[j]
		}
		out[i] = data.Example{Inputs: []data.Field{{Value: x}}, Labels: []data.Field{{Value: []float32{y}}}}
	}
	return out
}

type module struct {
	o      options
	losses []float64
	start  time.Time
}

func (m *module) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	scope := s.Scope()
	x := b.Input(0)
	switch m.o.model {
	case "mlp2":
		// No weight whose gradient is 0 in exact arithmetic (a bias right
		// before a batch normalization, or a batch normalization's bias
		// before a linear map and another one): its gradient would be
		// rounding noise, which Adam amplifies.
		x = batchnorm.New(scope.In("bn"), x, -1).Done()
		x = graph.Tanh(layers.Dense(scope.In("hidden"), x, false, 5))
		x = batchnorm.New(scope.In("bn2"), x, -1).Momentum(0.3).Done()
	case "conv2":
		// [N, 3] → [N, 1, 3] channels first, a 1-d convolution to 4 channels.
		x = graph.Reshape(x, x.Shape().Dimensions[0], 1, features)
		// No bias before a batch normalization (see mlp2).
		x = layers.Convolution(scope.In("conv"), x).Channels(4).KernelSize(2).PadSame().UseBias(false).
			ChannelsAxis(images.ChannelsFirst).Done()
		x = graph.Tanh(batchnorm.New(scope.In("bn"), x, 1).Done())
		x = graph.Reshape(x, x.Shape().Dimensions[0], 4*features)
		x = batchnorm.New(scope.In("bn2"), layers.Dense(scope.In("hidden"), x, false, 5), -1).CumulativeAverage().Done()
		x = graph.Tanh(x)
	case "dense":
	default:
		x = batchnorm.New(scope.In("bn"), x, -1).Done()
	}
	pred := layers.DenseWithBias(scope.In("out"), x, 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (m *module) ConfigureOptimizers() volt.Optimizers {
	switch m.o.optimizer {
	case "sgdm":
		o := optim.SGD(0.05)
		o.Momentum = 0.9
		return volt.Optimize(o)
	case "adam":
		return volt.Optimize(optim.Adam(0.01))
	}
	return volt.Optimize(optim.SGD(0.01))
}

// OnTrainBatchEnd records the loss.
func (m *module) OnTrainBatchEnd(_ *volt.Trainer, out *volt.StepOutput, _ *data.Batch, _ int) error {
	m.losses = append(m.losses, out.Loss())

	if len(m.losses) == 1 {
		m.start = time.Now()
	}
	return nil
}

func run(o options) error {
	cfg := volt.Config{MaxEpochs: o.epochs, NumSanityValSteps: volt.Ptr(0), DisableLoggers: true,
		DisableCheckpointing: true, DisableModelSummary: true, Devices: o.devices,
		AccumulateGradBatches: o.accumulate, Seed: volt.Ptr(uint64(0)), SyncBatchNorm: o.sync}
	t, err := volt.NewTrainer(cfg)
	if err != nil {
		return err
	}
	defer volt.FinalizeDistributed()
	ds := dataset()
	if o.shardOf > 0 {
		var shard data.Slice
		for i := o.shard; i < len(ds); i += o.shardOf {
			shard = append(shard, ds[i])
		}
		ds = shard
	}
	train := &data.DataLoader{Dataset: ds, BatchSize: o.batch}
	var loader data.Loader = train
	if o.union > 0 {
		loader = &data.ShardUnion{Loader: train, Replicas: o.union}
	}
	m := &module{o: o}
	if err := t.Fit(context.Background(), m, volt.Loaders{Train: loader}); err != nil {
		return err
	}
	res := result{Rank: t.GlobalRank(), GlobalStep: t.GlobalStep(), Losses: m.losses, Variables: map[string][]float64{},
		StepSeconds: time.Since(m.start).Seconds()}
	store := t.Store()
	for v := range store.IterVariables() {
		if !v.HasValue() || strings.HasPrefix(v.Path(), "/volt/") || strings.Contains(v.Path(), "#") {
			continue
		}
		value := v.MustValue()
		switch value.DType() {
		case dtypes.Float32:
			for _, f := range tensors.MustCopyFlatData[float32](value) {
				res.Variables[v.Path()] = append(res.Variables[v.Path()], float64(f))
			}
		case dtypes.Int64:
			res.Variables[v.Path()] = []float64{float64(tensors.ToScalar[int64](value))}
		}
	}
	if store.GetVariable("/bn/running_mean") == nil {
		return write(o, res)
	}
	res.RunningMean = tensors.MustCopyFlatData[float32](store.GetVariable("/bn/running_mean").MustValue())
	res.RunningVar = tensors.MustCopyFlatData[float32](store.GetVariable("/bn/running_var").MustValue())
	res.NumBatchesTracked = tensors.ToScalar[int64](store.GetVariable("/bn/num_batches_tracked").MustValue())
	for i := range res.RunningMean {
		res.MeanBits = append(res.MeanBits, fmt.Sprintf("%08x", math.Float32bits(res.RunningMean[i])))
		res.VarBits = append(res.VarBits, fmt.Sprintf("%08x", math.Float32bits(res.RunningVar[i])))
	}
	for _, name := range []string{"/out/dense/weights", "/out/dense/biases"} {
		if v := store.GetVariable(name); v != nil {
			res.Weights = append(res.Weights, tensors.MustCopyFlatData[float32](v.MustValue())...)
		}
	}
	return write(o, res)
}

// write writes res to o.out (stdout when empty).
func write(o options, res result) error {
	raw, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if o.out == "" {
		_, err = fmt.Println(string(raw))
		return err
	}
	return os.WriteFile(filepath.Join(o.out, fmt.Sprintf("rank%d.json", res.Rank)), raw, 0o644)
}
