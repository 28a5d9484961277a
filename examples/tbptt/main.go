// Command tbptt trains a small recurrent network with truncated
// back-propagation through time on a synthetic task: predict the next value
// of noisy sine waves of random frequency and phase. Each batch of 48-step
// sequences is split into chunks of -split steps; the hidden state flows from
// chunk to chunk, gradients do not.
//
//	GOEXPERIMENT=simd go run ./examples/tbptt
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

func main() { cmdexit.Exit("tbptt", run(os.Args[1:], os.Stdout)) }

// sines returns n sequences of length steps+1 split into inputs (first
// steps values) and labels (next values), shapes [steps, 1].
func sines(n, steps int, seed uint64) data.Slice {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make(data.Slice, n)
	for i := range out {
		freq, phase := 0.1+0.2*r.Float64(), 2*math.Pi*r.Float64()
		v := make([]float32, steps+1)
		for t := range v {
			v[t] = float32(math.Sin(freq*float64(t)+phase) + 0.05*r.NormFloat64())
		}
		out[i] = data.Example{
			Inputs: []data.Field{{Value: v[:steps], Shape: []int{steps, 1}}},
			Labels: []data.Field{{Value: v[1:], Shape: []int{steps, 1}}},
		}
	}
	return out
}

func run(args []string, out io.Writer) error {
	flags := flag.NewFlagSet("tbptt", flag.ContinueOnError)
	epochs := volt.EpochsFlag(flags, "epochs", 5, "training epochs")
	split := flags.Int("split", 12, "time steps per truncated-BPTT split")
	hidden := flags.Int("hidden", 16, "hidden units")
	examples := flags.Int("examples", 512, "training sequences")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *hidden < 1 || *examples < 1 {
		return fmt.Errorf("-hidden and -examples must be positive, got %d, %d", *hidden, *examples)
	}
	volt.SeedEverything(1)
	dm := volt.Loaders{
		Train: &data.DataLoader{Dataset: sines(*examples, 48, 1), BatchSize: 32, Shuffle: true},
		Val:   []data.Loader{&data.DataLoader{Dataset: sines(128, 48, 2), BatchSize: 64}},
	}
	trainer, err := volt.NewTrainer(volt.Config{
		MaxEpochs:          *epochs,
		TruncatedBPTTSteps: *split,
		DisableLoggers:     true,
		Log:                slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return err
	}
	model := &RNN{Hidden: *hidden, LR: 0.01}
	if _, err := trainer.Validate(context.Background(), model, dm); err != nil {
		return err
	}
	before := trainer.CallbackMetrics()["val_loss"]
	if err := trainer.Fit(context.Background(), model, dm); err != nil {
		return err
	}
	after := trainer.CallbackMetrics()["val_loss"]
	fmt.Fprintf(out, "steps=%d (%d splits per batch)\n", trainer.GlobalStep(), (48+*split-1)/(*split))
	fmt.Fprintf(out, "val_loss before=%.4f after=%.4f\n", before, after)
	return nil
}
