package gpt2_test

import (
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/gpt2"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
	"github.com/voltml/volt/statedict"
)

// cfg is testdata/gen.py's size.
var cfg = gpt2.Config{Vocab: 64, Positions: 16, Embed: 16, Layers: 2, Heads: 2}

func read(t *testing.T) (weights, golden *statedict.StateDict) {
	t.Helper()
	var err error
	if weights, err = statedict.Read("testdata/gpt2.pt"); err != nil {
		t.Fatal(err)
	}
	if golden, err = statedict.Read("testdata/golden.pt"); err != nil {
		t.Fatal(err)
	}
	return weights, golden
}

// TestLogitsAsTorch: gen.py's GPT-2-layout state dict (Conv1D weights
// [in, out], a tied lm_head, attention-mask buffers) loads strictly with
// LoadOptions, and the eval-mode logits are torch's within 1e-5; without
// the options the load fails naming the transposed shapes.
func TestLogitsAsTorch(t *testing.T) {
	weights, golden := read(t)
	be, err := engine.Backend("")
	if err != nil {
		t.Fatal(err)
	}
	var report *statedict.Report
	exec, err := model.NewExec1(be, model.NewStore(), func(scope *model.Scope, ids *graph.Node) *graph.Node {
		transformer := scope.In("transformer")
		defer weights.Apply(transformer, append(gpt2.LoadOptions(), statedict.OnReport(func(r *statedict.Report) { report = r }))...)
		return gpt2.Logits(transformer, ids, cfg)
	})
	if err != nil {
		t.Fatal(err)
	}
	logits, err := exec.Call(golden.Get("eval_ids"))
	if err != nil {
		t.Fatal(err)
	}
	got, want := tensors.MustCopyFlatData[float32](logits), tensors.MustCopyFlatData[float32](golden.Get("eval_logits"))
	worst := 0.0
	for i := range want {
		worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
	}
	t.Logf("eval logits: max |Δ| %.2g; %s", worst, report)
	if worst > 1e-5 {
		t.Errorf("logits differ from torch's by %.3g > 1e-5", worst)
	}
	if len(report.Loaded) != 4+12*cfg.Layers || len(report.Excluded) != 1+cfg.Layers {
		t.Errorf("report %s, want %d loaded and lm_head.weight and the attn.bias buffers excluded", report, 4+12*cfg.Layers)
	}

	plain, err := model.NewExec1(be, model.NewStore(), func(scope *model.Scope, ids *graph.Node) *graph.Node {
		transformer := scope.In("transformer")
		defer weights.Apply(transformer, statedict.StripPrefix("transformer."), statedict.Exclude("lm_head."), statedict.ExcludeMatching("*.attn.bias"))
		return gpt2.Logits(transformer, ids, cfg)
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = plain.Call(golden.Get("eval_ids"))
	if err == nil || !strings.Contains(err.Error(), `size or dtype mismatch for "h.0.attn.c_attn.weight" (the file's "transformer.h.0.attn.c_attn.weight"): the file has float32[16, 48], the model float32[48, 16]`) {
		t.Errorf("without GPT2Conv1D: %v", err)
	}
}

// lm is the fine-tuning module: GPT-2's language-model loss on a batch of
// ids, from gen.py's weights, AdamW as gen.py's.
type lm struct{ weights *statedict.StateDict }

func (m *lm) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	logits := func() *graph.Node {
		transformer := s.Scope().In("transformer")
		defer m.weights.Apply(transformer, gpt2.LoadOptions()...)
		return gpt2.Logits(transformer, b.Input(0), cfg)
	}()
	n, length := logits.Shape().Dim(0), logits.Shape().Dim(1)
	inputs := graph.Slice(logits, graph.AxisRange(), graph.AxisRange(0, length-1))    // positions 0…T−2
	targets := graph.Slice(b.Input(0), graph.AxisRange(), graph.AxisRange(1, length)) // the next ids
	return nn.CrossEntropyLoss(graph.Reshape(inputs, n*(length-1), cfg.Vocab), graph.Reshape(targets, n*(length-1)))
}

func (m *lm) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimize(optim.AdamW(1e-2).WithWeightDecay(0.01))
}

// TestFineTuningAsTorch: 20 AdamW steps of volt's Trainer from gen.py's
// GPT-2 weights on its batches give torch's losses within 1e-4.
func TestFineTuningAsTorch(t *testing.T) {
	weights, golden := read(t)
	ids := tensors.MustCopyFlatData[int64](golden.Get("train_ids"))
	length := golden.Get("train_ids").Shape().Dim(1)
	examples := make(data.Slice, len(ids)/length)
	for i := range examples {
		examples[i] = data.Example{Inputs: []data.Field{{Value: ids[i*length : (i+1)*length]}}}
	}
	losses := &parity.Losses{}
	tr, err := volt.NewTrainer(volt.Config{MaxEpochs: 1, DisableLoggers: true, DisableModelSummary: true, DisableCheckpointing: true,
		Log: slog.New(slog.DiscardHandler), EnableProgressBar: volt.Ptr(false), Callbacks: []volt.Callback{losses}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Fit(t.Context(), &lm{weights}, volt.Loaders{Train: &data.DataLoader{Dataset: examples, BatchSize: 2}}); err != nil {
		t.Fatal(err)
	}
	want := tensors.MustCopyFlatData[float64](golden.Get("losses"))
	if len(losses.Values) != len(want) {
		t.Fatalf("%d steps, torch's %d", len(losses.Values), len(want))
	}
	worst := 0.0
	for i, w := range want {
		d := math.Abs(losses.Values[i] - w)
		worst = math.Max(worst, d)
		if d > 1e-4 {
			t.Errorf("step %d: loss %.6f, torch's %.6f", i, losses.Values[i], w)
		}
	}
	t.Logf("20 steps: loss %.4f → %.4f (torch %.4f → %.4f), max |Δ| %.2g", losses.Values[0], losses.Values[19], want[0], want[19], worst)
}
