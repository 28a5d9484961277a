package callback

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
)

// BackboneFinetuning keeps a pretrained backbone frozen for the first epochs,
// then trains it with a learning rate that grows each epoch up to the
// module's (Lightning 2.2.5's BackboneFinetuning).
//
// The Backbone's variables are frozen until epoch UnfreezeAtEpoch; then they
// join the optimizer as a parameter group whose learning rate is InitialLR,
// or InitialRatio times the optimizer's current rate. At each later epoch
// start the backbone's rate becomes λ(epoch+1) times its previous rate
// (Lambda, or the constant Multiplier), capped at the optimizer's current
// rate unless NoAlign (should_align=False) — Lightning's formula, step for
// step: the backbone's rate is an absolute value, set at each epoch start
// (volt holds it as the group's LRScale of the optimizer's rate at that
// moment). Within an epoch, a scheduler stepping per batch moves the
// backbone's rate in proportion with the optimizer's, as torch's
// multiplicative schedulers (StepLR, ExponentialLR, MultiStepLR) move
// every group.
//
// The batch normalizations in the backbone (batchnorm.IsAffine) train all
// along at the optimizer's rate, and the backbone's group leaves them out,
// as in Lightning, whose freeze_before_training freezes the backbone with
// train_bn=True whatever BackboneFinetuning's train_bn says (so its
// train_bn=False changes nothing when configure_optimizers passes the
// parameters that require gradients, as Lightning's documentation writes
// it). Finetuning.FreezeBatchNorm freezes them.
type BackboneFinetuning struct {
	configured[BackboneFinetuningConfig]
	base  *Finetuning
	state backboneState
}

// BackboneFinetuningConfig configures BackboneFinetuning.
type BackboneFinetuningConfig struct {
	// Backbone selects the backbone's variables: scope paths or PyTorch
	// names and patterns (volt.Selects). Empty means {"backbone"}, the
	// module's backbone attribute in Lightning. For torchvision.ResNet18
	// built at the step's root scope, everything but the classifier is
	// {"conv1", "bn1", "layer*"}.
	Backbone []string
	// UnfreezeAtEpoch is the epoch (counted from 0) at whose start the
	// backbone is unfrozen; 0 means 10 (Lightning's default).
	UnfreezeAtEpoch int
	// InitialRatio is the backbone's learning rate when unfrozen, as a
	// fraction of the optimizer's current rate; 0 means 0.1 (Lightning's
	// backbone_initial_ratio_lr). InitialLR replaces it.
	InitialRatio float64
	// InitialLR, when > 0, is the backbone's learning rate when unfrozen
	// (Lightning's backbone_initial_lr).
	InitialLR float64
	// Multiplier is λ, the factor of the backbone's rate at each later epoch
	// start; 0 means 2 (Lightning's default lambda_func, multiplicative,
	// returns 2.0). Lambda replaces it.
	Multiplier float64
	// Lambda, when not nil, is Lightning's lambda_func: the backbone's
	// rate at the start of epoch e (after the unfreeze) is Lambda(e+1)
	// times its previous rate. It cannot be set from a config file.
	Lambda func(epoch int) float64 `json:"-"`
	// NoAlign lets the backbone's rate grow past the optimizer's
	// (Lightning's should_align=False).
	NoAlign bool
	// Optimizer is the index of the optimizer that trains the backbone.
	Optimizer int
}

// backboneState is what a checkpoint keeps.
type backboneState struct {
	Base      json.RawMessage `json:"base"`
	Scale     float64         `json:"lr_scale"`
	LastEpoch int             `json:"last_epoch"` // the last epoch whose rate was set (-1: none)
	// PreviousLR is Lightning's previous_backbone_lr: the backbone's rate
	// set at the start of LastEpoch.
	PreviousLR *float64 `json:"previous_backbone_lr,omitempty"`
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
	if len(cfg.Backbone) == 0 {
		cfg.Backbone = []string{"backbone"}
	}
	cfg.Backbone = slices.Clone(cfg.Backbone)
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
	if cfg.InitialLR != 0 && (!(cfg.InitialLR > 0) || math.IsInf(cfg.InitialLR, 0)) {
		errs = append(errs, fmt.Errorf("BackboneFinetuningConfig.InitialLR: must be a finite number > 0 (0: InitialRatio of the optimizer's rate), got %v", cfg.InitialLR))
	}
	if cfg.Lambda != nil && cfg.Multiplier != 0 {
		errs = append(errs, fmt.Errorf("BackboneFinetuningConfig.Lambda and Multiplier are both set (%v): set one", cfg.Multiplier))
	} else if cfg.Lambda == nil {
		positive("Multiplier", &cfg.Multiplier, 2)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("callback.NewBackboneFinetuning: %w", err)
	}
	base := newCallback(FinetuningConfig{
		Freeze:   cfg.Backbone,
		Schedule: []FinetuneStep{{Epoch: cfg.UnfreezeAtEpoch, Unfreeze: cfg.Backbone, LRScale: cfg.InitialRatio, Optimizer: cfg.Optimizer}},
	}, newFinetuning)
	if err := base.Validate(); err != nil {
		return nil, fmt.Errorf("callback.NewBackboneFinetuning: BackboneFinetuningConfig.Backbone or Optimizer: %w", err)
	}
	return &BackboneFinetuning{base: base, state: backboneState{LastEpoch: -1}}, nil
}

// LRScale returns the backbone's current learning-rate multiplier of the
// optimizer's rate (0 while it is frozen).
func (b *BackboneFinetuning) LRScale() float64 { return b.state.Scale }

// LR returns the backbone's learning rate set at the last epoch start
// (Lightning's previous_backbone_lr), 0 while it is frozen.
func (b *BackboneFinetuning) LR() float64 {
	if b.state.PreviousLR == nil {
		return 0
	}
	return *b.state.PreviousLR
}

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
	if b.state.PreviousLR == nil && b.state.LastEpoch >= 0 {
		// A checkpoint from before volt kept the rate itself.
		lr := b.state.Scale * b.optimizerLR(t)
		b.state.PreviousLR = &lr
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

// OnTrainEpochStart unfreezes the backbone at UnfreezeAtEpoch and sets its
// learning rate at the later epochs.
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
	current := b.optimizerLR(t)
	var lr float64
	switch {
	case b.state.PreviousLR == nil && b.cfg.InitialLR > 0:
		lr = b.cfg.InitialLR
	case b.state.PreviousLR == nil:
		lr = current * b.cfg.InitialRatio
	default:
		lambda := b.cfg.Multiplier
		if b.cfg.Lambda != nil {
			lambda = b.cfg.Lambda(e + 1)
		}
		lr = lambda * *b.state.PreviousLR
		if !b.cfg.NoAlign && lr > current {
			lr = current
		}
	}
	scale := 0.0
	switch {
	case current > 0:
		scale = lr / current
	case lr != 0:
		return fmt.Errorf("BackboneFinetuning: optimizer %d's learning rate is 0 at epoch %d: the backbone's rate %v cannot be set as a multiple of it", b.cfg.Optimizer, e, lr)
	}
	if math.IsNaN(scale) || math.IsInf(scale, 0) || scale < 0 {
		return fmt.Errorf("BackboneFinetuning: the backbone's learning rate at epoch %d is %v (the optimizer's %v): Lambda must return a finite number >= 0", e, lr, current)
	}
	b.state.PreviousLR, b.state.Scale, b.state.LastEpoch = &lr, scale, e
	if err := t.SetLRScale(b.cfg.Optimizer, g, scale); err != nil {
		return fmt.Errorf("BackboneFinetuning: %w", err)
	}
	return nil
}

// optimizerLR returns the backbone's optimizer's current learning rate,
// Lightning's optimizer.param_groups[0]["lr"]: the scheduler's or the
// configured float64 value behind the one the optimizer holds.
func (b *BackboneFinetuning) optimizerLR(t *volt.Trainer) float64 {
	lrs, opts := t.LearningRates(), t.Optimizers()
	if b.cfg.Optimizer >= len(lrs) || b.cfg.Optimizer >= len(opts) {
		return 0
	}
	return exactLR(lrs[b.cfg.Optimizer], opts[b.cfg.Optimizer])
}

// StateKey implements volt.Stateful; it names the backbone.
func (b *BackboneFinetuning) StateKey() string {
	return fmt.Sprintf("BackboneFinetuning{scope=%s,at=%d,ratio=%s}", strings.Join(b.cfg.Backbone, ","), b.cfg.UnfreezeAtEpoch,
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
