package volt

import (
	"fmt"
	"math"
	"path"
	"strings"

	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/engine"
)

// ParamGroup is a set of variables with their own learning rate and weight
// decay, like a PyTorch parameter group. A variable belongs to the first
// group of its optimizer that selects it, by scope (Params) or by name
// (Names); variables in no group use the optimizer's settings.
//
// nanoGPT's split (weight decay on the matrices, none on biases and
// normalisation gains and offsets) is one group:
//
//	Groups: []volt.ParamGroup{volt.NoWeightDecay("biases", "gain", "offset", "scale")}
//
// A group's settings are part of the module's configuration (returned again
// by ConfigureOptimizers when a run resumes); its LRScale lives in the store,
// so a multiplier changed with Trainer.SetLRScale is checkpointed.
type ParamGroup struct {
	// Params selects variables by scope: a variable belongs when its path
	// is one of them or starts with one of them and "/" ("/encoder").
	Params []string
	// Names selects variables by name, the last element of their path, with
	// path.Match patterns: "biases", "gain", "*_bias".
	Names []string
	// LRScale multiplies the optimizer's (scheduled) learning rate for the
	// group: 1 keeps it, 0 freezes the group until Trainer.SetLRScale
	// changes it. A PyTorch group's "lr": x is LRScale x / the optimizer's LR.
	LRScale float64
	// WeightDecay, when not nil, replaces the optimizer's weight decay for
	// the group (a PyTorch group's "weight_decay"): L2 for SGD, Adam and
	// RMSProp, decoupled for AdamW. Decay(0) or NoWeightDecay turn it off.
	WeightDecay *float64
}

// NoWeightDecay returns a group, at the optimizer's learning rate, of the
// variables whose names match patterns (ParamGroup.Names), with weight
// decay 0: GoMLX's layers name their biases "biases", LayerNorm's
// parameters "gain" and "offset", BatchNorm's and RMSNorm's "scale" and
// "offset".
func NoWeightDecay(patterns ...string) ParamGroup {
	return ParamGroup{Names: patterns, LRScale: 1, WeightDecay: Decay(0)}
}

// Decay returns a pointer to wd, for ParamGroup.WeightDecay.
func Decay(wd float64) *float64 { return &wd }

// owns reports whether the group holds variable path.
func (g *ParamGroup) owns(varPath string) bool {
	for _, prefix := range g.Params {
		if varPath == prefix || strings.HasPrefix(varPath, strings.TrimSuffix(prefix, "/")+"/") {
			return true
		}
	}
	if len(g.Names) > 0 {
		name := varPath[strings.LastIndex(varPath, "/")+1:]
		for _, pattern := range g.Names {
			if ok, _ := path.Match(pattern, name); ok {
				return true
			}
		}
	}
	return false
}

// validateGroups checks each group's selectors and numbers, naming the
// group and field.
func validateGroups(groups []ParamGroup) error {
	for j, g := range groups {
		if len(g.Params) == 0 && len(g.Names) == 0 {
			return fmt.Errorf("Groups[%d].Params and Names are both empty: the group selects no variable; set Params (scopes) or Names (variable-name patterns)", j)
		}
		for k, p := range g.Params {
			if !strings.HasPrefix(p, "/") {
				return fmt.Errorf("Groups[%d].Params[%d] %q must be a scope path starting with \"/\"", j, k, p)
			}
		}
		for k, pattern := range g.Names {
			if _, err := path.Match(pattern, ""); err != nil || pattern == "" || strings.Contains(pattern, "/") {
				return fmt.Errorf("Groups[%d].Names[%d] %q must be a variable name or path.Match pattern without \"/\"", j, k, pattern)
			}
		}
		if g.LRScale < 0 || math.IsNaN(g.LRScale) || math.IsInf(g.LRScale, 0) {
			return fmt.Errorf("Groups[%d].LRScale must be a finite number >= 0, got %v", j, g.LRScale)
		}
		if wd := g.WeightDecay; wd != nil && (*wd < 0 || math.IsNaN(*wd) || math.IsInf(*wd, 0)) {
			return fmt.Errorf("Groups[%d].WeightDecay must be a finite number >= 0, got %v", j, *wd)
		}
	}
	return nil
}

// weightDecay returns the weight decay of variable v's group, ok false
// where the optimizer's applies, for the compiled update
// (engine.UpdateSpec.WeightDecay).
func (o *OptimizerSetup) weightDecay(v *model.Variable) (wd float64, ok bool) {
	for j := range o.Groups {
		if o.Groups[j].owns(v.Path()) {
			if o.Groups[j].WeightDecay == nil {
				return 0, false
			}
			return *o.Groups[j].WeightDecay, true
		}
	}
	return 0, false
}

// lrScale returns the group of variable v and its LR multiplier, for the
// compiled update (engine.UpdateSpec.LRScale).
func (o *OptimizerSetup) lrScale(v *model.Variable) (group int, scale float64, ok bool) {
	for j := range o.Groups {
		if o.Groups[j].owns(v.Path()) {
			return j, o.Groups[j].LRScale, true
		}
	}
	return 0, 0, false
}

// SetLRScale changes the learning-rate multiplier of group g of optimizer
// opt, effective from the next step (no recompilation).
func (t *Trainer) SetLRScale(opt, g int, scale float64) error {
	if t.perModule.optimization == nil || opt < 0 || opt >= len(t.perModule.optimization.opts) || g < 0 || g >= len(t.perModule.optimization.opts[opt].Groups) {
		return fmt.Errorf("volt: SetLRScale: no group %d in optimizer %d", g, opt)
	}
	t.perModule.optimization.opts[opt].Groups[g].LRScale = scale
	return engine.SetLRScale(t.eng.Store, opt, g, scale)
}

// AddParamGroup adds a parameter group to optimizer opt (for example when a
// frozen backbone is unfrozen) and retraces the training step, returning the
// group's index.
func (t *Trainer) AddParamGroup(opt int, group ParamGroup) (int, error) {
	if t.perModule.optimization == nil || opt < 0 || opt >= len(t.perModule.optimization.opts) {
		return 0, fmt.Errorf("volt: AddParamGroup: no optimizer %d", opt)
	}
	if err := validateGroups([]ParamGroup{group}); err != nil {
		return 0, fmt.Errorf("volt: AddParamGroup: %w", err)
	}
	t.perModule.optimization.opts[opt].Groups = append(t.perModule.optimization.opts[opt].Groups, group)
	t.RetraceTrainingStep()
	return len(t.perModule.optimization.opts[opt].Groups) - 1, nil
}

// SetLearningRate writes lr into optimizer opt's learning-rate variable, for
// callbacks that drive the rate themselves (stochastic weight averaging);
// a scheduler's next step overrides it.
func (t *Trainer) SetLearningRate(opt int, lr float64) error {
	if t.perModule.optimization == nil || opt < 0 || opt >= len(t.perModule.optimization.opts) {
		return fmt.Errorf("volt: SetLearningRate: no optimizer %d", opt)
	}
	return t.setLR(opt, lr)
}

// RetraceTrainingStep drops the compiled training steps so that the next
// batch traces them again: call it after changing which variables are
// trainable (freezing or unfreezing), which is fixed in a compiled step.
func (t *Trainer) RetraceTrainingStep() {
	if t.perModule.optimization == nil {
		return
	}
	if c, ok := t.perModule.optimization.steps.(*compiledSteps); ok { // a fake has nothing traced
		c.retrace()
	}
}
