package logger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/optim"
)

// exLine is one dense layer regressing y from eight features.
type exLine struct{}

// TrainingStep implements volt.Module.
func (exLine) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	pred := layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 1)
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
	s.Log("train_loss", l, volt.OnStep(false), volt.OnEpoch(true))
	return l
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (exLine) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(0.05)) }

// HParams implements volt.HParamser: written to hparams.yaml.
func (exLine) HParams() map[string]any { return map[string]any{"lr": 0.05} }

// exTrain returns 64 random examples of y = x·w + 0.5 in batches of 16.
func exTrain() volt.Loaders {
	r := rand.New(rand.NewPCG(1, 7))
	w := []float32{1, -2, 0.5, 3, 0, -1, 2, 0.25}
	examples := make(data.Slice, 64)
	for i := range examples {
		x := make([]float32, len(w))
		y := float32(0.5)
		for j := range x {
			x[j] = float32(r.NormFloat64())
			y += x[j] * w[j]
		}
		examples[i] = data.Example{Inputs: []data.Field{{Value: x}}, Labels: []data.Field{{Value: []float32{y}}}}
	}
	return volt.Loaders{Train: &data.DataLoader{Dataset: examples, BatchSize: 16}}
}

// The CSV logger writes Lightning's layout: SaveDir/Name/version_N with
// metrics.csv (one row per logging step, a column per metric) and
// hparams.yaml. volt uses one under DefaultRootDir when Config.Loggers is
// nil; here it is given explicitly.
func ExampleNewCSV() {
	dir, err := os.MkdirTemp("", "volt-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	csv, err := logger.NewCSV(logger.CSVConfig{SaveDir: dir, Name: "regression"})
	if err != nil {
		panic(err)
	}
	trainer, err := volt.NewTrainer(volt.Config{
		MaxEpochs:            2,
		Loggers:              []logger.Logger{csv},
		DisableCheckpointing: true,
		DisableModelSummary:  true,
		Log:                  slog.New(slog.DiscardHandler),
		Seed:                 volt.Ptr[uint64](42),
	})
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), exLine{}, exTrain()); err != nil {
		panic(err)
	}
	rel, err := filepath.Rel(dir, csv.LogDir())
	if err != nil {
		panic(err)
	}
	fmt.Println("log dir:", rel)
	for _, name := range []string{"metrics.csv", "hparams.yaml"} {
		b, err := os.ReadFile(filepath.Join(csv.LogDir(), name))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s:\n%s\n", name, strings.Join(roundFields(string(b)), "\n"))
	}
	// Output:
	// log dir: regression/version_0
	// metrics.csv:
	// step,epoch,train_loss
	// 3,0,15.45
	// 7,1,5.65
	// hparams.yaml:
	// lr: 0.05
}

// The JSON-lines logger writes one object per logging step,
// {"step":N,"metrics":{...}}, to metrics.jsonl.
func ExampleNewJSONL() {
	dir, err := os.MkdirTemp("", "volt-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	jsonl, err := logger.NewJSONL(logger.JSONLConfig{SaveDir: dir, Name: "."})
	if err != nil {
		panic(err)
	}
	trainer, err := volt.NewTrainer(volt.Config{
		MaxEpochs:            2,
		Loggers:              []logger.Logger{jsonl},
		DisableCheckpointing: true,
		DisableModelSummary:  true,
		Log:                  slog.New(slog.DiscardHandler),
		Seed:                 volt.Ptr[uint64](42),
	})
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), exLine{}, exTrain()); err != nil {
		panic(err)
	}
	b, err := os.ReadFile(filepath.Join(jsonl.LogDir(), logger.JSONLMetricsFileName))
	if err != nil {
		panic(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var row struct {
			Step    int64
			Metrics map[string]float64
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			panic(err)
		}
		fmt.Printf("step %d epoch %.0f train_loss %.2f\n", row.Step, row.Metrics["epoch"], row.Metrics["train_loss"])
	}
	// Output:
	// step 3 epoch 0 train_loss 15.45
	// step 7 epoch 1 train_loss 5.65
}

// roundFields returns the lines of s with every fractional number rounded
// to two decimals (the file holds them in full).
func roundFields(s string) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, line := range lines {
		fields := strings.Split(line, ",")
		for j, f := range fields {
			if v, err := strconv.ParseFloat(f, 64); err == nil && strings.Contains(f, ".") {
				fields[j] = strconv.FormatFloat(v, 'f', 2, 64)
			}
		}
		lines[i] = strings.Join(fields, ",")
	}
	return lines
}
