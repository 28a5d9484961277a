// Command streamtrainee is the data-parallel program of volt's stream
// tests, built with -tags mpi and launched under mpirun: testutil.Boring
// trained on a stateful stream, split across the ranks by volt (a
// round-robin deal of -n examples) or by the dataset (-parts: rank r's
// part has parts[r] examples), or, with -sampler, on 12 examples through a
// data sampler. Each rank writes rank<R>.json (see result)
// to -out; the program checks nothing itself.
package main

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// result is one rank's outcome.
type result struct {
	Rank       int
	Batches    [][]int  // the example ids of each trained batch, in order
	Read       int      // examples the rank's dataset yielded
	GlobalStep int64    // optimizer steps
	Weights    []string // every variable's bytes in hex, by sorted path
	Log        string   // what volt said
}

// stream is a stateful stream of example ids: ids 0 … n-1, or, split by the
// dataset (parts set), rank r's part 100000·r … 100000·r + parts[r] - 1.
type stream struct {
	n            int
	parts        []int
	next, loaded int
	read         int
}

// example returns the example of id: testutil-style regression inputs (a
// function of the id) and the id itself as a second input.
func example(id int) data.Example {
	w := []float32{1, -2, 0.5, 3, 0, -1, 2, 0.25}
	x := make([]float32, len(w))
	y := float32(0.5)
	h := uint64(id)*0x9e3779b97f4a7c15 + 1
	for j := range x {
		h ^= h >> 29
		h *= 0xbf58476d1ce4e5b9
		x[j] = float32(int64(h>>40)%2001-1000) / 500
		y += x[j] * w[j]
	}
	return data.Example{Inputs: []data.Field{{Value: x}, {Value: int32(id)}}, Labels: []data.Field{{Value: []float32{y}}}}
}

func (s *stream) pass(n, offset int) iter.Seq2[data.Example, error] {
	return func(yield func(data.Example, error) bool) {
		s.next, s.loaded = s.loaded, 0
		for s.next < n {
			i := s.next
			s.next++
			s.read++
			if !yield(example(offset+i), nil) {
				return
			}
		}
	}
}

// Iter implements data.IterableDataset.
func (s *stream) Iter(int) iter.Seq2[data.Example, error] { return s.pass(s.n, 0) }

// State implements data.StatefulIterable.
func (s *stream) State() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, uint64(s.next)), nil
}

// LoadState implements data.StatefulIterable.
func (s *stream) LoadState(b []byte) error {
	if len(b) != 8 {
		return errors.New("stream: state is not 8 bytes")
	}
	s.loaded = int(binary.LittleEndian.Uint64(b))
	return nil
}

// sharded is a stream that splits itself (data.ShardedIterable).
type sharded struct{ *stream }

// IterShard implements data.ShardedIterable.
func (s sharded) IterShard(_, rank, _ int) iter.Seq2[data.Example, error] {
	return s.pass(s.parts[rank], 100000*rank)
}

// recorder records each trained batch's ids and saves a checkpoint after
// global batch saveAt.
type recorder struct {
	res    *result
	saveAt int64
	path   string
}

func (r *recorder) OnTrainBatchStart(_ *volt.Trainer, b *data.Batch, _ int) error {
	ids := tensors.MustCopyFlatData[int32](b.Inputs[1])
	batch := make([]int, len(ids))
	for i, id := range ids {
		batch[i] = int(id)
	}
	r.res.Batches = append(r.res.Batches, batch)
	return nil
}

func (r *recorder) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if r.saveAt > 0 && t.Progress().TrainBatch.Total.Processed == r.saveAt {
		return t.SaveCheckpoint(r.path, false)
	}
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "streamtrainee:", err)
		os.Exit(1)
	}
}

func run() error {
	n := flag.Int("n", 0, "examples of a stream volt deals round-robin")
	parts := flag.String("parts", "", "comma-separated lengths of the ranks' parts of a self-sharded stream")
	bs := flag.Int("bs", 2, "batch size")
	epochs := flag.Int("epochs", 1, "MaxEpochs")
	saveAt := flag.Int64("save-at", 0, "save -ckpt after this global training batch")
	ckpt := flag.String("ckpt", "", "checkpoint path")
	resume := flag.Bool("resume", false, "resume from -ckpt")
	out := flag.String("out", "", "result directory")
	sampler := flag.String("sampler", "", "train on 12 examples with this sampler instead of a stream: weighted (WeightedRandomSampler of gen_sampler_goldens.py's WEIGHTS, 11 samples, seed 5) or subset (SubsetRandomSampler of [5 3 9 1 7 11 2], seed 5), loader seed 42")
	flag.Parse()
	ds := &stream{n: *n}
	var dataset data.IterableDataset = ds
	if *parts != "" {
		for _, p := range strings.Split(*parts, ",") {
			v, err := strconv.Atoi(p)
			if err != nil {
				return fmt.Errorf("-parts: %w", err)
			}
			ds.parts = append(ds.parts, v)
		}
		dataset = sharded{ds}
	}
	var logs strings.Builder
	res := &result{}
	rec := &recorder{res: res}
	if !*resume {
		rec.saveAt, rec.path = *saveAt, *ckpt
	}
	cfg := volt.Config{
		MaxEpochs: *epochs, NumSanityValSteps: volt.Ptr(0), DisableLoggers: true, DisableCheckpointing: true,
		DisableModelSummary: true, Seed: volt.Ptr(uint64(0)), Callbacks: []volt.Callback{rec},
		Log: slog.New(slog.NewTextHandler(&logs, nil)),
	}
	t, err := volt.NewTrainer(cfg)
	if err != nil {
		return err
	}
	defer volt.FinalizeDistributed()
	var opts []volt.RunOption
	if *resume {
		opts = append(opts, volt.FromCheckpoint(*ckpt))
	}
	train := &data.DataLoader{Iterable: dataset, BatchSize: *bs}
	if *sampler != "" {
		if train, err = samplerLoader(*sampler, *bs); err != nil {
			return err
		}
	}
	fitErr := t.Fit(context.Background(), &testutil.Boring{}, volt.Loaders{Train: train}, opts...)
	if fitErr != nil {
		return fitErr
	}
	res.Rank, res.Read, res.GlobalStep, res.Log = t.GlobalRank(), ds.read, t.GlobalStep(), logs.String()
	w, err := testutil.Weights(t.Store())
	if err != nil {
		return err
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range w {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		res.Weights = append(res.Weights, k+"="+hex.EncodeToString(w[k]))
	}
	line, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*out, fmt.Sprintf("rank%d.json", res.Rank)), line, 0o644)
}

// samplerLoader returns the DataLoader of -sampler over 12 examples.
func samplerLoader(name string, bs int) (*data.DataLoader, error) {
	samplerSeed, loaderSeed := uint64(5), uint64(42)
	l := &data.DataLoader{Dataset: data.Func(12, func(i int) (data.Example, error) { return example(i), nil }), BatchSize: bs, Seed: &loaderSeed}
	switch name {
	case "weighted":
		weights := []float64{0.1, 2.0, 0.0, 1.5, 3.0, 0.25, 1.0, 0.7, 0.0, 5.0, 0.05, 1.25}
		l.Sampler = data.WeightedRandomSampler{Weights: weights, NumSamples: 11, Seed: &samplerSeed}
	case "subset":
		l.Sampler = data.SubsetRandomSampler{Subset: []int{5, 3, 9, 1, 7, 11, 2}, Seed: &samplerSeed}
	default:
		return nil, fmt.Errorf("-sampler: %q is not weighted or subset", name)
	}
	return l, nil
}
