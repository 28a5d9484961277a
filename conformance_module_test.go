package volt_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
)

// conformanceData is testdata/lightning/data.json (written by gen_data.py
// there): trace_hooks.py's data and the initial weights of its Linear(4, 1).
type conformanceData struct {
	Weight  []float32 `json:"weight"`
	Bias    []float32 `json:"bias"`
	Train16 xy        `json:"train16"`
	Train20 xy        `json:"train20"`
	Val8    xy        `json:"val8"`
}

type xy struct {
	X [][]float32 `json:"x"`
	Y [][]float32 `json:"y"`
}

func loadConformanceData() (*conformanceData, error) {
	b, err := os.ReadFile(filepath.Join("testdata", "lightning", "data.json"))
	if err != nil {
		return nil, err
	}
	var d conformanceData
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("testdata/lightning/data.json: %w", err)
	}
	if len(d.Weight) != 4 || len(d.Bias) != 1 {
		return nil, fmt.Errorf("testdata/lightning/data.json: want 4 weights and 1 bias, got %d and %d", len(d.Weight), len(d.Bias))
	}
	return &d, nil
}

// slice returns the examples as a dataset, in order.
func (d xy) slice() data.Slice {
	out := make(data.Slice, len(d.X))
	for i := range d.X {
		out[i] = data.Example{Inputs: []data.Field{{Value: d.X[i]}}, Labels: []data.Field{{Value: d.Y[i]}}}
	}
	return out
}

// modelArgs are trace_hooks.py's Model arguments (a trace's "model").
type modelArgs struct {
	Sched  []any   `json:"sched"`   // [kind, interval, frequency]; kind "step" or "plateau:<metric>"
	StopAt *[2]int `json:"stop_at"` // request a stop in OnTrainBatchEnd at (epoch, batch)
	FailAt *[2]int `json:"fail_at"` // fail at (epoch, batch)
	// StopAtEpochStart requests a stop in OnTrainEpochStart of this epoch
	// (testdata/lightning/loops/record_loops.py).
	StopAtEpochStart *int `json:"stop_at_epoch_start"`
}

// conformanceModule is trace_hooks.py's Model: linear regression 4 → 1 with
// MSE, SGD lr 0.1, train_loss logged per step and per epoch, val/test loss
// per epoch, and every module hook recorded as "Model".
type conformanceModule struct {
	hookRecorder
	init *conformanceData
	args modelArgs
}

// errPlannedFailure is the failure of the failure scenario.
var errPlannedFailure = errors.New("planned failure")

func (m *conformanceModule) forward(s *volt.Step, x *graph.Node) *graph.Node {
	return m.layer(s.Scope().In("layer"), x)
}

// layer is the Linear(4, 1) in scope.
func (m *conformanceModule) layer(scope *model.Scope, x *graph.Node) *graph.Node {
	w := make([][]float32, 4)
	for i := range w {
		w[i] = []float32{m.init.Weight[i]}
	}
	weight := scope.VariableWithValue("weight", w).NodeValue(x.Graph())
	bias := scope.VariableWithValue("bias", m.init.Bias).NodeValue(x.Graph())
	return graph.Add(graph.MatMul(x, weight), graph.Reshape(bias, 1, 1))
}

func (m *conformanceModule) mse(s *volt.Step, b volt.Batch) *graph.Node {
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{m.forward(s, b.Input(0))})
}

// TrainingStep implements volt.Module (self.log("train_loss", on_step, on_epoch)).
func (m *conformanceModule) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.mse(s, b)
	s.Log("train_loss", l, volt.OnStep(true), volt.OnEpoch(true))
	return l
}

// ValidationStep implements volt.ValidationStepper.
func (m *conformanceModule) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", m.mse(s, b))
}

// TestStep implements volt.TestStepper.
func (m *conformanceModule) TestStep(s *volt.Step, b volt.Batch) { s.Log("test_loss", m.mse(s, b)) }

// PredictStep implements volt.PredictStepper.
func (m *conformanceModule) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.forward(s, b.Input(0))
}

// ConfigureOptimizers implements volt.OptimizerConfigurer: SGD lr 0.1 and
// the scenario's scheduler (StepLR(1, 0.5) or ReduceLROnPlateau(min, 0.5,
// patience 0)), wrapped in a spy.
func (m *conformanceModule) ConfigureOptimizers() volt.Optimizers {
	m.rec("ConfigureOptimizers")
	setup := volt.OptimizerSetup{Optimizer: optim.SGD(0.1)}
	if len(m.args.Sched) == 3 {
		kind, _ := m.args.Sched[0].(string)
		interval, _ := m.args.Sched[1].(string)
		freq, _ := m.args.Sched[2].(float64)
		var inner optim.Scheduler
		if kind == "step" {
			s := optim.NewStepLR(1, 0.5)
			inner = s
		} else if monitor, ok := strings.CutPrefix(kind, "plateau:"); ok {
			s := optim.NewReduceLROnPlateau(optim.PlateauMin)
			s.Factor, s.Patience = 0.5, -1 // Lightning's patience 0; the zero value means 10
			inner, setup.Monitor = s, monitor
		} else {
			panic(fmt.Sprintf("conformance: unknown scheduler kind %q", kind))
		}
		setup.Scheduler = &schedulerSpy{Scheduler: inner, log: m.log}
		setup.Interval, setup.SchedulerFrequency = volt.Interval(interval), int(freq)
	}
	return volt.Optimizers{setup}
}

// OnTrainBatchStart records the hook and fails where the scenario plans a
// failure: trace_hooks.py raises in training_step, which volt runs as a
// compiled graph, so the nearest host call of the same batch fails instead.
func (m *conformanceModule) OnTrainBatchStart(t *volt.Trainer, b *data.Batch, i int) error {
	_ = m.hookRecorder.OnTrainBatchStart(t, b, i)
	if f := m.args.FailAt; f != nil && f[0] == t.CurrentEpoch() && f[1] == i {
		// Lightning records the LR in training_step after the failure
		// point: this batch has none.
		m.log.events[len(m.log.events)-1].lrRecorded = false
		return errPlannedFailure
	}
	return nil
}

// OnTrainBatchEnd records the hook and requests a stop where the scenario says.
func (m *conformanceModule) OnTrainBatchEnd(t *volt.Trainer, o *volt.StepOutput, b *data.Batch, i int) error {
	_ = m.hookRecorder.OnTrainBatchEnd(t, o, b, i)
	if s := m.args.StopAt; s != nil && s[0] == t.CurrentEpoch() && s[1] == i {
		t.Stop("conformance: the module requested a stop")
	}
	return nil
}

// OnTrainEpochStart records the hook and requests a stop where the scenario says.
func (m *conformanceModule) OnTrainEpochStart(t *volt.Trainer) error {
	_ = m.hookRecorder.OnTrainEpochStart(t)
	if e := m.args.StopAtEpochStart; e != nil && *e == t.CurrentEpoch() {
		t.Stop("conformance: the module requested a stop at the epoch's start")
	}
	return nil
}
