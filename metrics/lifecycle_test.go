package metrics

import (
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// lifecycleCases are golden cases covering each kind of state: int64 counts,
// float64 sums, ReduceMax, and host rows (ReduceCat).
var lifecycleCases = []string{"mc_f1_macro", "r2_raw_2d", "max", "binary_auroc_exact", "mc_auroc_macro_binned"}

// TestCheckpointResume stops after two batches, saves the state by name,
// restores it into a freshly bound metric (a resumed process), feeds the
// remaining batches and checks torchmetrics' value for all of them and a
// state bitwise equal to the uninterrupted run's.
func TestCheckpointResume(t *testing.T) {
	cases, metrics := loadGoldens(t), goldenMetrics()
	for _, name := range lifecycleCases {
		t.Run(name, func(t *testing.T) {
			c, gm := cases[name], metrics[name]
			m, err := gm.build()
			if err != nil {
				t.Fatal(err)
			}
			first := runBatches(t, m, c.Batches[:2], gm.noTarget)
			saved := first.Checkpoint()
			for _, spec := range m.States() {
				if saved[spec.Name] == nil {
					t.Fatalf("checkpoint lacks state %q", spec.Name)
				}
			}
			restored, err := NewState(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := restored.Restore(saved); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			r := newRunner(t, m, gm.noTarget)
			if err := r.bound.Load(restored); err != nil {
				t.Fatalf("Load: %v", err)
			}
			for _, b := range c.Batches[2:] {
				r.step(t, b.Preds.hostTensor(b.PredsInt), b.Target.hostTensor(b.TargetInt))
			}
			s, err := r.bound.State()
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Compute(s.Tensors())
			if err != nil {
				t.Fatal(err)
			}
			checkValue(t, got, c)
			straight := runBatches(t, m, c.Batches, gm.noTarget)
			for i, spec := range m.States() {
				if a, b := flatFloat64(s.Tensors()[i]), flatFloat64(straight.Tensors()[i]); !equalFloats(a, b) {
					t.Errorf("state %q resumed %v, uninterrupted %v: not bitwise equal", spec.Name, a, b)
				}
			}
		})
	}
}

// TestReset feeds every batch twice with a Reset between: the second epoch's
// value is torchmetrics' for one pass, and after Reset the state is the
// initial one.
func TestReset(t *testing.T) {
	cases, metrics := loadGoldens(t), goldenMetrics()
	for _, name := range lifecycleCases {
		t.Run(name, func(t *testing.T) {
			c, gm := cases[name], metrics[name]
			m, err := gm.build()
			if err != nil {
				t.Fatal(err)
			}
			r := newRunner(t, m, gm.noTarget)
			feed := func() {
				for _, b := range c.Batches {
					r.step(t, b.Preds.hostTensor(b.PredsInt), b.Target.hostTensor(b.TargetInt))
				}
			}
			feed()
			if err := r.bound.Reset(); err != nil {
				t.Fatal(err)
			}
			s, err := r.bound.State()
			if err != nil {
				t.Fatal(err)
			}
			initial, err := NewState(m)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range initial.Tensors() {
				if got := s.Tensors()[i]; !equalFloats(flatFloat64(got), flatFloat64(want)) {
					t.Errorf("state %q after Reset = %v, want %v", m.States()[i].Name, flatFloat64(got), flatFloat64(want))
				}
			}
			feed()
			s, err = r.bound.State()
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Compute(s.Tensors())
			if err != nil {
				t.Fatal(err)
			}
			checkValue(t, got, c)
		})
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// TestEpochF1IsNotMeanOfBatches checks, on imbalanced classes (one never
// present), that the macro F1 of the accumulated state (torchmetrics' value)
// differs from the mean of per-batch F1s, which volt's scalar logging would
// have reported.
func TestEpochF1IsNotMeanOfBatches(t *testing.T) {
	c := loadGoldens(t)["mc_f1_macro"]
	m, err := NewF1(Multiclass(nc), Macro)
	if err != nil {
		t.Fatal(err)
	}
	epoch, err := m.Compute(runBatches(t, m, c.Batches, false).Tensors())
	if err != nil {
		t.Fatal(err)
	}
	checkValue(t, epoch, c)
	mean := 0.0
	for _, b := range c.Batches {
		v, err := m.Compute(runBatches(t, m, []goldenBatch{b}, false).Tensors())
		if err != nil {
			t.Fatal(err)
		}
		mean += v.Data[0] / float64(len(c.Batches))
	}
	if math.Abs(mean-epoch.Data[0]) < 1e-3 {
		t.Errorf("mean of batch F1s %.6f is the epoch F1 %.6f: the data does not show the difference", mean, epoch.Data[0])
	}
	t.Logf("epoch macro F1 %.6f (torchmetrics %.6f), mean of batch F1s %.6f", epoch.Data[0], float64(c.Value.Data[0]), mean)
}

// TestLinspaceIsTorchs compares Linspace, rounded to float32 as the metrics
// use it against float32 scores, with the thresholds torch.linspace gave
// torchmetrics (the binned ROC returns them reversed): equal within one
// float32 unit in the last place.
func TestLinspaceIsTorchs(t *testing.T) {
	cases := loadGoldens(t)
	for _, tc := range []struct {
		name string
		n    int
	}{{"binary_roc_binned", 11}, {"binary_roc_binned_100", 100}} {
		want := floats(cases[tc.name].Curves[0][2])
		got := Linspace(tc.n)
		if len(got) != len(want) {
			t.Fatalf("Linspace(%d) has %d values, torch %d", tc.n, len(got), len(want))
		}
		for i := range got {
			g, w := float32(got[i]), float32(want[len(want)-1-i])
			if g != w && math.Nextafter32(g, w) != w {
				t.Errorf("Linspace(%d)[%d] = %.9g in float32, torch %.9g", tc.n, i, g, w)
			}
		}
	}
}

// TestFixedStatesStayOnDevice checks that metrics with fixed-size state give
// the step no output to copy to the host, and that exact curves do.
func TestFixedStatesStayOnDevice(t *testing.T) {
	auroc, err := NewAUROC(Binary(), Macro, Linspace(50))
	if err != nil {
		t.Fatal(err)
	}
	exact, err := NewAUROC(Binary(), Macro, nil)
	if err != nil {
		t.Fatal(err)
	}
	f1, err := NewF1(Binary(), Macro)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		m    Updater
		rows int
	}{
		{"F1", f1, 0}, {"binned AUROC", auroc, 0}, {"MSE", MeanSquaredError{}, 0},
		{"exact AUROC", exact, 2}, {"CatMetric", CatMetric{}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bound, err := Bind(model.NewStore(), "/m", tc.m)
			if err != nil {
				t.Fatal(err)
			}
			g := graph.NewGraph(testBackend(t), "probe")
			preds := graph.Parameter(g, "preds", shapeOf(dtypes.Float32, 8))
			targetDType := dtypes.Int64
			if tc.name == "MSE" || tc.name == "CatMetric" {
				targetDType = dtypes.Float32
			}
			target := graph.Parameter(g, "target", shapeOf(targetDType, 8))
			if rows := bound.Update(preds, target); len(rows) != tc.rows {
				t.Errorf("Update returned %d row outputs, want %d", len(rows), tc.rows)
			}
		})
	}
}

// TestCatRowsChunks appends more than ChunkRows rows and checks they come
// back in order, in two chunks.
func TestCatRowsChunks(t *testing.T) {
	s, err := NewState(CatMetric{})
	if err != nil {
		t.Fatal(err)
	}
	n := ChunkRows + 1000
	data := make([]float64, n)
	for i := range data {
		data[i] = float64(i)
	}
	for _, part := range [][]float64{data[:1000], data[1000 : ChunkRows+10], data[ChunkRows+10:]} {
		if err := s.Append(0, tensors.FromFlatDataAndDimensions(part, len(part))); err != nil {
			t.Fatal(err)
		}
	}
	if s.Rows(0) != n || len(s.cat[0].chunks) != 2 {
		t.Fatalf("%d rows in %d chunks, want %d in 2", s.Rows(0), len(s.cat[0].chunks), n)
	}
	if got := flatFloat64(s.Tensors()[0]); !equalFloats(got, data) {
		t.Error("rows came back changed or out of order")
	}
}

// TestBatchState checks that the step value (Compute of BatchState's
// outputs) is the metric of that batch alone, in the same compiled step that
// accumulates the epoch's state.
func TestBatchState(t *testing.T) {
	cases, metrics := loadGoldens(t), goldenMetrics()
	for _, name := range lifecycleCases {
		t.Run(name, func(t *testing.T) {
			c, gm := cases[name], metrics[name]
			m, err := gm.build()
			if err != nil {
				t.Fatal(err)
			}
			store := model.NewStore()
			bound, err := Bind(store, "/m", m)
			if err != nil {
				t.Fatal(err)
			}
			exec, err := model.NewExec(testBackend(t), store, func(_ *model.Scope, inputs []*graph.Node) []*graph.Node {
				store.SetTraining(inputs[0].Graph(), true)
				var target *graph.Node
				if !gm.noTarget {
					target = inputs[1]
				}
				rows := bound.Update(inputs[0], target)
				return append(bound.BatchState(inputs[0], target), rows...)
			})
			if err != nil {
				t.Fatal(err)
			}
			nStates := len(m.States())
			for i, b := range c.Batches[:2] {
				args := []any{b.Preds.hostTensor(b.PredsInt)}
				if !gm.noTarget {
					args = append(args, b.Target.hostTensor(b.TargetInt))
				}
				outs, err := exec.Call(args...)
				if err != nil {
					t.Fatal(err)
				}
				if err := bound.AppendRows(outs[nStates:]); err != nil {
					t.Fatal(err)
				}
				batch, err := NewStateFrom(m, outs[:nStates])
				if err != nil {
					t.Fatal(err)
				}
				got, err := m.Compute(batch.Tensors())
				if err != nil {
					t.Fatal(err)
				}
				alone, err := m.Compute(runBatches(t, m, []goldenBatch{b}, gm.noTarget).Tensors())
				if err != nil {
					t.Fatal(err)
				}
				if !equalValues(got, alone) {
					t.Errorf("batch %d: step value %+v, the batch alone %+v", i, got, alone)
				}
			}
			// The epoch state still accumulated both batches.
			s, err := bound.State()
			if err != nil {
				t.Fatal(err)
			}
			want, err := m.Compute(runBatches(t, m, c.Batches[:2], gm.noTarget).Tensors())
			if err != nil {
				t.Fatal(err)
			}
			if got, err := m.Compute(s.Tensors()); err != nil || !equalValues(got, want) {
				t.Errorf("epoch state after two batches: %+v (%v), want %+v", got, err, want)
			}
		})
	}
}
