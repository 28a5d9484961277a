package callback

import (
	"fmt"

	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// LearningRateMonitor logs the learning rate of each optimizer during Fit
// (Lightning's LearningRateMonitor).
//
// Names follow Lightning: "lr-<Optimizer>" with the PyTorch class name
// ("lr-SGD", "lr-Adam", "lr-AdamW", "lr-RMSprop"), and a "-<n>" suffix for the
// second and later optimizers of one kind ("lr-Adam", "lr-Adam-1"). With
// LogMomentum it also logs "<name>-momentum" (SGD and RMSprop momentum,
// Adam's beta1) and with LogWeightDecay "<name>-weight_decay".
//
// With LoggingInterval "step" the values are logged at every training batch
// start as step values (they reach the loggers every LogEveryNSteps, like
// any step value; reading the rate is a small device read per batch); with
// "epoch" (the default) once per epoch, at its start.
type LearningRateMonitor struct {
	configured[LearningRateMonitorConfig]
	names []string
}

// LearningRateMonitorConfig configures LearningRateMonitor.
type LearningRateMonitorConfig struct {
	// LoggingInterval is "epoch" (default) or "step".
	LoggingInterval string
	// LogMomentum also logs the momentum (beta1 for Adam and AdamW).
	LogMomentum bool
	// LogWeightDecay also logs the weight decay.
	LogWeightDecay bool
}

// NewLearningRateMonitor returns the callback for cfg.
// A bad field is no error here: NewTrainer reports it, naming the field, as
// does Validate.
func NewLearningRateMonitor(cfg LearningRateMonitorConfig) *LearningRateMonitor {
	return newCallback(cfg, newLearningRateMonitor)
}

// Config returns the configuration in effect: NewLearningRateMonitor's, with the defaults
// its zero values stand for filled in (print-config shows it).
func (m *LearningRateMonitor) Config() LearningRateMonitorConfig { return m.cfg }

// newLearningRateMonitor builds the callback for cfg, filling in the defaults
// its zero values stand for, or reports its bad fields.
func newLearningRateMonitor(cfg *LearningRateMonitorConfig) (*LearningRateMonitor, error) {
	switch cfg.LoggingInterval {
	case "":
		cfg.LoggingInterval = "epoch"
	case "step", "epoch":
	default:
		return nil, fmt.Errorf("callback.NewLearningRateMonitor: LearningRateMonitorConfig.LoggingInterval: unknown %q; valid: \"step\", \"epoch\"", cfg.LoggingInterval)
	}
	return &LearningRateMonitor{}, nil
}

// optimizerClass is PyTorch's class name for an optimizer kind.
func optimizerClass(k optim.Kind) string {
	switch k {
	case optim.KindSGD:
		return "SGD"
	case optim.KindAdam:
		return "Adam"
	case optim.KindAdamW:
		return "AdamW"
	case optim.KindRMSProp:
		return "RMSprop"
	}
	return string(k)
}

// Names returns the metric name of each optimizer's learning rate in the
// current Fit ("lr-Adam", "lr-Adam-1", …).
func (m *LearningRateMonitor) Names() []string { return m.names }

// OnTrainStart names the optimizers.
func (m *LearningRateMonitor) OnTrainStart(t *volt.Trainer) error {
	seen := map[string]int{}
	m.names = m.names[:0]
	for _, o := range t.Optimizers() {
		name := "lr-" + optimizerClass(o.Optimizer.Kind)
		if n := seen[name]; n > 0 {
			m.names = append(m.names, fmt.Sprintf("%s-%d", name, n))
		} else {
			m.names = append(m.names, name)
		}
		seen[name]++
	}
	return nil
}

// OnTrainEpochStart logs with LoggingInterval "epoch".
func (m *LearningRateMonitor) OnTrainEpochStart(t *volt.Trainer) error {
	if m.cfg.LoggingInterval == "epoch" {
		m.log(t)
	}
	return nil
}

// OnTrainBatchStart logs with LoggingInterval "step".
func (m *LearningRateMonitor) OnTrainBatchStart(t *volt.Trainer, _ *data.Batch, _ int) error {
	if m.cfg.LoggingInterval == "step" {
		m.log(t)
	}
	return nil
}

func (m *LearningRateMonitor) log(t *volt.Trainer) {
	opts := t.Optimizers()
	for i, lr := range t.LearningRates() {
		if i >= len(m.names) || i >= len(opts) {
			break
		}
		name, o := m.names[i], opts[i].Optimizer
		t.Log(name, exactLR(lr, opts[i]))
		if m.cfg.LogMomentum {
			mom := o.Momentum
			if o.Kind == optim.KindAdam || o.Kind == optim.KindAdamW {
				mom = o.Betas[0]
			}
			t.Log(name+"-momentum", mom)
		}
		if m.cfg.LogWeightDecay {
			t.Log(name+"-weight_decay", o.WeightDecay)
		}
	}
}

// Interface guards.
var (
	_ volt.OnTrainStart      = (*LearningRateMonitor)(nil)
	_ volt.OnTrainEpochStart = (*LearningRateMonitor)(nil)
	_ volt.OnTrainBatchStart = (*LearningRateMonitor)(nil)
)

// exactLR returns the float64 learning rate behind held, the value the
// optimizer's variable holds (float32 in most precisions): the scheduler's
// or the configured rate when held is that rate rounded, else held itself
// (a rate set some other way).
func exactLR(held float64, o volt.OptimizerSetup) float64 {
	candidates := []float64{o.Optimizer.LR}
	if o.Scheduler != nil {
		candidates = []float64{o.Scheduler.LR(), o.Optimizer.LR}
	}
	for _, c := range candidates {
		if c == held || float64(float32(c)) == held {
			return c
		}
	}
	return held
}
