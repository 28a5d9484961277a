package volt_test

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
)

// exLoggingLine logs the same loss four ways.
type exLoggingLine struct{ exLine }

func (m exLoggingLine) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := m.mse(s, b)
	s.Log("loss", l, volt.OnStep(true), volt.OnEpoch(true), volt.ProgBar) // loss_step and loss_epoch
	s.Log("worst", l, volt.OnStep(false), volt.OnEpoch(true), volt.Reduce(volt.Max))
	s.Log("total", l, volt.OnStep(false), volt.OnEpoch(true), volt.Reduce(volt.Sum))
	s.Log("size", graph.Const(s.Graph(), float32(b.Input(0).Shape().Dimensions[0])), volt.OnStep(false), volt.OnEpoch(true), volt.NoLogger)
	return l
}

// Step.Log (Lightning's self.log) is traced into the compiled step. A
// training value is logged per step by default; OnEpoch(true) also reduces
// it over the epoch (Reduce: Mean by default, Sum, Min, Max), and a value
// logged both ways gets _step and _epoch suffixes. ProgBar shows it in the
// progress bar; NoLogger keeps it from the loggers (it stays in
// CallbackMetrics).
func ExampleStep_Log() {
	trainer, err := volt.NewTrainer(exQuiet(volt.Config{MaxEpochs: 1}))
	if err != nil {
		panic(err)
	}
	if err := trainer.Fit(context.Background(), exLoggingLine{}, exData()); err != nil {
		panic(err)
	}
	m := trainer.CallbackMetrics()
	fmt.Println("callback metrics:", slices.Sorted(maps.Keys(m)))
	fmt.Printf("loss_epoch=%.2f worst=%.2f total=%.2f size=%.0f\n", m["loss_epoch"], m["worst"], m["total"], m["size"])
	fmt.Println("worst >= loss_epoch:", m["worst"] >= m["loss_epoch"])
	_, sizeLogged := trainer.LoggedMetrics()["size"]
	fmt.Println("size sent to loggers:", sizeLogged)
	// Output:
	// callback metrics: [loss loss_epoch loss_step size total val_loss worst]
	// loss_epoch=14.92 worst=24.71 total=59.67 size=16
	// worst >= loss_epoch: true
	// size sent to loggers: false
}
