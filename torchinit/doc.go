// Package torchinit gives GoMLX layers PyTorch's default initialisation,
// for models ported from PyTorch that should start, and so train, as they
// did there.
//
// GoMLX initialises every variable a layer creates with the store's default
// initialiser (model.DefaultInitializer): He-normal, N(0, 2/fan_in), for
// matrices and kernels, and zeros for biases. PyTorch's layers initialise
// themselves:
//
//	nn.Linear, nn.Conv*d   weight, bias U(−1/√fan_in, 1/√fan_in)
//	                       (kaiming_uniform_(a=√5) is this bound for the weight)
//	nn.Embedding           weight N(0, 1)
//	nn.LayerNorm, BatchNorm weight 1, bias 0 (GoMLX's norm layers do the same)
//	nn.LSTM, nn.GRU        every weight and bias U(−1/√hidden, 1/√hidden)
//
// A GoMLX initialiser sees only a variable's shape, and a bias's shape does
// not hold its layer's fan_in, so the switch, [Apply], is a pass over the
// variables the layers created, run before they get their values:
//
//	func (m *MLP) forward(scope *model.Scope, x *graph.Node) *graph.Node {
//		defer torchinit.Apply(scope) // PyTorch's initialisation for the layers below
//		...
//	}
//
// Apply picks the rule ([RuleFor]) by the variable's name, as GoMLX's layers name them
// ("weights" and "biases" of layers.Dense and layers.Convolution,
// "embeddings" of layers.Embedding, "inputsW", "recurrentW", "biasesW" and
// "peepholeW" of layers/lstm and volt's nn.LSTM, "weight_ih", "weight_hh",
// "bias_ih" and "bias_hh" of volt's nn.GRU); variables that already have a value (loaded
// from a checkpoint, or initialised by an earlier trace) keep it, and
// variables it does not recognise keep their own initialiser.
//
// The values are drawn from the store's random state (seeded by
// volt.SeedEverything), so they follow PyTorch's distributions, not its
// random stream: to start from PyTorch's exact numbers, load its weights
// (package parity).
package torchinit
