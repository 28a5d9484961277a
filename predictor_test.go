package volt_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt"
	"github.com/voltml/volt/checkpoint"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/internal/testutil"
)

// trainForPredictor fits an hpNet for one epoch (4 steps) in precision and
// saves a weights-only checkpoint; it returns the trainer, the module and
// the checkpoint's path.
func trainForPredictor(t testing.TB, precision string) (*volt.Trainer, *hpNet, string) {
	t.Helper()
	m := &hpNet{Hidden: 6, LR: 0.05, Activation: "tanh"}
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1, Precision: precision, DisableCheckpointing: true}), m, fixedData())
	path := filepath.Join(t.TempDir(), "model.ckpt")
	if err := tr.SaveCheckpoint(path, true); err != nil {
		t.Fatal(err)
	}
	return tr, m, path
}

// predictBatches returns the inputs of fixedData's prediction batches.
func predictBatches(t testing.TB) []*tensors.Tensor {
	t.Helper()
	var out []*tensors.Tensor
	for b, err := range fixedData().Predict[0].Batches(t.Context(), 0, 0) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b.Inputs[0])
	}
	return out
}

// TestPredictorEqualsTrainerPredict: the predictor's predictions are
// Trainer.Predict's, bitwise, on the same batches: those of the trainer
// that trained the module and of a fresh one running LoadModule's copy; in
// half precision the default float32 result is the prediction converted.
func TestPredictorEqualsTrainerPredict(t *testing.T) {
	for _, tc := range []struct {
		precision string
		dtype     dtypes.DType
	}{
		{"32-true", dtypes.Float32},
		{"bf16-mixed", dtypes.BFloat16},
		{"64-true", dtypes.Float64},
	} {
		t.Run(tc.precision, func(t *testing.T) {
			tr, m, path := trainForPredictor(t, tc.precision)
			want, err := tr.Predict(t.Context(), m, fixedData())
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := volt.LoadModule(path, &hpNet{})
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := testutil.NewTrainer(t, quiet(volt.Config{Precision: tc.precision})).Predict(t.Context(), loaded, fixedData())
			if err != nil {
				t.Fatal(err)
			}
			raw, err := volt.LoadPredictor(path, &hpNet{}, volt.PredictorKeepDType())
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			conv, err := volt.LoadPredictor(path, &hpNet{})
			if err != nil {
				t.Fatal(err)
			}
			defer conv.Close()
			inputs := predictBatches(t)
			if len(inputs) != len(want[0]) || len(inputs) == 0 {
				t.Fatalf("%d batches, Trainer.Predict returned %d", len(inputs), len(want[0]))
			}
			for i, x := range inputs {
				got, err := raw.Predict(x)
				if err != nil {
					t.Fatal(err)
				}
				if got.DType() != tc.dtype || want[0][i].DType() != tc.dtype {
					t.Fatalf("batch %d: predictor %s, trainer %s, want %s", i, got.DType(), want[0][i].DType(), tc.dtype)
				}
				if !bytes.Equal(tensorBytes(t, got), tensorBytes(t, want[0][i])) {
					t.Errorf("batch %d: predictor %v\nTrainer.Predict %v", i, got, want[0][i])
				}
				if !bytes.Equal(tensorBytes(t, fresh[0][i]), tensorBytes(t, want[0][i])) {
					t.Errorf("batch %d: Trainer.Predict after LoadModule %v, the training trainer's %v", i, fresh[0][i], want[0][i])
				}
				f32, err := conv.Predict(x)
				if err != nil {
					t.Fatal(err)
				}
				wantF32 := want[0][i]
				if tc.dtype != dtypes.Float32 && tc.dtype != dtypes.Float64 {
					wantF32 = engine.ToFloat32(wantF32)
				}
				if !bytes.Equal(tensorBytes(t, f32), tensorBytes(t, wantF32)) || f32.DType() != wantF32.DType() {
					t.Errorf("batch %d: default output %s %v, want %s %v", i, f32.DType(), f32, wantF32.DType(), wantF32)
				}
			}
			// Go slices give the same as tensors.
			first := inputs[0].Value().([][]float32)
			got, err := raw.Predict(first)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(tensorBytes(t, got), tensorBytes(t, want[0][0])) {
				t.Errorf("from a Go slice: %v, want %v", got, want[0][0])
			}
		})
	}
}

// TestPredictorConcurrentCallers: many goroutines calling one predictor,
// with batch sizes that compile new programs while others run, each get the
// prediction a lone caller gets (run it with -race too).
func TestPredictorConcurrentCallers(t *testing.T) {
	_, _, path := trainForPredictor(t, "32-true")
	p, err := volt.LoadPredictor(path, &hpNet{}, volt.PredictorMaxShapes(3))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rows := testutil.Regression(24, 9)
	batchOf := func(start, n int) [][]float32 {
		out := make([][]float32, n)
		for i := range out {
			out[i] = rows[start+i].Inputs[0].Value.([]float32)
		}
		return out
	}
	type call struct{ start, n int }
	var calls []call
	for i := range 40 {
		calls = append(calls, call{i % 8, 1 + i%5}) // 5 batch sizes: evictions too
	}
	want := make([][]byte, len(calls))
	for i, c := range calls {
		out, err := p.Predict(batchOf(c.start, c.n))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = tensorBytes(t, out)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(calls)*4)
	for g := range 8 {
		wg.Go(func() {
			for j := range len(calls) {
				i := (j + g*5) % len(calls)
				out, err := p.Predict(batchOf(calls[i].start, calls[i].n))
				if err != nil {
					errs <- err
					return
				}
				var got []byte
				_ = out.ConstBytes(func(d []byte) { got = bytes.Clone(d) })
				if !bytes.Equal(got, want[i]) {
					errs <- fmt.Errorf("goroutine %d, call %d (batch %d at %d): another prediction than a lone caller's", g, i, calls[i].n, calls[i].start)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s := p.Stats(); s.Shapes > 3 || s.Evictions == 0 {
		t.Errorf("stats %+v: want at most 3 shapes held and evictions (5 batch sizes)", s)
	}
}

// TestPredictorCacheBounded: programs are kept per input shape, at most
// PredictorMaxShapes, the least recently used evicted, and an evicted shape
// compiles again to the same prediction.
func TestPredictorCacheBounded(t *testing.T) {
	_, _, path := trainForPredictor(t, "32-true")
	p, err := volt.LoadPredictor(path, &hpNet{}, volt.PredictorMaxShapes(2))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	x := predictBatches(t)[0].Value().([][]float32)
	first := map[int][]byte{}
	steps := []struct {
		batch                       int
		shapes, compiles, evictions int
	}{
		{1, 1, 1, 0},
		{2, 2, 2, 0},
		{1, 2, 2, 0}, // cached
		{3, 2, 3, 1}, // evicts batch 2, the least recently used
		{1, 2, 3, 1}, // still cached
		{2, 2, 4, 2}, // compiled again, evicting 3
	}
	for i, s := range steps {
		out, err := p.Predict(x[:s.batch])
		if err != nil {
			t.Fatal(err)
		}
		if b, ok := first[s.batch]; ok && !bytes.Equal(b, tensorBytes(t, out)) {
			t.Errorf("step %d: batch %d predicts differently after its program was %s", i, s.batch, "evicted or reused")
		}
		first[s.batch] = tensorBytes(t, out)
		if got := p.Stats(); got != (volt.PredictorStats{Shapes: s.shapes, Compiles: s.compiles, Evictions: s.evictions}) {
			t.Errorf("step %d (batch %d): stats %+v, want shapes %d compiles %d evictions %d", i, s.batch, got, s.shapes, s.compiles, s.evictions)
		}
	}
	if _, err := volt.LoadPredictor(path, &hpNet{}, volt.PredictorMaxShapes(0)); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("PredictorMaxShapes(0): %v", err)
	}
}

// foreignNet has hpNet's hyper-parameters but other layers: a checkpoint of
// hpNet is not one of it.
type foreignNet struct {
	Hidden     int
	LR         float64
	Activation string `volt:"act"`
	Warmup     warmup
}

func (m *foreignNet) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return graph.ReduceAllSum(m.PredictStep(s, b))
}

func (m *foreignNet) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return layers.DenseWithBias(s.Scope().In("encoder"), b.Input(0), m.Hidden)
}

// TestPredictorBadInput: each wrong call or checkpoint is an error naming
// what was expected.
func TestPredictorBadInput(t *testing.T) {
	_, _, path := trainForPredictor(t, "32-true")
	x := predictBatches(t)[0]
	declared := []volt.PredictorOption{volt.PredictorInputs(volt.InputSpec{DType: dtypes.Float32, Dims: []int{8}})}
	for _, tc := range []struct {
		name    string
		opts    []volt.PredictorOption
		first   []any // a call that succeeds first (nil: none)
		call    []any
		wantErr []string
	}{
		{"no inputs", nil, nil, []any{}, []string{"no inputs"}},
		{"too many inputs after the first call", nil, []any{x}, []any{x, x}, []string{"got 2 inputs, the module takes 1", "input 0: Float32", "first call"}},
		{"too many inputs declared", declared, nil, []any{x, x}, []string{"got 2 inputs, the module takes 1", "Float32[batch 8]", "PredictorInputs"}},
		{"wrong dtype after the first call", nil, []any{x}, []any{[][]float64{{1, 2, 3, 4, 5, 6, 7, 8}}}, []string{"input 0 is Float64, expected Float32"}},
		{"wrong dtype declared", declared, nil, []any{[][]int32{{1, 2, 3, 4, 5, 6, 7, 8}}}, []string{"input 0 is Int32, expected Float32", "Float32[batch 8]"}},
		{"wrong shape declared", declared, nil, []any{[][]float32{{1, 2, 3}}}, []string{"input 0 has shape (Float32)[1, 3], expected [batch 8]"}},
		{"wrong shape undeclared", nil, nil, []any{[][]float32{{1, 2, 3}}}, []string{path, "(Float32)[1, 3]", "/hidden/dense/weights", "previous shape=(Float32)[8, 6]"}},
		{"scalar", nil, nil, []any{float32(1)}, []string{"input 0 is a scalar", "first axis of every input is the batch"}},
		{"batch sizes differ", nil, nil, []any{x, [][]float32{{1}}}, []string{"input 1 has batch size 1", "input 0 has 8"}},
		{"not a tensor", nil, nil, []any{"hello"}, []string{"input 0 (string) is neither a *tensors.Tensor nor a Go slice"}},
		{"nil tensor", nil, nil, []any{(*tensors.Tensor)(nil)}, []string{"input 0 is a nil tensor"}},
		{"empty batch", nil, nil, []any{[][]float32{}}, []string{"input 0 ([][]float32) is empty: a batch holds one or more examples"}},
		{"empty example", nil, nil, []any{[][]float32{{}}}, []string{"input 0 ([][]float32) has an empty example: [1][0]"}},
		{"nil slice", nil, nil, []any{[][]float32(nil)}, []string{"input 0 ([][]float32) is empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := volt.LoadPredictor(path, &hpNet{}, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if tc.first != nil {
				if _, err := p.Predict(tc.first...); err != nil {
					t.Fatal(err)
				}
			}
			_, err = p.Predict(tc.call...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not name %q", err, w)
				}
			}
		})
	}
	t.Run("checkpoint of another model", func(t *testing.T) {
		for _, opts := range [][]volt.PredictorOption{nil, declared} {
			p, err := volt.LoadPredictor(path, &foreignNet{}, opts...)
			if err == nil { // undeclared inputs: found at the first call
				defer p.Close()
				_, err = p.Predict(x)
			}
			for _, w := range []string{path, "missing variables", "/encoder/", "unexpected variables", "/hidden/", "another model"} {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("with %d options: error %v\ndoes not name %q", len(opts), err, w)
				}
			}
		}
	})
	t.Run("closed", func(t *testing.T) {
		p, err := volt.LoadPredictor(path, &hpNet{})
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
		if _, err := p.Predict(x); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("after Close: %v", err)
		}
	})
	t.Run("no PredictStep", func(t *testing.T) {
		if _, err := volt.LoadPredictor(path, &noPredict{}); err == nil || !strings.Contains(err.Error(), "has no PredictStep") {
			t.Errorf("module without PredictStep: %v", err)
		}
	})
}

// noPredict trains but does not predict.
type noPredict struct{ Hidden int }

func (m *noPredict) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return graph.ReduceAllSum(b.Input(0))
}

// BenchmarkPredictorOverhead compares a predictor's call with a raw GoMLX
// model.Exec of the same graph over the same weights and backend: the
// difference is volt's per-call overhead (input checks, the cache lookup,
// the lock).
func BenchmarkPredictorOverhead(b *testing.B) {
	_, _, path := trainForPredictor(b, "32-true")
	x := predictBatches(b)[0]
	b.Run("predictor", func(b *testing.B) {
		p, err := volt.LoadPredictor(path, &hpNet{})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		if _, err := p.Predict(x); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			if _, err := p.Predict(x); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gomlx", func(b *testing.B) {
		exec := rawHPNetExec(b, path)
		defer exec.Finalize()
		if _, err := exec.Exec(x); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			if _, err := exec.Exec(x); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// rawHPNetExec is hpNet's prediction (tanh) written with GoMLX alone, over
// a store holding the checkpoint's weights.
func rawHPNetExec(b *testing.B, path string) *model.Exec {
	f, err := checkpoint.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	store := model.NewStore()
	for _, ct := range f.Tensors {
		if strings.HasPrefix(ct.Name, "/volt/") || strings.HasPrefix(ct.Name, "/#") {
			continue
		}
		v, err := ct.ToGoMLX()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := store.CreateVariable(ct.Name, v); err != nil {
			b.Fatal(err)
		}
	}
	backend, err := engine.Backend("")
	if err != nil {
		b.Fatal(err)
	}
	exec, err := model.NewExec(backend, store, func(scope *model.Scope, x *graph.Node) *graph.Node {
		scope.Store().SetTraining(x.Graph(), false)
		h := graph.Tanh(layers.DenseWithBias(scope.In("hidden"), x, 6))
		return layers.DenseWithBias(scope.In("out"), h, 1)
	})
	if err != nil {
		b.Fatal(err)
	}
	return exec
}
