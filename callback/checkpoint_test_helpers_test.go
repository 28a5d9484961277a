package callback_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

// Helpers of the ModelCheckpoint and OnExceptionCheckpoint tests.

// ckptAdam is the boring model trained with Adam, so that optimizer state
// matters on resume.
type ckptAdam struct{ boring }

func (*ckptAdam) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(0.01)) }

// ckptData returns 8 training batches of 8 (shuffled) and one validation
// batch of 16.
func ckptData() volt.Loaders {
	return volt.Loaders{
		Train: &data.DataLoader{Dataset: regression(64, 1), BatchSize: 8, Shuffle: true},
		Val:   []data.Loader{&data.DataLoader{Dataset: regression(16, 2), BatchSize: 16}},
	}
}

// ckptScore logs the metric Name with Values[epoch] at every validation
// epoch end (the last value once epochs outnumber values).
type ckptScore struct {
	Name   string
	Values []float64
}

func (s ckptScore) OnValidationEpochEnd(t *volt.Trainer) error {
	t.Log(s.Name, s.Values[min(t.CurrentEpoch(), len(s.Values)-1)])
	return nil
}

// ckptRecorder records a callback metric after every Fit validation run.
type ckptRecorder struct {
	Name   string
	Values []float64
}

func (r *ckptRecorder) OnValidationEnd(t *volt.Trainer) error {
	if t.State().Stage != volt.RunningSanityCheck {
		r.Values = append(r.Values, t.CallbackMetrics()[r.Name])
	}
	return nil
}

// ckptWeights returns the raw bytes of every variable of the trainer's store.
func ckptWeights(t *testing.T, tr *volt.Trainer) map[string][]byte {
	t.Helper()
	w, err := testutil.Weights(tr.Store())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// ckptSameWeights fails the test for every variable that differs between
// a and b.
func ckptSameWeights(t *testing.T, a, b map[string][]byte) {
	t.Helper()
	if len(a) == 0 {
		t.Fatal("no variables to compare")
	}
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if string(a[k]) != string(b[k]) {
			t.Errorf("variable %s differs", k)
		}
	}
}

// ckptFiles returns the names of the files in dir, sorted, failing on
// leftover temporary files.
func ckptFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("leftover temporary file %s", e.Name())
		}
		names = append(names, e.Name())
	}
	return names
}

// ckptBases returns the base names of paths, sorted.
func ckptBases(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	slices.Sort(out)
	return out
}

// newCkpt builds a ModelCheckpoint, failing the test on a config error.
func newCkpt(t *testing.T, cfg callback.ModelCheckpointConfig) *callback.ModelCheckpoint {
	t.Helper()
	m := callback.NewModelCheckpoint(cfg)
	return m
}

// mapsKeys returns the keys of a score map.
func mapsKeys(m map[string]float64) func(func(string) bool) { return maps.Keys(m) }

// base returns the base name of path, or "" for "".
func base(path string) string {
	if path == "" {
		return ""
	}
	return filepath.Base(path)
}

func itoa(i int) string { return strconv.Itoa(i) }

func strconvF(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
