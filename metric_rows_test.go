package volt_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/metrics"
)

// goldenCase is one case of the metrics package's torchmetrics goldens:
// its batches (float32 preds; int32 targets when they are labels, float32
// otherwise), torchmetrics' value and curves.
type goldenCase struct {
	batches []*data.Batch
	value   []float64
	curves  [][3][]float64 // per curve: x, y, thresholds
}

// readGolden reads case name of metrics/testdata/goldens.json.
func readGolden(t *testing.T, name string) goldenCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("metrics", "testdata", "goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	type tensor struct {
		Dims []int             `json:"dims"`
		Data []json.RawMessage `json:"data"` // numbers, or strings such as "nan"
	}
	var file struct {
		Cases []struct {
			Name    string `json:"name"`
			Batches []struct {
				Preds     tensor `json:"preds"`
				Target    tensor `json:"target"`
				TargetInt bool   `json:"target_int"`
			} `json:"batches"`
			Value  tensor                 `json:"value"`
			Curves [][3][]json.RawMessage `json:"curves"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	num := func(r json.RawMessage) float64 {
		var v float64
		if err := json.Unmarshal(r, &v); err == nil {
			return v
		}
		var s string
		if err := json.Unmarshal(r, &s); err != nil || !strings.EqualFold(s, "nan") {
			t.Fatalf("golden %s: %s is not a number", name, r)
		}
		return math.NaN()
	}
	for _, c := range file.Cases {
		if c.Name != name {
			continue
		}
		var g goldenCase
		for _, b := range c.Batches {
			preds := make([]float32, len(b.Preds.Data))
			for i, v := range b.Preds.Data {
				preds[i] = float32(num(v))
			}
			var target *tensors.Tensor
			if b.TargetInt {
				labels := make([]int32, len(b.Target.Data))
				for i, v := range b.Target.Data {
					labels[i] = int32(num(v))
				}
				target = tensors.FromFlatDataAndDimensions(labels, b.Target.Dims...)
			} else {
				values := make([]float32, len(b.Target.Data))
				for i, v := range b.Target.Data {
					values[i] = float32(num(v))
				}
				target = tensors.FromFlatDataAndDimensions(values, b.Target.Dims...)
			}
			g.batches = append(g.batches, &data.Batch{
				Inputs: []*tensors.Tensor{tensors.FromFlatDataAndDimensions(preds, b.Preds.Dims...)},
				Labels: []*tensors.Tensor{target},
				Size:   b.Preds.Dims[0],
			})
		}
		for _, v := range c.Value.Data {
			g.value = append(g.value, num(v))
		}
		for _, curve := range c.Curves {
			var xs [3][]float64
			for k, series := range curve {
				for _, v := range series {
					xs[k] = append(xs[k], num(v))
				}
			}
			g.curves = append(g.curves, xs)
		}
		return g
	}
	t.Fatalf("no golden case %q", name)
	return goldenCase{}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestLogMetricGrowingStatesAreTorchmetrics: metric objects whose state
// grows with the data (exact curves, CatMetric), logged in a validation
// step over batches of uneven sizes (one graph each), give torchmetrics'
// value of the whole epoch, in every run (the rows are reset between runs).
func TestLogMetricGrowingStatesAreTorchmetrics(t *testing.T) {
	tests := []struct {
		golden string
		metric metrics.Metric
		update bool // UpdateMetric and MetricValue; else LogMetric
	}{
		{"binary_auroc_exact", must(metrics.NewAUROC(metrics.Binary(), metrics.Macro, nil)), false},
		{"binary_auroc_ignore_exact", must(metrics.NewAUROC(metrics.Binary().WithIgnoreIndex(-1), metrics.Macro, nil)), false},
		{"binary_ap_exact", must(metrics.NewAveragePrecision(metrics.Binary(), metrics.Macro, nil)), false},
		{"mc_auroc_macro_exact", must(metrics.NewAUROC(metrics.Multiclass(4), metrics.Macro, nil)), false},
		{"mc_ap_weighted_exact", must(metrics.NewAveragePrecision(metrics.Multiclass(4), metrics.Weighted, nil)), false},
		{"mc_auroc_none_exact", must(metrics.NewAUROC(metrics.Multiclass(4), metrics.NoAverage, nil)), true},
		{"binary_roc_exact", must(metrics.NewROC(metrics.Binary(), nil)), true},
		{"mc_pr_curve_exact", must(metrics.NewPrecisionRecallCurve(metrics.Multiclass(4), nil)), true},
		{"cat", metrics.CatMetric{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			g := readGolden(t, tc.golden)
			m := &badMetricModule{metricModule: *newMetricModule(t), log: func(s *volt.Step, p, y *graph.Node) {
				if tc.update {
					s.UpdateMetric("val_m", tc.metric, p, y)
				} else {
					s.LogMetric("val_m", tc.metric, p, y)
				}
			}}
			tr := testutil.NewTrainer(t, quiet(volt.Config{}))
			for run := range 2 {
				res, err := tr.Validate(t.Context(), m, volt.Loaders{Val: []data.Loader{&fixedLoader{g.batches}}})
				if err != nil {
					t.Fatal(err)
				}
				if !tc.update {
					checkClose(t, run, res[0]["val_m"], g.value[0])
					continue
				}
				v, err := tr.MetricValue("val_m")
				if err != nil {
					t.Fatal(err)
				}
				if _, logged := res[0]["val_m"]; logged {
					t.Errorf("run %d: UpdateMetric logged val_m = %v", run, res[0]["val_m"])
				}
				if len(g.curves) == 0 && len(v.Data) != len(g.value) {
					t.Fatalf("run %d: %d values, torchmetrics has %d", run, len(v.Data), len(g.value))
				}
				for i := range v.Data {
					checkClose(t, run, v.Data[i], g.value[i])
				}
				if len(v.Curves) != len(g.curves) {
					t.Fatalf("run %d: %d curves, torchmetrics has %d", run, len(v.Curves), len(g.curves))
				}
				for c, want := range g.curves {
					got := [3][]float64{v.Curves[c].X, v.Curves[c].Y, v.Curves[c].Thresholds}
					for k := range got {
						if len(got[k]) != len(want[k]) {
							t.Fatalf("run %d, curve %d, series %d: %d points, torchmetrics has %d", run, c, k, len(got[k]), len(want[k]))
						}
						for i := range got[k] {
							checkClose(t, run, got[k][i], want[k][i])
						}
					}
				}
			}
		})
	}
}

// checkClose fails unless got is within 1e-6 of want (NaN equals NaN).
func checkClose(t *testing.T, run int, got, want float64) {
	t.Helper()
	if math.IsNaN(want) && math.IsNaN(got) {
		return
	}
	if math.Abs(got-want) > 1e-6 {
		t.Errorf("run %d: %v, torchmetrics %v", run, got, want)
	}
}

// growingTrainModule logs an exact AUROC in its training step.
type growingTrainModule struct{ *metricModule }

func (m growingTrainModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	p := m.preds(s, b)
	s.LogMetric("train_auroc", must(metrics.NewAUROC(metrics.Multiclass(4), metrics.Macro, nil)), p, b.Label(0))
	return graph.MulScalar(graph.ReduceAllSum(p), 0)
}

// TestLogMetricGrowingStateInTraining: a training step takes fixed-size
// states only; the error says what to do instead.
func TestLogMetricGrowingStateInTraining(t *testing.T) {
	batches, _ := goldenF1(t, "mc_f1_macro")
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1}))
	err := tr.Fit(t.Context(), growingTrainModule{newMetricModule(t)}, volt.Loaders{Train: &fixedLoader{batches}})
	if want := "training steps carry fixed-size states only"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Fit error = %v, want it to contain %q", err, want)
	}
}

// TestMetricValueErrors: MetricValue names what it cannot find.
func TestMetricValueErrors(t *testing.T) {
	tr := testutil.NewTrainer(t, quiet(volt.Config{}))
	if _, err := tr.MetricValue("val_roc"); err == nil || !strings.Contains(err.Error(), "no metric object is logged under that name") {
		t.Errorf("MetricValue before any run: %v", err)
	}
}

// TestLogMetricsGrowingCollection: a collection of exact curve metrics
// (one shared set of rows) gives each metric's value: torchmetrics' AUROC,
// and the average precision LogMetric gives on its own.
func TestLogMetricsGrowingCollection(t *testing.T) {
	g := readGolden(t, "binary_auroc_exact")
	auroc := must(metrics.NewAUROC(metrics.Binary(), metrics.Macro, nil))
	ap := must(metrics.NewAveragePrecision(metrics.Binary(), metrics.Macro, nil))
	c, err := metrics.NewCollection(metrics.Named{Name: "val_auroc", Metric: auroc}, metrics.Named{Name: "val_ap", Metric: ap})
	if err != nil {
		t.Fatal(err)
	}
	validate := func(log func(s *volt.Step, p, y *graph.Node)) map[string]float64 {
		t.Helper()
		tr := testutil.NewTrainer(t, quiet(volt.Config{}))
		m := &badMetricModule{metricModule: *newMetricModule(t), log: log}
		res, err := tr.Validate(t.Context(), m, volt.Loaders{Val: []data.Loader{&fixedLoader{g.batches}}})
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	both := validate(func(s *volt.Step, p, y *graph.Node) { s.LogMetrics(c, p, y) })
	alone := validate(func(s *volt.Step, p, y *graph.Node) { s.LogMetric("val_ap", ap, p, y) })
	checkClose(t, 0, both["val_auroc"], g.value[0])
	if both["val_ap"] != alone["val_ap"] || math.IsNaN(alone["val_ap"]) {
		t.Errorf("val_ap: %v in the collection, %v alone", both["val_ap"], alone["val_ap"])
	}
}

// TestMetricValuePerLoader: with several validation loaders each keeps its
// own rows, named with the loader's suffix; a name without it is unknown.
func TestMetricValuePerLoader(t *testing.T) {
	g := readGolden(t, "cat")
	m := &badMetricModule{metricModule: *newMetricModule(t), log: func(s *volt.Step, p, y *graph.Node) {
		s.UpdateMetric("val_cat", metrics.CatMetric{}, p, nil)
	}}
	tr := testutil.NewTrainer(t, quiet(volt.Config{}))
	loaders := []data.Loader{&fixedLoader{g.batches[:1]}, &fixedLoader{g.batches[1:]}}
	if _, err := tr.Validate(t.Context(), m, volt.Loaders{Val: loaders}); err != nil {
		t.Fatal(err)
	}
	first := g.batches[0].Size
	for i, want := range [][]float64{g.value[:first], g.value[first:]} {
		name := fmt.Sprintf("val_cat/dataloader_idx_%d", i)
		v, err := tr.MetricValue(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Data) != len(want) {
			t.Fatalf("%s: %d values, want %d", name, len(v.Data), len(want))
		}
		for k := range want {
			checkClose(t, 0, v.Data[k], want[k])
		}
	}
	if _, err := tr.MetricValue("val_cat"); err == nil || !strings.Contains(err.Error(), "no metric object is logged under that name") {
		t.Errorf("MetricValue without the loader suffix: %v", err)
	}
}

// confusionTrainModule updates a confusion matrix in its training step.
type confusionTrainModule struct{ *metricModule }

func (m confusionTrainModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	p := m.preds(s, b)
	s.UpdateMetric("train_confmat", must(metrics.NewConfusionMatrix(metrics.Multiclass(4), metrics.NoNormalize)), p, b.Label(0))
	return graph.MulScalar(graph.ReduceAllSum(p), 0)
}

// TestUpdateMetricInTraining: a metric updated in the training step counts
// the current epoch's samples (its state is reset per epoch), read with
// MetricValue after Fit; it logs no value.
func TestUpdateMetricInTraining(t *testing.T) {
	batches, _ := goldenF1(t, "mc_f1_macro")
	samples := 0
	for _, b := range batches {
		samples += b.Size
	}
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 2}), confusionTrainModule{newMetricModule(t)}, volt.Loaders{Train: &fixedLoader{batches}})
	v, err := tr.MetricValue("train_confmat")
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, c := range v.Data {
		total += c
	}
	if len(v.Dims) != 2 || v.Dims[0] != 4 || v.Dims[1] != 4 || total != float64(samples) {
		t.Errorf("train_confmat has shape %v and counts %v samples, want [4 4] and the epoch's %d", v.Dims, total, samples)
	}
	for name := range tr.CallbackMetrics() {
		if strings.Contains(name, "confmat") {
			t.Errorf("UpdateMetric logged %q", name)
		}
	}
}
