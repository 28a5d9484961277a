package volt_test

import (
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

// classifier is a 4-feature, 5-class linear classifier trained with sparse
// cross-entropy; check makes its labels go through Step.ClassLabels, and
// nodes records the training graph's node count after the step is built.
type classifier struct {
	check bool
	nodes int
}

func (m *classifier) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	logits := layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 5)
	labels := b.Label(0)
	if m.check {
		labels = s.ClassLabels(labels, 5)
	}
	l := loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{labels}, []*graph.Node{logits})
	l = graph.ReduceAllMean(l)
	m.nodes = len(s.Graph().Nodes())
	return l
}

// loss is the mean sparse cross-entropy of an evaluation batch.
func (m *classifier) loss(s *volt.Step, b volt.Batch) *graph.Node {
	logits := layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 5)
	labels := s.ClassLabels(b.Label(0), 5)
	return graph.ReduceAllMean(loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{labels}, []*graph.Node{logits}))
}

func (m *classifier) ValidationStep(s *volt.Step, b volt.Batch) { s.Log("val_loss", m.loss(s, b)) }

func (m *classifier) TestStep(s *volt.Step, b volt.Batch) { s.Log("test_loss", m.loss(s, b)) }

func (m *classifier) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(0.1)) }

// classData returns 16 examples in batches of 4 whose labels are i % 5,
// except example bad (when >= 0), labelled badLabel, as a training loader.
func classData(bad int, badLabel int32) volt.Loaders {
	return volt.Loaders{Train: classLoader(bad, badLabel)}
}

// classLoader is classData's loader.
func classLoader(bad int, badLabel int32) data.Loader {
	ds := make(data.Slice, 16)
	for i := range ds {
		label := int32(i % 5)
		if i == bad {
			label = badLabel
		}
		x := []float32{float32(i) / 16, float32(i%3) / 3, 1, -float32(i) / 32}
		ds[i] = data.Example{Inputs: []data.Field{{Value: x}}, Labels: []data.Field{{Value: []int32{label}}}}
	}
	return &data.DataLoader{Dataset: ds, BatchSize: 4}
}

// TestDetectAnomalyOutOfRangeClassLabel: with DetectAnomaly, a class label
// out of [0, classes) in a training, validation or test batch stops the
// run with an error naming the label and the batch (PyTorch: "Target 7 is
// out of bounds"), where GoMLX's one-hot would train on a zero row.
func TestDetectAnomalyOutOfRangeClassLabel(t *testing.T) {
	fit := func(tr *volt.Trainer, dm volt.Loaders) error {
		return tr.Fit(t.Context(), &classifier{check: true}, dm)
	}
	test := func(tr *volt.Trainer, dm volt.Loaders) error {
		_, err := tr.Test(t.Context(), &classifier{check: true}, dm)
		return err
	}
	const bounds = "is out of bounds for 5 classes (Step.ClassLabels: valid labels are 0 to 4)"
	for _, tc := range []struct {
		name string
		run  func(*volt.Trainer, volt.Loaders) error
		data volt.Loaders
		want string // "" for no error
	}{
		{"training label 7 in batch 2", fit, classData(9, 7), "class label 7 " + bounds + " at epoch 0, batch 2"},
		{"training label -1 in batch 0", fit, classData(1, -1), "class label -1 " + bounds + " at epoch 0, batch 0"},
		{"training label 5 (= classes) in batch 3", fit, classData(15, 5), "class label 5 " + bounds + " at epoch 0, batch 3"},
		{"validation label 9 in batch 1", fit, volt.Loaders{Train: classLoader(-1, 0), Val: []data.Loader{classLoader(6, 9)}},
			"ValidationStep (epoch 0, batch 1): volt: DetectAnomaly: class label 9 " + bounds},
		{"test label 8 in batch 3", test, volt.Loaders{Test: []data.Loader{classLoader(12, 8)}},
			"TestStep (epoch 0, batch 3): volt: DetectAnomaly: class label 8 " + bounds},
		{"all labels in range", fit, volt.Loaders{Train: classLoader(-1, 0), Val: []data.Loader{classLoader(-1, 0)}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, DetectAnomaly: true, NumSanityValSteps: volt.Ptr(0)}))
			err := tc.run(tr, tc.data)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Fit: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Fit error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestClassLabelsCostsNothingWithoutDetectAnomaly: without DetectAnomaly,
// Step.ClassLabels adds no node to the training graph (with it, the check
// adds its nodes, so the count can tell).
func TestClassLabelsCostsNothingWithoutDetectAnomaly(t *testing.T) {
	count := func(detect, check bool) int {
		t.Helper()
		tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, MaxSteps: 1, DetectAnomaly: detect}))
		m := &classifier{check: check}
		if err := tr.Fit(t.Context(), m, classData(-1, 0)); err != nil {
			t.Fatal(err)
		}
		return m.nodes
	}
	for _, tc := range []struct {
		detect    bool
		wantExtra bool
	}{{false, false}, {true, true}} {
		without, with := count(tc.detect, false), count(tc.detect, true)
		if extra := with > without; extra != tc.wantExtra || with < without {
			t.Errorf("DetectAnomaly %v: the training graph has %d nodes with ClassLabels, %d without; want extra nodes: %v",
				tc.detect, with, without, tc.wantExtra)
		}
		t.Logf("DetectAnomaly %v: %d graph nodes with ClassLabels, %d without", tc.detect, with, without)
	}
}
