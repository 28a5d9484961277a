// Command gan trains a small GAN on 2-D synthetic data (points on a ring of
// radius 2) with two optimizers, one for the generator and one for the
// discriminator, and reports how far generated points are from the ring.
//
//	GOEXPERIMENT=simd go run ./examples/gan
package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/voltml/volt/examples/internal/cmdexit"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

const radius = 2.0

func main() { cmdexit.Exit("gan", run(os.Args[1:], os.Stdout)) }

// ring returns n points near a circle of the given radius.
func ring(n int, seed uint64) data.Slice {
	r := rand.New(rand.NewPCG(seed, 2))
	out := make(data.Slice, n)
	for i := range out {
		a := 2 * math.Pi * r.Float64()
		d := radius + 0.05*r.NormFloat64()
		out[i] = data.Example{Inputs: []data.Field{{Value: []float32{float32(d * math.Cos(a)), float32(d * math.Sin(a))}}}}
	}
	return out
}

func run(args []string, out io.Writer) error {
	flags := flag.NewFlagSet("gan", flag.ContinueOnError)
	epochs := flags.Int("epochs", 20, "training epochs")
	examples := flags.Int("examples", 2048, "real points per epoch")
	if err := flags.Parse(args); err != nil {
		return err
	}
	volt.SeedEverything(5)
	dm := volt.Loaders{
		Train: &data.DataLoader{Dataset: ring(*examples, 1), BatchSize: 64, Shuffle: true},
		Val:   []data.Loader{&data.DataLoader{Dataset: ring(512, 2), BatchSize: 512}},
	}
	trainer, err := volt.NewTrainer(volt.Config{MaxEpochs: *epochs, DisableLoggers: true, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	model := &GAN{Noise: 4, Hidden: 32, LR: 2e-3}
	if _, err := trainer.Validate(context.Background(), model, dm); err != nil {
		return err
	}
	before := trainer.CallbackMetrics()["ring_distance"]
	if err := trainer.Fit(context.Background(), model, dm); err != nil {
		return err
	}
	m := trainer.CallbackMetrics()
	fmt.Fprintf(out, "steps=%d g_loss=%.4f d_loss=%.4f\n", trainer.GlobalStep(), m["g_loss"], m["d_loss"])
	fmt.Fprintf(out, "ring_distance before=%.4f after=%.4f\n", before, m["ring_distance"])
	return nil
}
