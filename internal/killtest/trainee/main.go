// Command trainee is the training program that the kill test (package
// killtest) interrupts with SIGKILL: it trains a one-layer regression model
// with Adam on shuffled data for a few epochs, writing a full checkpoint after
// every optimization step (ModelCheckpoint with EveryNTrainSteps 1 and
// SaveLast), and resumes from <dir>/last.ckpt when that file exists. When
// training ends it writes every variable of the store to the -out file and
// exits 0.
//
// Usage:
//
//	trainee -dir DIR -out FILE
//
// The -out file holds, for each variable sorted by path: the path's length
// (uint32, little endian), the path, the value's byte length (uint64, little
// endian) and the value's raw bytes.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

// Training sizes: 4 epochs of 8 batches of 8 examples.
const (
	epochs    = 4
	examples  = 64
	batchSize = 8
	seed      = 11
)

func main() {
	dir := flag.String("dir", "", "directory of the checkpoints (required)")
	out := flag.String("out", "", "file for the final weights (required)")
	flag.Parse()
	if *dir == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "trainee: -dir and -out are required")
		os.Exit(2)
	}
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "trainee:", err)
		os.Exit(1)
	}
}

// run trains (or resumes) and writes the final weights.
func run(dir, out string) error {
	volt.SeedEverything(seed)
	mc := callback.NewModelCheckpoint(callback.ModelCheckpointConfig{Dirpath: dir, EveryNTrainSteps: 1, SaveLast: true})
	tr, err := volt.NewTrainer(volt.Config{
		MaxEpochs:      epochs,
		Callbacks:      []volt.Callback{mc},
		DisableLoggers: true,
		Log:            slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return err
	}
	var opts []volt.RunOption
	last := filepath.Join(dir, "last.ckpt")
	switch _, err := os.Stat(last); {
	case err == nil:
		opts = append(opts, volt.FromCheckpoint(last))
		fmt.Println("resuming from", last)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := tr.Fit(context.Background(), &model{}, loaders(), opts...); err != nil {
		return err
	}
	fmt.Println("finished at global step", tr.GlobalStep())
	return writeWeights(tr, out)
}

// model is one dense layer regressing y = x·w + 0.5, trained with Adam.
type model struct{}

func (*model) forward(s *volt.Step, x *graph.Node) *graph.Node {
	return layers.DenseWithBias(s.Scope().In("dense"), x, 1)
}

func (m *model) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))})
	s.Log("train_loss", l)
	return l
}

func (m *model) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))}))
}

func (*model) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(0.01)) }

// loaders returns shuffled training batches and one validation batch.
func loaders() volt.Loaders {
	return volt.Loaders{
		Train: &data.DataLoader{Dataset: testutil.Regression(examples, 1), BatchSize: batchSize, Shuffle: true},
		Val:   []data.Loader{&data.DataLoader{Dataset: testutil.Regression(16, 2), BatchSize: 16}},
	}
}

// writeWeights writes every variable of the store, sorted by path.
func writeWeights(tr *volt.Trainer, path string) error {
	values := map[string][]byte{}
	for v := range tr.Store().IterVariables() {
		val, err := v.Value()
		if err != nil {
			return fmt.Errorf("variable %s: %w", v.Path(), err)
		}
		if err := val.ConstBytes(func(b []byte) { values[v.Path()] = bytes.Clone(b) }); err != nil {
			return fmt.Errorf("variable %s: %w", v.Path(), err)
		}
	}
	var buf bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(values)) {
		_ = binary.Write(&buf, binary.LittleEndian, uint32(len(name)))
		buf.WriteString(name)
		_ = binary.Write(&buf, binary.LittleEndian, uint64(len(values[name])))
		buf.Write(values[name])
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
