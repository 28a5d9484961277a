package callback

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/voltml/volt"
	"github.com/voltml/volt/internal/jsonfloat"
)

// EarlyStopping stops training when a monitored metric has stopped improving
// (Lightning's EarlyStopping).
//
// Where it checks: with CheckOnTrainEpochEnd nil (the default) it checks at
// OnTrainEpochEnd when Fit's validation, if any, runs in every epoch with
// ValCheckInterval unset, Fraction(1) or Batches(1)
// (Trainer.MonitorsAtTrainEpochEnd), and at OnValidationEnd otherwise, as
// Lightning does. At OnTrainEpochEnd it runs after the
// module's hook (it is a volt.MetricMonitor), so it sees what the module
// logs there. It never checks during the sanity check or outside Fit.
//
// It asks to stop with Trainer.Stop, so MinEpochs and MinSteps are honoured by
// the trainer, which reports the stop reason once through Config.Log.
type EarlyStopping struct {
	configured[EarlyStoppingConfig]
	delta      float64 // signed min delta: current-delta must beat best
	better     func(a, b float64) bool
	state      earlyStoppingState
	loaded     bool // LoadState was called: keep the state at the next OnFitStart
	atEpochEnd bool // this Fit checks at OnTrainEpochEnd, not OnValidationEnd
	checked    bool // strict check of the metric's presence done in this Fit
	checks     int  // checks run since the callback was made (Checks)
}

// EarlyStoppingConfig configures EarlyStopping.
type EarlyStoppingConfig struct {
	// Monitor is the metric to watch, as in Trainer.CallbackMetrics
	// (e.g. "val_loss"). Required.
	Monitor string
	// MinDelta is the smallest change that counts as an improvement (>= 0).
	MinDelta float64
	// Patience is the number of checks without improvement before stopping;
	// 0 means 3.
	Patience int
	// Mode is "min" (default: lower is better) or "max".
	Mode string
	// Strict makes a missing metric an error at the check; nil means true.
	// When false the absence is reported once and the check skipped.
	Strict *bool
	// CheckFinite stops when the metric is NaN or infinite; nil means true.
	CheckFinite *bool
	// StoppingThreshold stops as soon as the metric is better than it.
	StoppingThreshold *float64
	// DivergenceThreshold stops as soon as the metric is worse than it.
	DivergenceThreshold *float64
	// CheckOnTrainEpochEnd forces the check to OnTrainEpochEnd (true) or to
	// OnValidationEnd (false); nil chooses as described on EarlyStopping.
	CheckOnTrainEpochEnd *bool
	// Verbose reports each improvement through the trainer's Slog.
	Verbose bool
}

// earlyStoppingState is what a checkpoint keeps.
type earlyStoppingState struct {
	WaitCount    int     `json:"wait_count"`
	StoppedEpoch int     `json:"stopped_epoch"`
	BestScore    float64 `json:"-"` // ±Inf before the first check; written as a jsonfloat.Float
}

// NewEarlyStopping returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewEarlyStopping(cfg EarlyStoppingConfig) *EarlyStopping {
	return newCallback(cfg, newEarlyStopping)
}

// newEarlyStopping builds the callback for cfg, filling in the defaults its
// zero values stand for, or reports its bad fields.
func newEarlyStopping(cfg *EarlyStoppingConfig) (*EarlyStopping, error) {
	var errs []string
	if cfg.Monitor == "" {
		errs = append(errs, "EarlyStoppingConfig.Monitor: required, the name of a logged metric such as \"val_loss\"")
	}
	if cfg.MinDelta < 0 || math.IsNaN(cfg.MinDelta) || math.IsInf(cfg.MinDelta, 0) {
		errs = append(errs, fmt.Sprintf("EarlyStoppingConfig.MinDelta: must be a finite number >= 0, got %v", cfg.MinDelta))
	}
	switch {
	case cfg.Patience < 0:
		errs = append(errs, fmt.Sprintf("EarlyStoppingConfig.Patience: must be >= 1 (0 means 3), got %d", cfg.Patience))
	case cfg.Patience == 0:
		cfg.Patience = 3
	}
	e := &EarlyStopping{}
	switch cfg.Mode {
	case "", "min":
		cfg.Mode = "min"
		e.delta, e.better = -cfg.MinDelta, func(a, b float64) bool { return a < b }
	case "max":
		e.delta, e.better = cfg.MinDelta, func(a, b float64) bool { return a > b }
	default:
		errs = append(errs, fmt.Sprintf("EarlyStoppingConfig.Mode: unknown %q; valid: \"min\", \"max\"", cfg.Mode))
	}
	for name, p := range map[string]*float64{"StoppingThreshold": cfg.StoppingThreshold, "DivergenceThreshold": cfg.DivergenceThreshold} {
		if p != nil && (math.IsNaN(*p) || math.IsInf(*p, 0)) {
			errs = append(errs, fmt.Sprintf("EarlyStoppingConfig.%s: must be finite, got %v", name, *p))
		}
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return nil, fmt.Errorf("callback.NewEarlyStopping: %s", strings.Join(errs, "; "))
	}
	if cfg.Strict == nil {
		cfg.Strict = volt.Ptr(true)
	}
	if cfg.CheckFinite == nil {
		cfg.CheckFinite = volt.Ptr(true)
	}
	e.cfg = *cfg // reset reads it
	e.reset()
	return e, nil
}

// WaitCount returns the number of checks since the last improvement.
func (e *EarlyStopping) WaitCount() int { return e.state.WaitCount }

// BestScore returns the best value seen (±Inf before the first check).
func (e *EarlyStopping) BestScore() float64 { return e.state.BestScore }

// StoppedEpoch returns the epoch in which it asked to stop (0 also when it
// did not, as in Lightning).
func (e *EarlyStopping) StoppedEpoch() int { return e.state.StoppedEpoch }

// Checks returns how many times the callback has checked its monitor since
// it was made, a missing metric included: one per validation run or
// training epoch where it checks.
func (e *EarlyStopping) Checks() int { return e.checks }

func (e *EarlyStopping) reset() {
	best := math.Inf(1)
	if e.cfg.Mode == "max" {
		best = math.Inf(-1)
	}
	e.state = earlyStoppingState{BestScore: best}
}

// OnFitStart resets the state, unless it was just loaded from a checkpoint,
// and chooses where this Fit checks.
func (e *EarlyStopping) OnFitStart(t *volt.Trainer) error {
	if !e.loaded {
		e.reset()
	}
	e.loaded, e.checked = false, false
	e.atEpochEnd = t.MonitorsAtTrainEpochEnd()
	if c := e.cfg.CheckOnTrainEpochEnd; c != nil {
		e.atEpochEnd = *c
	}
	return nil
}

// OnValidationEnd checks the metric after a Fit validation run, unless
// checks happen at epoch end.
func (e *EarlyStopping) OnValidationEnd(t *volt.Trainer) error {
	st := t.State()
	if e.atEpochEnd || st.Fn != volt.StageFit || st.Stage == volt.RunningSanityCheck {
		return nil
	}
	return e.check(t)
}

// OnTrainEpochEnd checks the metric when checks happen at epoch end.
func (e *EarlyStopping) OnTrainEpochEnd(t *volt.Trainer) error {
	if !e.atEpochEnd {
		return nil
	}
	return e.check(t)
}

// MonitorsMetric marks EarlyStopping as a monitoring callback: its
// OnTrainEpochEnd runs after the module's.
func (*EarlyStopping) MonitorsMetric() {}

// check runs one early-stopping decision.
func (e *EarlyStopping) check(t *volt.Trainer) error {
	e.checks++
	metrics := t.CallbackMetrics()
	current, ok := metrics[e.cfg.Monitor]
	if !ok {
		msg := fmt.Sprintf("EarlyStopping conditioned on metric %q which is not available; available metrics: %s",
			e.cfg.Monitor, available(metrics))
		if *e.cfg.Strict {
			return fmt.Errorf("%s (set EarlyStoppingConfig.Strict to false to skip the check)", msg)
		}
		if !e.checked {
			t.Slog().Warn("volt: " + msg)
		}
		e.checked = true
		return nil
	}
	e.checked = true
	if stop, reason := e.evaluate(current); stop {
		e.state.StoppedEpoch = t.CurrentEpoch()
		t.Stop(reason)
	} else if reason != "" && e.cfg.Verbose {
		t.Slog().Info("volt: " + reason)
	}
	return nil
}

// evaluate updates the state with current and says whether to stop and why
// (or, when not stopping, describes an improvement).
func (e *EarlyStopping) evaluate(current float64) (stop bool, reason string) {
	s := &e.state
	m := e.cfg.Monitor
	switch {
	case *e.cfg.CheckFinite && (math.IsNaN(current) || math.IsInf(current, 0)):
		return true, fmt.Sprintf("EarlyStopping: monitored metric %s = %v is not finite; previous best value was %.4g", m, current, s.BestScore)
	case e.cfg.StoppingThreshold != nil && e.better(current, *e.cfg.StoppingThreshold):
		return true, fmt.Sprintf("EarlyStopping: stopping threshold reached: %s = %.4g, better than %.4g", m, current, *e.cfg.StoppingThreshold)
	case e.cfg.DivergenceThreshold != nil && e.better(-current, -*e.cfg.DivergenceThreshold):
		return true, fmt.Sprintf("EarlyStopping: divergence threshold reached: %s = %.4g, worse than %.4g", m, current, *e.cfg.DivergenceThreshold)
	case e.better(current-e.delta, s.BestScore):
		prev := s.BestScore
		s.BestScore, s.WaitCount = current, 0
		if math.IsInf(prev, 0) {
			return false, fmt.Sprintf("EarlyStopping: metric %s improved; new best score: %.4g", m, current)
		}
		return false, fmt.Sprintf("EarlyStopping: metric %s improved by %.4g >= min_delta = %g; new best score: %.4g", m, math.Abs(prev-current), e.cfg.MinDelta, current)
	default:
		s.WaitCount++
		if s.WaitCount >= e.cfg.Patience {
			return true, fmt.Sprintf("EarlyStopping: monitored metric %s did not improve in the last %d records; best score: %.4g", m, s.WaitCount, s.BestScore)
		}
		return false, ""
	}
}

// available lists the metric names, sorted, for error messages.
func available(metrics map[string]float64) string {
	names := slices.Sorted(maps.Keys(metrics))
	if len(names) == 0 {
		return "(none logged)"
	}
	return strings.Join(names, ", ")
}

// StateKey implements volt.Stateful; it names the monitor and mode.
func (e *EarlyStopping) StateKey() string {
	return fmt.Sprintf("EarlyStopping{monitor=%s,mode=%s}", e.cfg.Monitor, e.cfg.Mode)
}

type earlyStoppingJSON struct {
	earlyStoppingState
	BestScore jsonfloat.Float `json:"best_score"`
}

// State implements volt.Stateful: wait count, stopped epoch and best score.
func (e *EarlyStopping) State() ([]byte, error) {
	return json.Marshal(earlyStoppingJSON{e.state, jsonfloat.Float(e.state.BestScore)})
}

// LoadState implements volt.Stateful; the loaded state survives the next OnFitStart.
func (e *EarlyStopping) LoadState(b []byte) error {
	var s earlyStoppingJSON
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("EarlyStopping.LoadState: %w", err)
	}
	e.state = s.earlyStoppingState
	e.state.BestScore = float64(s.BestScore)
	e.loaded = true
	return nil
}

// Interface guards.
// SkippedInFastDevRun implements volt.FastDevRunSkipped: Config.FastDevRun
// turns EarlyStopping off.
func (*EarlyStopping) SkippedInFastDevRun() {}

var (
	_ volt.FastDevRunSkipped = (*EarlyStopping)(nil)
	_ volt.OnFitStart        = (*EarlyStopping)(nil)
	_ volt.MetricMonitor     = (*EarlyStopping)(nil)
	_ volt.OnValidationEnd   = (*EarlyStopping)(nil)
	_ volt.OnTrainEpochEnd   = (*EarlyStopping)(nil)
	_ volt.Stateful          = (*EarlyStopping)(nil)
)

// Config returns the configuration in effect: the one given, with the zero
// values that mean a default replaced by that default (Patience 3, Mode
// "min", Strict and CheckFinite true).
func (e *EarlyStopping) Config() EarlyStoppingConfig { return e.cfg }
