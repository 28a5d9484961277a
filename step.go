package volt

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/metrics"
)

// Step is handed to the step functions while they are traced into a graph.
// It gives the model's scope and collects the values to log; each logged value
// becomes an output of the compiled step.
//
// Random numbers inside a step come from the scope, as torch's do from its
// generator: s.Scope().RandomNormal(s.Graph(), x.Shape()) is
// torch.randn_like(x) (a VAE's reparameterisation), RandomUniform is
// rand_like, RandomBernoulli(p, shape) is bernoulli. Their state is a
// variable of the scope, seeded by Config.Seed, so every step draws new
// values.
type Step struct {
	scope         *model.Scope
	graph         *graph.Graph
	stage         RunningStage
	dataloaderIdx int
	optimizerIdx  int
	logs          []stepLog
	trainer       *Trainer
	handles       []*OptimizerHandle // manual optimization only
	// metrics receives the metric objects logged (LogMetric); metricSrcs
	// are those of this step. metricsOff makes LogMetric do nothing (a
	// forward pass that is not a step).
	metrics    *metricTable
	metricSrcs []*metricSource
	metricsOff bool
	// outputs are the step's named outputs (Step.Output).
	outputs []namedOutput
	// checksLabels: ClassLabels adds its check (Config.DetectAnomaly, in a
	// training, validation or test step); labelChecks are those checks.
	checksLabels bool
	labelChecks  []labelCheck
	// replay, in a data-parallel manual step, is the stage being traced
	// (manual_distributed.go).
	replay *replayTrace
}

// stepLog is one value logged in a step function.
type stepLog struct {
	name  string
	value *graph.Node
	opts  logOptions
}

// Scope returns the model's root scope, where layers create their variables.
func (s *Step) Scope() *model.Scope { return s.scope }

// Graph returns the graph being built.
func (s *Step) Graph() *graph.Graph { return s.graph }

// Stage returns what the step is run for (train, validate, test, predict,
// sanity_check).
func (s *Step) Stage() RunningStage { return s.stage }

// Training reports whether this is a training step (for dropout and the like).
func (s *Step) Training() bool { return s.stage == RunningTrain }

// DataloaderIdx returns the index of the evaluation or prediction loader the
// step is traced for (0 in training).
func (s *Step) DataloaderIdx() int { return s.dataloaderIdx }

// OptimizerIdx returns the index of the optimizer the training step is traced for.
func (s *Step) OptimizerIdx() int { return s.optimizerIdx }

// Log records a scalar value under name. In training steps it defaults to
// per-step logging; in validation and test steps to an epoch mean weighted by
// batch size. Options change that (OnStep, OnEpoch, ProgBar, NoLogger, Reduce);
// OnStep(false) with OnEpoch(false) logs nothing and is refused (the step
// panics, so its run fails), as Lightning refuses it.
func (s *Step) Log(name string, value *Node, opts ...LogOption) {
	if name == "" {
		panic("volt.Step.Log: empty metric name")
	}
	if s.logged(name) {
		panic(fmt.Sprintf("volt.Step.Log: %q is logged twice in the same step", name))
	}
	v, err := engine.ToScalar(value)
	if err != nil {
		panic(fmt.Sprintf("volt.Step.Log(%q): %v", name, err))
	}
	o := resolveLogOptions(defaultLogOptions(s.stage, true), opts)
	if err := o.logsSomething(name); err != nil {
		panic("volt.Step." + err.Error())
	}
	s.logs = append(s.logs, stepLog{name: name, value: v, opts: o})
}

// LogDict logs several values with the same options, in name order.
func (s *Step) LogDict(values map[string]*Node, opts ...LogOption) {
	for _, name := range slices.Sorted(maps.Keys(values)) {
		s.Log(name, values[name], opts...)
	}
}

// LogMetric folds a batch's preds and target into metric m and logs its
// value under name (Lightning's self.log(name, metric)). The metric's state
// is carried by the compiled step and updated inside it: no host transfer
// per batch. The epoch value (OnEpoch, the default in validation and test
// steps) is m's Compute of the state accumulated over the epoch (F1 over
// every sample, not a mean of batch F1s); it is what callbacks read in
// CallbackMetrics. The step value (OnStep, the default in training steps) is
// the Compute of the batch's own state, computed only when it is logged (at
// the logging cadence). The state is reset at the start of every epoch of
// training and every validation or test run, and saved in full checkpoints.
//
// m must have a scalar value (Average Micro, Macro or Weighted, not
// NoAverage; UpdateMetric takes the others). Options are those of Log;
// Reduce does not apply. With several optimizers the training step runs
// once per optimizer, and so does the update.
//
// A state that grows with the data (ReduceCat: exact ROC, precision-recall,
// AUROC and average precision, CatMetric) is kept in validation and test
// steps only: each batch's rows (scores and labels) are outputs of the step,
// copied to the host and held there in chunks of metrics.ChunkRows rows until
// the epoch's Compute, so memory grows with the evaluation set. Training
// steps take fixed-size states only (the binned curves, with thresholds),
// which the step carries and a checkpoint saves.
func (s *Step) LogMetric(name string, m metrics.Metric, preds, target *Node, opts ...LogOption) {
	if m == nil {
		panic(fmt.Sprintf("volt.Step.LogMetric(%q): nil metric", name))
	}
	o := resolveLogOptions(defaultLogOptions(s.stage, true), opts)
	if err := o.logsSomething(name); err != nil {
		panic("volt.Step.LogMetric: " + err.Error() + " (Step.UpdateMetric updates a metric without logging it)")
	}
	s.logMetricSource(&metricSource{
		names:   []string{name},
		opts:    o,
		updater: m,
		compute: func(state []*tensors.Tensor) (map[string]metrics.Value, error) {
			v, err := m.Compute(state)
			return map[string]metrics.Value{name: v}, err
		},
	}, preds, target)
}

// UpdateMetric folds a batch into metric m as LogMetric does, without
// logging a value: for metrics whose value is no scalar (a confusion
// matrix, ROC or precision-recall curves, CatMetric's values, per-class
// scores). Trainer.MetricValue(name) computes it, in an epoch-end hook or
// after the run (Lightning's self.metric(preds, y) in the step, then
// self.metric.compute() in on_validation_epoch_end). The state is reset as
// LogMetric's is.
func (s *Step) UpdateMetric(name string, m metrics.Metric, preds, target *Node) {
	if m == nil {
		panic(fmt.Sprintf("volt.Step.UpdateMetric(%q): nil metric", name))
	}
	s.logMetricSource(&metricSource{
		names:   []string{name},
		opts:    logOptions{}, // neither per step nor per epoch: no value logged
		updater: m,
		compute: func(state []*tensors.Tensor) (map[string]metrics.Value, error) {
			v, err := m.Compute(state)
			return map[string]metrics.Value{name: v}, err
		},
	}, preds, target)
}

// LogMetrics folds a batch into every metric of c (one update per shared
// state) and logs each under its name in c, as LogMetric does.
func (s *Step) LogMetrics(c *metrics.Collection, preds, target *Node, opts ...LogOption) {
	if c == nil {
		panic("volt.Step.LogMetrics: nil collection")
	}
	o := resolveLogOptions(defaultLogOptions(s.stage, true), opts)
	for _, name := range c.Names() {
		if err := o.logsSomething(name); err != nil {
			panic("volt.Step.LogMetrics: " + err.Error())
		}
	}
	s.logMetricSource(&metricSource{
		names:   c.Names(),
		opts:    o,
		updater: c,
		compute: c.Compute,
	}, preds, target)
}
