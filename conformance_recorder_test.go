package volt_test

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/voltml/volt"
	"github.com/voltml/volt/callback"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// The recording side of TestConformance: a callback and a module that record
// every per-event host hook they get, with the trainer's counters, in the
// shape of the Lightning traces (testdata/lightning/*.json), and spies on the
// monitoring callbacks and the scheduler that record what trace_hooks.py's
// Monitor, CkptSpy, ESSpy and Model.lr_scheduler_step record.

// traceEvent is one event of a trace: a hook call and what was seen then.
// The JSON names are trace_hooks.py's.
type traceEvent struct {
	Who        string             `json:"who"`
	Hook       string             `json:"hook"`
	Epoch      int                `json:"epoch"`
	GlobalStep int64              `json:"global_step"`
	Sanity     bool               `json:"sanity"`
	BatchIdx   *int               `json:"batch_idx"`
	Stage      string             `json:"stage"`
	LR         *float64           `json:"lr"`
	Metric     *float64           `json:"metric"`
	File       string             `json:"file"`
	Value      *float64           `json:"value"`
	Metrics    map[string]float64 `json:"metrics"`
	lrRecorded bool               // volt: the LR seen at training batch start
}

// eventLog collects the events of one volt run.
type eventLog struct {
	trainer *volt.Trainer // set by the recording callback's Setup
	events  []traceEvent
}

// lightningHookName maps a volt method name to Lightning's hook name:
// OnTrainEpochEnd → on_train_epoch_end, Setup → setup. Stateful's State and
// LoadState are Lightning's on_save_checkpoint and on_load_checkpoint.
func lightningHookName(goName string) string {
	switch goName {
	case "State":
		return "on_save_checkpoint"
	case "LoadState":
		return "on_load_checkpoint"
	}
	var b strings.Builder
	for i, r := range goName {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// add records hook (a volt method name) for who, with the trainer's counters.
func (l *eventLog) add(who, goHook string, batchIdx int, stage volt.Stage) *traceEvent {
	e := traceEvent{Who: who, Hook: lightningHookName(goHook), Stage: string(stage)}
	if batchIdx >= 0 {
		e.BatchIdx = &batchIdx
	}
	if t := l.trainer; t != nil {
		e.Epoch, e.GlobalStep = t.CurrentEpoch(), t.GlobalStep()
		e.Sanity = t.State().Stage == volt.RunningSanityCheck
	}
	l.events = append(l.events, e)
	return &l.events[len(l.events)-1]
}

// hookRecorder records every per-event host hook as who ("Callback" for the
// callback; the module embeds it as "Model").
type hookRecorder struct {
	who string
	log *eventLog
}

func (r *hookRecorder) rec(goHook string) { r.log.add(r.who, goHook, -1, "") }

func (r *hookRecorder) Setup(t *volt.Trainer, s volt.Stage) error {
	r.log.trainer = t
	r.log.add(r.who, "Setup", -1, s)
	return nil
}
func (r *hookRecorder) Teardown(_ *volt.Trainer, s volt.Stage) error {
	r.log.add(r.who, "Teardown", -1, s)
	return nil
}
func (r *hookRecorder) OnFitStart(*volt.Trainer) error        { r.rec("OnFitStart"); return nil }
func (r *hookRecorder) OnFitEnd(*volt.Trainer) error          { r.rec("OnFitEnd"); return nil }
func (r *hookRecorder) OnTrainStart(*volt.Trainer) error      { r.rec("OnTrainStart"); return nil }
func (r *hookRecorder) OnTrainEnd(*volt.Trainer) error        { r.rec("OnTrainEnd"); return nil }
func (r *hookRecorder) OnTrainEpochStart(*volt.Trainer) error { r.rec("OnTrainEpochStart"); return nil }
func (r *hookRecorder) OnTrainEpochEnd(*volt.Trainer) error   { r.rec("OnTrainEpochEnd"); return nil }
func (r *hookRecorder) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, i int) error {
	e := r.log.add(r.who, "OnTrainBatchStart", i, "")
	if lrs := t.LearningRates(); len(lrs) > 0 {
		lr := lrs[0]
		e.LR, e.lrRecorded = &lr, true
	}
	return nil
}
func (r *hookRecorder) OnTrainBatchEnd(_ *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i int) error {
	r.log.add(r.who, "OnTrainBatchEnd", i, "")
	return nil
}
func (r *hookRecorder) OnValidationStart(*volt.Trainer) error { r.rec("OnValidationStart"); return nil }
func (r *hookRecorder) OnValidationEnd(*volt.Trainer) error   { r.rec("OnValidationEnd"); return nil }
func (r *hookRecorder) OnValidationEpochStart(*volt.Trainer) error {
	r.rec("OnValidationEpochStart")
	return nil
}
func (r *hookRecorder) OnValidationEpochEnd(*volt.Trainer) error {
	r.rec("OnValidationEpochEnd")
	return nil
}
func (r *hookRecorder) OnValidationBatchStart(_ *volt.Trainer, _ *data.Batch, i, _ int) error {
	r.log.add(r.who, "OnValidationBatchStart", i, "")
	return nil
}
func (r *hookRecorder) OnValidationBatchEnd(_ *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i, _ int) error {
	r.log.add(r.who, "OnValidationBatchEnd", i, "")
	return nil
}
func (r *hookRecorder) OnTestStart(*volt.Trainer) error      { r.rec("OnTestStart"); return nil }
func (r *hookRecorder) OnTestEnd(*volt.Trainer) error        { r.rec("OnTestEnd"); return nil }
func (r *hookRecorder) OnTestEpochStart(*volt.Trainer) error { r.rec("OnTestEpochStart"); return nil }
func (r *hookRecorder) OnTestEpochEnd(*volt.Trainer) error   { r.rec("OnTestEpochEnd"); return nil }
func (r *hookRecorder) OnTestBatchStart(_ *volt.Trainer, _ *data.Batch, i, _ int) error {
	r.log.add(r.who, "OnTestBatchStart", i, "")
	return nil
}
func (r *hookRecorder) OnTestBatchEnd(_ *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i, _ int) error {
	r.log.add(r.who, "OnTestBatchEnd", i, "")
	return nil
}
func (r *hookRecorder) OnPredictStart(*volt.Trainer) error { r.rec("OnPredictStart"); return nil }
func (r *hookRecorder) OnPredictEnd(*volt.Trainer) error   { r.rec("OnPredictEnd"); return nil }
func (r *hookRecorder) OnPredictEpochStart(*volt.Trainer) error {
	r.rec("OnPredictEpochStart")
	return nil
}
func (r *hookRecorder) OnPredictEpochEnd(*volt.Trainer) error { r.rec("OnPredictEpochEnd"); return nil }
func (r *hookRecorder) OnPredictBatchStart(_ *volt.Trainer, _ *data.Batch, i, _ int) error {
	r.log.add(r.who, "OnPredictBatchStart", i, "")
	return nil
}
func (r *hookRecorder) OnPredictBatchEnd(_ *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i, _ int) error {
	r.log.add(r.who, "OnPredictBatchEnd", i, "")
	return nil
}

// StateKey, State and LoadState (volt.Stateful) are where volt asks a
// callback or module for its checkpoint state: Lightning's
// on_save_checkpoint and on_load_checkpoint.
func (r *hookRecorder) StateKey() string                 { return "conformance-" + r.who }
func (r *hookRecorder) State() ([]byte, error)           { r.rec("State"); return []byte("{}"), nil }
func (r *hookRecorder) LoadState(b []byte) error         { r.rec("LoadState"); return nil }
func (r *hookRecorder) OnException(*volt.Trainer, error) {}

// callbackRecorder is trace_hooks.py's Recorder: it also has the hooks that
// only callbacks get in Lightning (sanity check, exception).
type callbackRecorder struct{ hookRecorder }

func (r *callbackRecorder) OnSanityCheckStart(*volt.Trainer) error {
	r.rec("OnSanityCheckStart")
	return nil
}
func (r *callbackRecorder) OnSanityCheckEnd(*volt.Trainer) error {
	r.rec("OnSanityCheckEnd")
	return nil
}
func (r *callbackRecorder) OnException(*volt.Trainer, error) { r.rec("OnException") }

// monitorSpy is trace_hooks.py's Monitor: the callback metrics at
// OnValidationEnd (outside the sanity check) and at OnTrainEpochEnd.
type monitorSpy struct{ log *eventLog }

func (m *monitorSpy) record(t *volt.Trainer, hook string) {
	e := m.log.add("Monitor", "", -1, "")
	e.Hook = "metrics@" + hook
	e.Metrics = t.CallbackMetrics()
}

func (m *monitorSpy) OnValidationEnd(t *volt.Trainer) error {
	if t.State().Stage != volt.RunningSanityCheck {
		m.record(t, "on_validation_end")
	}
	return nil
}

func (m *monitorSpy) OnTrainEpochEnd(t *volt.Trainer) error {
	m.record(t, "on_train_epoch_end")
	return nil
}

// checkpointSpy is trace_hooks.py's CkptSpy: it records each file the
// embedded ModelCheckpoint writes (new, or rewritten: last.ckpt), before the State calls of that save (where
// Lightning's _save_checkpoint records it, before on_save_checkpoint).
type checkpointSpy struct {
	*callback.ModelCheckpoint
	log  *eventLog
	seen map[string]time.Time // file name → modification time when last seen
}

// around runs a hook of the ModelCheckpoint and records the files it created.
func (c *checkpointSpy) around(run func() error) error {
	start := len(c.log.events)
	err := run()
	entries, _ := os.ReadDir(c.Dirpath())
	var created []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !strings.HasSuffix(e.Name(), ".ckpt") {
			continue
		}
		if seen, ok := c.seen[e.Name()]; !ok || !seen.Equal(info.ModTime()) {
			c.seen[e.Name()] = info.ModTime()
			created = append(created, e.Name())
		}
	}
	for _, name := range created {
		at := len(c.log.events)
		for i := start; i < len(c.log.events); i++ {
			if c.log.events[i].Hook == "on_save_checkpoint" {
				at = i
				break
			}
		}
		ev := *c.log.add("ModelCheckpoint", "", -1, "")
		c.log.events = c.log.events[:len(c.log.events)-1]
		ev.Hook, ev.File = "save", name
		c.log.events = slices.Insert(c.log.events, at, ev)
		start = at + 1
		for start < len(c.log.events) && c.log.events[start].Hook == "on_save_checkpoint" {
			start++
		}
	}
	return err
}

func (c *checkpointSpy) OnTrainBatchEnd(t *volt.Trainer, o *volt.StepOutput, b *data.Batch, i int) error {
	return c.around(func() error { return c.ModelCheckpoint.OnTrainBatchEnd(t, o, b, i) })
}
func (c *checkpointSpy) OnValidationEnd(t *volt.Trainer) error {
	return c.around(func() error { return c.ModelCheckpoint.OnValidationEnd(t) })
}
func (c *checkpointSpy) OnTrainEpochEnd(t *volt.Trainer) error {
	return c.around(func() error { return c.ModelCheckpoint.OnTrainEpochEnd(t) })
}
func (c *checkpointSpy) OnTrainEnd(t *volt.Trainer) error {
	return c.around(func() error { return c.ModelCheckpoint.OnTrainEnd(t) })
}

// earlyStoppingSpy is trace_hooks.py's ESSpy: it records each check of the
// embedded EarlyStopping with the value it read (a check is counted by
// EarlyStopping.Checks, a failed one included).
type earlyStoppingSpy struct {
	*callback.EarlyStopping
	monitor string
	log     *eventLog
}

func (e *earlyStoppingSpy) around(t *volt.Trainer, run func() error) error {
	checks := e.Checks()
	value, ok := t.CallbackMetrics()[e.monitor]
	err := run()
	if e.Checks() != checks {
		ev := e.log.add("EarlyStopping", "", -1, "")
		ev.Hook = "check"
		if ok {
			v := value
			ev.Value = &v
		}
	}
	return err
}

func (e *earlyStoppingSpy) OnValidationEnd(t *volt.Trainer) error {
	return e.around(t, func() error { return e.EarlyStopping.OnValidationEnd(t) })
}
func (e *earlyStoppingSpy) OnTrainEpochEnd(t *volt.Trainer) error {
	return e.around(t, func() error { return e.EarlyStopping.OnTrainEpochEnd(t) })
}

// schedulerSpy records each scheduler step as Lightning's
// Model.lr_scheduler_step, with the metric it was given (NaN: none).
type schedulerSpy struct {
	optim.Scheduler
	log *eventLog
}

func (s *schedulerSpy) Step(metric float64) float64 {
	e := s.log.add("Model", "", -1, "")
	e.Hook = "lr_scheduler_step"
	if !math.IsNaN(metric) {
		m := metric
		e.Metric = &m
	}
	return s.Scheduler.Step(metric)
}

// StateAfterStep forwards optim.StepPeeker (a look-ahead, not a step).
func (s *schedulerSpy) StateAfterStep(metric float64) ([]byte, error) {
	if p, ok := s.Scheduler.(optim.StepPeeker); ok {
		return p.StateAfterStep(metric)
	}
	return nil, fmt.Errorf("schedulerSpy: %T is no optim.StepPeeker", s.Scheduler)
}

// NeedsMetric forwards optim.MetricScheduler.
func (s *schedulerSpy) NeedsMetric() bool {
	ms, ok := s.Scheduler.(optim.MetricScheduler)
	return ok && ms.NeedsMetric()
}
