package volt

import (
	"fmt"
	"github.com/voltml/volt/internal/engine"

	"github.com/gomlx/gomlx/ml/model"
)

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
	if t.optimization == nil || opt < 0 || opt >= len(t.optimization.opts) || g < 0 || g >= len(t.optimization.opts[opt].Groups) {
		return fmt.Errorf("volt: SetLRScale: no group %d in optimizer %d", g, opt)
	}
	t.optimization.opts[opt].Groups[g].LRScale = scale
	return engine.SetLRScale(t.eng.Store, opt, g, scale)
}

// AddParamGroup adds a parameter group to optimizer opt (for example when a
// frozen backbone is unfrozen) and retraces the training step, returning the
// group's index.
func (t *Trainer) AddParamGroup(opt int, group ParamGroup) (int, error) {
	if t.optimization == nil || opt < 0 || opt >= len(t.optimization.opts) {
		return 0, fmt.Errorf("volt: AddParamGroup: no optimizer %d", opt)
	}
	t.optimization.opts[opt].Groups = append(t.optimization.opts[opt].Groups, group)
	t.RetraceTrainingStep()
	return len(t.optimization.opts[opt].Groups) - 1, nil
}

// SetLearningRate writes lr into optimizer opt's learning-rate variable, for
// callbacks that drive the rate themselves (stochastic weight averaging);
// a scheduler's next step overrides it.
func (t *Trainer) SetLearningRate(opt int, lr float64) error {
	if t.optimization == nil || opt < 0 || opt >= len(t.optimization.opts) {
		return fmt.Errorf("volt: SetLearningRate: no optimizer %d", opt)
	}
	return t.setLR(opt, lr)
}

// RetraceTrainingStep drops the compiled training steps so that the next
// batch traces them again: call it after changing which variables are
// trainable (freezing or unfreezing), which is fixed in a compiled step.
func (t *Trainer) RetraceTrainingStep() {
	if t.optimization == nil {
		return
	}
	if c, ok := t.optimization.steps.(*compiledSteps); ok { // a fake has nothing traced
		c.retrace()
	}
}
