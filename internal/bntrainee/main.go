// Command bntrainee trains a batch-normalized regression (batchnorm on the
// input, then a dense layer; SGD 0.01) on seeded data, for the data-parallel
// batch normalization tests (bn_test.go), which run it under mpirun -np 2
// and as one process. It writes each rank's running statistics and weights
// to <out>/rank<r>.json.
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
}

// result is one rank's outcome.
type result struct {
	Rank                    int
	RunningMean, RunningVar []float32
	MeanBits, VarBits       []string
	NumBatchesTracked       int64
	Weights                 []float32
	GlobalStep              int64
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

type module struct{}

func (module) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	x := batchnorm.New(s.Scope().In("bn"), b.Input(0), -1).Done()
	pred := layers.DenseWithBias(s.Scope().In("out"), x, 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (module) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(0.01)) }

func run(o options) error {
	cfg := volt.Config{MaxEpochs: o.epochs, NumSanityValSteps: volt.Ptr(0), DisableLoggers: true,
		DisableCheckpointing: true, DisableModelSummary: true, Devices: o.devices,
		AccumulateGradBatches: o.accumulate, Seed: volt.Ptr(uint64(0))}
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
	if err := t.Fit(context.Background(), module{}, volt.Loaders{Train: loader}); err != nil {
		return err
	}
	res := result{Rank: t.GlobalRank(), GlobalStep: t.GlobalStep()}
	store := t.Store()
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
