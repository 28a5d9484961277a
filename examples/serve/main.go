// Command serve answers HTTP JSON requests with the MNIST MLP of
// examples/mnist, through volt.LoadPredictor: no Trainer at serving time.
//
//	GOEXPERIMENT=simd go run ./examples/serve -ckpt model.ckpt -addr 127.0.0.1:8080
//	curl -d '{"inputs": [[0, 0, …784 numbers…]]}' 127.0.0.1:8080/predict   # {"outputs":[7]}
//
// Without -ckpt it first trains a checkpoint itself (-train-steps Adam steps
// on MNIST, a few seconds) and saves it in a temporary directory.
//
// -batch B (default 16) collects up to B requests, or those arriving within
// -wait of the first (default 2ms), into one Predict call over the stacked
// images and answers each request with its own row; -batch 1 calls the
// predictor once per request. The server is package serve's (its Handler
// and Serve): a bad body gets status 400 and {"error": "..."} naming what
// would be valid, and SIGINT or SIGTERM shuts down gracefully: new
// connections are refused, the requests in flight finish, then the program
// exits 0.
//
// -loadtest serves on a loopback port and sends it -requests requests (of
// one fixed image) from 1, 8 and 64 concurrent clients, without batching
// (batch 1) and with it (-batch), and prints p50/p99 latency and requests
// per second; package serve's TestLoad has the figures.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/voltml/volt"
	"github.com/voltml/volt/examples/internal/cmdexit"
	"github.com/voltml/volt/examples/internal/digits"
	"github.com/voltml/volt/serve"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmdexit.Exit("serve", run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run serves (or load-tests) as the flags in args say until ctx ends.
func run(ctx context.Context, args []string, out, errOut io.Writer) error {
	flags := flag.NewFlagSet("serve", flag.ContinueOnError)
	ckpt := flags.String("ckpt", "", "checkpoint of digits.MLP to serve (empty: train one first)")
	steps := flags.Int64("train-steps", 200, "Adam steps when training the checkpoint (without -ckpt)")
	addr := flags.String("addr", "127.0.0.1:8080", "address to listen on")
	batch := flags.Int("batch", 16, "most requests in one Predict call (1: no batching)")
	wait := flags.Duration("wait", 2*time.Millisecond, "longest a request waits for others to fill its batch")
	loadtest := flags.Bool("loadtest", false, "measure latency and throughput on loopback at 1, 8 and 64 clients, then exit")
	requests := flags.Int("requests", 2000, "requests per load-test row")
	flags.SetOutput(errOut)
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *batch < 1 {
		return fmt.Errorf("-batch %d: must be at least 1", *batch)
	}
	path := *ckpt
	if path == "" {
		dir, err := os.MkdirTemp("", "volt-serve")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "mlp.ckpt")
		fmt.Fprintf(errOut, "training %d steps into %s\n", *steps, path)
		if err := train(ctx, path, *steps); err != nil {
			return err
		}
	}
	p, err := load(path)
	if err != nil {
		return err
	}
	defer p.Close()
	if *loadtest {
		return loadTest(ctx, p, *batch, *wait, *requests, out)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	h, err := newHandler(p, *batch, *wait)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(errOut, "serving %s on http://%s/predict (batch %d, wait %s)\n", path, ln.Addr(), *batch, *wait)
	return serve.Serve(ctx, ln, h)
}

// load reads an MLP checkpoint into a predictor for [batch, 784] images.
func load(path string) (*volt.Predictor, error) {
	return volt.LoadPredictor(path, &digits.MLP{}, volt.PredictorMaxShapes(64),
		volt.PredictorInputs(volt.InputSpec{DType: dtypes.Float32, Dims: []int{Pixels}}))
}

// train fits the examples' MLP (two hidden layers of 256) for steps Adam
// steps on MNIST and saves its checkpoint at path.
func train(ctx context.Context, path string, steps int64) error {
	dm, err := digits.Loaders(64, 2)
	if err != nil {
		return err
	}
	t, err := volt.NewTrainer(volt.Config{MaxEpochs: 1, MaxSteps: steps, LimitValBatches: volt.Batches(0), NumSanityValSteps: volt.Ptr(0),
		DisableLoggers: true, DisableCheckpointing: true, DisableModelSummary: true,
		EnableProgressBar: volt.Ptr(false), Log: slog.New(slog.DiscardHandler), Seed: volt.Ptr[uint64](42)})
	if err != nil {
		return err
	}
	if err := t.Fit(ctx, digits.NewMLP(), dm); err != nil {
		return err
	}
	return t.SaveCheckpoint(path, true)
}
