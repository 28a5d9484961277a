package volt_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
	"github.com/voltml/volt/optim"
)

// warmup is a nested hyper-parameter section.
type warmup struct {
	Steps  int
	Factor float64 `volt:"start_factor"`
}

// hpNet is a two-layer regressor whose shape and optimizer come from its
// hyper-parameter fields.
type hpNet struct {
	Hidden     int
	LR         float64
	Activation string `volt:"act"`
	Warmup     warmup
	Seen       int `volt:"-"` // not a hyper-parameter
}

func (m *hpNet) forward(s *volt.Step, x *graph.Node) *graph.Node {
	h := layers.DenseWithBias(s.Scope().In("hidden"), x, m.Hidden)
	if m.Activation == "tanh" {
		h = graph.Tanh(h)
	} else {
		h = activation.Relu(h)
	}
	return layers.DenseWithBias(s.Scope().In("out"), h, 1)
}

func (m *hpNet) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))})
	s.Log("train_loss", l)
	return l
}

func (m *hpNet) PredictStep(s *volt.Step, b volt.Batch) *graph.Node { return m.forward(s, b.Input(0)) }

func (m *hpNet) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.SGD(m.LR)) }

func (m *hpNet) HParams() map[string]any {
	return map[string]any{"hidden": m.Hidden, "lr": m.LR, "act": m.Activation,
		"warmup": map[string]any{"steps": m.Warmup.Steps, "start_factor": m.Warmup.Factor}}
}

func (m *hpNet) Validate() error {
	if m.Hidden < 1 {
		return fmt.Errorf("hidden: must be >= 1, got %d", m.Hidden)
	}
	return nil
}

// fixedData returns unshuffled loaders over the regression data: 4 training
// batches of 16 and 2 prediction batches of 8.
func fixedData() volt.Loaders {
	train := &data.DataLoader{Dataset: testutil.Regression(64, 1), BatchSize: 16}
	pred := &data.DataLoader{Dataset: testutil.Regression(16, 3), BatchSize: 8}
	return volt.Loaders{Train: train, Predict: []data.Loader{pred}}
}

// trainHPNet fits m for epochs and saves a full and a weights-only checkpoint.
func trainHPNet(t *testing.T, m *hpNet, epochs int) (tr *volt.Trainer, full, weights string) {
	t.Helper()
	tr = testutil.Fit(t, quiet(volt.Config{MaxEpochs: epochs}), m, fixedData())
	dir := t.TempDir()
	full, weights = filepath.Join(dir, "full.ckpt"), filepath.Join(dir, "weights.ckpt")
	for path, only := range map[string]bool{full: false, weights: true} {
		if err := tr.SaveCheckpoint(path, only); err != nil {
			t.Fatal(err)
		}
	}
	return tr, full, weights
}

// predictions returns the bytes of every prediction.
func predictions(t *testing.T, tr *volt.Trainer, m volt.Module, opts ...volt.RunOption) [][]byte {
	t.Helper()
	out, err := tr.Predict(t.Context(), m, fixedData(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	var b [][]byte
	for _, batch := range out {
		for _, p := range batch {
			b = append(b, tensorBytes(t, p))
		}
	}
	return b
}

func tensorBytes(t *testing.T, x *tensors.Tensor) []byte {
	t.Helper()
	var b []byte
	if err := x.ConstBytes(func(d []byte) { b = append([]byte(nil), d...) }); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadModuleForPredict: from a full and from a weights-only checkpoint,
// LoadModule sets every hyper-parameter field (leaving volt:"-" alone) and
// a new trainer predicts bit for bit what the trained one does.
func TestLoadModuleForPredict(t *testing.T) {
	trained := &hpNet{Hidden: 5, LR: 0.05, Activation: "tanh", Warmup: warmup{Steps: 3, Factor: 0.25}}
	tr, full, weights := trainHPNet(t, trained, 2)
	want := predictions(t, tr, trained)
	for name, path := range map[string]string{"full": full, "weights only": weights} {
		t.Run(name, func(t *testing.T) {
			m, err := volt.LoadModule(path, &hpNet{Seen: 7})
			if err != nil {
				t.Fatal(err)
			}
			wantFields := *trained
			wantFields.Seen = 7
			if *m != wantFields {
				t.Errorf("loaded fields %+v, want %+v", *m, wantFields)
			}
			got := predictions(t, testutil.NewTrainer(t, quiet(volt.Config{})), m)
			if !reflect.DeepEqual(got, want) {
				t.Error("predictions of the loaded module differ from the trained module's")
			}
			// A module without LoadModule has its own random weights.
			fresh := *m
			if reflect.DeepEqual(predictions(t, testutil.NewTrainer(t, quiet(volt.Config{})), &fresh), want) {
				t.Error("a module that was not loaded predicts like the loaded one: the test cannot tell")
			}
		})
	}
}

// TestLoadModuleWarmStart: Fit from a loaded module continues from its
// weights with a fresh optimizer and step count: one epoch after loading
// the 1-epoch weights ends with the weights of two epochs straight (SGD
// keeps no state, the data is not shuffled).
func TestLoadModuleWarmStart(t *testing.T) {
	hp := hpNet{Hidden: 4, LR: 0.05, Activation: "relu"}
	first := hp
	_, _, weights := trainHPNet(t, &first, 1)
	straight := hp
	trStraight, _, _ := trainHPNet(t, &straight, 2)

	m, err := volt.LoadModule(weights, &hpNet{})
	if err != nil {
		t.Fatal(err)
	}
	warm := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1}), m, fixedData())
	if got := warm.GlobalStep(); got != 4 {
		t.Errorf("global step after the warm start's one epoch = %d, want 4 (a new run, not a resumed one)", got)
	}
	a, _ := testutil.Weights(trStraight.Store())
	b, _ := testutil.Weights(warm.Store())
	for _, v := range []string{"/hidden/dense/weights", "/out/dense/weights"} {
		if a[v] == nil || !reflect.DeepEqual(a[v], b[v]) {
			t.Errorf("%s after warm start differs from two epochs straight (present: %v, %v)", v, a[v] != nil, b[v] != nil)
		}
	}
	// FromCheckpoint refuses weights only, and says what to use instead.
	err = testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1})).Fit(t.Context(), &hpNet{Hidden: 4, LR: 0.05}, fixedData(), volt.FromCheckpoint(weights))
	if err == nil || !strings.Contains(err.Error(), "volt.LoadModule") {
		t.Errorf("Fit(FromCheckpoint(weights only)) error %v, want a pointer to volt.LoadModule", err)
	}
}

// otherNet has hidden/ and out/ layers but no hyper-parameters of hpNet's.
type otherNet struct{ Width int }

func (m *otherNet) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return graph.ReduceAllMean(m.PredictStep(s, b))
}

func (m *otherNet) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return layers.DenseWithBias(s.Scope().In("other"), b.Input(0), 1)
}

// badHP is hpNet recording other hyper-parameters than its fields.
type badHP struct {
	hpNet
	record map[string]any
}

func (m *badHP) HParams() map[string]any {
	h := m.hpNet.HParams()
	maps.Copy(h, m.record)
	return h
}

// saveBadHP saves a weights-only checkpoint of hpNet whose hyper-parameters
// include record.
func saveBadHP(t *testing.T, record map[string]any) string {
	t.Helper()
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1}), &badHP{hpNet{Hidden: 3, LR: 0.05}, record}, fixedData())
	path := filepath.Join(t.TempDir(), "bad.ckpt")
	if err := tr.SaveCheckpoint(path, true); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadModuleErrors(t *testing.T) {
	_, full, _ := trainHPNet(t, &hpNet{Hidden: 3, LR: 0.05}, 1)
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a checkpoint at all, just text"), 0o644); err != nil {
		t.Fatal(err)
	}
	wrongTypes := saveBadHP(t, map[string]any{"hidden": "wide", "lr": []int{1}})
	invalid := saveBadHP(t, map[string]any{"hidden": 0})
	nested := saveBadHP(t, map[string]any{"warmup": map[string]any{"steps": 1, "decay": 0.5}})
	for _, tc := range []struct {
		name string
		load func() error
		want []string
	}{
		{"missing file", func() error { _, err := volt.LoadModule(filepath.Join(dir, "nope.ckpt"), &hpNet{}); return err },
			[]string{"nope.ckpt"}},
		{"not a checkpoint", func() error { _, err := volt.LoadModule(text, &hpNet{}); return err },
			[]string{"volt.LoadModule: checkpoint " + text, "not a volt checkpoint"}},
		{"nil module", func() error { _, err := volt.LoadModule(full, (*hpNet)(nil)); return err },
			[]string{"the module is nil"}},
		{"keys of another module", func() error { _, err := volt.LoadModule(full, &otherNet{}); return err },
			[]string{"the hyper-parameters do not fit *volt_test.otherNet",
				`hyper-parameter "act" names no field of volt_test.otherNet (its keys: width)`,
				`hyper-parameter "hidden" names no field`, `hyper-parameter "warmup" names no field`}},
		{"values of the wrong type", func() error { _, err := volt.LoadModule(wrongTypes, &hpNet{}); return err },
			[]string{`hyper-parameter "hidden" = "wide" does not fit field volt_test.hpNet.Hidden (int): a JSON string cannot be a int`,
				`hyper-parameter "lr" = [1] does not fit field volt_test.hpNet.LR (float64)`}},
		{"a key no nested field has", func() error { _, err := volt.LoadModule(nested, &hpNet{}); return err },
			[]string{`hyper-parameter "warmup": hyper-parameter "decay" names no field of volt_test.hpNet.Warmup (its keys: steps, start_factor)`}},
		{"values the module rejects", func() error { _, err := volt.LoadModule(invalid, &hpNet{}); return err },
			[]string{"*volt_test.hpNet.Validate after setting its hyper-parameters: hidden: must be >= 1, got 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.load()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nwant it to contain\n%s", err, w)
				}
			}
		})
	}
	if _, err := volt.LoadModule(filepath.Join(dir, "nope.ckpt"), &hpNet{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v does not wrap fs.ErrNotExist", err)
	}
}

// noHP is hpNet without HParams: LoadModule sets no field, and the weights
// are checked against the module when it first runs.
type noHP struct{ Hidden int }

func (m *noHP) net() *hpNet { return &hpNet{Hidden: m.Hidden, LR: 0.05} }
func (m *noHP) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.net().TrainingStep(s, b)
}
func (m *noHP) PredictStep(s *volt.Step, b volt.Batch) *graph.Node { return m.net().PredictStep(s, b) }

// TestLoadModuleWrongVariables: weights that do not match the module are an
// error naming the missing and unexpected variables, or the shapes.
func TestLoadModuleWrongVariables(t *testing.T) {
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1}), &noHP{Hidden: 3}, fixedData())
	path := filepath.Join(t.TempDir(), "w.ckpt")
	if err := tr.SaveCheckpoint(path, true); err != nil {
		t.Fatal(err)
	}
	other, err := volt.LoadModule(path, &otherNet{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = testutil.NewTrainer(t, quiet(volt.Config{})).Predict(t.Context(), other, fixedData())
	for _, w := range []string{"checkpoint " + path + " does not match the module", `missing variables ["/other/dense/biases" "/other/dense/weights"]`,
		`unexpected variables ["/hidden/dense/biases" "/hidden/dense/weights" "/out/dense/biases" "/out/dense/weights"]`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Predict with another module's weights: error %v, want %s", err, w)
		}
	}
	if _, err := testutil.NewTrainer(t, quiet(volt.Config{})).Predict(t.Context(), other, fixedData(), volt.NonStrict()); err != nil {
		t.Errorf("NonStrict: %v", err)
	}
	wider, err := volt.LoadModule(path, &noHP{Hidden: 6})
	if err != nil {
		t.Fatal(err)
	}
	_, err = testutil.NewTrainer(t, quiet(volt.Config{})).Predict(t.Context(), wider, fixedData())
	if err == nil || !strings.Contains(err.Error(), "/hidden/dense/weights") {
		t.Errorf("Predict with a wider layer than the checkpoint's: error %v, want one naming /hidden/dense/weights", err)
	}
}

// TestLoadModuleHParamsRoundTrip: the loaded module's HParams are the saved
// ones, as the checkpoint holds them.
func TestLoadModuleHParamsRoundTrip(t *testing.T) {
	trained := &hpNet{Hidden: 2, LR: 0.125, Activation: "tanh", Warmup: warmup{Steps: 9, Factor: 0.5}}
	_, full, _ := trainHPNet(t, trained, 1)
	m, err := volt.LoadModule(full, &hpNet{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(trained.HParams())
	b, _ := json.Marshal(m.HParams())
	if string(a) != string(b) {
		t.Errorf("HParams after LoadModule %s, want %s", b, a)
	}
}

// scaled multiplies a dense layer by a frozen variable, as batch
// normalisation's running statistics are: not trained, but part of the model.
type scaled struct{}

func (scaled) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	scale := s.Scope().VariableWithValue("scale", float32(2)).SetTrainable(false)
	return graph.Mul(layers.DenseWithBias(s.Scope().In("dense"), b.Input(0), 1), scale.NodeValue(b.Input(0).Graph()))
}

func (m *scaled) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.PredictStep(s, b)})
}

// TestLoadModuleFrozenVariables: a weights-only checkpoint keeps the
// module's frozen variables, and LoadModule restores them, still frozen.
func TestLoadModuleFrozenVariables(t *testing.T) {
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1}))
	m := &scaled{}
	if err := tr.Fit(t.Context(), m, fixedData()); err != nil {
		t.Fatal(err)
	}
	v := tr.Store().GetVariable("/scale")
	if v == nil || v.Trainable {
		t.Fatalf("/scale: %v, want a frozen variable", v)
	}
	if err := v.SetValue(tensors.FromValue(float32(3))); err != nil {
		t.Fatal(err)
	}
	want := predictions(t, tr, m)
	path := filepath.Join(t.TempDir(), "w.ckpt")
	if err := tr.SaveCheckpoint(path, true); err != nil {
		t.Fatal(err)
	}
	loaded, err := volt.LoadModule(path, &scaled{})
	if err != nil {
		t.Fatal(err)
	}
	r := testutil.NewTrainer(t, quiet(volt.Config{}))
	if got := predictions(t, r, loaded); !reflect.DeepEqual(got, want) {
		t.Error("predictions after LoadModule differ: the frozen /scale was not restored")
	}
	if v := r.Store().GetVariable("/scale"); v == nil || v.Trainable {
		t.Errorf("/scale after LoadModule: %v, want frozen", v)
	}
}
