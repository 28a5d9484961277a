package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	_ "github.com/gomlx/compute/gobackend" // the pure-Go backend runs the graph tests.
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

var (
	backendOnce sync.Once
	backend     compute.Backend
	backendErr  error
)

// testBackend returns the pure-Go backend, shared by the tests.
func testBackend(t testing.TB) compute.Backend {
	t.Helper()
	backendOnce.Do(func() { backend, backendErr = compute.NewWithConfig("go") })
	if backendErr != nil {
		t.Fatalf("creating the go backend: %v", backendErr)
	}
	return backend
}

// goldenTensor is a tensor in goldens.json.
type goldenTensor struct {
	Dims []int         `json:"dims"`
	Data []goldenFloat `json:"data"`
}

// goldenBatch is one update's inputs.
type goldenBatch struct {
	Preds     goldenTensor `json:"preds"`
	Target    goldenTensor `json:"target"`
	PredsInt  bool         `json:"preds_int"`
	TargetInt bool         `json:"target_int"`
}

// goldenCase is one metric configuration fed with batches, and torchmetrics'
// compute() after all of them.
type goldenCase struct {
	Name    string             `json:"name"`
	Batches []goldenBatch      `json:"batches"`
	Value   *goldenTensor      `json:"value"`
	Curves  [][3][]goldenFloat `json:"curves"`
}

var (
	goldenOnce  sync.Once
	goldenCases map[string]goldenCase
	goldenErr   error
)

// loadGoldens returns the cases of testdata/goldens.json by name.
func loadGoldens(t *testing.T) map[string]goldenCase {
	t.Helper()
	goldenOnce.Do(func() {
		data, err := os.ReadFile(filepath.Join("testdata", "goldens.json"))
		if err != nil {
			goldenErr = err
			return
		}
		var file struct {
			Cases []goldenCase `json:"cases"`
		}
		if goldenErr = json.Unmarshal(data, &file); goldenErr != nil {
			return
		}
		goldenCases = map[string]goldenCase{}
		for _, c := range file.Cases {
			goldenCases[c.Name] = c
		}
	})
	if goldenErr != nil {
		t.Fatalf("reading goldens (regenerate with metrics/testdata/gen_goldens.py): %v", goldenErr)
	}
	return goldenCases
}

// goldenFloat is a float64 in goldens.json: a number or one of the strings
// "NaN", "+Inf", "-Inf".
type goldenFloat float64

// UnmarshalJSON implements json.Unmarshaler.
func (f *goldenFloat) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		v, err := strconv.ParseFloat(s, 64)
		*f = goldenFloat(v)
		return err
	}
	var v float64
	err := json.Unmarshal(data, &v)
	*f = goldenFloat(v)
	return err
}

// floats converts golden floats to float64.
func floats(xs []goldenFloat) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// hostTensor converts a golden tensor to float32 (scores) or int64 (labels).
func (g goldenTensor) hostTensor(isInt bool) *tensors.Tensor {
	if isInt {
		data := make([]int64, len(g.Data))
		for i, v := range g.Data {
			data[i] = int64(float64(v))
		}
		return tensors.FromFlatDataAndDimensions(data, g.Dims...)
	}
	data := make([]float32, len(g.Data))
	for i, v := range g.Data {
		data[i] = float32(v)
	}
	return tensors.FromFlatDataAndDimensions(data, g.Dims...)
}

// runner runs a metric's Update in a compiled GoMLX graph whose state lives
// in variables: the way the engine will run it.
type runner struct {
	bound    *Bound
	exec     *model.Exec
	noTarget bool
}

// newRunner binds u to a fresh store and compiles its update step. With
// noTarget the step takes only preds (Update gets a nil target).
func newRunner(t *testing.T, u Updater, noTarget bool) *runner {
	t.Helper()
	store := model.NewStore()
	bound, err := Bind(store, "/metrics/m", u)
	if err != nil {
		t.Fatalf("Bind: %v", err)
	}
	r := &runner{bound: bound, noTarget: noTarget}
	r.exec, err = model.NewExec(testBackend(t), store, func(_ *model.Scope, inputs []*graph.Node) []*graph.Node {
		g := inputs[0].Graph()
		store.SetTraining(g, true) // else the Go backend embeds the variables as constants
		var target *graph.Node
		if !noTarget {
			target = inputs[1]
		}
		rows := bound.Update(inputs[0], target)
		if len(rows) == 0 {
			return []*graph.Node{graph.ScalarZero(g, inputs[0].DType())}
		}
		return rows
	})
	if err != nil {
		t.Fatalf("compiling the update step: %v", err)
	}
	return r
}

// step runs one update.
func (r *runner) step(t *testing.T, preds, target *tensors.Tensor) {
	t.Helper()
	args := []any{preds}
	if !r.noTarget {
		args = append(args, target)
	}
	outs, err := r.exec.Call(args...)
	if err != nil {
		t.Fatalf("running the update step: %v", err)
	}
	hasRows := false
	for _, s := range r.bound.specs {
		hasRows = hasRows || s.Reduce == ReduceCat
	}
	if hasRows {
		if err := r.bound.AppendRows(outs); err != nil {
			t.Fatalf("AppendRows: %v", err)
		}
	}
}

// runBatches feeds batches to a fresh runner and returns its host state.
func runBatches(t *testing.T, u Updater, batches []goldenBatch, noTarget bool) *State {
	t.Helper()
	r := newRunner(t, u, noTarget)
	for _, b := range batches {
		r.step(t, b.Preds.hostTensor(b.PredsInt), b.Target.hostTensor(b.TargetInt))
	}
	s, err := r.bound.State()
	if err != nil {
		t.Fatalf("State: %v", err)
	}
	return s
}

// closeTo reports whether got is within tol of want, relative to
// max(1, |want|); NaN matches only NaN, infinities only themselves.
func closeTo(got, want, tol float64) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	if math.IsInf(want, 0) || math.IsInf(got, 0) {
		return got == want
	}
	return math.Abs(got-want) <= tol*max(1, math.Abs(want))
}

// goldenTol is the agreement asked of every metric with torchmetrics (which
// runs in float32).
const goldenTol = 1e-6

// checkValue compares a computed Value with a golden case's result.
func checkValue(t *testing.T, got Value, c goldenCase) {
	t.Helper()
	if c.Value != nil {
		wantDims := c.Value.Dims
		if len(got.Dims) != len(wantDims) || len(got.Data) != len(c.Value.Data) {
			t.Fatalf("value shape %v (%d elements), torchmetrics %v (%d elements)", got.Dims, len(got.Data), wantDims, len(c.Value.Data))
		}
		for i := range wantDims {
			if got.Dims[i] != wantDims[i] {
				t.Fatalf("value shape %v, torchmetrics %v", got.Dims, wantDims)
			}
		}
		checkFloats(t, "value", got.Data, floats(c.Value.Data))
		return
	}
	if len(got.Curves) != len(c.Curves) {
		t.Fatalf("%d curves, torchmetrics %d", len(got.Curves), len(c.Curves))
	}
	for i, want := range c.Curves {
		checkFloats(t, fmt.Sprintf("curve %d X", i), got.Curves[i].X, floats(want[0]))
		checkFloats(t, fmt.Sprintf("curve %d Y", i), got.Curves[i].Y, floats(want[1]))
		checkFloats(t, fmt.Sprintf("curve %d thresholds", i), got.Curves[i].Thresholds, floats(want[2]))
	}
}

func checkFloats(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values %v, torchmetrics %d %v", what, len(got), got, len(want), want)
	}
	for i := range want {
		if !closeTo(got[i], want[i], goldenTol) {
			t.Errorf("%s[%d] = %.9g, torchmetrics %.9g", what, i, got[i], want[i])
		}
	}
}

// shapeOf returns the shape of dtype and dims.
func shapeOf(dtype dtypes.DType, dims ...int) shapes.Shape { return shapes.Make(dtype, dims...) }
