package volt_test

import (
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/testutil"
)

// tracer records which batches each loop ran: "T<epoch>:<batch>" for
// training, "V<epoch>:<batch>:<loader>" for validation ("S…" in the sanity
// check), "X…" for test, and the global step after each training batch.
type tracer struct {
	events []string
	first  []float32 // first input value of each training batch
}

func (r *tracer) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, b *data.Batch, i int) error {
	r.events = append(r.events, fmt.Sprintf("T%d:%d@%d", t.CurrentEpoch(), i, t.GlobalStep()))
	r.first = append(r.first, tensors.MustCopyFlatData[float32](b.Inputs[0])[0])
	return nil
}

func (r *tracer) OnValidationBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i, dl int) error {
	kind := "V"
	if t.State().Stage == volt.RunningSanityCheck {
		kind = "S"
	}
	r.events = append(r.events, fmt.Sprintf("%s%d:%d:%d", kind, t.CurrentEpoch(), i, dl))
	return nil
}

func (r *tracer) OnTestBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i, dl int) error {
	r.events = append(r.events, fmt.Sprintf("X%d:%d", i, dl))
	return nil
}

// seq builds an event list from a compact description.
func seq(parts ...string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, strings.Fields(p)...)
	}
	return out
}

// iterable yields n examples with no known length.
type iterable struct{ n int }

func (it iterable) Iter(epoch int) iter.Seq2[data.Example, error] {
	ds := regression(it.n, 3)
	return func(yield func(data.Example, error) bool) {
		for _, e := range ds {
			if !yield(e, nil) {
				return
			}
		}
	}
}

// loopData: 4 training batches of 4, 2 validation batches of 4.
func loopData() volt.Loaders {
	return volt.Loaders{
		Train: &data.DataLoader{Dataset: regression(16, 1), BatchSize: 4, Shuffle: true},
		Val:   []data.Loader{&data.DataLoader{Dataset: regression(8, 2), BatchSize: 4}},
		Test:  []data.Loader{&data.DataLoader{Dataset: regression(8, 2), BatchSize: 4}},
	}
}

func TestLoopControl(t *testing.T) {
	const sanity = "S0:0:0 S0:1:0 "
	const val0, val1 = " V0:0:0 V0:1:0 ", " V1:0:0 V1:1:0 "
	tests := []struct {
		name string
		cfg  volt.Config
		dm   func() volt.Loaders
		want []string
	}{
		{"default", volt.Config{MaxEpochs: 2}, loopData,
			seq(sanity, "T0:0@1 T0:1@2 T0:2@3 T0:3@4", val0, "T1:0@5 T1:1@6 T1:2@7 T1:3@8", val1)},
		{"limit train count", volt.Config{MaxEpochs: 2, LimitTrainBatches: volt.Batches(2)}, loopData,
			seq(sanity, "T0:0@1 T0:1@2", val0, "T1:0@3 T1:1@4", val1)},
		{"limit train fraction", volt.Config{MaxEpochs: 1, LimitTrainBatches: volt.Fraction(0.75)}, loopData,
			seq(sanity, "T0:0@1 T0:1@2 T0:2@3", val0)},
		{"training off", volt.Config{MaxEpochs: 2, LimitTrainBatches: volt.Batches(0)}, loopData,
			seq(sanity)},
		{"limit val", volt.Config{MaxEpochs: 1, LimitValBatches: volt.Batches(1)}, loopData,
			seq("S0:0:0 T0:0@1 T0:1@2 T0:2@3 T0:3@4 V0:0:0")},
		{"validation off", volt.Config{MaxEpochs: 1, LimitValBatches: volt.Batches(0)}, loopData,
			seq("T0:0@1 T0:1@2 T0:2@3 T0:3@4")},
		{"val every half epoch", volt.Config{MaxEpochs: 1, ValCheckInterval: volt.Fraction(0.5), NumSanityValSteps: volt.Ptr(0)}, loopData,
			seq("T0:0@1 T0:1@2", val0, "T0:2@3 T0:3@4", val0)},
		{"val every 3 batches", volt.Config{MaxEpochs: 2, ValCheckInterval: volt.Batches(3), NumSanityValSteps: volt.Ptr(0)}, loopData,
			seq("T0:0@1 T0:1@2 T0:2@3", val0, "T0:3@4 T1:0@5 T1:1@6 T1:2@7", val1, "T1:3@8")},
		{"val across epochs", volt.Config{MaxEpochs: 2, ValCheckInterval: volt.AcrossEpochs(3), NumSanityValSteps: volt.Ptr(0)}, loopData,
			seq("T0:0@1 T0:1@2 T0:2@3", val0, "T0:3@4 T1:0@5 T1:1@6", val1, "T1:2@7 T1:3@8")},
		{"accumulation defers validation to the window's end", volt.Config{MaxEpochs: 1, AccumulateGradBatches: 3, ValCheckInterval: volt.Batches(2), NumSanityValSteps: volt.Ptr(0)}, loopData,
			seq("T0:0@0 T0:1@0 T0:2@1", val0, "T0:3@2", val0)},
		{"validation by wall-clock time", volt.Config{MaxEpochs: 1, ValCheckInterval: volt.Every(time.Nanosecond), NumSanityValSteps: volt.Ptr(0)}, loopData,
			seq("T0:0@1", val0, "T0:1@2", val0, "T0:2@3", val0, "T0:3@4", val0)},
		{"every second epoch", volt.Config{MaxEpochs: 2, CheckValEveryNEpoch: 2, NumSanityValSteps: volt.Ptr(0)}, loopData,
			seq("T0:0@1 T0:1@2 T0:2@3 T0:3@4 T1:0@5 T1:1@6 T1:2@7 T1:3@8", val1)},
		{"sanity all", volt.Config{MaxEpochs: 1, NumSanityValSteps: volt.Ptr(-1), LimitTrainBatches: volt.Batches(1)}, loopData,
			seq(sanity, "T0:0@1", val0)},
		{"fast dev run", volt.Config{MaxEpochs: 5, FastDevRun: 2}, loopData,
			seq("T0:0@1 T0:1@2 V0:0:0 V0:1:0")},
		{"iterable with step-based validation", volt.Config{MaxEpochs: 1, ValCheckInterval: volt.Batches(2), NumSanityValSteps: volt.Ptr(0)},
			func() volt.Loaders {
				dm := loopData()
				dm.Train = &data.DataLoader{Iterable: iterable{n: 14}, BatchSize: 4}
				return dm
			},
			seq("T0:0@1 T0:1@2", val0, "T0:2@3 T0:3@4", val0)},
		{"iterable validates at its end", volt.Config{MaxEpochs: 1, NumSanityValSteps: volt.Ptr(0)},
			func() volt.Loaders {
				dm := loopData()
				dm.Train = &data.DataLoader{Iterable: iterable{n: 10}, BatchSize: 4}
				return dm
			},
			seq("T0:0@1 T0:1@2 T0:2@3", val0)},
		{"MinEpochs keeps training after a stop request", volt.Config{MaxEpochs: 5, MinEpochs: 2, NumSanityValSteps: volt.Ptr(0), LimitValBatches: volt.Batches(0), LimitTrainBatches: volt.Batches(1), Callbacks: []volt.Callback{stopAt{0}}}, loopData,
			seq("T0:0@1 T1:0@2")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &tracer{}
			cfg := tc.cfg
			cfg.Callbacks = append(cfg.Callbacks, tr)
			fitBoring(t, cfg, tc.dm(), &boring{})
			if !slices.Equal(tr.events, tc.want) {
				t.Errorf("ran\n %v\nwant\n %v", tr.events, tc.want)
			}
		})
	}
}

func TestOverfitBatches(t *testing.T) {
	tr := &tracer{}
	fitBoring(t, volt.Config{MaxEpochs: 3, OverfitBatches: volt.Batches(2), NumSanityValSteps: volt.Ptr(0), Callbacks: []volt.Callback{tr}}, loopData(), &boring{})
	// The same two unshuffled batches every epoch, validated on themselves.
	want := seq("T0:0@1 T0:1@2 V0:0:0 V0:1:0 T1:0@3 T1:1@4 V1:0:0 V1:1:0 T2:0@5 T2:1@6 V2:0:0 V2:1:0")
	if !slices.Equal(tr.events, want) {
		t.Errorf("ran %v, want %v", tr.events, want)
	}
	ds := regression(16, 1)
	first := []float32{ds[0].Inputs[0].Value.([]float32)[0], ds[4].Inputs[0].Value.([]float32)[0]}
	for e := range 3 {
		if got := tr.first[2*e : 2*e+2]; !slices.Equal(got, first) {
			t.Errorf("epoch %d trained on batches starting %v, want the first two unshuffled %v", e, got, first)
		}
	}
}

func TestLoopControlErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  volt.Config
		want []string
	}{
		{"fraction above 1", volt.Config{LimitTrainBatches: volt.Fraction(1.5)}, []string{"Config.LimitTrainBatches: volt.Fraction must be in [0, 1], got 1.5"}},
		{"val fraction 0", volt.Config{ValCheckInterval: volt.Fraction(0)}, []string{"Config.ValCheckInterval: volt.Fraction must be in (0, 1], got 0"}},
		{"across epochs with every n epochs", volt.Config{ValCheckInterval: volt.AcrossEpochs(10), CheckValEveryNEpoch: 2}, []string{"Config.ValCheckInterval=AcrossEpochs(10)", "Config.CheckValEveryNEpoch=2"}},
		{"overfit and limit", volt.Config{OverfitBatches: volt.Batches(2), LimitTrainBatches: volt.Batches(3)}, []string{"Config.OverfitBatches and Config.LimitTrainBatches"}},
		{"negative fast dev run", volt.Config{FastDevRun: -1}, []string{"Config.FastDevRun"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := volt.NewTrainer(tc.cfg)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("NewTrainer error = %v, want it to contain %q", err, w)
				}
			}
		})
	}
	// Known only at Fit: the interval against the epoch's length.
	tr := testutil.NewTrainer(t, quiet(volt.Config{ValCheckInterval: volt.Batches(10)}))
	err := tr.Fit(t.Context(), &boring{}, loopData())
	if err == nil || !strings.Contains(err.Error(), "Config.ValCheckInterval=Batches(10) is larger than the training epoch (4 batches) while Config.CheckValEveryNEpoch=1") {
		t.Errorf("Fit error = %v", err)
	}
	tr = testutil.NewTrainer(t, quiet(volt.Config{LimitTrainBatches: volt.Fraction(0.1)}))
	err = tr.Fit(t.Context(), &boring{}, loopData())
	if err == nil || !strings.Contains(err.Error(), "Config.LimitTrainBatches: Fraction(0.1) of 4 batches is less than one batch") {
		t.Errorf("Fit error = %v", err)
	}
}

func TestSanityCheckDoesNotChangeTraining(t *testing.T) {
	with := fitBoring(t, volt.Config{MaxEpochs: 2, NumSanityValSteps: volt.Ptr(-1)}, loopData(), &boring{})
	without := fitBoring(t, volt.Config{MaxEpochs: 2, NumSanityValSteps: volt.Ptr(0)}, loopData(), &boring{})
	if !equalWeights(weights(t, with), weights(t, without)) {
		t.Error("the sanity check changed the trained weights")
	}
}

// reloading counts how often its loaders are asked for.
type reloading struct {
	volt.Loaders
	calls int
}

func (r *reloading) TrainDataloader() data.Loader { r.calls++; return r.Loaders.Train }

func TestReloadDataloaders(t *testing.T) {
	dm := &reloading{Loaders: loopData()}
	volt.SeedEverything(3)
	defer volt.SeedEverything(0)
	testutil.Fit(t, quiet(volt.Config{MaxEpochs: 5, ReloadDataloadersEveryNEpochs: 2}), &boring{}, dm)
	// At the start, then before epochs 2 and 4.
	if dm.calls != 3 {
		t.Errorf("TrainDataloader called %d times, want 3", dm.calls)
	}
}

// parts trains on two combined loaders and checks that the parts arrive.
type parts struct {
	boring
	seen []string
}

func (m *parts) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	a, okA := b.Part("a")
	c, okC := b.Part("c")
	m.seen = append(m.seen, fmt.Sprintf("%v%v", okA, okC))
	if !okA || !okC {
		panic("a part is missing")
	}
	return graph.Add(m.boring.TrainingStep(s, a), graph.MulScalar(graph.ReduceAllSum(c.Input(0)), 0))
}

func TestSeveralTrainingLoaders(t *testing.T) {
	tr := &tracer{}
	combined := &data.CombinedLoader{
		Loaders: []data.Loader{
			&data.DataLoader{Dataset: regression(16, 1), BatchSize: 4},
			&data.DataLoader{Dataset: regression(8, 2), BatchSize: 4},
		},
		Names: []string{"a", "c"},
		Mode:  data.MaxSizeCycle,
	}
	m := &parts{}
	fitBoring(t, volt.Config{MaxEpochs: 1, Callbacks: []volt.Callback{tr}}, volt.Loaders{Train: combined}, m)
	if want := seq("T0:0@1 T0:1@2 T0:2@3 T0:3@4"); !slices.Equal(tr.events, want) {
		t.Errorf("ran %v, want %v", tr.events, want)
	}
}

func TestEvaluationLimits(t *testing.T) {
	tr := &tracer{}
	cfg := quiet(volt.Config{MaxEpochs: 1, LimitTestBatches: volt.Batches(1), LimitPredictBatches: volt.Fraction(0.5), Callbacks: []volt.Callback{tr}})
	trainer := testutil.NewTrainer(t, cfg)
	dm := loopData()
	dm.Test = append(dm.Test, dm.Test[0])
	dm.Predict = []data.Loader{&data.DataLoader{Dataset: regression(16, 2), BatchSize: 4}}
	if _, err := trainer.Test(t.Context(), &boring{}, dm); err != nil {
		t.Fatal(err)
	}
	if want := seq("X0:0 X0:1"); !slices.Equal(tr.events, want) {
		t.Errorf("test ran %v, want %v (one batch per loader)", tr.events, want)
	}
	preds, err := trainer.Predict(t.Context(), &boring{}, dm)
	if err != nil {
		t.Fatal(err)
	}
	if len(preds[0]) != 2 {
		t.Errorf("Predict ran %d batches, want 2 (half of 4)", len(preds[0]))
	}
}

// failingIterable yields ok examples, then an error.
type failingIterable struct{ ok int }

func (f failingIterable) Iter(epoch int) iter.Seq2[data.Example, error] {
	return func(yield func(data.Example, error) bool) {
		for e, err := range (iterable{f.ok}).Iter(epoch) {
			if !yield(e, err) {
				return
			}
		}
		yield(data.Example{}, fmt.Errorf("disk on fire"))
	}
}

// The training loop reads one batch ahead; an error in that batch must end
// Fit with the loader's error, after the batches before it ran.
func TestTrainingLoaderErrorAfterFirstBatch(t *testing.T) {
	tr := testutil.NewTrainer(t, quiet(volt.Config{MaxEpochs: 1}))
	dm := volt.Loaders{Train: &data.DataLoader{Iterable: failingIterable{ok: 8}, BatchSize: 4}}
	err := tr.Fit(t.Context(), &boring{}, dm)
	if err == nil || !strings.Contains(err.Error(), "training loader, epoch 0, batch 2: ") || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Fit error = %v, want the loader's error at batch 2", err)
	}
	if tr.GlobalStep() != 2 {
		t.Errorf("global step %d, want the 2 batches before the error", tr.GlobalStep())
	}
}
