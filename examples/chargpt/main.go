// Command chargpt trains nanoGPT's character transformer (package gpt:
// GoMLX layers, nanoGPT's CPU configuration of 4 layers, 4 heads, width
// 128, block 64, batch 12) on a built-in corpus, the first 64 KiB of
// Newton's Opticks (public domain; opticks.txt, from Go's
// src/testdata), bytes as tokens. AdamW 1e-3, betas (0.9, 0.99), weight
// decay 0.1 except on biases and LayerNorm parameters
// (volt.NoWeightDecay), gradient clipping 1.0, nanoGPT's schedule (linear
// warmup, cosine decay to 1e-4).
//
//	GOTOOLCHAIN=auto GOEXPERIMENT=simd go run ./examples/chargpt
//
// The default run is 500 steps (nanoGPT's CPU recipe runs 2000: -steps
// 2000). The last lines printed are params=…, fit_seconds=…, ms_per_step=… (steady state:
// the steps after the first 10), train_loss=… and val_loss=….
package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/chargpt/gpt"
	"github.com/voltml/volt/examples/internal/cmdexit"
	"github.com/voltml/volt/optim"
)

//go:embed opticks.txt
var corpus []byte

func main() { cmdexit.Exit("chargpt", run(os.Args[1:], os.Stdout, os.Stderr)) }

// options are the command's flags.
type options struct {
	steps, warmup, batch, evalBatches int
	lr, minLR                         float64
	cfg                               gpt.Config
}

// run trains the transformer as the flags in args say, printing the results
// to out and progress to errOut.
func run(args []string, out, errOut io.Writer) error {
	flags := flag.NewFlagSet("chargpt", flag.ContinueOnError)
	var o options
	flags.IntVar(&o.steps, "steps", 500, "optimization steps (nanoGPT's CPU recipe: 2000)")
	flags.IntVar(&o.warmup, "warmup", 100, "linear warmup steps (at most steps/10)")
	flags.IntVar(&o.batch, "batch", 12, "sequences per batch")
	flags.IntVar(&o.evalBatches, "eval-batches", 20, "validation batches after training")
	flags.Float64Var(&o.lr, "lr", 1e-3, "peak learning rate")
	flags.Float64Var(&o.minLR, "min-lr", 1e-4, "learning rate at the end of the cosine decay")
	flags.IntVar(&o.cfg.Layers, "layers", 4, "transformer blocks")
	flags.IntVar(&o.cfg.Heads, "heads", 4, "attention heads")
	flags.IntVar(&o.cfg.Width, "width", 128, "embedding width")
	flags.IntVar(&o.cfg.Block, "block", 64, "context length")
	root := flags.String("root", ".", "where volt_logs/ is written")
	progress := flags.Bool("progress", true, "show progress on stderr")
	cpuProfile := flags.String("cpuprofile", "", "write a CPU profile of the training to this file")
	flags.SetOutput(errOut)
	if err := flags.Parse(args); err != nil {
		return err
	}
	if o.steps < 1 || o.batch < 1 || o.evalBatches < 1 || o.warmup < 0 {
		return fmt.Errorf("-steps, -batch and -eval-batches must be positive and -warmup not negative, got %d, %d, %d, %d",
			o.steps, o.batch, o.evalBatches, o.warmup)
	}
	if !(o.lr > 0) || o.minLR < 0 || o.minLR > o.lr {
		return fmt.Errorf("-lr must be positive and -min-lr in [0, lr], got %g and %g", o.lr, o.minLR)
	}
	tokens, vocab := tokenize(corpus)
	o.cfg.Vocab = len(vocab)
	if err := o.cfg.Validate(); err != nil {
		return err
	}
	volt.SeedEverything(42)
	split := len(tokens) * 9 / 10
	if split-o.cfg.Block-1 < 1 || len(tokens)-split-o.cfg.Block-1 < 1 {
		return fmt.Errorf("-block %d is too long for the corpus (%d tokens)", o.cfg.Block, len(tokens))
	}
	rng := rand.New(rand.NewPCG(42, 0))
	train := windows(tokens[:split], o.cfg.Block, o.steps*o.batch, rng)
	val := windows(tokens[split:], o.cfg.Block, o.evalBatches*o.batch, rng)

	sched := optim.NewLambdaLR(o.schedule)
	model := &gpt.Module{Config: o.cfg, Optimizers: volt.Optimizers{{
		Optimizer: optim.AdamW(o.lr).WithBetas(0.9, 0.99).WithWeightDecay(0.1),
		Groups:    []volt.ParamGroup{volt.NoWeightDecay(gpt.NoDecay...)},
		Scheduler: sched, Interval: volt.IntervalStep,
	}}}
	cfg := volt.Config{MaxEpochs: 1, GradientClipVal: 1, GradientClipAlgorithm: volt.ClipNorm,
		DefaultRootDir: *root, Log: slog.New(slog.NewTextHandler(errOut, nil)),
		EnableProgressBar: volt.Ptr(*progress)}
	timer := &stepTimer{skip: min(10, o.steps/2)}
	cfg.Callbacks = append(cfg.Callbacks, timer)
	if *progress {
		bar := callback.NewProgressBar(callback.ProgressBarConfig{Writer: errOut})
		cfg.Callbacks = append(cfg.Callbacks, bar)
	}
	trainer, err := volt.NewTrainer(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	loaders := volt.Loaders{Train: &data.DataLoader{Dataset: train, BatchSize: o.batch},
		Val: []data.Loader{&data.DataLoader{Dataset: val, BatchSize: o.batch}}}
	if err := trainer.Fit(ctx, model, loaders); err != nil {
		return err
	}
	elapsed := time.Since(start)
	metrics := trainer.CallbackMetrics()
	fmt.Fprintf(out, "vocab=%d\nparams=%d\n", o.cfg.Vocab, o.cfg.Params())
	fmt.Fprintf(out, "fit_seconds=%.2f\n", elapsed.Seconds())
	fmt.Fprintf(out, "ms_per_step=%.2f\n", float64(timer.perStep().Microseconds())/1e3) // after the first 10
	fmt.Fprintf(out, "train_loss=%.4f\nval_loss=%.4f\n", metrics["train_loss"], metrics["val_loss"])
	return nil
}

// schedule is nanoGPT's get_lr as a factor of the peak rate: linear warmup
// over min(warmup, steps/10) steps, then cosine decay to minLR at the last
// step.
func (o options) schedule(step int) float64 {
	warmup := min(o.warmup, o.steps/10)
	if step < warmup {
		return float64(step+1) / float64(warmup+1)
	}
	ratio := math.Min(1, float64(step-warmup)/float64(max(1, o.steps-warmup)))
	coeff := 0.5 * (1 + math.Cos(math.Pi*ratio))
	return (o.minLR + coeff*(o.lr-o.minLR)) / o.lr
}

// tokenize maps each byte of text to its index in the sorted distinct
// bytes (the vocabulary).
func tokenize(text []byte) (tokens []int32, vocab []byte) {
	var seen [256]bool
	for _, b := range text {
		seen[b] = true
	}
	var index [256]int32
	for b := range 256 {
		if seen[b] {
			index[b] = int32(len(vocab))
			vocab = append(vocab, byte(b))
		}
	}
	tokens = make([]int32, len(text))
	for i, b := range text {
		tokens[i] = index[b]
	}
	return tokens, vocab
}

// windows draws n random windows of block tokens from tokens: the input
// and, shifted by one, the next tokens (nanoGPT's get_batch).
func windows(tokens []int32, block, n int, rng *rand.Rand) data.Slice {
	out := make(data.Slice, n)
	for i := range out {
		s := rng.IntN(len(tokens) - block - 1)
		out[i] = data.Example{
			Inputs: []data.Field{{Value: slices.Clone(tokens[s : s+block]), Shape: []int{block}}},
			Labels: []data.Field{{Value: slices.Clone(tokens[s+1 : s+1+block]), Shape: []int{block}}},
		}
	}
	return out
}
