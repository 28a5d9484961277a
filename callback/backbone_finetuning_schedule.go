package callback

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt"
	"github.com/voltml/volt/batchnorm"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
)

// Finetuning freezes variable scopes for the start of Fit and unfreezes them
// at chosen epochs, adding each unfrozen set to an optimizer as a parameter
// group with its own learning-rate multiplier (Lightning's BaseFinetuning,
// with freeze_before_training and finetune_function written as a schedule).
// BackboneFinetuning is the common case built on it.
//
// Freezing happens while the training step is traced (an OnBeforeBackward
// hook): GoMLX creates a module's variables during its first trace, so
// nothing exists to freeze before it, and the hook runs after the forward
// pass has created them but before volt collects the trainable variables
// the gradients are taken for. A frozen variable is therefore never updated,
// not even by the first step. At the start of a scheduled epoch the step's
// scopes become trainable again and Trainer.AddParamGroup adds them to the
// optimizer (which retraces the training step).
//
// Scopes are volt.Selects selectors: a variable path prefix such as
// "/backbone" (a variable belongs to it when its path is the scope or starts
// with scope+"/"), or a PyTorch name or pattern such as "layer4" or
// "layer*" for a model whose variables carry torch's names (package nn's
// torch-named layers, torchvision, a state dict loaded with package
// statedict). After the first training batch every scope must match at
// least one variable; a typo is an error, as in Lightning.
//
// Batch normalizations (batchnorm.IsAffine) are Lightning's train_bn=True
// by default: their weights and biases stay trainable while the rest of
// their scope is frozen, in whatever group of the optimizer they were
// (torch's configure_optimizers with filter(lambda p: p.requires_grad,
// ...) puts them in the first), and the groups added when unfreezing leave
// them out. FreezeBatchNorm (train_bn=False) freezes them with their scope
// for good: Lightning never adds them to a group either. Their running
// statistics stay as they are until a schedule step unfreezes their scope
// (Lightning's track_running_stats=False, and True again in make_trainable;
// batchnorm.FreezeRunningStats).
type Finetuning struct {
	configured[FinetuningConfig]
	state   finetuningState
	loaded  bool // LoadState was called: keep the state at the next OnFitStart
	checked bool // the scopes were checked against the store in this Fit
	// bnAffine holds the paths of the batch normalizations' weights and
	// biases, found while tracing.
	bnAffine map[string]bool
}

// FinetuningConfig configures Finetuning.
type FinetuningConfig struct {
	// Freeze lists the scopes frozen when Fit starts: scope paths or
	// PyTorch names (volt.Selects).
	Freeze []string
	// Schedule lists what to unfreeze and when; steps run in epoch order.
	Schedule []FinetuneStep
	// FreezeBatchNorm freezes the batch normalizations in Freeze's scopes
	// too, and keeps them frozen (Lightning's train_bn=False); by default
	// they train all along (train_bn=True).
	FreezeBatchNorm bool
}

// FinetuneStep unfreezes scopes at the start of an epoch.
type FinetuneStep struct {
	// Epoch is the epoch (counted from 0) at whose start the step runs.
	Epoch int
	// Unfreeze lists the scopes made trainable (usually some of Freeze),
	// as scope paths or PyTorch names (volt.Selects).
	Unfreeze []string
	// LRScale multiplies the optimizer's learning rate for the unfrozen
	// variables; 0 means 0.1 (Lightning's initial_denom_lr=10).
	LRScale float64
	// Optimizer is the index of the optimizer that receives the group.
	Optimizer int
}

// finetuningState is what a checkpoint keeps.
type finetuningState struct {
	// Applied is the number of schedule steps applied.
	Applied int `json:"applied"`
	// Groups is the parameter-group index each applied step received.
	Groups []int `json:"groups,omitempty"`
}

// NewFinetuning returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewFinetuning(cfg FinetuningConfig) *Finetuning { return newCallback(cfg, newFinetuning) }

// newFinetuning builds the callback for cfg, filling in the defaults its zero
// values stand for, or reports its bad fields.
func newFinetuning(cfg *FinetuningConfig) (*Finetuning, error) {
	var errs []error
	checkScopes := func(field string, scopes []string) {
		for i, s := range scopes {
			if s == "/" {
				errs = append(errs, fmt.Errorf("FinetuningConfig.%s[%d]: \"/\" is the root, every variable: name a scope below it, such as \"/backbone\"", field, i))
			} else if err := volt.CheckSelector(s); err != nil {
				errs = append(errs, fmt.Errorf("FinetuningConfig.%s[%d]: %w", field, i, err))
			}
		}
	}
	checkScopes("Freeze", cfg.Freeze)
	cfg.Schedule = slices.Clone(cfg.Schedule)
	for i := range cfg.Schedule {
		st := &cfg.Schedule[i]
		field := fmt.Sprintf("Schedule[%d]", i)
		if st.Epoch < 0 {
			errs = append(errs, fmt.Errorf("FinetuningConfig.%s.Epoch: must be >= 0, got %d", field, st.Epoch))
		}
		if len(st.Unfreeze) == 0 {
			errs = append(errs, fmt.Errorf("FinetuningConfig.%s.Unfreeze: required: the scopes to unfreeze", field))
		}
		checkScopes(field+".Unfreeze", st.Unfreeze)
		switch {
		case st.LRScale == 0:
			st.LRScale = 0.1
		case !(st.LRScale > 0) || math.IsInf(st.LRScale, 0):
			errs = append(errs, fmt.Errorf("FinetuningConfig.%s.LRScale: must be a finite number > 0 (0 means 0.1), got %v", field, st.LRScale))
		}
		if st.Optimizer < 0 {
			errs = append(errs, fmt.Errorf("FinetuningConfig.%s.Optimizer: must be >= 0, got %d", field, st.Optimizer))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("callback.NewFinetuning: %w", err)
	}
	slices.SortStableFunc(cfg.Schedule, func(a, b FinetuneStep) int { return cmp.Compare(a.Epoch, b.Epoch) })
	return &Finetuning{}, nil
}

// inScope reports whether variable path belongs to one of scopes.
func inScope(path string, scopes []string) bool {
	return slices.ContainsFunc(scopes, func(s string) bool { return volt.Selects(s, path) })
}

// Frozen reports whether the variable at path is frozen now (a batch
// normalization's weight or bias is known as one once the training step
// has been traced).
func (f *Finetuning) Frozen(path string) bool {
	if !inScope(path, f.cfg.Freeze) {
		return false
	}
	if f.bnAffine[path] {
		return f.cfg.FreezeBatchNorm
	}
	for _, st := range f.cfg.Schedule[:f.state.Applied] {
		if inScope(path, st.Unfreeze) {
			return false
		}
	}
	return true
}

// Applied returns the number of schedule steps applied so far.
func (f *Finetuning) Applied() int { return f.state.Applied }

// Group returns the parameter-group index that schedule step i (in epoch
// order) received, and whether it was applied.
func (f *Finetuning) Group(i int) (int, bool) {
	if i < 0 || i >= f.state.Applied {
		return 0, false
	}
	return f.state.Groups[i], true
}

// OnFitStart resets the schedule, or, after a checkpoint was loaded, adds the
// parameter groups of the steps already applied back to the optimizers.
func (f *Finetuning) OnFitStart(t *volt.Trainer) error {
	n := len(t.Optimizers())
	for i, st := range f.cfg.Schedule {
		if st.Optimizer >= n {
			return fmt.Errorf("FinetuningConfig.Schedule[%d].Optimizer: %d, but the module has %d optimizer(s)", i, st.Optimizer, n)
		}
	}
	f.checked = false
	if f.cfg.FreezeBatchNorm && t.Store() != nil {
		// Lightning's freeze(train_bn=False) sets track_running_stats=False
		// on the frozen batch norms, and unfreezing sets it back.
		batchnorm.FreezeRunningStats(t.Store(), func(scope string) bool { return f.Frozen(scope + "/running_mean") })
	}
	if !f.loaded {
		f.state = finetuningState{}
		return nil
	}
	f.loaded = false
	applied := f.state
	f.state = finetuningState{}
	for range applied.Applied {
		if err := f.apply(t); err != nil {
			return err
		}
	}
	if !slices.Equal(f.state.Groups, applied.Groups) {
		return fmt.Errorf("Finetuning: the checkpoint's parameter groups %v do not match the ones re-created %v (did ConfigureOptimizers change?)", applied.Groups, f.state.Groups)
	}
	return nil
}

// OnBeforeBackward freezes, while the training step is traced, the
// variables of the frozen scopes, before volt collects the trainable ones.
func (f *Finetuning) OnBeforeBackward(s *volt.Step, _ *graph.Node) {
	store := s.Scope().Store()
	for v := range store.IterVariables() {
		if engine.ModuleVariable(v.Path()) && batchnorm.IsAffine(store, v.Path()) {
			if f.bnAffine == nil {
				f.bnAffine = map[string]bool{}
			}
			f.bnAffine[v.Path()] = true
		}
	}
	for v := range store.IterVariables() {
		if engine.ModuleVariable(v.Path()) && f.Frozen(v.Path()) {
			v.SetTrainable(false)
		}
	}
}

// OnTrainBatchEnd checks, once per Fit, that every scope matches a variable.
func (f *Finetuning) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, _ int) error {
	if f.checked {
		return nil
	}
	f.checked = true
	return f.checkScopes(t.Store())
}

func (f *Finetuning) checkScopes(store *model.Store) error {
	var paths []string
	tops := map[string]bool{}
	for v := range store.IterVariables() {
		p := v.Path()
		if !engine.ModuleVariable(p) {
			continue
		}
		paths = append(paths, p)
		top, _, _ := strings.Cut(p[1:], "/")
		tops[top] = true
	}
	var missing []string
	check := func(field string, scopes []string) {
		for i, s := range scopes {
			if !slices.ContainsFunc(paths, func(p string) bool { return inScope(p, []string{s}) }) {
				missing = append(missing, fmt.Sprintf("%s[%d] %q", field, i, s))
			}
		}
	}
	check("Freeze", f.cfg.Freeze)
	for i, st := range f.cfg.Schedule {
		check(fmt.Sprintf("Schedule[%d].Unfreeze", i), st.Unfreeze)
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("Finetuning: FinetuningConfig.%s match(es) no variable; the module's top-level names are %s",
		strings.Join(missing, ", "), strings.Join(slices.Sorted(maps.Keys(tops)), ", "))
}

// OnTrainEpochStart applies the steps scheduled up to this epoch.
func (f *Finetuning) OnTrainEpochStart(t *volt.Trainer) error {
	for f.state.Applied < len(f.cfg.Schedule) && f.cfg.Schedule[f.state.Applied].Epoch <= t.CurrentEpoch() {
		if err := f.apply(t); err != nil {
			return err
		}
		st := f.cfg.Schedule[f.state.Applied-1]
		t.Slog().Info("volt: Finetuning: unfroze scopes", "epoch", t.CurrentEpoch(), "scopes", st.Unfreeze,
			"optimizer", st.Optimizer, "lr_scale", st.LRScale)
	}
	return nil
}

// apply runs the next schedule step: its variables become trainable and a
// parameter group with its multiplier is added to its optimizer.
func (f *Finetuning) apply(t *volt.Trainer) error {
	st := f.cfg.Schedule[f.state.Applied]
	f.state.Applied++
	if store := t.Store(); store != nil {
		for v := range store.IterVariables() {
			if engine.ModuleVariable(v.Path()) && inScope(v.Path(), st.Unfreeze) && !f.Frozen(v.Path()) {
				v.SetTrainable(true)
			}
		}
	}
	// The group leaves the batch normalizations where they are: trainable
	// all along in their former group, or frozen for good.
	g, err := t.AddParamGroup(st.Optimizer, volt.ParamGroup{Params: slices.Clone(st.Unfreeze), ExcludeBatchNorm: true, LRScale: st.LRScale})
	if err != nil {
		return fmt.Errorf("Finetuning: %w", err)
	}
	f.state.Groups = append(f.state.Groups, g)
	return nil
}

// StateKey implements volt.Stateful; it names the frozen scopes.
func (f *Finetuning) StateKey() string {
	return fmt.Sprintf("Finetuning{freeze=%s}", strings.Join(f.cfg.Freeze, ","))
}

// State implements volt.Stateful: the steps applied and their groups.
func (f *Finetuning) State() ([]byte, error) { return json.Marshal(f.state) }

// LoadState implements volt.Stateful; the loaded state survives the next OnFitStart.
func (f *Finetuning) LoadState(b []byte) error {
	var s finetuningState
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("Finetuning.LoadState: %w", err)
	}
	if s.Applied < 0 || s.Applied > len(f.cfg.Schedule) || len(s.Groups) != s.Applied {
		return fmt.Errorf("Finetuning.LoadState: %d steps applied with %d groups, for a schedule of %d steps", s.Applied, len(s.Groups), len(f.cfg.Schedule))
	}
	f.state, f.loaded = s, true
	return nil
}

// Interface guards.
var (
	_ volt.OnFitStart        = (*Finetuning)(nil)
	_ volt.OnBeforeBackward  = (*Finetuning)(nil)
	_ volt.OnTrainBatchEnd   = (*Finetuning)(nil)
	_ volt.OnTrainEpochStart = (*Finetuning)(nil)
	_ volt.Stateful          = (*Finetuning)(nil)
)
