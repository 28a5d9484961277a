package callback

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// Timer stops training once MaxTime of training has passed and records when
// each stage (train, validate, test) started and ended (Lightning's Timer).
//
// Training time counts from OnTrainStart, plus the training time of the run
// a checkpoint was taken from (LoadState). It is checked after every
// training batch (Interval "step") or at every epoch end ("epoch"), so Fit
// stops at most one batch or epoch past the limit, and MinEpochs/MinSteps
// still apply.
type Timer struct {
	configured[TimerConfig]
	start  map[volt.RunningStage]time.Time
	end    map[volt.RunningStage]time.Time
	offset map[volt.RunningStage]time.Duration
}

// TimerConfig configures Timer.
type TimerConfig struct {
	// MaxTime is the training time budget; 0 only measures. ParseDuration
	// reads Lightning's "DD:HH:MM:SS".
	MaxTime time.Duration
	// Interval is "step" (default) or "epoch": when the budget is checked.
	Interval string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// NewTimer returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewTimer(cfg TimerConfig) *Timer { return newCallback(cfg, newTimer) }

// Config returns the configuration in effect: NewTimer's, with the defaults
// its zero values stand for filled in (print-config shows it).
func (tm *Timer) Config() TimerConfig {
	c := tm.cfg
	if reflect.ValueOf(c.Now).Pointer() == reflect.ValueOf(time.Now).Pointer() {
		c.Now = nil // the default, which a config cannot spell
	}
	return c
}

// newTimer builds the callback for cfg, filling in the defaults its zero
// values stand for, or reports its bad fields.
func newTimer(cfg *TimerConfig) (*Timer, error) {
	if cfg.MaxTime < 0 {
		return nil, fmt.Errorf("callback.NewTimer: TimerConfig.MaxTime: must be >= 0 (0: no limit), got %s", cfg.MaxTime)
	}
	switch cfg.Interval {
	case "":
		cfg.Interval = "step"
	case "step", "epoch":
	default:
		return nil, fmt.Errorf("callback.NewTimer: TimerConfig.Interval: unknown %q; valid: \"step\", \"epoch\"", cfg.Interval)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Timer{
		start:  map[volt.RunningStage]time.Time{},
		end:    map[volt.RunningStage]time.Time{},
		offset: map[volt.RunningStage]time.Duration{},
	}, nil
}

// ParseDuration reads a duration written "DD:HH:MM:SS" (days, hours,
// minutes, seconds), as Lightning's max_time string.
func ParseDuration(s string) (time.Duration, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return 0, fmt.Errorf("callback.ParseDuration(%q): want DD:HH:MM:SS, e.g. \"00:12:00:00\"", s)
	}
	units := []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second}
	var d time.Duration
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("callback.ParseDuration(%q): field %d (%q) is not a non-negative integer; want DD:HH:MM:SS", s, i+1, p)
		}
		d += time.Duration(n) * units[i]
	}
	return d, nil
}

// formatDuration writes d as "DD:HH:MM:SS".
func formatDuration(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d:%02d", s/86400, s/3600%24, s/60%60, s%60)
}

// Start returns when stage last started (zero if it has not).
func (tm *Timer) Start(stage volt.RunningStage) time.Time { return tm.start[stage] }

// End returns when stage last ended (zero if it has not, or is running).
func (tm *Timer) End(stage volt.RunningStage) time.Time { return tm.end[stage] }

// Elapsed returns the time spent in stage: up to now while it runs, up to
// its end after; for training it includes the time loaded from a checkpoint.
func (tm *Timer) Elapsed(stage volt.RunningStage) time.Duration {
	start, ok := tm.start[stage]
	if !ok {
		return tm.offset[stage]
	}
	end, ok := tm.end[stage]
	if !ok {
		end = tm.cfg.Now()
	}
	return tm.offset[stage] + end.Sub(start)
}

// Remaining returns the training time left (0 without MaxTime).
func (tm *Timer) Remaining() time.Duration {
	if tm.cfg.MaxTime == 0 {
		return 0
	}
	return max(tm.cfg.MaxTime-tm.Elapsed(volt.RunningTrain), 0)
}

func (tm *Timer) begin(stage volt.RunningStage) {
	tm.start[stage] = tm.cfg.Now()
	delete(tm.end, stage)
}

func (tm *Timer) finish(stage volt.RunningStage) { tm.end[stage] = tm.cfg.Now() }

// OnTrainStart starts the training clock.
func (tm *Timer) OnTrainStart(t *volt.Trainer) error { tm.begin(volt.RunningTrain); return nil }

// OnTrainEnd stops the training clock.
func (tm *Timer) OnTrainEnd(t *volt.Trainer) error { tm.finish(volt.RunningTrain); return nil }

// OnValidationStart starts the validation clock (not for the sanity check).
func (tm *Timer) OnValidationStart(t *volt.Trainer) error {
	if t.State().Stage != volt.RunningSanityCheck {
		tm.begin(volt.RunningValidate)
	}
	return nil
}

// OnValidationEnd stops the validation clock.
func (tm *Timer) OnValidationEnd(t *volt.Trainer) error {
	if t.State().Stage != volt.RunningSanityCheck {
		tm.finish(volt.RunningValidate)
	}
	return nil
}

// OnTestStart starts the test clock.
func (tm *Timer) OnTestStart(t *volt.Trainer) error { tm.begin(volt.RunningTest); return nil }

// OnTestEnd stops the test clock.
func (tm *Timer) OnTestEnd(t *volt.Trainer) error { tm.finish(volt.RunningTest); return nil }

// OnTrainBatchEnd checks the budget with Interval "step".
func (tm *Timer) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if tm.cfg.Interval == "step" {
		tm.check(t)
	}
	return nil
}

// OnTrainEpochEnd checks the budget with Interval "epoch".
func (tm *Timer) OnTrainEpochEnd(t *volt.Trainer) error {
	if tm.cfg.Interval == "epoch" {
		tm.check(t)
	}
	return nil
}

func (tm *Timer) check(t *volt.Trainer) {
	if tm.cfg.MaxTime == 0 || t.ShouldStop() {
		return
	}
	if el := tm.Elapsed(volt.RunningTrain); el >= tm.cfg.MaxTime {
		t.Stop(fmt.Sprintf("max_time=%s reached (training time %s)", formatDuration(tm.cfg.MaxTime), el.Round(time.Millisecond)))
	}
}

// StateKey implements volt.Stateful.
func (tm *Timer) StateKey() string { return "Timer" }

// State implements volt.Stateful: the time spent in each stage, in seconds.
func (tm *Timer) State() ([]byte, error) {
	elapsed := map[string]float64{}
	for _, st := range []volt.RunningStage{volt.RunningTrain, volt.RunningValidate, volt.RunningTest} {
		elapsed[string(st)] = tm.Elapsed(st).Seconds()
	}
	return json.Marshal(map[string]any{"time_elapsed": elapsed})
}

// LoadState implements volt.Stateful: the loaded times are added to the
// stages' elapsed times from now on.
func (tm *Timer) LoadState(b []byte) error {
	var s struct {
		TimeElapsed map[string]float64 `json:"time_elapsed"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("Timer.LoadState: %w", err)
	}
	clear(tm.offset)
	for st, secs := range s.TimeElapsed {
		tm.offset[volt.RunningStage(st)] = time.Duration(secs * float64(time.Second))
	}
	return nil
}

// Interface guards.
var (
	_ volt.OnTrainStart      = (*Timer)(nil)
	_ volt.OnTrainEnd        = (*Timer)(nil)
	_ volt.OnValidationStart = (*Timer)(nil)
	_ volt.OnValidationEnd   = (*Timer)(nil)
	_ volt.OnTestStart       = (*Timer)(nil)
	_ volt.OnTestEnd         = (*Timer)(nil)
	_ volt.OnTrainBatchEnd   = (*Timer)(nil)
	_ volt.OnTrainEpochEnd   = (*Timer)(nil)
	_ volt.Stateful          = (*Timer)(nil)
)
