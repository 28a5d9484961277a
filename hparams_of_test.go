package volt_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// stamp encodes itself: HParamsOf keeps it a value.
type stamp struct{ day int }

func (s stamp) MarshalJSON() ([]byte, error) { return json.Marshal(s.day) }

// TestHParamsOf: the exported fields, keyed as LoadModule reads them
// (snake case or the volt tag), nested structs as maps; unexported fields,
// volt:"-", functions and channels left out.
func TestHParamsOf(t *testing.T) {
	type inner struct {
		Steps  int
		Factor float64 `volt:"start_factor"`
	}
	type mixed struct {
		HiddenSize []int
		LR         float64
		Act        string `volt:"activation"`
		Warmup     inner
		Sched      *inner
		NoSched    *inner
		Day        stamp
		Opts       map[string]int
		Hook       func()
		Done       chan int
		Seen       int `volt:"-"`
		cache      int
	}
	for _, tc := range []struct {
		name string
		m    any
		want map[string]any
	}{
		{"hpNet (its hand-written HParams)", &hpNet{Hidden: 8, LR: 0.1, Activation: "tanh", Warmup: warmup{Steps: 3, Factor: 0.5}, Seen: 9},
			(&hpNet{Hidden: 8, LR: 0.1, Activation: "tanh", Warmup: warmup{Steps: 3, Factor: 0.5}}).HParams()},
		{"every kind of field", mixed{HiddenSize: []int{4, 2}, LR: 1e-3, Act: "relu", Warmup: inner{2, 0.1}, Sched: &inner{5, 1},
			Day: stamp{7}, Opts: map[string]int{"a": 1}, Hook: func() {}, Done: make(chan int), Seen: 1, cache: 2},
			map[string]any{"hidden_size": []int{4, 2}, "lr": 1e-3, "activation": "relu",
				"warmup": map[string]any{"steps": 2, "start_factor": 0.1}, "sched": map[string]any{"steps": 5, "start_factor": 1.0},
				"no_sched": (*inner)(nil), "day": stamp{7}, "opts": map[string]int{"a": 1}}},
		{"a struct without fields", &struct{}{}, map[string]any{}},
		{"a data module embedding data.Datasets: its datasets are not hyper-parameters",
			&struct {
				N int
				data.Datasets
			}{N: 10, Datasets: data.Datasets{Train: make(data.Slice, 10), BatchSize: 32}},
			map[string]any{"n": 10, "datasets": map[string]any{"batch_size": 32, "workers": 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := volt.HParamsOf(tc.m); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("HParamsOf = %#v\nwant %#v", got, tc.want)
			}
		})
	}
	for _, bad := range []any{nil, 3, (*hpNet)(nil), []int{1}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "is not a struct or a non-nil pointer to one") {
					t.Errorf("HParamsOf(%#v): panic %v, want one saying it takes a struct", bad, r)
				}
			}()
			volt.HParamsOf(bad)
		}()
	}
}

// autoNet is hpNet recording its hyper-parameters with HParamsOf.
type autoNet hpNet

func (m *autoNet) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	return (*hpNet)(m).TrainingStep(s, b)
}
func (m *autoNet) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return (*hpNet)(m).PredictStep(s, b)
}
func (m *autoNet) ConfigureOptimizers() volt.Optimizers { return (*hpNet)(m).ConfigureOptimizers() }
func (m *autoNet) HParams() map[string]any              { return volt.HParamsOf(m) }

// TestHParamsOfLoadModule: what HParamsOf records, a checkpoint keeps and
// LoadModule sets back, every field but the volt:"-" one.
func TestHParamsOfLoadModule(t *testing.T) {
	m := &autoNet{Hidden: 6, LR: 0.05, Activation: "tanh", Warmup: warmup{Steps: 4, Factor: 0.25}, Seen: 3}
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1}), m, fixedData())
	path := filepath.Join(t.TempDir(), "auto.ckpt")
	if err := tr.SaveCheckpoint(path, false); err != nil {
		t.Fatal(err)
	}
	got, err := volt.LoadModule(path, &autoNet{Seen: 11})
	if err != nil {
		t.Fatal(err)
	}
	want := *m
	want.Seen = 11
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("LoadModule set %+v, want %+v", *got, want)
	}
}

// embeddedNet embeds hpNet, whose type is unexported: its exported fields
// are promoted (Go's rule, and encoding/json's), so they are hyper-parameters
// of embeddedNet's own, under their own keys, next to Depth.
type embeddedNet struct {
	hpNet
	Depth int
}

func (m *embeddedNet) HParams() map[string]any { return volt.HParamsOf(m) }

// TestHParamsOfEmbeddedUnexportedStruct: the promoted fields of an embedded
// struct of an unexported type are recorded at the top level (they were
// dropped silently), and LoadModule sets them back.
func TestHParamsOfEmbeddedUnexportedStruct(t *testing.T) {
	m := &embeddedNet{hpNet: hpNet{Hidden: 6, LR: 0.05, Activation: "tanh", Warmup: warmup{Steps: 4, Factor: 0.25}, Seen: 3}, Depth: 2}
	want := map[string]any{"hidden": 6, "lr": 0.05, "act": "tanh", "warmup": map[string]any{"steps": 4, "start_factor": 0.25}, "depth": 2}
	if got := volt.HParamsOf(m); !reflect.DeepEqual(got, want) {
		t.Fatalf("HParamsOf = %#v\nwant %#v", got, want)
	}
	tr := testutil.Fit(t, quiet(volt.Config{MaxEpochs: 1}), m, fixedData())
	path := filepath.Join(t.TempDir(), "embedded.ckpt")
	if err := tr.SaveCheckpoint(path, false); err != nil {
		t.Fatal(err)
	}
	got, err := volt.LoadModule(path, &embeddedNet{hpNet: hpNet{Seen: 11}})
	if err != nil {
		t.Fatal(err)
	}
	wantModule := *m
	wantModule.Seen = 11
	if !reflect.DeepEqual(*got, wantModule) {
		t.Errorf("LoadModule set %+v, want %+v", *got, wantModule)
	}
}
