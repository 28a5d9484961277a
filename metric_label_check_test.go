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
	"github.com/voltml/volt/metrics"
	"github.com/voltml/volt/optim"
)

// accuracyClassifier is detect_anomaly_labels_test.go's 5-class classifier
// without ClassLabels, logging a multiclass accuracy of task in its
// training and validation steps: the metric's task tells volt the classes.
type accuracyClassifier struct {
	task metrics.Task
}

func (m *accuracyClassifier) step(s *volt.Step, b volt.Batch, name string) *graph.Node {
	logits := layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 5)
	labels := b.Label(0)
	acc, err := metrics.NewAccuracy(m.task, metrics.Micro)
	if err != nil {
		panic(err)
	}
	s.LogMetric(name, acc, logits, graph.Reshape(labels, -1))
	return graph.ReduceAllMean(loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{labels}, []*graph.Node{logits}))
}

func (m *accuracyClassifier) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.step(s, b, "train_acc")
}

func (m *accuracyClassifier) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", m.step(s, b, "val_acc"))
}

func (m *accuracyClassifier) ConfigureOptimizers() volt.Optimizers {
	return volt.Optimize(optim.SGD(0.1))
}

// TestMulticlassMetricRefusesOutOfRangeTargets: a class index out of a
// logged multiclass metric's classes (GoMLX's one-hot counts it nowhere, so
// training went on silently; PyTorch's cross-entropy raises "Target 7 is out
// of bounds") fails the step whatever DetectAnomaly, naming the metric, the
// class, what is valid and the batch.
func TestMulticlassMetricRefusesOutOfRangeTargets(t *testing.T) {
	const bounds = "is out of bounds for its task's 5 classes (metrics.Multiclass(5): valid targets are 0 to 4"
	for _, tc := range []struct {
		name string
		task metrics.Task
		data volt.Loaders
		want string // "" for no error
	}{
		{"training target 7 in batch 2", metrics.Multiclass(5), classData(9, 7),
			`volt: logged metric "train_acc": target class 7 ` + bounds + ") at epoch 0, batch 2"},
		{"training target -1 in batch 0", metrics.Multiclass(5), classData(1, -1),
			`target class -1 ` + bounds + ") at epoch 0, batch 0"},
		{"training target 5 (= classes) in batch 3", metrics.Multiclass(5), classData(15, 5),
			`target class 5 ` + bounds + ") at epoch 0, batch 3"},
		{"validation target 9 in batch 1", metrics.Multiclass(5), volt.Loaders{Train: classLoader(-1, 0), Val: []data.Loader{classLoader(6, 9)}},
			`ValidationStep (epoch 0, batch 1): volt: logged metric "val_acc": target class 9 ` + bounds},
		{"the ignored target", metrics.Multiclass(5).WithIgnoreIndex(-100), classData(3, -100), ""},
		{"ignore index set, target 6", metrics.Multiclass(5).WithIgnoreIndex(-100), classData(3, 6),
			"target class 6 " + bounds + ", or the ignored -100) at epoch 0, batch 0"},
		{"all targets in range", metrics.Multiclass(5), volt.Loaders{Train: classLoader(-1, 0), Val: []data.Loader{classLoader(-1, 0)}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1, NumSanityValSteps: volt.Ptr(0)}))
			err := tr.Fit(t.Context(), &accuracyClassifier{task: tc.task}, tc.data)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Fit: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Fit error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
