package callback_test

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/internal/testutil"
)

func TestNewFinetuningValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  callback.FinetuningConfig
		want string // substring of the error; "" for success
	}{
		{"valid", callback.FinetuningConfig{Freeze: []string{"/backbone"}, Schedule: []callback.FinetuneStep{{Epoch: 2, Unfreeze: []string{"/backbone"}}}}, ""},
		{"root scope", callback.FinetuningConfig{Freeze: []string{"/"}}, `Freeze[0]: "/" is the root, every variable: name a scope below it, such as "/backbone"`},
		{"torch name", callback.FinetuningConfig{Freeze: []string{"layer*", "fc.bias"}}, ""},
		{"neither path nor name", callback.FinetuningConfig{Freeze: []string{"backbone/dense"}}, `Freeze[0]: "backbone/dense" is neither a scope path (which starts with "/") nor a PyTorch name`},
		{"bad pattern", callback.FinetuningConfig{Freeze: []string{"layer["}}, `Freeze[0]: "layer[" is not a valid name pattern`},
		{"root scope", callback.FinetuningConfig{Freeze: []string{"/"}}, `Freeze[0]: "/"`},
		{"negative epoch", callback.FinetuningConfig{Schedule: []callback.FinetuneStep{{Epoch: -1, Unfreeze: []string{"/a"}}}}, "Schedule[0].Epoch: must be >= 0"},
		{"nothing to unfreeze", callback.FinetuningConfig{Schedule: []callback.FinetuneStep{{Epoch: 1}}}, "Schedule[0].Unfreeze: required"},
		{"bad scale", callback.FinetuningConfig{Schedule: []callback.FinetuneStep{{Epoch: 1, Unfreeze: []string{"/a"}, LRScale: -1}}}, "Schedule[0].LRScale: must be a finite number > 0"},
		{"bad optimizer", callback.FinetuningConfig{Schedule: []callback.FinetuneStep{{Epoch: 1, Unfreeze: []string{"/a"}, Optimizer: -1}}}, "Schedule[0].Optimizer: must be >= 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := callback.NewFinetuning(tc.cfg).Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestNewBackboneFinetuningValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  callback.BackboneFinetuningConfig
		want string
	}{
		{"defaults", callback.BackboneFinetuningConfig{}, ""},
		{"epoch", callback.BackboneFinetuningConfig{UnfreezeAtEpoch: -2}, "UnfreezeAtEpoch: must be >= 1"},
		{"ratio", callback.BackboneFinetuningConfig{InitialRatio: -0.1}, "InitialRatio: must be a finite number > 0 (0 means 0.1)"},
		{"multiplier", callback.BackboneFinetuningConfig{Multiplier: math.Inf(1)}, "Multiplier: must be a finite number > 0 (0 means 2)"},
		{"lambda and multiplier", callback.BackboneFinetuningConfig{Multiplier: 3, Lambda: func(int) float64 { return 1 }}, "Lambda and Multiplier are both set (3): set one"},
		{"initial lr", callback.BackboneFinetuningConfig{InitialLR: -1}, "InitialLR: must be a finite number > 0"},
		{"backbone", callback.BackboneFinetuningConfig{Backbone: []string{"/"}}, `Backbone or Optimizer: callback.NewFinetuning: FinetuningConfig.Freeze[0]: "/" is the root`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := callback.NewBackboneFinetuning(tc.cfg).Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// initialWeights validates m once on tr, which creates and initialises its
// variables, and returns them, so that a following Fit starts from them.
func initialWeights(t *testing.T, tr *volt.Trainer, m volt.Module) map[string][]float64 {
	t.Helper()
	if _, err := tr.Validate(t.Context(), m, boringData()); err != nil {
		t.Fatal(err)
	}
	return moduleValues(t, tr)
}

func TestFinetuningFreezesAndUnfreezesOnSchedule(t *testing.T) {
	tests := []struct {
		name     string
		schedule []callback.FinetuneStep
		// frozenUntil is the first epoch at whose end each scope is trainable.
		frozenUntil map[string]int
		groups      []volt.ParamGroup
	}{
		{
			name:        "backbone at epoch 2",
			schedule:    []callback.FinetuneStep{{Epoch: 2, Unfreeze: []string{"/backbone"}, LRScale: 0.5}},
			frozenUntil: map[string]int{"/backbone/dense/weights": 2, "/backbone/dense/biases": 2, "/head/dense/weights": 0, "/head/dense/biases": 0},
			groups:      []volt.ParamGroup{{Params: []string{"/backbone"}, LRScale: 0.5}},
		},
		{
			name: "biases at epoch 1, weights at epoch 3",
			schedule: []callback.FinetuneStep{
				{Epoch: 3, Unfreeze: []string{"/backbone/dense/weights"}},
				{Epoch: 1, Unfreeze: []string{"/backbone/dense/biases"}, LRScale: 2},
			},
			frozenUntil: map[string]int{"/backbone/dense/weights": 3, "/backbone/dense/biases": 1, "/head/dense/weights": 0, "/head/dense/biases": 0},
			groups:      []volt.ParamGroup{{Params: []string{"/backbone/dense/biases"}, LRScale: 2}, {Params: []string{"/backbone/dense/weights"}, LRScale: 0.1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ft := callback.NewFinetuning(callback.FinetuningConfig{Freeze: []string{"/backbone"}, Schedule: tc.schedule})
			log := newWeightLog(t)
			tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 4, Callbacks: []volt.Callback{ft, log}}))
			m := &twoPart{lr: 0.05}
			init := initialWeights(t, tr, m)
			if err := tr.Fit(t.Context(), m, trainOnly()); err != nil {
				t.Fatal(err)
			}
			if len(log.epochs) != 4 {
				t.Fatalf("%d epochs, want 4", len(log.epochs))
			}
			for path, until := range tc.frozenUntil {
				for e := range 4 {
					if got, want := log.trainable[e][path], e >= until; got != want {
						t.Errorf("epoch %d: %s trainable = %v, want %v", e, path, got, want)
					}
					prev := init[path]
					if e > 0 {
						prev = log.epochs[e-1][path]
					}
					if changed := !slices.Equal(log.epochs[e][path], prev); changed != (e >= until) {
						t.Errorf("epoch %d: %s changed = %v, want %v", e, path, changed, e >= until)
					}
				}
			}
			got := tr.Optimizers()[0].Groups
			if len(got) != len(tc.groups) {
				t.Fatalf("parameter groups %v, want %v", got, tc.groups)
			}
			for i := range got {
				if !slices.Equal(got[i].Params, tc.groups[i].Params) || got[i].LRScale != tc.groups[i].LRScale {
					t.Errorf("group %d = %+v, want %+v", i, got[i], tc.groups[i])
				}
			}
		})
	}
}

func TestFinetuningRejectsUnknownScope(t *testing.T) {
	ft := callback.NewFinetuning(callback.FinetuningConfig{Freeze: []string{"/backbne"}})
	_, err := fit(t, quiet(volt.Config{MaxEpochs: 1}), &twoPart{}, trainOnly(), ft)
	if err == nil || !strings.Contains(err.Error(), `Freeze[0] "/backbne" match(es) no variable`) || !strings.Contains(err.Error(), "names are backbone, head") {
		t.Fatalf("Fit error %v, want one naming the scope and the module's scopes", err)
	}
}

// scaleLog records, at every epoch end, the backbone's learning-rate
// multiplier as the callback reports it and as the step reads it.
type scaleLog struct {
	bf       *callback.BackboneFinetuning
	reported []float64
	inStore  []float64
}

func (s *scaleLog) OnTrainEpochEnd(t *volt.Trainer) error {
	s.reported = append(s.reported, s.bf.LRScale())
	v := 0.0
	if sv := t.Store().GetVariable("/volt/optimizer_0/group_0/lr_scale"); sv != nil {
		val, err := sv.Value()
		if err != nil {
			return err
		}
		v = float64(val.Value().(float32))
	}
	s.inStore = append(s.inStore, v)
	return nil
}

func TestBackboneFinetuningScaleSequence(t *testing.T) {
	tests := []struct {
		name string
		cfg  callback.BackboneFinetuningConfig
		want []float64 // multiplier in each of 6 epochs (0: frozen)
	}{
		{"aligned", callback.BackboneFinetuningConfig{UnfreezeAtEpoch: 1, Multiplier: 2}, []float64{0, 0.1, 0.2, 0.4, 0.8, 1}},
		{"not aligned", callback.BackboneFinetuningConfig{UnfreezeAtEpoch: 1, Multiplier: 2, NoAlign: true}, []float64{0, 0.1, 0.2, 0.4, 0.8, 1.6}},
		{"defaults from epoch 3", callback.BackboneFinetuningConfig{UnfreezeAtEpoch: 3}, []float64{0, 0, 0, 0.1, 0.2, 0.4}},
		{"lambda of the epoch", callback.BackboneFinetuningConfig{UnfreezeAtEpoch: 1, Lambda: func(e int) float64 { return float64(e) }}, []float64{0, 0.1, 0.3, 1, 1, 1}},
		{"initial lr", callback.BackboneFinetuningConfig{UnfreezeAtEpoch: 2, InitialLR: 0.005, Multiplier: 3}, []float64{0, 0, 0.5, 1, 1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bf := callback.NewBackboneFinetuning(tc.cfg)
			log, scales := newWeightLog(t), &scaleLog{bf: bf}
			tr, err := fit(t, quiet(volt.Config{MaxEpochs: 6}), &twoPart{}, trainOnly(), bf, log, scales)
			if err != nil {
				t.Fatal(err)
			}
			for e, want := range tc.want {
				if math.Abs(scales.reported[e]-want) > 1e-12 || math.Abs(scales.inStore[e]-want) > 1e-6 {
					t.Errorf("epoch %d: multiplier %v (in the store %v), want %v", e, scales.reported[e], scales.inStore[e], want)
				}
				if got := log.trainable[e]["/backbone/dense/weights"]; got != (want > 0) {
					t.Errorf("epoch %d: backbone trainable = %v, want %v", e, got, want > 0)
				}
			}
			if got := tr.Optimizers()[0].Groups; len(got) != 1 || got[0].Params[0] != "backbone" {
				t.Errorf("parameter groups %+v, want one for /backbone", got)
			}
		})
	}
}

func TestBackboneFinetuningResumeParity(t *testing.T) {
	tests := []struct {
		name    string
		atBatch int64
		when    string
	}{
		{"frozen, mid-epoch", 3, "batch"},
		{"epoch end before the unfreeze", 8, "epoch"},
		{"just unfrozen, mid-epoch", 10, "batch"},
		{"growing, epoch end", 16, "epoch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			volt.SeedEverything(8)
			defer volt.SeedEverything(0)
			path := filepath.Join(t.TempDir(), "ft.ckpt")
			newBF := func() *callback.BackboneFinetuning {
				bf := callback.NewBackboneFinetuning(callback.BackboneFinetuningConfig{UnfreezeAtEpoch: 2, Multiplier: 2})
				return bf
			}
			sv := &stepSaver{path: path, atBatch: tc.atBatch, when: tc.when}
			ub := newBF()
			u, err := fit(t, quiet(volt.Config{MaxEpochs: 5}), &twoPart{}, trainOnly(), ub, sv)
			if err != nil {
				t.Fatal(err)
			}
			if !sv.saved {
				t.Fatal("the checkpoint was not saved")
			}
			volt.SeedEverything(123)
			rb := newBF()
			r := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 5, Callbacks: []volt.Callback{rb}}), &twoPart{}, trainOnly(), volt.FromCheckpoint(path))
			ckptSameWeights(t, ckptWeights(t, u), ckptWeights(t, r))
			if ub.LRScale() != rb.LRScale() {
				t.Errorf("multiplier after the resumed run %v, uninterrupted %v", rb.LRScale(), ub.LRScale())
			}
			if got := r.Optimizers()[0].Groups; len(got) != 1 {
				t.Errorf("resumed run has parameter groups %+v, want one", got)
			}
		})
	}
}
