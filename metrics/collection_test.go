package metrics

import (
	"testing"
)

// TestCollectionSharesState checks that a collection keeps one state per
// StateKey and that every metric's value equals the metric run alone (each
// of those is checked against torchmetrics by TestGoldens).
func TestCollectionSharesState(t *testing.T) {
	c := loadGoldens(t)["mc_f1_macro"] // multiclass logits, 4 batches
	mc := Multiclass(nc)
	must := func(m *StatScoresMetric, err error) Metric {
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	mustCurve := func(m *CurveMetric, err error) Metric {
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	confmat, err := NewConfusionMatrix(mc, NormalizeTrue)
	if err != nil {
		t.Fatal(err)
	}
	members := []Named{
		{"f1_macro", must(NewF1(mc, Macro))},
		{"precision_micro", must(NewPrecision(mc, Micro))},
		{"recall_none", must(NewRecall(mc, NoAverage))},
		{"accuracy", must(NewAccuracy(mc, Weighted))},
		{"f1_top2", must(NewF1(mc.WithTopK(2), Macro))}, // another task: its own counts
		{"confmat", confmat},
		{"auroc", mustCurve(NewAUROC(mc, Macro, Linspace(11)))},
		{"roc", mustCurve(NewROC(mc, Linspace(11)))},
	}
	coll, err := NewCollection(members...)
	if err != nil {
		t.Fatal(err)
	}
	// tp/fp/tn/fn twice (top-1 and top-2), one confusion matrix, one binned
	// curve state.
	if got, want := len(coll.States()), 4+4+1+1; got != want {
		t.Errorf("collection has %d states, want %d: %v", got, want, coll.States())
	}
	state := runBatches(t, coll, c.Batches, false)
	got, err := coll.Compute(state.Tensors())
	if err != nil {
		t.Fatal(err)
	}
	for _, nm := range members {
		alone := runBatches(t, nm.Metric, c.Batches, false)
		want, err := nm.Metric.Compute(alone.Tensors())
		if err != nil {
			t.Fatal(err)
		}
		if !equalValues(got[nm.Name], want) {
			t.Errorf("%s in the collection = %+v, alone %+v", nm.Name, got[nm.Name], want)
		}
	}
}

// equalValues reports whether a and b are the same value, bit for bit (NaN
// equal to NaN).
func equalValues(a, b Value) bool {
	same := func(x, y []float64) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] && !(x[i] != x[i] && y[i] != y[i]) {
				return false
			}
		}
		return true
	}
	if !same(toFloats(a.Dims), toFloats(b.Dims)) || !same(a.Data, b.Data) || len(a.Curves) != len(b.Curves) {
		return false
	}
	for i := range a.Curves {
		ca, cb := a.Curves[i], b.Curves[i]
		if !same(ca.X, cb.X) || !same(ca.Y, cb.Y) || !same(ca.Thresholds, cb.Thresholds) {
			return false
		}
	}
	return true
}

func toFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// TestNewCollectionErrors checks that empty and repeated names are errors.
func TestNewCollectionErrors(t *testing.T) {
	tests := []struct {
		name    string
		members []Named
	}{
		{"empty name", []Named{{"", SumMetric{}}}},
		{"nil metric", []Named{{"sum", nil}}},
		{"repeated name", []Named{{"m", SumMetric{}}, {"m", MaxMetric{}}}},
		{"one key, two states", []Named{{"a", keyed{SumMetric{}}}, {"b", keyed{MaxMetric{}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewCollection(tc.members...); err == nil {
				t.Error("NewCollection accepted it")
			}
		})
	}
}

// keyed gives a metric a fixed StateKey, whatever its states.
type keyed struct{ Metric }

func (keyed) StateKey() string { return "same" }
