package optim

import (
	"encoding/json"
	"fmt"
	"github.com/voltml/volt/internal/jsonfloat"
	"math"
)

// Scheduler computes learning rates on the host; the trainer writes them into
// the optimizer's LR variable (see Optimizer.LRVariable).
//
// The schedulers follow PyTorch 1.13's torch.optim.lr_scheduler semantics:
// Start corresponds to constructing the PyTorch scheduler (which already
// takes its first step, to last_epoch 0) and each Step to one call of
// scheduler.step(). Chainable schedulers update the current LR recursively,
// as PyTorch's get_lr does, so the sequences agree to rounding.
type Scheduler interface {
	// Start resets the schedule for an optimizer whose configured LR is
	// baseLR and returns the LR for the first step.
	Start(baseLR float64) float64
	// Step advances the schedule by one scheduler step. metric is the
	// monitored value (ReduceLROnPlateau), NaN otherwise. Returns the new LR.
	Step(metric float64) float64
	// LR returns the current learning rate.
	LR() float64
	// State serializes the full state (JSON) for checkpoints: a scheduler
	// restored with LoadState continues bitwise identically.
	State() ([]byte, error)
	// LoadState restores a state written by State of the same scheduler type.
	LoadState([]byte) error
}

// MetricScheduler is implemented by schedulers that need a monitored metric
// (ReduceLROnPlateau).
type MetricScheduler interface {
	Scheduler
	// NeedsMetric reports whether Step must be given the monitored metric.
	NeedsMetric() bool
}

// BoundedScheduler is implemented by schedulers whose schedule ends after a
// number of steps (OneCycleLR's TotalSteps), where PyTorch raises on the
// step past the end. The trainer asks CheckStep before each Step and fails
// the run with its error.
type BoundedScheduler interface {
	Scheduler
	// CheckStep returns nil when one more Step is within the schedule,
	// else an error naming the scheduler, that step and the last one.
	CheckStep() error
}

// StepPeeker is implemented by schedulers that can say what their state
// would be after a Step without taking it. The trainer uses it when a
// checkpoint saved in OnTrainEpochEnd must hold the state after the plateau
// step that follows that hook; a scheduler without it is stepped and then
// restored with LoadState, so its Step runs once more than the schedule.
type StepPeeker interface {
	// StateAfterStep returns State() as it would be after Step(metric),
	// leaving the scheduler unchanged.
	StateAfterStep(metric float64) ([]byte, error)
}

// progress is the part of a scheduler's state shared by all of them: the base
// LR given to Start, the current LR and PyTorch's last_epoch (the number of
// Step calls since Start).
type progress struct {
	Started bool            `json:"started"`
	BaseLR  jsonfloat.Float `json:"base_lr"`
	LR      jsonfloat.Float `json:"lr"`
	Epoch   int             `json:"last_epoch"`
}

// start resets p for baseLR, with last_epoch 0 and LR lr.
func (p *progress) start(baseLR, lr float64) float64 {
	*p = progress{Started: true, BaseLR: jsonfloat.Float(baseLR), LR: jsonfloat.Float(lr)}
	return lr
}

// advance checks that Start was called, increments last_epoch and returns it.
func (p *progress) advance(kind string) int {
	if !p.Started {
		panic(fmt.Sprintf("optim.%s.Step: called before Start; call Start(baseLR) first", kind))
	}
	p.Epoch++
	return p.Epoch
}

// set records lr as the current LR and returns it.
func (p *progress) set(lr float64) float64 {
	p.LR = jsonfloat.Float(lr)
	return lr
}

// savedScheduler is the JSON layout of every scheduler's State: its kind, its
// configuration (the exported fields), its progress and any extra state.
type savedScheduler struct {
	Kind     string          `json:"kind"`
	Config   json.RawMessage `json:"config"`
	Progress progress        `json:"progress"`
	Extra    json.RawMessage `json:"extra,omitempty"`
}

// marshalScheduler encodes a scheduler's State; config is the scheduler
// itself (only its exported fields are written) and extra, when not nil, its
// kind-specific state.
func marshalScheduler(kind string, config any, p progress, extra any) ([]byte, error) {
	c, err := json.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("optim.%s.State: %w", kind, err)
	}
	s := savedScheduler{Kind: kind, Config: c, Progress: p}
	if extra != nil {
		if s.Extra, err = json.Marshal(extra); err != nil {
			return nil, fmt.Errorf("optim.%s.State: %w", kind, err)
		}
	}
	return json.Marshal(s)
}

// unmarshalScheduler decodes data written by marshalScheduler for kind into
// config (its exported fields, starting from zero values), p and extra (when
// not nil, a value the caller applies afterwards), then checks the
// configuration with validate. On error nothing is changed.
func unmarshalScheduler[C any](kind string, data []byte, config *C, p *progress, extra any, validate func(*C) error) error {
	var s savedScheduler
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("optim.%s.LoadState: %w", kind, err)
	}
	if s.Kind != kind {
		return fmt.Errorf("optim.%s.LoadState: kind: state is for %q, want %q", kind, s.Kind, kind)
	}
	var c C
	if err := json.Unmarshal(s.Config, &c); err != nil {
		return fmt.Errorf("optim.%s.LoadState: config: %w", kind, err)
	}
	if err := validate(&c); err != nil {
		return fmt.Errorf("optim.%s.LoadState: %w", kind, err)
	}
	if extra != nil {
		if len(s.Extra) == 0 {
			return fmt.Errorf("optim.%s.LoadState: extra: missing", kind)
		}
		if err := json.Unmarshal(s.Extra, extra); err != nil {
			return fmt.Errorf("optim.%s.LoadState: extra: %w", kind, err)
		}
		if v, ok := extra.(interface{ validate() error }); ok {
			if err := v.validate(); err != nil {
				return fmt.Errorf("optim.%s.LoadState: %w", kind, err)
			}
		}
	}
	*config = c
	*p = s.Progress
	return nil
}

// pyMod returns a mod b with Python's sign convention (the result has the
// sign of b), as PyTorch's schedulers compute it.
func pyMod(a, b int) int {
	m := a % b
	if m != 0 && (m < 0) != (b < 0) {
		m += b
	}
	return m
}

// mustBeValid panics with err, a scheduler's Validate result, unless it is
// nil: Start cannot return errors. Fit validates every scheduler before it
// starts one, so only a scheduler used outside Fit without Validate gets here.
func mustBeValid(err error) {
	if err != nil {
		panic(err)
	}
}

// finite reports whether v is neither NaN nor ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
