package volt_test

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// genModule is gen_scenarios.py's GenModel: the conformance module, plus the
// spec's stop or failure in a module hook (not in the sanity check), its
// optimizer and scheduler, the values it logs in steps and hooks, and
// manual optimization.
type genModule struct {
	*conformanceModule
	stop, fail    *genAction
	guard         *genGuard
	twoOptimizers []int
	epochEnd      *genEpochEnd
	optimizer     *genOptimizer
	scheduler     *genScheduler
	logs          []genLog
	manual        bool
	logTrainEpoch bool
}

// AutomaticOptimization implements volt.AutomaticOptimizer: false in a
// manual-optimization spec.
func (m *genModule) AutomaticOptimization() bool { return !m.manual }

// TrainingStep logs train_loss (per step, and per epoch where the spec
// says) and the spec's values; in manual optimization each optimizer steps
// on the loss of the weights as they are when it steps.
func (m *genModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.mse(s, b)
	s.Log("train_loss", l, volt.OnStep(true), volt.OnEpoch(m.logTrainEpoch))
	logInStep(s, m.logs, "training_step", l)
	if !m.manual {
		return l
	}
	for i, h := range s.Optimizers() {
		li := l
		if i > 0 {
			// The layer again, read after the first optimizer's update.
			pred := m.layer(s.Scope().Shared("layer"), b.Input(0))
			li = loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
		}
		h.Step(li)
	}
	return l
}

// ValidationStep logs val_loss and the spec's values.
func (m *genModule) ValidationStep(s *volt.Step, b volt.Batch) {
	l := m.mse(s, b)
	s.Log("val_loss", l)
	logInStep(s, m.logs, "validation_step", l)
}

// TestStep logs test_loss and the spec's values.
func (m *genModule) TestStep(s *volt.Step, b volt.Batch) {
	l := m.mse(s, b)
	s.Log("test_loss", l)
	logInStep(s, m.logs, "test_step", l)
}

// ConfigureOptimizers is gen_scenarios.py's configure_optimizers: two SGD
// optimizers (lr 0.1 and 0.05) with the spec's frequencies in automatic
// optimization, else the spec's optimizer with its scheduler, and an SGD at
// lr 0.05 second where manual optimization has two.
func (m *genModule) ConfigureOptimizers() volt.Optimizers {
	m.rec("ConfigureOptimizers")
	if m.twoOptimizers != nil && !m.manual {
		return volt.Optimizers{
			{Optimizer: optim.SGD(0.1), Frequency: m.twoOptimizers[0]},
			{Optimizer: optim.SGD(0.05), Frequency: m.twoOptimizers[1]},
		}
	}
	setup := volt.OptimizerSetup{Optimizer: m.optimizer.build()}
	if s := m.scheduler; s != nil {
		setup.Scheduler = &schedulerSpy{Scheduler: s.build(), log: m.log}
		setup.Interval, setup.SchedulerFrequency, setup.Monitor = volt.Interval(s.Interval), s.Frequency, s.Monitor
	}
	out := volt.Optimizers{setup}
	if m.twoOptimizers != nil {
		out = append(out, volt.OptimizerSetup{Optimizer: optim.SGD(0.05)})
	}
	return out
}

// genOptimizer is a spec's "optimizer" (nil: SGD at lr 0.1).
type genOptimizer struct {
	Kind        string    `json:"kind"`
	LR          float64   `json:"lr"`
	Momentum    float64   `json:"momentum"`
	Dampening   float64   `json:"dampening"`
	Nesterov    bool      `json:"nesterov"`
	WeightDecay float64   `json:"weight_decay"`
	Betas       []float64 `json:"betas"`
	Eps         float64   `json:"eps"`
	Alpha       float64   `json:"alpha"`
}

func (o *genOptimizer) build() *optim.Optimizer {
	if o == nil {
		return optim.SGD(0.1)
	}
	switch o.Kind {
	case "sgd":
		opt := optim.SGD(o.LR).WithMomentum(o.Momentum).WithDampening(o.Dampening).WithWeightDecay(o.WeightDecay)
		if o.Nesterov {
			opt.WithNesterov()
		}
		return opt
	case "adam":
		return optim.Adam(o.LR).WithBetas(o.Betas[0], o.Betas[1]).WithEps(o.Eps).WithWeightDecay(o.WeightDecay)
	case "adamw":
		return optim.AdamW(o.LR).WithBetas(o.Betas[0], o.Betas[1]).WithEps(o.Eps).WithWeightDecay(o.WeightDecay)
	case "rmsprop":
		return optim.RMSProp(o.LR).WithAlpha(o.Alpha).WithEps(o.Eps).WithMomentum(o.Momentum).WithWeightDecay(o.WeightDecay)
	}
	panic(fmt.Sprintf("generated spec: optimizer kind %q", o.Kind))
}

// genScheduler is a spec's "scheduler": torch's arguments of its kind, and
// Lightning's interval, frequency and monitor.
type genScheduler struct {
	Kind           string  `json:"kind"`
	Interval       string  `json:"interval"`
	Frequency      int     `json:"frequency"`
	StepSize       int     `json:"step_size"`
	Gamma          float64 `json:"gamma"`
	Milestones     []int   `json:"milestones"`
	TMax           int     `json:"t_max"`
	EtaMin         float64 `json:"eta_min"`
	T0             int     `json:"t_0"`
	TMult          int     `json:"t_mult"`
	StartFactor    float64 `json:"start_factor"`
	EndFactor      float64 `json:"end_factor"`
	TotalIters     int     `json:"total_iters"`
	MaxLR          float64 `json:"max_lr"`
	TotalSteps     int     `json:"total_steps"`
	PctStart       float64 `json:"pct_start"`
	AnnealStrategy string  `json:"anneal_strategy"`
	DivFactor      float64 `json:"div_factor"`
	FinalDivFactor float64 `json:"final_div_factor"`
	ThreePhase     bool    `json:"three_phase"`
	Fn             string  `json:"fn"`
	Monitor        string  `json:"monitor"`
	Mode           string  `json:"mode"`
	Factor         float64 `json:"factor"`
	Patience       int     `json:"patience"`
	Threshold      float64 `json:"threshold"`
	ThresholdMode  string  `json:"threshold_mode"`
	Cooldown       int     `json:"cooldown"`
	MinLR          float64 `json:"min_lr"`
	Eps            float64 `json:"eps"`
}

// genLambdas are gen_scenarios.py's LAMBDAS.
var genLambdas = map[string]func(int) float64{
	"exp09": func(s int) float64 {
		f := 1.0
		for range s {
			f *= 0.9
		}
		return f
	},
	"inv":   func(s int) float64 { return 1 / float64(1+s) },
	"warm3": func(s int) float64 { return min(1, float64(s+1)/3) },
}

// orNone is a torch value that volt's zero value would read as its default:
// 0 is written as -1 (volt's "none").
func orNone[T int | float64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

func (s *genScheduler) build() optim.Scheduler {
	switch s.Kind {
	case "step":
		return optim.NewStepLR(s.StepSize, s.Gamma)
	case "multistep":
		return optim.NewMultiStepLR(s.Milestones, s.Gamma)
	case "exponential":
		return optim.NewExponentialLR(s.Gamma)
	case "cosine":
		return optim.NewCosineAnnealingLR(s.TMax, s.EtaMin)
	case "cosine_warm":
		return optim.NewCosineAnnealingWarmRestarts(s.T0, s.TMult, s.EtaMin)
	case "linear":
		return &optim.LinearWarmup{StartFactor: s.StartFactor, EndFactor: s.EndFactor, TotalIters: s.TotalIters}
	case "onecycle":
		return &optim.OneCycleLR{MaxLR: s.MaxLR, TotalSteps: s.TotalSteps, PctStart: s.PctStart,
			Anneal: optim.AnnealStrategy(s.AnnealStrategy), DivFactor: s.DivFactor, FinalDivFactor: s.FinalDivFactor,
			ThreePhase: s.ThreePhase}
	case "lambda":
		fn, ok := genLambdas[s.Fn]
		if !ok {
			panic(fmt.Sprintf("generated spec: lambda %q", s.Fn))
		}
		return optim.NewLambdaLR(fn)
	case "plateau":
		return &optim.ReduceLROnPlateau{Mode: optim.PlateauMode(s.Mode), Factor: s.Factor, Patience: orNone(s.Patience),
			Threshold: orNone(s.Threshold), ThresholdMode: optim.ThresholdMode(s.ThresholdMode), Cooldown: s.Cooldown,
			MinLR: s.MinLR, Eps: orNone(s.Eps)}
	}
	panic(fmt.Sprintf("generated spec: scheduler kind %q", s.Kind))
}

// genLog is a value the spec logs (gen_scenarios.py's log_in_hook and
// log_in_step): in a step a*loss + b, in a hook a + b*epoch + c*batch_idx +
// d*global_step, with Lightning's self.log options (nil: the default).
type genLog struct {
	Name     string  `json:"name"`
	Hook     string  `json:"hook"`
	By       string  `json:"by"`
	A        float64 `json:"a"`
	B        float64 `json:"b"`
	C        float64 `json:"c"`
	D        float64 `json:"d"`
	ReduceFx string  `json:"reduce_fx"`
	Logger   bool    `json:"logger"`
	OnStep   *bool   `json:"on_step"`
	OnEpoch  *bool   `json:"on_epoch"`
	ProgBar  bool    `json:"prog_bar"` // version 6
}

// resolved is gen_scenarios.py's resolved_options: Lightning's on_step and
// on_epoch for the value (per step in training steps and training batch
// hooks by default, per epoch elsewhere).
func (g *genLog) resolved() (onStep, onEpoch bool) {
	perStep := g.Hook == "training_step" || g.Hook == "on_train_batch_start" || g.Hook == "on_train_batch_end"
	onStep, onEpoch = perStep, !perStep
	if g.OnStep != nil {
		onStep = *g.OnStep
	}
	if g.OnEpoch != nil {
		onEpoch = *g.OnEpoch
	}
	return onStep, onEpoch
}

var genReductions = map[string]volt.Reduction{"mean": volt.Mean, "sum": volt.Sum, "max": volt.Max, "min": volt.Min}

func (g *genLog) options() []volt.LogOption {
	r, ok := genReductions[g.ReduceFx]
	if !ok {
		panic(fmt.Sprintf("generated spec: reduce_fx %q", g.ReduceFx))
	}
	opts := []volt.LogOption{volt.Reduce(r)}
	if g.OnStep != nil {
		opts = append(opts, volt.OnStep(*g.OnStep))
	}
	if g.OnEpoch != nil {
		opts = append(opts, volt.OnEpoch(*g.OnEpoch))
	}
	if !g.Logger {
		opts = append(opts, volt.NoLogger)
	}
	if g.ProgBar {
		opts = append(opts, volt.ProgBar)
	}
	return opts
}

// logInStep logs the spec's values logged in a step (hook, Lightning's name).
func logInStep(s *volt.Step, logs []genLog, hook string, loss *graph.Node) {
	for _, g := range logs {
		if g.Hook == hook {
			s.Log(g.Name, graph.AddScalar(graph.MulScalar(loss, g.A), g.B), g.options()...)
		}
	}
}

// logInHook logs the spec's values that by ("module" or "callback") logs in
// hook (Lightning's name); batch is the batch index, -1 outside batch hooks.
func logInHook(t *volt.Trainer, logs []genLog, by, hook string, batch int) {
	for _, g := range logs {
		if g.Hook == hook && g.By == by {
			v := g.A + g.B*float64(t.CurrentEpoch()) + g.C*float64(max(batch, 0)) + g.D*float64(t.GlobalStep())
			t.Log(g.Name, v, g.options()...)
		}
	}
}

// act stops or fails if the spec asks it at hook (Lightning's name), now.
func (m *genModule) act(t *volt.Trainer, hook string, batch int) error {
	return actAt(t, "module", m.stop, m.fail, hook, batch)
}

// logAct logs the module's values of hook, then stops or fails there if
// the spec asks.
func (m *genModule) logAct(t *volt.Trainer, hook string, batch int) error {
	logInHook(t, m.logs, "module", hook, batch)
	return m.act(t, hook, batch)
}

// actAt is gen_scenarios.py's act: stop or fail if the spec asks by (the
// module or the callback) to at hook, now (never in the sanity check).
func actAt(t *volt.Trainer, by string, stop, fail *genAction, hook string, batch int) error {
	if t.State().Stage == volt.RunningSanityCheck {
		return nil
	}
	due := func(a *genAction) bool {
		return a != nil && orModule(a.By) == by && a.Hook == hook && a.Epoch == t.CurrentEpoch() &&
			(a.Batch == nil || (batch >= 0 && *a.Batch == batch))
	}
	if due(stop) {
		t.Stop("generated scenario: the " + by + " requested a stop in " + hook)
	}
	if due(fail) {
		return errPlannedFailure
	}
	return nil
}

func orModule(by string) string {
	if by == "" {
		return "module"
	}
	return by
}

// genActor is gen_scenarios.py's Actor: the callback asking for the spec's
// stop or failure when its By is "callback", right after the recorder, and
// logging the spec's values a callback logs (epoch_end among them).
type genActor struct {
	stop, fail *genAction
	epochEnd   *genEpochEnd
	logs       []genLog
}

func (a *genActor) act(t *volt.Trainer, hook string, batch int) error {
	logInHook(t, a.logs, "callback", hook, batch)
	return actAt(t, "callback", a.stop, a.fail, hook, batch)
}
func (a *genActor) OnTrainStart(t *volt.Trainer) error { return a.act(t, "on_train_start", -1) }
func (a *genActor) OnTrainEpochStart(t *volt.Trainer) error {
	return a.act(t, "on_train_epoch_start", -1)
}
func (a *genActor) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, i int) error {
	return a.act(t, "on_train_batch_start", i)
}
func (a *genActor) OnTrainBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i int) error {
	return a.act(t, "on_train_batch_end", i)
}
func (a *genActor) OnTrainEpochEnd(t *volt.Trainer) error {
	a.epochEnd.log(t, "callback")
	return a.act(t, "on_train_epoch_end", -1)
}
func (a *genActor) OnValidationStart(t *volt.Trainer) error {
	return a.act(t, "on_validation_start", -1)
}
func (a *genActor) OnValidationEpochStart(t *volt.Trainer) error {
	return a.act(t, "on_validation_epoch_start", -1)
}
func (a *genActor) OnValidationBatchStart(t *volt.Trainer, _ *data.Batch, i, _ int) error {
	return a.act(t, "on_validation_batch_start", i)
}
func (a *genActor) OnValidationBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i, _ int) error {
	return a.act(t, "on_validation_batch_end", i)
}
func (a *genActor) OnValidationEpochEnd(t *volt.Trainer) error {
	return a.act(t, "on_validation_epoch_end", -1)
}
func (a *genActor) OnValidationEnd(t *volt.Trainer) error { return a.act(t, "on_validation_end", -1) }
func (a *genActor) OnTestStart(t *volt.Trainer) error     { return a.act(t, "on_test_start", -1) }
func (a *genActor) OnTestEpochStart(t *volt.Trainer) error {
	return a.act(t, "on_test_epoch_start", -1)
}
func (a *genActor) OnTestBatchStart(t *volt.Trainer, _ *data.Batch, i, _ int) error {
	return a.act(t, "on_test_batch_start", i)
}
func (a *genActor) OnTestBatchEnd(t *volt.Trainer, _ *volt.StepOutput, _ *data.Batch, i, _ int) error {
	return a.act(t, "on_test_batch_end", i)
}
func (a *genActor) OnTestEpochEnd(t *volt.Trainer) error { return a.act(t, "on_test_epoch_end", -1) }

func (m *genModule) OnTrainStart(t *volt.Trainer) error {
	_ = m.hookRecorder.OnTrainStart(t)
	return m.logAct(t, "on_train_start", -1)
}

func (m *genModule) OnTrainEpochStart(t *volt.Trainer) error {
	_ = m.hookRecorder.OnTrainEpochStart(t)
	return m.logAct(t, "on_train_epoch_start", -1)
}

// OnTrainBatchStart logs the module's values of on_train_batch_start and
// fails where the spec fails training_step (volt runs it as a graph; the
// nearest host hook of the batch fails instead).
func (m *genModule) OnTrainBatchStart(t *volt.Trainer, b *data.Batch, i int) error {
	_ = m.conformanceModule.OnTrainBatchStart(t, b, i)
	// Lightning records the LR in training_step: a failure here (a
	// refused Log panics) or there comes before it.
	at := len(m.log.events) - 1
	recorded := m.log.events[at].lrRecorded
	m.log.events[at].lrRecorded = false
	logInHook(t, m.logs, "module", "on_train_batch_start", i)
	if err := m.act(t, "training_step", i); err != nil {
		return err
	}
	m.log.events[at].lrRecorded = recorded
	return nil
}

func (m *genModule) OnTrainBatchEnd(t *volt.Trainer, o *volt.StepOutput, b *data.Batch, i int) error {
	_ = m.conformanceModule.OnTrainBatchEnd(t, o, b, i)
	return m.logAct(t, "on_train_batch_end", i)
}

func (m *genModule) OnTrainEpochEnd(t *volt.Trainer) error {
	_ = m.hookRecorder.OnTrainEpochEnd(t)
	m.epochEnd.log(t, "module")
	return m.logAct(t, "on_train_epoch_end", -1)
}

func (m *genModule) OnValidationStart(t *volt.Trainer) error {
	_ = m.hookRecorder.OnValidationStart(t)
	return m.logAct(t, "on_validation_start", -1)
}

func (m *genModule) OnValidationEpochStart(t *volt.Trainer) error {
	_ = m.hookRecorder.OnValidationEpochStart(t)
	return m.logAct(t, "on_validation_epoch_start", -1)
}

// OnValidationBatchStart logs the module's values of the hook and fails
// where the spec fails validation_step.
func (m *genModule) OnValidationBatchStart(t *volt.Trainer, b *data.Batch, i, dl int) error {
	_ = m.hookRecorder.OnValidationBatchStart(t, b, i, dl)
	logInHook(t, m.logs, "module", "on_validation_batch_start", i)
	return m.act(t, "validation_step", i)
}

func (m *genModule) OnValidationBatchEnd(t *volt.Trainer, o *volt.StepOutput, b *data.Batch, i, dl int) error {
	_ = m.hookRecorder.OnValidationBatchEnd(t, o, b, i, dl)
	return m.logAct(t, "on_validation_batch_end", i)
}

func (m *genModule) OnValidationEpochEnd(t *volt.Trainer) error {
	_ = m.hookRecorder.OnValidationEpochEnd(t)
	if m.guard != nil && t.State().Stage != volt.RunningSanityCheck {
		t.Log("guard", m.guard.at(t.CurrentEpoch()))
	}
	return m.logAct(t, "on_validation_epoch_end", -1)
}

func (m *genModule) OnValidationEnd(t *volt.Trainer) error {
	_ = m.hookRecorder.OnValidationEnd(t)
	return m.act(t, "on_validation_end", -1)
}

func (m *genModule) OnTestStart(t *volt.Trainer) error {
	_ = m.hookRecorder.OnTestStart(t)
	return m.logAct(t, "on_test_start", -1)
}

func (m *genModule) OnTestEpochStart(t *volt.Trainer) error {
	_ = m.hookRecorder.OnTestEpochStart(t)
	return m.logAct(t, "on_test_epoch_start", -1)
}

func (m *genModule) OnTestBatchStart(t *volt.Trainer, b *data.Batch, i, dl int) error {
	_ = m.hookRecorder.OnTestBatchStart(t, b, i, dl)
	return m.logAct(t, "on_test_batch_start", i)
}

func (m *genModule) OnTestBatchEnd(t *volt.Trainer, o *volt.StepOutput, b *data.Batch, i, dl int) error {
	_ = m.hookRecorder.OnTestBatchEnd(t, o, b, i, dl)
	return m.logAct(t, "on_test_batch_end", i)
}

func (m *genModule) OnTestEpochEnd(t *volt.Trainer) error {
	_ = m.hookRecorder.OnTestEpochEnd(t)
	return m.logAct(t, "on_test_epoch_end", -1)
}
