package callback_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/batchnorm"
	"github.com/voltml/volt/callback"
)

// deep is a model with nested scopes and a frozen variable.
type deep struct{ boring }

func (m *deep) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	enc := s.Scope().In("encoder")
	h := layers.DenseWithBias(enc.In("layer0"), b.Input(0), 4)
	h = layers.DenseWithBias(enc.In("layer1"), h, 4)
	out := layers.DenseWithBias(s.Scope().In("head"), h, 1)
	scale := s.Scope().In("stats").VariableWithValue("scale", float32(1)).SetTrainable(false)
	out = graph.Mul(out, scale.NodeValue(s.Graph()))
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{out})
}

func TestModelSummaryPrintsOncePerFit(t *testing.T) {
	var out bytes.Buffer
	ms := callback.NewModelSummary(callback.ModelSummaryConfig{Writer: &out})
	if _, err := fit(t, quiet(volt.Config{MaxEpochs: 2}), &boring{}, boringData(), ms); err != nil {
		t.Fatal(err)
	}
	want := `  | Name  | Type  | Params | Mode      | DType
------------------------------------------------
0 | dense | Dense | 9      | trainable | Float32
------------------------------------------------
9          Trainable params
0          Non-trainable params
9          Total params
0.000      Total estimated model params size (MB)
`
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestSummarize(t *testing.T) {
	tr, err := fit(t, quiet(volt.Config{MaxEpochs: 1}), &deep{}, trainOnly())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		depth int
		rows  []string // "name type shape dtype params mode"
	}{
		{0, nil},
		{1, []string{"encoder Scope - Float32 56 trainable", "head Dense - Float32 5 trainable", "stats Scope - Float32 1 frozen"}},
		// GoMLX's "dense" scope inside layer0 and head is folded into them.
		{2, []string{"encoder Scope - Float32 56 trainable", "encoder/layer0 Dense - Float32 36 trainable", "encoder/layer1 Dense - Float32 20 trainable",
			"head Dense - Float32 5 trainable", "head/weights Variable [4 1] Float32 4 trainable", "head/biases Variable [1] Float32 1 trainable",
			"stats Scope - Float32 1 frozen", "stats/scale Variable [] Float32 1 frozen"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint("depth ", tc.depth), func(t *testing.T) {
			s := volt.Summarize(tr.Store(), tc.depth)
			var got []string
			for _, r := range s.Rows {
				shape := r.Shape
				if shape == "" {
					shape = "-"
				}
				got = append(got, fmt.Sprintf("%s %s %s %s %d %s", r.Name, r.Type, shape, r.DType, r.Params, r.Mode()))
			}
			if strings.Join(got, "\n") != strings.Join(tc.rows, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.rows, "\n"))
			}
			if s.TrainableParams != 61 || s.NonTrainableParams != 1 || s.TotalParams != 62 || s.SizeMB != 62*4/1e6 {
				t.Errorf("totals %d/%d/%d, %v MB; want 61/1/62, %v MB", s.TrainableParams, s.NonTrainableParams, s.TotalParams, s.SizeMB, 62*4/1e6)
			}
		})
	}
	if all := volt.Summarize(tr.Store(), -1); len(all.Rows) != 12 || all.Rows[2].Name != "encoder/layer0/weights" || all.Rows[2].Shape != "[8 4]" {
		t.Errorf("depth -1: %d rows, want 12:\n%s", len(all.Rows), all)
	}
}

func TestModelSummaryConfigErrors(t *testing.T) {
	err := callback.NewModelSummary(callback.ModelSummaryConfig{MaxDepth: -2}).Validate()
	if err == nil || !strings.Contains(err.Error(), "ModelSummaryConfig.MaxDepth: must be -1 (all), 0 (default 1) or positive, got -2") {
		t.Errorf("error = %v", err)
	}
}

// normed is a dense layer of 4 and PyTorch's BatchNorm1d(4).
type normed struct{ boring }

func (m *normed) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	h := layers.DenseWithBias(s.Scope().In("hidden"), b.Input(0), 4)
	h = batchnorm.New(s.Scope().In("bn"), h, -1).Done()
	out := layers.DenseWithBias(s.Scope().In("head"), h, 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{out})
}

// TestSummaryLeavesOutBuffers: as PyTorch's parameters() (what Lightning
// counts), BatchNorm1d(4) has 8 parameters (weight, bias); its running
// mean, variance and batch count are buffers and count nowhere.
// hidden 8·4+4 = 36, bn 8, head 4+1 = 5: 49 trainable, 0 non-trainable.
func TestSummaryLeavesOutBuffers(t *testing.T) {
	tr, err := fit(t, quiet(volt.Config{MaxEpochs: 1}), &normed{}, trainOnly())
	if err != nil {
		t.Fatal(err)
	}
	s := volt.Summarize(tr.Store(), 1)
	if s.TrainableParams != 49 || s.NonTrainableParams != 0 || s.TotalParams != 49 || s.SizeMB != 49*4/1e6 {
		t.Errorf("totals %d/%d/%d, %v MB; want 49/0/49, %v MB\n%s", s.TrainableParams, s.NonTrainableParams, s.TotalParams, s.SizeMB, 49*4/1e6, s)
	}
	var got []string
	for _, r := range s.Rows {
		got = append(got, fmt.Sprintf("%s %s %s %d %s", r.Name, r.Type, r.DType, r.Params, r.Mode()))
	}
	want := []string{"hidden Dense Float32 36 trainable", "bn BatchNorm Float32 8 trainable", "head Dense Float32 5 trainable"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
