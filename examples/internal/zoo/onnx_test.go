package zoo

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/examples/chargpt/gpt"
	"github.com/voltml/volt/examples/internal/digits"
	"github.com/voltml/volt/examples/resnet/resnet"
	"github.com/voltml/volt/examples/seqclass/classifier"
	"github.com/voltml/volt/gpt2"
	"github.com/voltml/volt/internal/onnxcheck"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/statedict"
	"github.com/voltml/volt/torchvision"
)

// onnxBatches are the batch sizes the exported models run at in ONNX
// Runtime: neither is one the export traces (1 and 2), so the batch axis
// must be the model's dynamic one.
var onnxBatches = []int{3, 8}

// onnxTolerance is how far an exported model's float outputs may be from
// Trainer.Predict's (absolute).
const onnxTolerance = 1e-5

// onnxCase is one row of the ONNX table: a module trained one step,
// checkpointed, exported, and run in ONNX Runtime against Trainer.Predict.
type onnxCase struct {
	name, output string
	// train returns a fresh module: the one trained (in the model's first
	// row), exported and predicted; cfg and batch are its training's.
	train func() volt.Module
	cfg   volt.Config
	batch int
	// examples returns n examples of the module's input.
	examples func(n int, rng *rand.Rand) data.Slice
	inputs   []volt.InputSpec
	// exact: the output is a class, equal rather than within onnxTolerance.
	exact bool
}

// logitsOf is a zoo module whose PredictStep returns its logits rather
// than the example's prediction, so that the exported model's numbers are
// compared, not only their argmax.
type logitsOf struct {
	module volt.Module
	logits func(s *volt.Step, x *graph.Node) *graph.Node
}

// TrainingStep implements volt.Module.
func (m *logitsOf) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.module.TrainingStep(s, b)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *logitsOf) ConfigureOptimizers() volt.Optimizers {
	return m.module.(volt.OptimizerConfigurer).ConfigureOptimizers()
}

// PredictStep implements volt.PredictStepper: the logits.
func (m *logitsOf) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.logits(s, b.Input(0))
}

// withLogits returns the zoo model's module as a logitsOf.
func withLogits(m volt.Module) volt.Module {
	switch x := m.(type) {
	case *digits.MLP:
		return &logitsOf{m, x.Logits}
	case *digits.CNN:
		return &logitsOf{m, x.Logits}
	case *resnet.ResNet:
		return &logitsOf{m, x.Logits}
	case *classifier.Module:
		return &logitsOf{m, x.StepLogits}
	}
	panic(fmt.Sprintf("no logits for %T", m))
}

// gpt2Config is gpt2/testdata/gen.py's size, the weights of gpt2.pt.
var gpt2Config = gpt2.Config{Vocab: 64, Positions: 16, Embed: 16, Layers: 2, Heads: 2}

// importedGPT2 is gpt2.Logits with the weights of gpt2/testdata/gpt2.pt
// (HF GPT-2's layout, written by torch), fine-tuned as gpt2's tests do.
type importedGPT2 struct{ weights *statedict.StateDict }

// TrainingStep implements volt.Module: the language-model loss, from the
// imported weights.
func (m *importedGPT2) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	logits := func() *graph.Node {
		transformer := s.Scope().In("transformer")
		defer m.weights.Apply(transformer, gpt2.LoadOptions()...)
		return gpt2.Logits(transformer, b.Input(0), gpt2Config)
	}()
	n, length := logits.Shape().Dim(0), logits.Shape().Dim(1)
	inputs := graph.Slice(logits, graph.AxisRange(), graph.AxisRange(0, length-1))
	targets := graph.Slice(b.Input(0), graph.AxisRange(), graph.AxisRange(1, length))
	return nn.CrossEntropyLoss(graph.Reshape(inputs, n*(length-1), gpt2Config.Vocab), graph.Reshape(targets, n*(length-1)))
}

// PredictStep implements volt.PredictStepper: the logits [N, T, vocab].
func (m *importedGPT2) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return gpt2.Logits(s.Scope().In("transformer"), b.Input(0), gpt2Config)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (m *importedGPT2) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimize(optim.AdamW(1e-2).WithWeightDecay(0.01))
}

// resnet18 is torchvision.ResNet18 (10 classes) on 3×64×64 images, with
// torch's initialisation.
type resnet18 struct{}

// TrainingStep implements volt.Module.
func (resnet18) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return nn.CrossEntropyLoss(torchvision.ResNet18(s.Scope(), b.Input(0), 10), b.Label(0))
}

// PredictStep implements volt.PredictStepper: the logits, with the batch
// norms' running statistics.
func (resnet18) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return torchvision.ResNet18(s.Scope(), b.Input(0), 10)
}

// ConfigureOptimizers implements volt.OptimizerConfigurer.
func (resnet18) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimize(optim.SGD(0.01).WithMomentum(0.9))
}

// tokens returns n examples of length ids below vocab (the next ids as the
// label).
func tokens(vocab, length int) func(n int, rng *rand.Rand) data.Slice {
	return func(n int, rng *rand.Rand) data.Slice {
		out := make(data.Slice, n)
		for i := range out {
			ids := make([]int32, length)
			for j := range ids {
				ids[j] = int32(rng.IntN(vocab))
			}
			out[i] = data.Example{Inputs: []data.Field{{Value: ids}}, Labels: []data.Field{{Value: ids}}}
		}
		return out
	}
}

// pictures returns n 3×64×64 images of standard-normal pixels and labels.
func pictures(n int, rng *rand.Rand) data.Slice {
	out := make(data.Slice, n)
	for i := range out {
		x := make([]float32, 3*64*64)
		for j := range x {
			x[j] = float32(rng.NormFloat64())
		}
		out[i] = data.Example{Inputs: []data.Field{{Value: x, Shape: []int{3, 64, 64}}},
			Labels: []data.Field{{Value: int32(rng.IntN(10))}}}
	}
	return out
}

// onnxCases are the zoo's models (the logits, and the example's own
// PredictStep where that is the class) and the two imported ones.
func onnxCases(t *testing.T) []onnxCase {
	var cases []onnxCase
	for _, m := range Models {
		c := onnxCase{name: m.Name, train: m.Module, cfg: m.QuietConfig(), batch: m.Batch, examples: m.Examples}
		switch m.Name {
		case "chargpt":
			c.inputs = []volt.InputSpec{{DType: dtypes.Int32, Dims: []int{gpt.CPU(chargptVocab).Block}}}
			c.output = "next-token logits"
		case "seqclass":
			c.inputs = []volt.InputSpec{{DType: dtypes.Int32, Dims: []int{seqclassTask.Length}}}
		default:
			c.inputs = []volt.InputSpec{{DType: dtypes.Float32, Dims: []int{784}}}
		}
		switch m.Name {
		case "chargpt":
		case "autoencoder":
			c.output = "reconstruction"
		default:
			logits := c
			logits.output = "logits"
			logits.train = func() volt.Module { return withLogits(m.Module()) }
			cases = append(cases, logits)
			if m.Name == "mlp" {
				// A model ending in Softmax (batch-dynamic: it was fixed at
				// batch 1 before issue 39).
				probs := logits
				probs.output = "softmax"
				probs.train = func() volt.Module {
					l := withLogits(m.Module()).(*logitsOf)
					return &logitsOf{l.module, func(s *volt.Step, x *graph.Node) *graph.Node { return graph.Softmax(l.logits(s, x)) }}
				}
				cases = append(cases, probs)
			}
			c.output, c.exact = "class", true
		}
		cases = append(cases, c)
	}
	weights, err := statedict.Read(filepath.Join("..", "..", "..", "gpt2", "testdata", "gpt2.pt"))
	if err != nil {
		t.Fatal(err)
	}
	quiet := Model{}.QuietConfig()
	return append(cases,
		onnxCase{name: "torchvision.ResNet18", output: "logits", cfg: quiet, batch: 2, examples: pictures,
			train:  func() volt.Module { return &resnet18{} },
			inputs: []volt.InputSpec{{DType: dtypes.Float32, Dims: []int{3, 64, 64}}}},
		onnxCase{name: "gpt2.Logits", output: "logits", cfg: quiet, batch: 2, examples: tokens(gpt2Config.Vocab, gpt2Config.Positions),
			train:  func() volt.Module { return &importedGPT2{weights} },
			inputs: []volt.InputSpec{{DType: dtypes.Int32, Dims: []int{gpt2Config.Positions}}}},
	)
}

// onnxRow is what TestONNXZoo measured of one case.
type onnxRow struct {
	c     onnxCase
	ops   []string
	nodes int
	diffs []string // per onnxBatches
}

// TestONNXZoo: every zoo model, and torchvision.ResNet18 and gpt2.Logits,
// trained one step, exports with a dynamic batch axis; python3-onnx's
// checker accepts the model, and ONNX Runtime (npm's onnxruntime-node) runs
// it at two batch sizes the export did not trace, within 1e-5 of
// Trainer.Predict (classes equal). With -v it logs the ONNX table the
// README shows.
func TestONNXZoo(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: trains and exports eight models")
	}
	onnxcheck.RequireORT(t)
	var rows []onnxRow
	var ortVersion string
	dir := t.TempDir()
	trained := map[string]string{} // each model's checkpoint
	for _, c := range onnxCases(t) {
		t.Run(strings.ReplaceAll(c.name+"/"+c.output, " ", "_"), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(39, 5))
			// A softmax or class row exports its module from the checkpoint
			// of the model's logits row (the same variables).
			ckpt, ok := trained[c.name]
			if !ok {
				cfg := c.cfg
				cfg.MaxSteps = 1
				tr := testutil.Fit(t, cfg, c.train(), volt.Loaders{Train: &data.DataLoader{Dataset: c.examples(c.batch, rng), BatchSize: c.batch}})
				ckpt = filepath.Join(dir, c.name+".ckpt")
				if err := tr.SaveCheckpoint(ckpt, true); err != nil {
					t.Fatal(err)
				}
				trained[c.name] = ckpt
			}
			module := c.train()
			var buf bytes.Buffer
			info, err := volt.ExportONNX(&buf, ckpt, module, c.inputs)
			if err != nil {
				t.Fatal(err)
			}
			if !info.DynamicBatch {
				t.Errorf("the batch axis is fixed: %s", info.FixedReason)
			}
			path := filepath.Join(t.TempDir(), "model.onnx")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			report := onnxcheck.Check(t, path)
			row := onnxRow{c: c, ops: report.Ops, nodes: info.Nodes}
			for _, b := range onnxBatches {
				examples := c.examples(b, rng)
				preds, err := testutil.NewTrainer(t, testutil.Quiet(volt.Config{})).Predict(t.Context(), c.train(),
					volt.Loaders{Predict: []data.Loader{&data.DataLoader{Dataset: examples, BatchSize: b}}}, volt.FromCheckpoint(ckpt))
				if err != nil {
					t.Fatal(err)
				}
				batch, err := data.DefaultCollate(examples)
				if err != nil {
					t.Fatal(err)
				}
				run, err := onnxcheck.ORT(t, path, info.Inputs, batch.Inputs)
				if err != nil {
					t.Fatal(err)
				}
				ortVersion = run.Version
				got, want := run.Outputs[0], preds[0][0]
				if !got.Shape().Equal(want.Shape()) {
					t.Fatalf("batch %d: ONNX Runtime's output is %s, Trainer.Predict's %s", b, got.Shape(), want.Shape())
				}
				diff := compareOutputs(t, b, got, want, c.exact)
				row.diffs = append(row.diffs, diff)
			}
			rows = append(rows, row)
		})
	}
	t.Logf("ONNX Runtime %s (onnxruntime-node, CPU); max |ONNX Runtime − Trainer.Predict| (of max |Trainer.Predict|) at batch sizes %v:\n%s",
		ortVersion, onnxBatches, onnxTable(rows))
}

// compareOutputs fails t where got is not want (within onnxTolerance, or
// exactly) and returns the table's cell: the largest difference and the
// largest |output| of Trainer.Predict, or how many classes are equal.
func compareOutputs(t *testing.T, b int, got, want *tensors.Tensor, exact bool) string {
	t.Helper()
	if exact {
		g, w := tensors.MustCopyFlatData[int32](got), tensors.MustCopyFlatData[int32](want)
		differ := 0
		for i := range w {
			if g[i] != w[i] {
				differ++
			}
		}
		if differ > 0 {
			t.Errorf("batch %d: %d of %d classes differ from Trainer.Predict's", b, differ, len(w))
		}
		return fmt.Sprintf("%d/%d equal", len(w)-differ, len(w))
	}
	g, w := tensors.MustCopyFlatData[float32](got), tensors.MustCopyFlatData[float32](want)
	worst, scale := 0.0, 0.0
	for i := range w {
		worst = math.Max(worst, math.Abs(float64(g[i])-float64(w[i])))
		scale = math.Max(scale, math.Abs(float64(w[i])))
	}
	if !(worst <= onnxTolerance) {
		t.Errorf("batch %d: ONNX Runtime's output differs from Trainer.Predict's by up to %.3g (> %g)", b, worst, onnxTolerance)
	}
	return fmt.Sprintf("%.1e (of %.2g)", worst, scale)
}

// onnxTable is the Markdown table of rows.
func onnxTable(rows []onnxRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| model | output | opset | nodes | ONNX ops |")
	for _, n := range onnxBatches {
		fmt.Fprintf(&b, " batch %d |", n)
	}
	b.WriteString("\n|---|---|---:|---:|---|")
	for range onnxBatches {
		b.WriteString("---:|")
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "\n| %s | %s | %d | %d | %s |", r.c.name, r.c.output, volt.ONNXOpset, r.nodes, strings.Join(r.ops, ", "))
		for _, d := range r.diffs {
			fmt.Fprintf(&b, " %s |", d)
		}
	}
	return b.String()
}
