package volt_test

import (
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// weights returns a copy of every variable's bytes, keyed by path.
func weights(t *testing.T, tr *volt.Trainer) map[string][]byte {
	t.Helper()
	w, err := testutil.Weights(tr.Store())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func trainWith(t *testing.T, seed uint64, workers int) map[string][]byte {
	t.Helper()
	volt.SeedEverything(seed)
	t.Cleanup(func() { volt.SeedEverything(0) })
	dm := boringData()
	dm.Train.(*data.DataLoader).Workers = workers
	tr, err := volt.NewTrainer(quiet(volt.Config{MaxEpochs: 3}))
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Fit(t.Context(), &boring{}, dm); err != nil {
		t.Fatal(err)
	}
	return weights(t, tr)
}

func equalWeights(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if string(b[k]) != string(v) {
			return false
		}
	}
	return true
}

func TestSameSeedSameWeights(t *testing.T) {
	a := trainWith(t, 7, 0)
	if len(a) == 0 {
		t.Fatal("no variables")
	}
	if b := trainWith(t, 7, 0); !equalWeights(a, b) {
		t.Error("two runs with seed 7 differ")
	}
	if c := trainWith(t, 7, 3); !equalWeights(a, c) {
		t.Error("3 prefetch workers changed the result")
	}
	if d := trainWith(t, 8, 0); equalWeights(a, d) {
		t.Error("seeds 7 and 8 gave the same weights: the seed is not used")
	}
}
