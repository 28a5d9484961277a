// Command gan trains a small GAN on 2-D synthetic data (points on a ring of
// radius 2) by manual optimization with two optimizers, one for the
// generator and one for the discriminator, and reports how far generated
// points are from the ring.
//
//	GOEXPERIMENT=simd go run ./examples/gan
//
// -devices 2 trains data-parallel on 2 MPI ranks: each reads half of every
// epoch in batches of -batch, and each OptimizerHandle.Step's gradients
// are averaged across the ranks before the step applies them. Build with
// -tags mpi; the program runs itself again under mpirun.
//
//	GOEXPERIMENT=simd go build -tags mpi -o gan ./examples/gan && ./gan -devices 2
//
// -union 2 is the same training in one process: it reads, as each batch,
// the two ranks' batches together (data.ShardUnion), so its weights and
// losses equal those of -devices 2 up to float rounding.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/internal/cmdexit"
)

func main() {
	err := run(os.Args[1:], os.Stdout)
	if ferr := volt.FinalizeDistributed(); err == nil {
		err = ferr
	}
	cmdexit.Exit("gan", err)
}

func run(args []string, out io.Writer) error {
	flags := flag.NewFlagSet("gan", flag.ContinueOnError)
	epochs := volt.EpochsFlag(flags, "epochs", 80, "training epochs")
	examples := flags.Int("examples", 2048, "real points per epoch")
	batch := flags.Int("batch", 64, "batch size (per rank with -devices)")
	lr := flags.Float64("lr", 2e-3, "Adam learning rate of both networks")
	hidden := flags.Int("hidden", 32, "hidden units per layer")
	devices := flags.Int("devices", 0, "data-parallel ranks (Config.Devices): N > 1 runs this program again under mpirun -np N (build with -tags mpi)")
	union := flags.Int("union", 0, "one process reading, as each batch, the batches of this many ranks together (data.ShardUnion): -devices N's training in one process")
	outDir := flags.String("out", "", "write each rank's losses per batch and final weights to DIR/rank<r>.json")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *examples < 1 || *batch < 1 || *hidden < 1 {
		return fmt.Errorf("-examples, -batch and -hidden must be positive, got %d, %d, %d", *examples, *batch, *hidden)
	}
	if *devices > 1 && *union > 0 {
		return errors.New("-union reproduces -devices in one process; give one of them")
	}
	volt.SeedEverything(5)
	var train data.Loader = &data.DataLoader{Dataset: ring{ringPoints(*examples, 1)}, BatchSize: *batch, Shuffle: true}
	if *union > 0 {
		train = &data.ShardUnion{Loader: train.(*data.DataLoader), Replicas: *union}
	}
	dm := volt.Loaders{
		Train: train,
		Val:   []data.Loader{&data.DataLoader{Dataset: fixedRing(512, 2), BatchSize: 512}},
	}
	rec := &recorder{}
	trainer, err := volt.NewTrainer(volt.Config{MaxEpochs: *epochs, Devices: *devices, DisableLoggers: true,
		Log: slog.New(slog.DiscardHandler), Callbacks: []volt.Callback{rec}})
	if err != nil {
		return err
	}
	model := &GAN{Hidden: *hidden, LR: *lr}
	if _, err := trainer.Validate(context.Background(), model, dm); err != nil {
		return err
	}
	before := trainer.CallbackMetrics()["ring_distance"]
	if err := trainer.Fit(context.Background(), model, dm); err != nil {
		return err
	}
	m := trainer.CallbackMetrics()
	if *outDir != "" {
		if err := rec.write(trainer, *outDir, before, m["ring_distance"]); err != nil {
			return err
		}
	}
	if !trainer.IsGlobalZero() {
		return nil // rank 0 reports; the logged values are reduced across ranks
	}
	fmt.Fprintf(out, "steps=%d g_loss=%.4f d_loss=%.4f\n", trainer.GlobalStep(), m["g_loss"], m["d_loss"])
	fmt.Fprintf(out, "ring_distance before=%.4f after=%.4f\n", before, m["ring_distance"])
	return nil
}

// recorder keeps the losses of every training batch for -out.
type recorder struct{ losses [][2]float64 }

// OnTrainBatchEnd implements volt.OnTrainBatchEnd.
func (r *recorder) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	m := t.CallbackMetrics()
	r.losses = append(r.losses, [2]float64{m["g_loss"], m["d_loss"]})
	return nil
}

// result is what -out writes.
type result struct {
	Rank, World  int
	GlobalStep   int64
	Losses       [][2]float64 // g_loss, d_loss of every batch
	Weights      map[string][]float64
	RingDistance [2]float64 // before and after training
}

// write writes this rank's result to dir/rank<r>.json.
func (r *recorder) write(t *volt.Trainer, dir string, before, after float64) error {
	res := result{Rank: t.GlobalRank(), World: t.WorldSize(), GlobalStep: t.GlobalStep(), Losses: r.losses,
		Weights: map[string][]float64{}, RingDistance: [2]float64{before, after}}
	for v := range t.Store().IterVariables() {
		if !v.Trainable || !v.HasValue() {
			continue
		}
		val, err := v.Value()
		if err != nil {
			return err
		}
		var flat []float64
		if err := val.ConstFlatData(func(a any) {
			for _, x := range a.([]float32) {
				flat = append(flat, float64(x))
			}
		}); err != nil {
			return err
		}
		res.Weights[v.Path()] = flat
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, fmt.Sprintf("rank%d.json", res.Rank)), raw, 0o644)
}
