package optim

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend" // the pure-Go backend runs the graph tests.
)

// loadGolden decodes testdata/name (written by tools/golden/gen_optim.py)
// into v.
func loadGolden(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("reading golden file (regenerate with /usr/bin/python3 tools/golden/gen_optim.py): %v", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
}

// absFloor is the absolute difference relClose always accepts, for values
// that should be exactly zero.
const absFloor = 1e-18

// relClose reports whether got is within tol of want relative to |want|, or
// within absFloor of it.
func relClose(got, want, tol float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	if got == want {
		return true
	}
	d := math.Abs(got - want)
	return d <= tol*math.Abs(want) || d <= absFloor
}

// checkClose fails t for every element of got not within tol of want.
func checkClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !relClose(got[i], want[i], tol) {
			t.Errorf("%s[%d] = %.17g, want %.17g (diff %.3g)", what, i, got[i], want[i], got[i]-want[i])
		}
	}
}

var (
	backendOnce sync.Once
	backend     compute.Backend
	backendErr  error
)

// testBackend returns the pure-Go backend, shared by the tests.
func testBackend(t *testing.T) compute.Backend {
	t.Helper()
	backendOnce.Do(func() { backend, backendErr = compute.NewWithConfig("go") })
	if backendErr != nil {
		t.Fatalf("creating the go backend: %v", backendErr)
	}
	return backend
}
