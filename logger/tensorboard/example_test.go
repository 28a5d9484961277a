package tensorboard_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/logger"
	"github.com/voltml/volt/logger/tensorboard"
	"github.com/voltml/volt/optim"
	"google.golang.org/protobuf/encoding/protowire"
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

// HParams implements volt.HParamser: shown in TensorBoard's HPARAMS tab.
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

// The TensorBoard logger writes an event file that `tensorboard --logdir`
// reads: the scalars of each logging step, and the hyperparameters for the
// HPARAMS tab. Here the file is read back as TensorBoard does (TFRecords of
// tensorflow.Event messages; see exEvents).
func ExampleNew() {
	dir, err := os.MkdirTemp("", "volt-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	tb := tensorboard.New(tensorboard.Config{SaveDir: dir, Name: "regression"})
	err = tb.Validate()
	if err != nil {
		panic(err)
	}
	trainer, err := volt.NewTrainer(volt.Config{
		MaxEpochs:            2,
		Loggers:              []logger.Logger{tb},
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
	rel, err := filepath.Rel(dir, tb.EventFile())
	if err != nil {
		panic(err)
	}
	fmt.Println("file:", filepath.Dir(rel), strings.Split(filepath.Base(rel), ".")[:3])
	for _, line := range exEvents(tb.EventFile()) {
		fmt.Println(line)
	}
	// Output:
	// file: regression/version_0 [events out tfevents]
	// step 0: file_version brain.Event:2
	// step 0: _hparams_/session_start_info (hparams plugin)
	// step 3: epoch=0.00 train_loss=15.45
	// step 7: epoch=1.00 train_loss=5.65
	// step 0: _hparams_/experiment (hparams plugin)
	// step 0: _hparams_/session_end_info (hparams plugin)
}

// exEvents reads a TensorBoard event file and describes each event: its
// step and scalars, or the plugin its summary is for.
func exEvents(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	var out []string
	for len(b) > 0 {
		// A TFRecord: uint64 length, uint32 masked CRC of the length, the
		// data, uint32 masked CRC of the data (the CRCs are not checked here).
		n := binary.LittleEndian.Uint64(b)
		event := b[12 : 12+n]
		b = b[12+n+4:]
		out = append(out, describeEvent(event))
	}
	return out
}

// describeEvent decodes the tensorflow.Event fields the logger writes:
// 2 step, 3 file_version, 5 summary (repeated 1 value: 1 tag,
// 2 simple_value, 9 metadata: 1 plugin_data: 1 plugin_name).
func describeEvent(event []byte) string {
	var step int64
	var what []string
	eachField(event, func(num protowire.Number, v []byte, x uint64) {
		switch num {
		case 2:
			step = int64(x)
		case 3:
			what = append(what, "file_version "+string(v))
		case 5:
			eachField(v, func(_ protowire.Number, value []byte, _ uint64) {
				var tag, plugin string
				var scalar float32
				eachField(value, func(num protowire.Number, v []byte, x uint64) {
					switch num {
					case 1:
						tag = string(v)
					case 2:
						scalar = math.Float32frombits(uint32(x))
					case 9:
						eachField(v, func(num protowire.Number, pd []byte, _ uint64) {
							if num == 1 {
								eachField(pd, func(num protowire.Number, name []byte, _ uint64) {
									if num == 1 {
										plugin = string(name)
									}
								})
							}
						})
					}
				})
				if plugin != "" {
					what = append(what, fmt.Sprintf("%s (%s plugin)", tag, plugin))
				} else {
					what = append(what, fmt.Sprintf("%s=%.2f", tag, scalar))
				}
			})
		}
	})
	return fmt.Sprintf("step %d: %s", step, strings.Join(what, " "))
}

// eachField calls f with each field of the protobuf message m: its number,
// and its bytes (length-delimited) or its value (varint, fixed32, fixed64).
func eachField(m []byte, f func(num protowire.Number, v []byte, x uint64)) {
	for len(m) > 0 {
		num, typ, n := protowire.ConsumeTag(m)
		if n < 0 {
			panic(protowire.ParseError(n))
		}
		m = m[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(m)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(m)
		case protowire.Fixed32Type:
			var x32 uint32
			x32, n = protowire.ConsumeFixed32(m)
			x = uint64(x32)
		default:
			n = protowire.ConsumeFieldValue(num, typ, m)
		}
		if n < 0 {
			panic(protowire.ParseError(n))
		}
		m = m[n:]
		f(num, v, x)
	}
}
