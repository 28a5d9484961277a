package volt_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/logger"
)

// TestConformanceGenerated runs the generated scenarios of
// testdata/lightning/generated (gen_scenarios.py draws each one from its
// seed: limits, validation cadence, sanity steps, epochs and steps,
// accumulation and its scheduler, clipping, the optimizer (SGD with
// momentum, dampening, Nesterov and weight decay, Adam, AdamW, RMSprop) and
// every scheduler volt has with its options, EarlyStopping and
// ModelCheckpoint options (EarlyStopping's check_finite on a logged value
// that turns NaN or infinite), two optimizers with frequencies, manual
// optimization, a stop or failure in a random hook, values logged with
// every option from steps, module hooks and callbacks (often monitored),
// partial last batches, drop_last and unequal loaders, several validation
// loaders, reloading, fast_dev_run, overfit_batches, any sequence of
// Fit/Validate/Test/Predict on one Trainer and a resume, as a restarted
// process, from any checkpoint the run saved; version 6: prog_bar,
// on_step=True or on_epoch=False where Lightning refuses them, a OneCycleLR
// stepped past its total_steps, a training loader over a seeded
// RandomSampler) in volt and compares them with real Lightning 2.2.5 as
// TestConformance does, plus the rows the loggers received, the final
// weights, each stage's results (Validate's and Test's metrics, Predict's
// outputs) and the callback and progress bar metrics after it.
//
// Every difference is either fixed or a designed class (a normalization,
// a refusal or a whole-scenario rule) naming the line of
// docs/from-lightning.md that tells users. A class that explains none of
// the fixed set's scenarios fails the test too.
func TestConformanceGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs 1,000 generated scenarios (about 1.5 minutes on 2 cores)")
	}
	traces, source := generatedTraces(t)
	init, err := loadConformanceData()
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile(filepath.Join("docs", "from-lightning.md"))
	if err != nil {
		t.Fatal(err)
	}
	var classes []divergenceClass
	for _, n := range designedNormalizations {
		classes = append(classes, n.class)
	}
	for _, r := range designedRefusals {
		classes = append(classes, r.class)
	}
	for _, r := range designedScenarios {
		classes = append(classes, r.class)
	}
	classes = append(classes, divergenceClass{ID: "metrics-at-failure", Guide: "holds every value logged until the failure"},
		divergenceClass{ID: "stop-per-run", Guide: "starts with no stop request"},
		divergenceClass{ID: "resent-rows", Guide: "is followed by that step's/epoch's row, which the resumed run sends"})
	for _, c := range classes {
		if c.Guide != "" && !strings.Contains(string(guide), c.Guide) {
			t.Errorf("divergence class %s: docs/from-lightning.md has no line containing %q", c.ID, c.Guide)
		}
	}
	counts, everyCounts := map[string]int{}, map[string]int{}
	exploring := os.Getenv("VOLT_GENERATED_SEEDS") != ""
	normalizationsUsed = map[string]int{}
	defer func() { normalizationsUsed = nil }()
	for _, want := range traces {
		name := fmt.Sprintf("seed_%d", want.Spec.Seed)
		ok := t.Run(name, func(t *testing.T) {
			if class := compareScenario(t, &want, init, nil); !t.Failed() {
				counts[class]++
				if exploring && class != "identical" {
					t.Logf("%s", class) // which seeds a class explains, for foundSeeds
				}
			}
		})
		if !ok {
			counts["failing"]++
		}
		// Every(d) is training time, which Lightning 2.2.5 has no form of;
		// Every(1ns) validates after every batch, so it must give what
		// Lightning gives for val_check_interval=1.
		if validatesEveryBatch(want.Spec) {
			ok := t.Run(name+"_every_1ns", func(t *testing.T) {
				if class := compareScenario(t, &want, init, volt.Every(time.Nanosecond)); !t.Failed() {
					everyCounts[class]++
				}
			})
			if !ok {
				everyCounts["failing"]++
			}
		}
	}
	t.Logf("%d generated scenarios from %s: %v; designed differences normalized away (scenarios): %v", len(traces), source, counts, normalizationsUsed)
	t.Logf("of those with val_check_interval=1, run again with ValCheckInterval Every(1ns): %v", everyCounts)
	if len(everyCounts) == 0 && !exploring {
		t.Error("no scenario has val_check_interval=1: the Every(1ns) comparison ran on none")
	}
	// Over the whole fixed set, a designed class that explains no scenario
	// is stale: the difference it states is gone (remove it, and its guide
	// line if volt now matches Lightning) or the rule no longer matches it.
	total := 0
	for _, n := range counts {
		total += n
	}
	if total == len(traces) && !exploring {
		for _, c := range classes[:len(classes)-2] { // the last two are checked inline
			if counts["designed: "+c.ID] == 0 && normalizationsUsed[c.ID] == 0 {
				t.Errorf("designed class %s explains none of the %d scenarios: remove it or fix its rule", c.ID, len(traces))
			}
		}
	}
}

// compareScenario runs a generated scenario in volt (with valCheckInterval
// instead of the spec's, if not nil) and compares it with Lightning's trace:
// every difference is a test error unless a designed class explains it. It
// returns the scenario's class: "identical" or "designed: <ID>".
func compareScenario(t *testing.T, want *generatedTrace, init *conformanceData, valCheckInterval volt.ValInterval) (class string) {
	class = "identical"
	got, err := runGeneratedScenario(t, want, init, valCheckInterval)
	if err != nil {
		t.Fatalf("spec %s: %v", specJSON(want.Spec), err)
	}
	for _, r := range designedRefusals {
		if r.applies(want.Spec) {
			if got.built {
				t.Errorf("designed refusal %s: volt accepted the Config; remove it from designedRefusals or refuse again", r.class.ID)
			}
			class = "designed: " + r.class.ID
			return
		}
	}
	diffs := compareGenerated(want, got)
	if os.Getenv("VOLT_CONFORMANCE_DUMP") != "" {
		dumpHooks(t, &trace{Events: want.Events}, &got.voltRun)
	}
	for _, r := range designedScenarios {
		if !r.applies(want) || len(diffs) == 0 {
			continue
		}
		if r.aspects == nil {
			class = "designed: " + r.class.ID
			return
		}
		for _, a := range r.aspects {
			if _, ok := diffs[a]; ok {
				delete(diffs, a)
				class = "designed: " + r.class.ID
			}
		}
	}
	for aspect, d := range diffs {
		t.Errorf("new difference from Lightning in %s (fix it, or add a designed class with its guide line):\n%s\nspec %s", aspect, d, specJSON(want.Spec))
	}
	return class
}

// validatesEveryBatch reports whether a spec validates after every training
// batch: an integer val_check_interval of 1.
func validatesEveryBatch(sp genSpec) bool {
	v, ok := sp.Trainer["val_check_interval"]
	if !ok {
		return false
	}
	f, isInt, err := number(v)
	return err == nil && isInt && f == 1
}

// genSpec is gen_scenarios.py's spec(seed).
type genSpec struct {
	Seed             int            `json:"seed"`
	GeneratorVersion int            `json:"generator_version"`
	NTrain           int            `json:"n_train"`
	NValLoaders      int            `json:"n_val_loaders"`
	Trainer          map[string]any `json:"trainer"` // Lightning Trainer arguments; numbers are json.Number
	Model            struct {
		LogTrainEpoch bool          `json:"log_train_epoch"`
		Stop          *genAction    `json:"stop"`
		Fail          *genAction    `json:"fail"`
		Guard         *genGuard     `json:"guard"`
		TwoOptimizers []int         `json:"two_optimizers"` // their frequencies (unused in manual optimization)
		EpochEnd      *genEpochEnd  `json:"epoch_end"`
		Optimizer     *genOptimizer `json:"optimizer"`
		Scheduler     *genScheduler `json:"scheduler"`
		Logs          []genLog      `json:"logs"`
		Manual        bool          `json:"manual"`
	} `json:"model"`
	Callbacks struct {
		EarlyStopping         map[string]any `json:"early_stopping"`
		Checkpoint            map[string]any `json:"checkpoint"`
		AccumulationScheduler map[string]int `json:"accumulation_scheduler"`
	} `json:"callbacks"`
	Data            *genData `json:"data"`
	Stages          []string `json:"stages"`
	ResumeMaxEpochs int      `json:"resume_max_epochs"`
	// ResumeFrom is the checkpoint a "resume" stage starts from: "last", or
	// {"save": f}, the save at fraction f of the first run's saves that
	// left a file of their own (resumeCandidates).
	ResumeFrom any `json:"resume_from"`
	// ShuffleSeed (version 6): the training loader reads its examples
	// through a RandomSampler with a generator of this seed.
	ShuffleSeed *uint64 `json:"shuffle_seed"`
}

// genData is a spec's "data": the first NTrain rows of the 20 training
// examples in batches of Batch (the short last one dropped with DropLast),
// and one validation loader per entry of Val with that many of the 8
// validation examples, in batches of ValBatch.
type genData struct {
	NTrain   int   `json:"n_train"`
	Batch    int   `json:"batch"`
	DropLast bool  `json:"drop_last"`
	Val      []int `json:"val"`
	ValBatch int   `json:"val_batch"`
}

// trainBatches is the number of training batches per epoch before limits.
func (sp genSpec) trainBatches() int {
	n, b, drop := sp.NTrain, 4, false
	if d := sp.Data; d != nil {
		n, b, drop = d.NTrain, d.Batch, d.DropLast
	}
	if drop {
		return n / b
	}
	return (n + b - 1) / b
}

// valBatches is the number of batches of each validation loader before
// limits.
func (sp genSpec) valBatches() []int {
	if d := sp.Data; d != nil {
		out := make([]int, len(d.Val))
		for i, n := range d.Val {
			out[i] = (n + d.ValBatch - 1) / d.ValBatch
		}
		return out
	}
	out := make([]int, max(sp.NValLoaders, 1))
	for i := range out {
		out[i] = 2 // 8 examples in batches of 4
	}
	return out
}

// resumeSave is the fraction of a {"save": f} ResumeFrom, and whether it is one.
func (sp genSpec) resumeSave() (float64, bool) {
	m, ok := sp.ResumeFrom.(map[string]any)
	if !ok {
		return 0, false
	}
	f, ok := anyFloat(m, "save")
	return f, ok
}

// genAction is a stop or failure the module requests in a hook (Lightning's
// name) at an epoch and, for batch hooks, a batch.
type genAction struct {
	Hook  string `json:"hook"`
	Epoch int    `json:"epoch"`
	Batch *int   `json:"batch"`
	By    string `json:"by"` // "module" (or "") or "callback"
}

// genGuard is a value the module logs as "guard" at each validation's epoch
// end (not in the sanity check): Values[epoch] (the last one from epoch 7),
// but NaN or ±infinity (NonFinite: "nan", "inf", "-inf") in NonFiniteEpoch.
type genGuard struct {
	Values         []float64 `json:"values"`
	NonFiniteEpoch int       `json:"nonfinite_epoch"`
	NonFinite      string    `json:"nonfinite"`
}

// genEpochEnd is a value the module (By "module") or the actor callback
// (By "callback") logs as "epoch_end" in OnTrainEpochEnd: Values[epoch]
// (the last one from epoch 7).
type genEpochEnd struct {
	By     string    `json:"by"`
	Values []float64 `json:"values"`
}

// log logs the epoch's value when by is the spec's logger.
func (e *genEpochEnd) log(t *volt.Trainer, by string) {
	if e != nil && e.By == by {
		t.Log("epoch_end", e.Values[min(t.CurrentEpoch(), len(e.Values)-1)])
	}
}

// at is the guard's value in an epoch.
func (g *genGuard) at(epoch int) float64 {
	if epoch == g.NonFiniteEpoch {
		v, err := strconv.ParseFloat(g.NonFinite, 64)
		if err != nil {
			panic(fmt.Sprintf("generated spec: guard nonfinite %q: %v", g.NonFinite, err))
		}
		return v
	}
	return g.Values[min(epoch, len(g.Values)-1)]
}

func specJSON(s genSpec) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// number reads a Trainer argument: its value and whether it was written as
// an integer (Lightning reads 1 and 1.0 differently).
func number(v any) (f float64, isInt bool, err error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false, fmt.Errorf("want a number, got %v", v)
	}
	f, err = n.Float64()
	return f, !strings.ContainsAny(n.String(), ".eE"), err
}

func genLimit(v any) (volt.BatchLimit, error) {
	f, isInt, err := number(v)
	if err != nil {
		return nil, err
	}
	if isInt {
		return volt.Batches(int(f)), nil
	}
	return volt.Fraction(f), nil
}

// genConfig maps a spec's Lightning Trainer arguments to a volt Config.
func genConfig(sp genSpec, root string) (volt.Config, error) {
	cfg := volt.Config{MaxEpochs: 2, DisableModelSummary: true, DisableCheckpointing: true,
		DefaultRootDir: root, Log: slog.New(slog.DiscardHandler), NumSanityValSteps: volt.Ptr(2)}
	args := sp.Trainer
	_, perEpoch := args["check_val_every_n_epoch"]
	acrossEpochs := perEpoch && args["check_val_every_n_epoch"] == nil
	for _, k := range mapsKeys(args) {
		v := args[k]
		var err error
		var f float64
		var isInt bool
		switch k {
		case "gradient_clip_algorithm":
			cfg.GradientClipAlgorithm = volt.ClipAlgorithm(fmt.Sprint(v))
			continue
		case "check_val_every_n_epoch":
			if v == nil {
				continue
			}
		case "limit_train_batches":
			cfg.LimitTrainBatches, err = genLimit(v)
		case "limit_val_batches":
			cfg.LimitValBatches, err = genLimit(v)
		case "overfit_batches":
			cfg.OverfitBatches, err = genLimit(v)
		}
		if err != nil {
			return cfg, fmt.Errorf("trainer argument %s: %w", k, err)
		}
		if f, isInt, err = number(v); err != nil {
			return cfg, fmt.Errorf("trainer argument %s: %w", k, err)
		}
		n := int(f)
		switch k {
		case "limit_train_batches", "limit_val_batches", "overfit_batches":
		case "max_epochs":
			cfg.MaxEpochs = n
		case "min_epochs":
			cfg.MinEpochs = n
		case "max_steps":
			cfg.MaxSteps = int64(n)
		case "min_steps":
			cfg.MinSteps = int64(n)
		case "num_sanity_val_steps":
			cfg.NumSanityValSteps = volt.Ptr(n)
		case "accumulate_grad_batches":
			cfg.AccumulateGradBatches = n
		case "check_val_every_n_epoch":
			cfg.CheckValEveryNEpoch = n
		case "gradient_clip_val":
			cfg.GradientClipVal = f
		case "log_every_n_steps":
			cfg.LogEveryNSteps = n
		case "reload_dataloaders_every_n_epochs":
			cfg.ReloadDataloadersEveryNEpochs = n
		case "fast_dev_run":
			cfg.FastDevRun = n
		case "val_check_interval":
			switch {
			case !isInt:
				cfg.ValCheckInterval = volt.Fraction(f)
			case acrossEpochs:
				cfg.ValCheckInterval = volt.AcrossEpochs(n)
			default:
				cfg.ValCheckInterval = volt.Batches(n)
			}
		default:
			return cfg, fmt.Errorf("trainer argument %s: not mapped to volt.Config in genConfig", k)
		}
	}
	return cfg, nil
}

func mapsKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// loggerSpy is gen_scenarios.py's SpyLogger: every row the trainer sends,
// with the number of events recorded before it (at).
type loggerSpy struct {
	log  *eventLog
	rows []loggedRow
	at   []int
}

func (l *loggerSpy) LogMetrics(m map[string]float64, step int64) error {
	row := loggedRow{Step: step, Metrics: make(map[string]float64, len(m))}
	for k, v := range m {
		row.Metrics[k] = v
	}
	l.rows = append(l.rows, row)
	l.at = append(l.at, len(l.log.events))
	return nil
}

// sentAfter returns the rows sent after the event at index save and before
// the next event that starts a batch, an epoch, a validation or the end of
// training: the rows a checkpoint saved there comes before.
func (l *loggerSpy) sentAfter(save int) []loggedRow {
	next := len(l.log.events)
	for i := save + 1; i < len(l.log.events); i++ {
		e := l.log.events[i]
		if e.Who == "Callback" && slices.Contains([]string{"on_train_batch_start", "on_train_epoch_start", "on_validation_start", "on_train_end", "teardown"}, e.Hook) {
			next = i
			break
		}
	}
	var out []loggedRow
	for i, at := range l.at {
		if at > save && at <= next {
			out = append(out, l.rows[i])
		}
	}
	return out
}

func (l *loggerSpy) LogHyperparams(map[string]any) error { return nil }
func (l *loggerSpy) Save() error                         { return nil }
func (l *loggerSpy) Finalize(string) error               { return nil }

var _ logger.Logger = (*loggerSpy)(nil)

func anyString(m map[string]any, k string) string {
	if v, ok := m[k].(string); ok {
		return v
	}
	return ""
}

func anyFloat(m map[string]any, k string) (float64, bool) {
	v, ok := m[k]
	if !ok || v == nil {
		return 0, false
	}
	f, _, err := number(v)
	return f, err == nil
}

func anyInt(m map[string]any, k string) int {
	f, _ := anyFloat(m, k)
	return int(f)
}

// genCallbacks builds the spec's callbacks in gen_scenarios.py's order
// (Lightning's, checkpointing last): actor, monitor spy, accumulation
// scheduler, early stopping, checkpoint (saving in ckptDir).
//
// With monitorsAtTrainEpochEnd set, EarlyStopping and ModelCheckpoint get
// Lightning's inferred check_on_train_epoch_end and save_on_train_epoch_end
// for val_check_interval=1 (true where check_val_every_n_epoch is 1) unless
// the spec sets them: Lightning infers them from val_check_interval == 1.0,
// which an integer 1 equals, and the Every(1ns) run that stands for that
// cadence does not.
func genCallbacks(sp genSpec, log *eventLog, monitorsAtTrainEpochEnd bool, ckptDir string) ([]volt.Callback, *checkpointSpy, error) {
	checkValEvery, set := sp.Trainer["check_val_every_n_epoch"]
	inferred := !set || checkValEvery != nil && anyInt(sp.Trainer, "check_val_every_n_epoch") == 1
	cbs := []volt.Callback{&genActor{stop: sp.Model.Stop, fail: sp.Model.Fail, epochEnd: sp.Model.EpochEnd, logs: sp.Model.Logs}, &monitorSpy{log}}
	if s := sp.Callbacks.AccumulationScheduler; s != nil {
		sched := map[int]int{}
		for k, v := range s {
			var e int
			if _, err := fmt.Sscan(k, &e); err != nil {
				return nil, nil, fmt.Errorf("accumulation_scheduler key %q: %w", k, err)
			}
			sched[e] = v
		}
		c := callback.NewGradientAccumulationScheduler(callback.GradientAccumulationSchedulerConfig{Scheduling: sched})
		cbs = append(cbs, c)
	}
	if es := sp.Callbacks.EarlyStopping; es != nil {
		// Lightning's patience 0 stops at the first check without
		// improvement, as 1 does; volt's 0 means the default 3.
		cfg := callback.EarlyStoppingConfig{Monitor: anyString(es, "monitor"), Patience: max(anyInt(es, "patience"), 1), Mode: anyString(es, "mode")}
		cfg.MinDelta, _ = anyFloat(es, "min_delta")
		if v, ok := anyFloat(es, "stopping_threshold"); ok {
			cfg.StoppingThreshold = &v
		}
		if v, ok := anyFloat(es, "divergence_threshold"); ok {
			cfg.DivergenceThreshold = &v
		}
		if v, ok := es["check_on_train_epoch_end"].(bool); ok {
			cfg.CheckOnTrainEpochEnd = &v
		} else if monitorsAtTrainEpochEnd {
			cfg.CheckOnTrainEpochEnd = volt.Ptr(inferred)
		}
		if v, ok := es["check_finite"].(bool); ok {
			cfg.CheckFinite = &v
		}
		c := callback.NewEarlyStopping(cfg)
		cbs = append(cbs, &earlyStoppingSpy{EarlyStopping: c, monitor: cfg.Monitor, log: log})
	}
	var ckpt *checkpointSpy
	if mc := sp.Callbacks.Checkpoint; mc != nil {
		cfg := callback.ModelCheckpointConfig{Dirpath: ckptDir, Monitor: anyString(mc, "monitor"), Mode: anyString(mc, "mode"),
			Filename: anyString(mc, "filename"), EveryNTrainSteps: anyInt(mc, "every_n_train_steps"), EveryNEpochs: anyInt(mc, "every_n_epochs")}
		if _, ok := mc["save_top_k"]; ok {
			cfg.SaveTopK = volt.Ptr(anyInt(mc, "save_top_k"))
		}
		cfg.SaveLast, _ = mc["save_last"].(bool)
		if monitorsAtTrainEpochEnd {
			cfg.SaveOnTrainEpochEnd = volt.Ptr(inferred)
		}
		c := callback.NewModelCheckpoint(cfg)
		ckpt = &checkpointSpy{ModelCheckpoint: c, log: log, seen: map[string]time.Time{}}
		cbs = append(cbs, ckpt)
	}
	return cbs, ckpt, nil
}

// generatedRun is a volt run of a generated scenario.
type generatedRun struct {
	voltRun
	built  bool // NewTrainer accepted the Config
	logged []loggedRow
	// resumedRows is the index in logged of the resumed Fit's first row
	// (-1 without one, or where it loaded no checkpoint); resent are the
	// rows the run before it sent after the save it resumed from, which
	// the resumed Fit sends again.
	resumedRows int
	resent      []loggedRow
	// stages are the results of each stage run, weights the layer's at
	// the end, resumedFrom the save a resume started from (nil: none).
	stages      []genStageResult
	weights     []float64
	resumedFrom *genResumedFrom
}

func runGeneratedScenario(t *testing.T, want *generatedTrace, init *conformanceData, valCheckInterval volt.ValInterval) (*generatedRun, error) {
	sp := want.Spec
	cfg, err := genConfig(sp, t.TempDir())
	if err != nil {
		return nil, err
	}
	if valCheckInterval != nil {
		cfg.ValCheckInterval = valCheckInterval
	}
	log := &eventLog{}
	spy := &loggerSpy{log: log}
	cfg.Loggers = []logger.Logger{spy}
	ckptDir := t.TempDir()
	others, ckpt, err := genCallbacks(sp, log, valCheckInterval != nil, ckptDir)
	run := &generatedRun{resumedRows: -1}
	if err != nil {
		run.err = err
		return run, nil
	}
	cfg.DisableCheckpointing = ckpt == nil
	cfg.Callbacks = append([]volt.Callback{&callbackRecorder{hookRecorder{"Callback", log}}}, others...)
	tr, err := volt.NewTrainer(cfg)
	if err != nil {
		run.err = err
		return run, nil
	}
	run.built = true
	loaders := genLoaders(sp, init)
	trainers := []*volt.Trainer{tr}
	m := &genModule{conformanceModule: &conformanceModule{hookRecorder: hookRecorder{"Model", log}, init: init},
		logTrainEpoch: sp.Model.LogTrainEpoch, stop: sp.Model.Stop, fail: sp.Model.Fail, guard: sp.Model.Guard,
		twoOptimizers: sp.Model.TwoOptimizers, epochEnd: sp.Model.EpochEnd, optimizer: sp.Model.Optimizer,
		scheduler: sp.Model.Scheduler, logs: sp.Model.Logs, manual: sp.Model.Manual}
	ctx := t.Context()
	for _, stage := range sp.Stages {
		res := genStageResult{Stage: stage}
		switch stage {
		case "fit":
			run.err = tr.Fit(ctx, m, loaders)
		case "validate":
			res.Metrics, run.err = tr.Validate(ctx, m, loaders)
		case "test":
			res.Metrics, run.err = tr.Test(ctx, m, loaders)
		case "predict":
			var preds [][]*tensors.Tensor
			if preds, run.err = tr.Predict(ctx, m, loaders); run.err == nil {
				res.Predictions, run.err = flatPredictions(preds)
			}
		case "resume":
			// gen_scenarios.py: a restarted process (new callbacks, saving
			// in the same directory, and a new Trainer) resumes from the
			// spec's checkpoint.
			cfg.MaxEpochs = sp.ResumeMaxEpochs
			var resumed *checkpointSpy
			if others, resumed, err = genCallbacks(sp, log, valCheckInterval != nil, ckptDir); err != nil {
				return nil, err
			}
			resumed.seen = ckpt.seen // the files there before are no new saves
			cfg.Callbacks = append([]volt.Callback{&callbackRecorder{hookRecorder{"Callback", log}}}, others...)
			if tr, err = volt.NewTrainer(cfg); err != nil {
				run.err = err
				break
			}
			trainers = append(trainers, tr)
			var opts []volt.RunOption
			if run.resumedFrom = resumeChoice(sp, log.events, ckptDir); run.resumedFrom != nil {
				opts = append(opts, volt.FromCheckpoint(filepath.Join(ckptDir, run.resumedFrom.File)))
			}
			if run.resumedFrom != nil {
				run.resumedRows = len(spy.rows)
				if run.resumedFrom.Event >= 0 {
					run.resent = spy.sentAfter(run.resumedFrom.Event)
				}
			}
			run.err = tr.Fit(ctx, m, loaders, opts...)
		default:
			return nil, fmt.Errorf("unknown stage %q", stage)
		}
		res.CallbackMetrics, res.ProgressBarMetrics = tr.CallbackMetrics(), tr.ProgressBarMetrics()
		run.stages = append(run.stages, res)
		if run.err != nil {
			break
		}
	}
	if run.weights, err = genWeights(trainers, init); err != nil {
		return nil, err
	}
	run.events, run.epoch, run.globalStep, run.shouldStop = log.events, tr.CurrentEpoch(), tr.GlobalStep(), tr.ShouldStop()
	run.logged = spy.rows
	return run, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// normalizationsUsed counts, per designed normalization, the scenarios it
// changed (set by TestConformanceGenerated, for its summary).
var normalizationsUsed map[string]int

// compareGenerated returns the differing aspects, each with its first
// difference: TestConformance's aspects, the logged rows, and whether both
// accepted the Trainer's arguments.
func compareGenerated(want *generatedTrace, got *generatedRun) map[string]string {
	wantEvents, gotEvents := want.Events, got.events
	for _, n := range designedNormalizations {
		w, g := n.normalize(want.Spec, wantEvents, gotEvents)
		if normalizationsUsed != nil && (!reflect.DeepEqual(w, wantEvents) || !reflect.DeepEqual(g, gotEvents)) {
			normalizationsUsed[n.class.ID]++
		}
		wantEvents, gotEvents = w, g
	}
	normalized := *got
	normalized.events = gotEvents
	got = &normalized
	tr := &trace{Events: wantEvents, Error: want.Error}
	if want.Final != nil {
		tr.Final.Epoch, tr.Final.GlobalStep, tr.Final.ShouldStop = want.Final.Epoch, want.Final.GlobalStep, want.Final.ShouldStop
		// Designed (guide: "starts with no stop request"): Lightning's
		// should_stop outlives the fit that set it; volt's is the last run's.
		// Likewise after a Fit that follows another run (a second Fit on
		// the Trainer), whatever the first left.
		fits := slices.IndexFunc(want.Spec.Stages, func(s string) bool { return s == "fit" }) < len(want.Spec.Stages)-1
		if last := want.Spec.Stages[len(want.Spec.Stages)-1]; (last != "fit" && last != "resume" || last == "fit" && fits) && got.err == nil {
			tr.Final.ShouldStop = got.shouldStop
		}
	}
	diffs := map[string]string{}
	for _, a := range aspects {
		if a.name == "final" && (want.Final == nil || !got.built) {
			if (want.Final == nil) != !got.built {
				diffs["final"] = fmt.Sprintf("lightning built a Trainer: %t, volt: %t", want.Final != nil, got.built)
			}
			continue
		}
		if a.name == "failure" {
			if d := compareGeneratedFailure(want.Error, got.err); d != "" {
				diffs[a.name] = d
			}
			continue
		}
		if d := a.compare(tr, &got.voltRun); d != "" {
			diffs[a.name] = d
		}
	}
	if d := compareLogged(want.Logged, dropResentRows(got.logged, got.resumedRows, got.resent)); d != "" {
		diffs["logged"] = d
	}
	if !got.built {
		return diffs
	}
	if d := compareWeights(want.Weights, got.weights); d != "" {
		diffs["weights"] = d
	}
	sc := compareStageResults(want.StageResults, got.stages, want.Error != nil)
	if sc.result != "" {
		diffs["results"] = sc.result
	}
	if sc.metrics != "" {
		diffs["callback_metrics"] = sc.metrics
	}
	if sc.progressBar != "" {
		diffs["progress_bar_metrics"] = sc.progressBar
	}
	if normalizationsUsed != nil && sc.restored {
		normalizationsUsed["resume-keeps-callback-metrics"]++
	}
	if normalizationsUsed != nil && sc.atFailure {
		normalizationsUsed["metrics-at-failure"]++
	}
	if d := compareResumedFrom(want.ResumedFrom, got.resumedFrom); d != "" {
		diffs["resume_from"] = d
	}
	return diffs
}

// compareGeneratedFailure: both succeed, both fail with the planned failure,
// or both fail otherwise (a refused configuration; the messages differ).
func compareGeneratedFailure(want *string, got error) string {
	planned := want != nil && strings.Contains(*want, "planned failure")
	switch {
	case want == nil && got == nil:
		return ""
	case want == nil:
		return fmt.Sprintf("lightning succeeded, volt failed: %v", got)
	case got == nil:
		return fmt.Sprintf("lightning failed with %q, volt succeeded", *want)
	case planned != errors.Is(got, errPlannedFailure):
		return fmt.Sprintf("lightning failed with %q, volt with %v", *want, got)
	}
	return ""
}

func formatRow(r loggedRow) string {
	var parts []string
	for _, k := range mapsKeys(r.Metrics) {
		parts = append(parts, fmt.Sprintf("%s=%.6f", k, r.Metrics[k]))
	}
	return fmt.Sprintf("step %d {%s}", r.Step, strings.Join(parts, " "))
}

func sameRow(w, g loggedRow) bool { return w.Step == g.Step && nearMetrics(w.Metrics, g.Metrics) }

// compareLogged compares the rows the loggers received, in order.
func compareLogged(want, got []loggedRow) string {
	return compareFormatted(want, got, formatRow, sameRow)
}

// dropResentRows drops, from the rows of a resumed Fit (from index start),
// the ones it sends first because its checkpoint was taken before they
// reached the loggers and that the run before it had sent after that save
// (resent; designed, guide: "which the resumed run sends"; the file loggers
// cut the earlier copies, this spy does not).
func dropResentRows(rows []loggedRow, start int, resent []loggedRow) []loggedRow {
	if start < 0 {
		return rows
	}
	out := slices.Clone(rows[:start])
	rest := rows[start:]
	for len(rest) > 0 && len(resent) > 0 && sameRow(resent[0], rest[0]) {
		rest, resent = rest[1:], resent[1:]
	}
	return append(out, rest...)
}
