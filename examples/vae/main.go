// Command vae trains a variational autoencoder on MNIST (784 → 400 → 20
// (mean, log variance) → 400 → 784 logits, ReLU), as issue 42's user wrote
// one from the README: the reparameterisation z = μ + ε·exp(logvar/2) with ε
// drawn in the step (Lightning's torch.randn_like), the loss BCE-with-logits
// summed over the batch plus the KL divergence to N(0, I), Adam 1e-3,
// batch 128, validation on the test set after each epoch. The digits are
// read offline as examples/mnist reads them.
//
//	GOTOOLCHAIN=auto GOEXPERIMENT=simd go run ./examples/vae [-epochs 10]
//
// tools/vae/lightning_vae.py is the same program in Lightning 2.2.5
// (docs/program_lengths_test.go keeps this one within 1.3× of its lines);
// tools/vae/compare.sh trains both and compares their losses.
package main

import (
	"context"
	"flag"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/voltml/volt"
	"github.com/voltml/volt/data"
	"github.com/voltml/volt/datasets/mnist"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/optim"
)

// VAE encodes an image into a Latent-dimensional Gaussian through a Hidden
// layer, samples a code from it and decodes the code into pixel logits.
type VAE struct {
	Hidden, Latent int
	LR             float64
}

// loss is the negative evidence lower bound of the batch's images, summed
// over the batch: their reconstruction's binary cross-entropy plus the KL
// divergence of their codes' distributions from N(0, I).
func (m *VAE) loss(s *volt.Step, b volt.Batch) *volt.Node {
	x, scope := b.Input(0), s.Scope()
	h := nn.ReLU(nn.Linear(scope.In("enc"), x, m.Hidden))
	mu, logvar := nn.Linear(scope.In("mu"), h, m.Latent), nn.Linear(scope.In("logvar"), h, m.Latent)
	eps := scope.RandomNormal(s.Graph(), mu.Shape()) // torch.randn_like(mu), new each step
	z := graph.Add(mu, graph.Mul(eps, graph.Exp(graph.MulScalar(logvar, 0.5))))
	logits := nn.Linear(scope.In("dec_out"), nn.ReLU(nn.Linear(scope.In("dec_hidden"), z, m.Hidden)), 784)
	bce := nn.BCEWithLogitsLoss(logits, x, nn.Reduce(nn.ReductionSum))
	kl := graph.ReduceAllSum(graph.Sub(graph.Sub(graph.OnePlus(logvar), graph.Square(mu)), graph.Exp(logvar)))
	return graph.Sub(bce, graph.MulScalar(kl, 0.5))
}

func (m *VAE) TrainingStep(s *volt.Step, b volt.Batch) *volt.Node {
	loss := m.loss(s, b)
	s.Log("train_loss", loss, volt.ProgBar)
	return loss
}

func (m *VAE) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", m.loss(s, b), volt.ProgBar)
}

func (m *VAE) ConfigureOptimizers() volt.Optimizers { return volt.Optimize(optim.Adam(m.LR)) }
func (m *VAE) HParams() map[string]any              { return volt.HParamsOf(m) } // save_hyperparameters()

func main() {
	epochs := volt.EpochsFlag(flag.CommandLine, "epochs", 10, "maximum epochs (-1: no limit)")
	flag.Parse()
	volt.SeedEverything(42)
	train, test, err := mnist.Load()
	volt.ExitOnError(err)
	trainer, err := volt.NewTrainer(volt.Config{MaxEpochs: *epochs})
	volt.ExitOnError(err)
	dm := data.Datasets{Train: train, Val: test, BatchSize: 128} // from_datasets: the training loader shuffles
	volt.ExitOnError(trainer.Fit(context.Background(), &VAE{Hidden: 400, Latent: 20, LR: 1e-3}, dm))
}
