package callback

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// BackboneFinetuning keeps a pretrained backbone frozen for the first epochs,
// then trains it with a learning rate that grows each epoch up to the
// module's (Lightning's BackboneFinetuning).
//
// The Scope's variables are frozen until epoch UnfreezeAtEpoch; then they
// join the optimizer as a parameter group with learning-rate multiplier
// InitialRatio, and at each later epoch start the multiplier is multiplied by
// Multiplier, capped at 1 (the backbone never learns faster than the rest)
// unless NoAlign. Lightning sets the backbone's rate itself
// (lr_backbone = λ·lr_backbone_prev, capped at the module's lr); volt's
// multiplier applies to the optimizer's scheduled rate, so the two agree
// while the module's rate is constant and the backbone follows the module's
// schedule otherwise. It is a Finetuning with one step, plus the multiplier
// updates.
type BackboneFinetuning struct {
	configured[BackboneFinetuningConfig]
	base  *Finetuning
	state backboneState
}

// BackboneFinetuningConfig configures BackboneFinetuning.
type BackboneFinetuningConfig struct {
	// Scope is the backbone's variable scope; "" means "/backbone".
	Scope string
	// UnfreezeAtEpoch is the epoch (counted from 0) at whose start the
	// backbone is unfrozen; 0 means 10 (Lightning's default).
	UnfreezeAtEpoch int
	// InitialRatio is the backbone's learning-rate multiplier when it is
	// unfrozen; 0 means 0.1 (Lightning's backbone_initial_ratio_lr).
	InitialRatio float64
	// Multiplier scales the backbone's multiplier at each later epoch
	// start; 0 means 1.5 (Lightning's default lambda_func).
	Multiplier float64
	// NoAlign lets the multiplier grow past 1 (Lightning's should_align=False).
	NoAlign bool
	// Optimizer is the index of the optimizer that trains the backbone.
	Optimizer int
}

// backboneState is what a checkpoint keeps.
type backboneState struct {
	Base      json.RawMessage `json:"base"`
	Scale     float64         `json:"lr_scale"`
	LastEpoch int             `json:"last_epoch"` // the last epoch whose multiplier was set (-1: none)
}

// NewBackboneFinetuning returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewBackboneFinetuning(cfg BackboneFinetuningConfig) *BackboneFinetuning {
	return newCallback(cfg, newBackboneFinetuning)
}

// Config returns the configuration in effect: NewBackboneFinetuning's, with the defaults
// its zero values stand for filled in (print-config shows it).
func (b *BackboneFinetuning) Config() BackboneFinetuningConfig { return b.cfg }

// newBackboneFinetuning builds the callback for cfg, filling in the defaults
// its zero values stand for, or reports its bad fields.
func newBackboneFinetuning(cfg *BackboneFinetuningConfig) (*BackboneFinetuning, error) {
	var errs []error
	if cfg.Scope == "" {
		cfg.Scope = "/backbone"
	}
	switch {
	case cfg.UnfreezeAtEpoch == 0:
		cfg.UnfreezeAtEpoch = 10
	case cfg.UnfreezeAtEpoch < 0:
		errs = append(errs, fmt.Errorf("BackboneFinetuningConfig.UnfreezeAtEpoch: must be >= 1 (0 means 10), got %d", cfg.UnfreezeAtEpoch))
	}
	positive := func(field string, p *float64, def float64) {
		switch {
		case *p == 0:
			*p = def
		case !(*p > 0) || math.IsInf(*p, 0):
			errs = append(errs, fmt.Errorf("BackboneFinetuningConfig.%s: must be a finite number > 0 (0 means %v), got %v", field, def, *p))
		}
	}
	positive("InitialRatio", &cfg.InitialRatio, 0.1)
	positive("Multiplier", &cfg.Multiplier, 1.5)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("callback.NewBackboneFinetuning: %w", err)
	}
	base := newCallback(FinetuningConfig{
		Freeze:   []string{cfg.Scope},
		Schedule: []FinetuneStep{{Epoch: cfg.UnfreezeAtEpoch, Unfreeze: []string{cfg.Scope}, LRScale: cfg.InitialRatio, Optimizer: cfg.Optimizer}},
	}, newFinetuning)
	if err := base.Validate(); err != nil {
		return nil, fmt.Errorf("callback.NewBackboneFinetuning: BackboneFinetuningConfig.Scope or Optimizer: %w", err)
	}
	return &BackboneFinetuning{base: base, state: backboneState{LastEpoch: -1}}, nil
}

// LRScale returns the backbone's current learning-rate multiplier (0 while
// it is frozen).
func (b *BackboneFinetuning) LRScale() float64 { return b.state.Scale }

// Frozen reports whether the variable at path is frozen now.
func (b *BackboneFinetuning) Frozen(path string) bool { return b.base.Frozen(path) }

// OnFitStart resets the state, or restores the backbone's group after a
// checkpoint was loaded.
func (b *BackboneFinetuning) OnFitStart(t *volt.Trainer) error {
	loaded := b.base.loaded
	if err := b.base.OnFitStart(t); err != nil {
		return err
	}
	if !loaded {
		b.state = backboneState{LastEpoch: -1}
		return nil
	}
	if g, ok := b.base.Group(0); ok {
		if err := t.SetLRScale(b.cfg.Optimizer, g, b.state.Scale); err != nil {
			return fmt.Errorf("BackboneFinetuning: %w", err)
		}
	}
	return nil
}

// OnBeforeBackward keeps the backbone out of the gradients while frozen.
func (b *BackboneFinetuning) OnBeforeBackward(s *volt.Step, loss *graph.Node) {
	b.base.OnBeforeBackward(s, loss)
}

// OnTrainBatchEnd checks, once per Fit, that the scope matches a variable.
func (b *BackboneFinetuning) OnTrainBatchEnd(t *volt.Trainer, out *volt.StepOutput, batch *data.Batch, idx int) error {
	return b.base.OnTrainBatchEnd(t, out, batch, idx)
}

// OnTrainEpochStart unfreezes the backbone at UnfreezeAtEpoch and grows its
// multiplier at the later epochs.
func (b *BackboneFinetuning) OnTrainEpochStart(t *volt.Trainer) error {
	e := t.CurrentEpoch()
	if e <= b.state.LastEpoch { // a run resumed inside the epoch
		return nil
	}
	if err := b.base.OnTrainEpochStart(t); err != nil {
		return err
	}
	g, ok := b.base.Group(0)
	if !ok {
		return nil
	}
	if b.state.LastEpoch < 0 {
		b.state.Scale = b.cfg.InitialRatio
	} else {
		b.state.Scale *= b.cfg.Multiplier
		if !b.cfg.NoAlign {
			b.state.Scale = min(b.state.Scale, 1)
		}
	}
	b.state.LastEpoch = e
	if err := t.SetLRScale(b.cfg.Optimizer, g, b.state.Scale); err != nil {
		return fmt.Errorf("BackboneFinetuning: %w", err)
	}
	return nil
}

// StateKey implements volt.Stateful; it names the scope.
func (b *BackboneFinetuning) StateKey() string {
	return fmt.Sprintf("BackboneFinetuning{scope=%s,at=%d,ratio=%s}", b.cfg.Scope, b.cfg.UnfreezeAtEpoch,
		strconv.FormatFloat(b.cfg.InitialRatio, 'g', -1, 64))
}

// State implements volt.Stateful: the schedule's state and the multiplier.
func (b *BackboneFinetuning) State() ([]byte, error) {
	base, err := b.base.State()
	if err != nil {
		return nil, err
	}
	s := b.state
	s.Base = base
	return json.Marshal(s)
}

// LoadState implements volt.Stateful; the loaded state survives the next OnFitStart.
func (b *BackboneFinetuning) LoadState(data []byte) error {
	var s backboneState
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("BackboneFinetuning.LoadState: %w", err)
	}
	if err := b.base.LoadState(s.Base); err != nil {
		return fmt.Errorf("BackboneFinetuning.LoadState: %w", err)
	}
	s.Base = nil
	b.state = s
	return nil
}

// Interface guards.
var (
	_ volt.OnFitStart        = (*BackboneFinetuning)(nil)
	_ volt.OnBeforeBackward  = (*BackboneFinetuning)(nil)
	_ volt.OnTrainBatchEnd   = (*BackboneFinetuning)(nil)
	_ volt.OnTrainEpochStart = (*BackboneFinetuning)(nil)
	_ volt.Stateful          = (*BackboneFinetuning)(nil)
)
