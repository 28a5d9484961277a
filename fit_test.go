package volt_test

import (
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/testutil"
)

func TestFitLearnsAndCounts(t *testing.T) {
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 20}))
	m := &boring{}
	if err := tr.Fit(t.Context(), m, boringData()); err != nil {
		t.Fatal(err)
	}
	if got := tr.GlobalStep(); got != 80 {
		t.Errorf("GlobalStep = %d, want 80 (20 epochs × 4 batches)", got)
	}
	if got := tr.CurrentEpoch(); got != 20 {
		t.Errorf("CurrentEpoch = %d, want 20", got)
	}
	cm := tr.CallbackMetrics()
	if v, ok := cm["val_loss"]; !ok || v > 0.05 {
		t.Errorf("val_loss = %v (present %v), want < 0.05; metrics: %v", v, ok, cm)
	}
	if st := tr.State(); st.Status != volt.StatusFinished {
		t.Errorf("status = %v", st.Status)
	}
	res, err := tr.Test(t.Context(), m, boringData())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0]["test_loss"] > 0.05 {
		t.Errorf("Test = %v", res)
	}
	preds, err := tr.Predict(t.Context(), m, boringData())
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) != 1 || len(preds[0]) != 2 || preds[0][0].Shape().Dimensions[0] != 8 {
		t.Errorf("Predict returned %v", preds)
	}
}
