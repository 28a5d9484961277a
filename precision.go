package volt

import (
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/internal/engine"
	"github.com/voltml/volt/optim"
)

// Mixed precision ("bf16-mixed", "16-mixed"): the module computes in the low
// precision (its layers create their variables in it: the compute copies),
// while volt keeps a float32 master copy of each trainable variable under
// /volt/master/… The optimizer (and its state) works on the masters with
// float32 gradients; after each update the compute copy is the master cast
// down. "16-mixed" also scales the loss dynamically (optim.LossScaler) and
// skips the updates whose gradients overflow.

// (engine.Apply builds that update; this file creates the masters.)

// ensureMasters creates the master weights before the first mixed-precision
// step: it runs the module's forward once on b (which creates and
// initialises the compute copies) and stores each trainable variable cast to
// float32. A restored checkpoint already has them.
func (c *compiledSteps) ensureMasters(b *data.Batch) error {
	t := c.t
	if c.mastersReady {
		return nil
	}
	for v := range t.eng.Store.IterVariables() {
		if strings.HasPrefix(v.Path(), engine.MasterPrefix+"/") {
			c.mastersReady = true
			return nil
		}
	}
	// Run the forward pass once: GoMLX creates and initialises the compute
	// copies before executing it.
	var trainable []string
	prog, err := t.eng.Compile("MixedPrecisionInit", engine.Training, func(scope *model.Scope, inputs, labels []*graph.Node) []*graph.Node {
		s := &Step{scope: scope, graph: graphOf(inputs, labels), stage: RunningTrain, trainer: t, metricsOff: true}
		loss := t.module.TrainingStep(s, Batch{Inputs: inputs, Labels: labels})
		trainable = trainable[:0]
		for _, v := range engine.TrainableVariables(t.eng.Store, s.graph) {
			trainable = append(trainable, v.Path())
		}
		return []*graph.Node{loss}
	})
	if err != nil {
		return err
	}
	if _, _, err := prog.Run(b); err != nil {
		return fmt.Errorf("creating the float32 master weights: %w", err)
	}
	if err := engine.CreateMasters(t.eng.Store, trainable); err != nil {
		return fmt.Errorf("mixed precision: %w", err)
	}
	c.mastersReady = true
	return nil
}

// setLossScale writes the scaler's current scale into its variable.
func (t *Trainer) setLossScale() error {
	return engine.SetLossScale(t.eng.Store, t.perModule.scaler.Scale())
}

// newScaler returns the loss scaler of "16-mixed" (nil otherwise).
func newScaler(p engine.Precision) *optim.LossScaler {
	if !p.LossScaling() {
		return nil
	}
	return optim.NewLossScaler()
}

// scalerPart is the state part of the "16-mixed" loss scaler: its scale
// and growth tracker.
type scalerPart struct{ scaler *optim.LossScaler }

func (scalerPart) stateKey() string { return "loss_scaler" }

func (p scalerPart) save(st *stateDoc) error {
	if p.scaler == nil {
		return nil
	}
	b, err := p.scaler.State()
	if err != nil {
		return fmt.Errorf("loss scaler: %w", err)
	}
	return st.putNonEmpty("loss_scaler", b)
}

func (p scalerPart) load(st *stateDoc) error {
	if p.scaler == nil {
		return nil
	}
	var b []byte
	if _, err := st.get("loss_scaler", &b); err != nil || b == nil {
		return err
	}
	if err := p.scaler.LoadState(b); err != nil {
		return fmt.Errorf("checkpoint %s: loss scaler: %w", st.path, err)
	}
	return nil
}
