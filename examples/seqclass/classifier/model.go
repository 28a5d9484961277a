// Package classifier is an LSTM sequence classifier as a volt module, and
// the synthetic task examples/seqclass trains it on ([Task], the temporal
// order problem of the LSTM paper). The model is PyTorch's
//
//	nn.Embedding(vocab, embed) → nn.LSTM(embed, hidden, batch_first=True)
//	→ the last hidden state → nn.Linear(hidden, classes)
//
// trained with the mean softmax cross-entropy (F.cross_entropy), written
// with layers.Embedding, volt's nn.LSTM (GoMLX's layers/lstm's variables,
// with 16·hidden/features times less backward work) and layers.Dense, and
// initialised as PyTorch initialises those layers (package torchinit):
// embeddings N(0, 1), the LSTM's weights and both its biases
// U(±1/√hidden), the head U(±1/√hidden).
//
// Variable layout (for loading PyTorch's weights, see
// tools/parity/seqclass.py): under the module's scope "seqclass",
// embed/embeddings [vocab, embed] (nn.Embedding.weight as is),
// lstm/inputsW [1, 4, hidden, embed], lstm/recurrentW [1, 4, hidden,
// hidden] and lstm/biasesW [1, 8, hidden] (GoMLX's gate order input,
// output, forget, cell; the 4 input biases then the 4 recurrent ones:
// tools/parity/torch_parity.py's lstm converter), head/dense/weights
// [hidden, classes] and head/dense/biases [classes].
package classifier

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/metrics"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/torchinit"
)

// Config is the model's size.
type Config struct {
	Vocab   int // distinct tokens
	Embed   int // embedding width, the LSTM's input features
	Hidden  int // LSTM hidden units
	Classes int
}

// Validate reports a size that cannot build.
func (c Config) Validate() error {
	if c.Vocab < 1 || c.Embed < 1 || c.Hidden < 1 || c.Classes < 2 {
		return fmt.Errorf("classifier: Config %+v: Vocab, Embed and Hidden must be positive and Classes >= 2", c)
	}
	return nil
}

// Params is the number of trainable parameters, PyTorch's
// sum(p.numel() for p in model.parameters()) for the same model.
func (c Config) Params() int {
	h := c.Hidden
	return c.Vocab*c.Embed + 4*h*c.Embed + 4*h*h + 8*h + h*c.Classes + c.Classes
}

// Logits returns the class scores [batch, Classes] of tokens [batch, T]
// (integers), built under scope: the head applied to the LSTM's hidden
// state after the last token.
func (c Config) Logits(scope *model.Scope, tokens *graph.Node) *graph.Node {
	x := layers.Embedding(scope.In("embed"), tokens, dtypes.Float32, c.Vocab, c.Embed)
	_, last, _ := nn.LSTM(scope.In("lstm"), x, c.Hidden) // last: [batch, hidden]
	return layers.DenseWithBias(scope.In("head"), last, c.Classes)
}

// Module is the classifier as a volt module: batches hold tokens
// [batch, T] (input 0, int32) and classes [batch] (label 0, int32).
type Module struct {
	Config
	// Optimizers; nil: Adam(1e-2).
	Optimizers volt.Optimizers
	// Init, if set, is deferred at the end of building the layers in place
	// of torchinit.Apply (e.g. parity.Tensors.Apply to load PyTorch's
	// weights).
	Init func(scope *model.Scope)
}

// StepLogits returns the class scores [batch, Classes] of tokens [batch,
// T], built under the step's scope "seqclass" as every step builds them.
func (m *Module) StepLogits(s *volt.Step, tokens *graph.Node) *graph.Node {
	scope := s.Scope().In("seqclass")
	if m.Init != nil {
		defer m.Init(scope)
	} else {
		defer torchinit.Apply(scope)
	}
	return m.Logits(scope, tokens)
}

// evaluate returns a batch's logits, its classes and the mean cross-entropy.
func (m *Module) evaluate(s *volt.Step, b volt.Batch) (logits, labels, l *graph.Node) {
	logits = m.StepLogits(s, b.Input(0))
	labels = s.ClassLabels(graph.ConvertDType(b.Label(0), dtypes.Int32), m.Classes)
	l = loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{graph.ExpandAxes(labels, -1)}, []*graph.Node{logits})
	return logits, labels, l
}

// TrainingStep logs train_loss (on the progress bar) and the epoch's
// train_acc, and returns the loss.
func (m *Module) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	logits, labels, l := m.evaluate(s, b)
	s.Log("train_loss", l, volt.ProgBar)
	correct := graph.ConvertDType(graph.Equal(graph.ArgMax(logits, -1, dtypes.Int32), labels), logits.DType())
	s.Log("train_acc", graph.ReduceAllMean(correct), volt.OnEpoch(true))
	return l
}

// ValidationStep logs val_loss and the accuracy of the whole validation
// set, val_acc (volt/metrics' multiclass Accuracy).
func (m *Module) ValidationStep(s *volt.Step, b volt.Batch) {
	logits, labels, l := m.evaluate(s, b)
	s.Log("val_loss", l, volt.ProgBar, volt.SyncDist)
	s.LogMetric("val_acc", m.accuracy(), logits, labels, volt.ProgBar)
}

// PredictStep returns the predicted class of each sequence.
func (m *Module) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return graph.ArgMax(m.StepLogits(s, b.Input(0)), -1, dtypes.Int32)
}

// accuracy is the multiclass micro accuracy over m.Classes.
func (m *Module) accuracy() metrics.Metric {
	acc, err := metrics.NewAccuracy(metrics.Multiclass(m.Classes), metrics.Micro)
	if err != nil {
		panic(err) // Classes >= 2: Validate
	}
	return acc
}

// ConfigureOptimizers returns m.Optimizers, or Adam(1e-2).
func (m *Module) ConfigureOptimizers() volt.Optimizers {
	if m.Optimizers != nil {
		return m.Optimizers
	}
	return volt.Optimize(optim.Adam(1e-2))
}
