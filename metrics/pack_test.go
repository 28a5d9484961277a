package metrics

import "testing"

// TestPackAllReduceEqualsMerge reduces two processes' packed buffers element
// by element (what MPI_Allreduce does) and checks that the unpacked state is
// the merged one, for a collection mixing int64 counts, float64 sums and a
// ReduceMax state.
func TestPackAllReduceEqualsMerge(t *testing.T) {
	cases := loadGoldens(t)
	c := cases["mc_f1_macro"]
	f1, err := NewF1(Multiclass(nc), Macro)
	if err != nil {
		t.Fatal(err)
	}
	calibration, err := NewCalibrationError(Multiclass(nc), 6, NormL1)
	if err != nil {
		t.Fatal(err)
	}
	coll, err := NewCollection(Named{"f1", f1}, Named{"ece", calibration}, Named{"max", MaxMetric{}})
	if err != nil {
		t.Fatal(err)
	}
	a := runBatches(t, coll, c.Batches[:2], false)
	b := runBatches(t, coll, c.Batches[2:], false)
	pa, pb := a.Pack(), b.Pack()
	if len(pa) != 3 { // sum int64, sum float64, max float64
		t.Fatalf("Pack gave %d buffers, want 3: %+v", len(pa), pa)
	}
	for k := range pa {
		reduceInto(pa[k].Reduce, pa[k].Int64, pb[k].Int64)
		reduceInto(pa[k].Reduce, pa[k].Float64, pb[k].Float64)
	}
	if err := a.Unpack(pa); err != nil {
		t.Fatal(err)
	}
	merged := runBatches(t, coll, c.Batches[:2], false)
	if err := merged.Merge(b); err != nil {
		t.Fatal(err)
	}
	for i, spec := range coll.States() {
		if got, want := flatFloat64(a.Tensors()[i]), flatFloat64(merged.Tensors()[i]); !equalFloats(got, want) {
			t.Errorf("state %q: all-reduced %v, merged %v", spec.Name, got, want)
		}
	}
	if err := a.Unpack(pa[:1]); err == nil {
		t.Error("Unpack of too few buffers: no error")
	}
}
