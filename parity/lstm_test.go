package parity_test

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/lstm"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/optim"
	"github.com/voltml/volt/parity"
)

// rnn is tools/parity/lstm.py's regressor: an LSTM of 16 over the
// sequence, its last hidden state into a dense layer.
type rnn struct{ weights *parity.Tensors }

func (m *rnn) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	scope := s.Scope().In("rnn")
	defer m.weights.Apply(scope)
	_, last, _ := lstm.New(scope.In("lstm"), b.Input(0), 16).Done()
	pred := layers.DenseWithBias(scope.In("head"), graph.Squeeze(last, 0), 1)
	return loss.MeanSquaredError([]*graph.Node{b.Label(0)}, []*graph.Node{pred})
}

func (m *rnn) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(1e-2)) }

// TestLSTMParity: GoMLX's LSTM from PyTorch's weights (torch_parity.lstm's
// gate reordering) trains 50 steps with Adam and clipping with PyTorch's
// loss at every step (1e-4 relative).
func TestLSTMParity(t *testing.T) {
	file, err := parity.Read(filepath.Join("testdata", "lstm_adam.safetensors"))
	if err != nil {
		t.Fatalf("%v (regenerate with /usr/bin/python3 tools/parity/lstm.py)", err)
	}
	want, err := file.Float64s("loss")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := file.Examples([]string{"x"}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	losses := &parity.Losses{}
	tr, err := volt.NewTrainer(volt.Config{MaxEpochs: 1, GradientClipVal: 1, Callbacks: []volt.Callback{losses},
		DisableLoggers: true, DisableModelSummary: true, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Fit(t.Context(), &rnn{weights: file}, volt.Loaders{Train: &data.DataLoader{Dataset: examples, BatchSize: len(examples) / len(want)}})
	if err != nil {
		t.Fatal(err)
	}
	bad, maxRel, err := parity.Compare(losses.Values, want, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range bad {
		t.Error(m)
	}
	t.Logf("%d steps, loss %.6f -> %.6f, largest relative difference %.3g", len(want), want[0], want[len(want)-1], maxRel)
}
