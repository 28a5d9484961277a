package volt_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
)

// The traces of testdata/lightning/loops (record_loops.py there, real
// Lightning 2.2.5) are the facts of issue 21's bugs 3-5; each test below
// runs the traces of one bug in volt and compares them as TestConformance
// does, with no known divergence allowed.

// TestSchedulerFrequencyCountsBatchesOfTheEpoch: a scheduler with a
// frequency steps, as in Lightning, on a batch that steps the optimizer when
// (batch index in the epoch + 1) is a multiple of the frequency (IntervalStep)
// or every frequency-th epoch (IntervalEpoch), plateau schedulers included.
func TestSchedulerFrequencyCountsBatchesOfTheEpoch(t *testing.T) {
	checkLoopTraces(t, "sched_")
}

// TestStopAtTrainEpochStartTrainsNoBatch: a stop requested in
// OnTrainEpochStart (by the module or a callback) ends that epoch before its
// first batch: no batch, no validation, no epoch-interval scheduler step,
// the epoch-end hooks, then the end of Fit; before MinEpochs it waits.
func TestStopAtTrainEpochStartTrainsNoBatch(t *testing.T) {
	checkLoopTraces(t, "stop_at_train_epoch_start_")
}

// TestReloadAsksForLoadersWhenLightningDoes: with
// ReloadDataloadersEveryNEpochs the training loader is asked for before the
// epoch's OnTrainEpochStart, and the validation loaders right before the
// validation run, each when n epochs have passed since it was last asked.
func TestReloadAsksForLoadersWhenLightningDoes(t *testing.T) {
	checkLoopTraces(t, "reload_")
}

// TestLoopTracesAllChecked: every trace of testdata/lightning/loops belongs
// to one of the tests above.
func TestLoopTracesAllChecked(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "lightning", "loops", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces in testdata/lightning/loops: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if !strings.HasPrefix(name, "sched_") && !strings.HasPrefix(name, "stop_at_train_epoch_start_") && !strings.HasPrefix(name, "reload_") {
			t.Errorf("%s: no test compares it (give it one of the prefixes of loops_conformance_test.go)", f)
		}
	}
}

// loopTrace is a trace of record_loops.py: trace_hooks.py's format plus the
// stopping callback and the data module.
type loopTrace struct {
	trace
	StopCallbackAt  *int `json:"stop_callback_at"`
	DataModule      bool `json:"datamodule"`
	TrainBatches    int  `json:"train_batches_per_epoch"` // of 4 examples
	ResumeMaxEpochs *int `json:"resume_max_epochs"`       // stages fit, resume: a new trainer resumes from last.ckpt
}

func checkLoopTraces(t *testing.T, prefix string) {
	t.Helper()
	init, err := loadConformanceData()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "lightning", "loops", prefix+"*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces %s* in testdata/lightning/loops: %v", prefix, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var want loopTrace
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			got, err := runLoopTrace(t, &want, init)
			if err != nil {
				t.Fatal(err)
			}
			if want.ResumeMaxEpochs != nil {
				// Resuming has designed differences in the hooks (see
				// designedDivergences); what is compared is when each run
				// asks for its loaders.
				if d := firstDifference(flat(loaderTimeline(want.Events)), flat(loaderTimeline(got.events))); d != "" {
					t.Errorf("loader requests differ from Lightning's: %s\nlightning %v\nvolt      %v", d, loaderTimeline(want.Events), loaderTimeline(got.events))
				}
				if got.err != nil {
					t.Errorf("volt failed: %v", got.err)
				}
				return
			}
			if want.DataModule {
				// volt asks for every loader when Fit starts (a designed
				// difference, see designedDivergences); the requests compared
				// are those from OnTrainStart on.
				want.Events = afterTrainStart(want.Events)
				got.events = afterTrainStart(got.events)
			}
			if os.Getenv("VOLT_CONFORMANCE_DUMP") != "" {
				dumpHooks(t, &want.trace, got)
			}
			for _, d := range compareTraces(&want.trace, got) {
				t.Errorf("difference from Lightning:\n%s", d)
			}
		})
	}
}

// afterTrainStart drops the data module's requests before the first
// Callback.on_train_start.
func afterTrainStart(events []traceEvent) []traceEvent {
	i := slices.IndexFunc(events, func(e traceEvent) bool { return e.Who == "Callback" && e.Hook == "on_train_start" })
	if i < 0 {
		return events
	}
	out := slices.DeleteFunc(slices.Clone(events[:i]), func(e traceEvent) bool { return e.Who == "DataModule" })
	return append(out, events[i:]...)
}

// loaderTimeline returns, per run (a run starts at the callback's setup),
// the loader requests and the epoch and validation starts from the run's
// OnTrainStart on.
func loaderTimeline(events []traceEvent) [][]string {
	var runs [][]string
	training := false
	for _, e := range events {
		switch {
		case e.Who == "Callback" && e.Hook == "setup":
			runs, training = append(runs, nil), false
		case e.Who == "Callback" && e.Hook == "on_train_start":
			training = true
		case training && (e.Who == "DataModule" || e.Who == "Callback" && (e.Hook == "on_train_epoch_start" || e.Hook == "on_validation_start")):
			runs[len(runs)-1] = append(runs[len(runs)-1], fmt.Sprintf("%s.%s e%d", e.Who, e.Hook, e.Epoch))
		}
	}
	return runs
}

func flat(runs [][]string) []string {
	var out []string
	for i, r := range runs {
		out = append(out, fmt.Sprintf("run %d", i+1))
		out = append(out, r...)
	}
	return out
}

// runLoopTrace runs a record_loops.py scenario in volt.
func runLoopTrace(t *testing.T, want *loopTrace, init *conformanceData) (*voltRun, error) {
	args := map[string]any{}
	reload := 0
	for k, v := range want.Trainer {
		if k == "reload_dataloaders_every_n_epochs" {
			f, _ := v.(float64)
			reload = int(f)
			continue
		}
		args[k] = v
	}
	cfg, err := conformanceConfig(args, t.TempDir())
	if err != nil {
		return nil, err
	}
	cfg.ReloadDataloadersEveryNEpochs = reload
	log := &eventLog{}
	cfg.Callbacks = []volt.Callback{&callbackRecorder{hookRecorder{"Callback", log}}}
	if e := want.StopCallbackAt; e != nil {
		cfg.Callbacks = append(cfg.Callbacks, stopAtEpochStart(*e))
	}
	tr, err := volt.NewTrainer(cfg)
	if err != nil {
		return nil, err
	}
	train := init.Train16
	if n := 4 * want.TrainBatches; n == 20 {
		train = init.Train20
	} else if n != 16 {
		return nil, fmt.Errorf("%d training examples: data.json has 16 or 20", n)
	}
	loaders := volt.Loaders{Train: &data.DataLoader{Dataset: train.slice(), BatchSize: 4},
		Val: []data.Loader{&data.DataLoader{Dataset: init.Val8.slice(), BatchSize: 4}}}
	var dm volt.DataModule = loaders
	if want.DataModule {
		dm = &recordingData{log: log, loaders: loaders}
	}
	var last *callback.ModelCheckpoint
	if want.ResumeMaxEpochs != nil {
		last = callback.NewModelCheckpoint(callback.ModelCheckpointConfig{Dirpath: t.TempDir(), SaveLast: true})
		cfg.Callbacks = append(cfg.Callbacks, last)
		cfg.DisableCheckpointing = false
		if tr, err = volt.NewTrainer(cfg); err != nil {
			return nil, err
		}
	}
	m := &conformanceModule{hookRecorder: hookRecorder{"Model", log}, init: init, args: want.Model}
	run := &voltRun{err: tr.Fit(t.Context(), m, dm)}
	if last != nil && run.err == nil {
		// record_loops.py: a new Trainer and Recorder, the same
		// ModelCheckpoint, module and data, resuming from last.ckpt.
		cfg.MaxEpochs = *want.ResumeMaxEpochs
		cfg.Callbacks = []volt.Callback{&callbackRecorder{hookRecorder{"Callback", log}}, last}
		if tr, err = volt.NewTrainer(cfg); err != nil {
			return nil, err
		}
		run.err = tr.Fit(t.Context(), m, dm, volt.FromCheckpoint(filepath.Join(last.Dirpath(), "last.ckpt")))
	}
	run.events, run.epoch, run.globalStep, run.shouldStop = log.events, tr.CurrentEpoch(), tr.GlobalStep(), tr.ShouldStop()
	return run, nil
}

// stopAtEpochStart is record_loops.py's StopAtEpochStart: a callback that
// requests a stop in OnTrainEpochStart of one epoch.
type stopAtEpochStart int

func (e stopAtEpochStart) OnTrainEpochStart(t *volt.Trainer) error {
	if t.CurrentEpoch() == int(e) {
		t.Stop("conformance: a callback requested a stop at the epoch's start")
	}
	return nil
}

// recordingData is record_loops.py's RecordingData: it gives the scenario's
// loaders and records each request as a "DataModule" event.
type recordingData struct {
	log     *eventLog
	loaders volt.Loaders
}

func (d *recordingData) TrainDataloader() data.Loader {
	d.log.add("DataModule", "TrainDataloader", -1, "")
	return d.loaders.Train
}

func (d *recordingData) ValDataloaders() []data.Loader {
	d.log.add("DataModule", "ValDataloader", -1, "")
	return d.loaders.Val
}
