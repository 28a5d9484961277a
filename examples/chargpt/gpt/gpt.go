// Package gpt is nanoGPT's character transformer (Karpathy's model.py)
// written with GoMLX's layers, as a volt module: token and position
// embeddings, pre-norm blocks of causal self-attention and a GELU MLP,
// a final LayerNorm and a language-model head tied to the token embedding;
// AdamW with no weight decay on biases and norm parameters. [Config] sizes
// it; [Module] is the volt module.
//
// Where GoMLX's defaults differ from PyTorch's, the model takes PyTorch's:
// LayerNorm's epsilon is 1e-5 (GoMLX's default is 1e-3) and GELU is the
// exact (erf) one, as nn.GELU(). Attention is GoMLX's decomposed
// MultiHeadAttention with a causal mask, scores scaled by 1/√head_dim, as
// nanoGPT's, written out with its scores in [batch, heads, q, k] order
// (causalSelfAttention, which says why). GoMLX's fused attention kernel
// is not used: on the Go backend the decomposed path runs the CPU
// configuration's step 3.7× faster (49 vs 183 ms of CPU at 1 thread).
//
// Variable layout (for loading PyTorch's weights, see
// tools/parity/chargpt.py): under the module's scope "gpt",
// wte/embeddings [vocab, width], wpe/embeddings [block, width],
// block_<i>/ln_1 and ln_2 (layer_normalization/gain, offset),
// block_<i>/attn/MultiHeadAttention/{query,key,value}/dense/weights
// [width, heads·head_dim] and biases [heads·head_dim] (head h owns
// columns h·head_dim…),
// .../output/dense/weights [width, width], block_<i>/mlp/fc and
// mlp/proj (dense/weights [in, out], biases), ln_f.
package gpt

import (
	"fmt"
	"path"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/layers/attention"
	"github.com/gomlx/gomlx/ml/layers/norm"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/gomlx/gomlx/support/exceptions"
	"github.com/voltml/volt"
	"github.com/voltml/volt/optim"
)

// gomlxAttention builds the blocks with GoMLX's MultiHeadAttention instead
// of causalSelfAttention, its equivalent; tests compare the two.
var gomlxAttention bool

// LayerNormEpsilon is PyTorch's nn.LayerNorm default.
const LayerNormEpsilon = 1e-5

// Config is the model's size.
type Config struct {
	Vocab  int // distinct tokens
	Block  int // context length
	Layers int
	Heads  int
	Width  int // embedding width; a multiple of Heads
}

// CPU is nanoGPT's CPU configuration of its README (shakespeare_char on a
// laptop): 4 layers, 4 heads, width 128, block 64. Vocab is the corpus's.
func CPU(vocab int) Config {
	return Config{Vocab: vocab, Block: 64, Layers: 4, Heads: 4, Width: 128}
}

// Validate reports a size that cannot build.
func (c Config) Validate() error {
	switch {
	case c.Vocab < 1, c.Block < 1, c.Layers < 1, c.Heads < 1, c.Width < 1:
		return fmt.Errorf("gpt: Config %+v: Vocab, Block, Layers, Heads and Width must be positive", c)
	case c.Width%c.Heads != 0:
		return fmt.Errorf("gpt: Config: Width %d is not a multiple of Heads %d", c.Width, c.Heads)
	}
	return nil
}

// Params is the number of trainable parameters (the tied head counted once,
// position embeddings included).
func (c Config) Params() int {
	w := c.Width
	perBlock := 2*2*w + 3*(w*w+w) + (w*w + w) + (w*4*w + 4*w) + (4*w*w + w)
	return c.Vocab*w + c.Block*w + c.Layers*perBlock + 2*w
}

// Logits returns the next-token logits [batch, T, vocab] for tokens
// [batch, T] (T ≤ Block), built under scope.
func (c Config) Logits(scope *model.Scope, tokens *graph.Node) *graph.Node {
	g := tokens.Graph()
	seq := tokens.Shape().Dim(1)
	if seq > c.Block {
		exceptions.Panicf("gpt: sequence length %d exceeds the block size %d", seq, c.Block)
	}
	wteScope := scope.In("wte")
	x := layers.Embedding(wteScope, tokens, dtypes.Float32, c.Vocab, c.Width)
	positions := graph.Iota(g, shapes.Make(dtypes.Int32, seq), 0)
	x = graph.Add(x, graph.InsertAxes(layers.Embedding(scope.In("wpe"), positions, dtypes.Float32, c.Block, c.Width), 0))
	headDim := c.Width / c.Heads
	for i := range c.Layers {
		block := scope.In("block_%d", i)
		h := norm.LayerNorm(block.In("ln_1"), x, -1).Epsilon(LayerNormEpsilon).Done()
		if gomlxAttention {
			h = attention.SelfAttention(block.In("attn"), h, c.Heads, headDim).WithCausalMask(true).WithFusion(false).Done()
		} else {
			h = causalSelfAttention(block.In("attn"), h, c.Heads, headDim)
		}
		x = graph.Add(x, h)
		h = norm.LayerNorm(block.In("ln_2"), x, -1).Epsilon(LayerNormEpsilon).Done()
		mlp := block.In("mlp")
		h = layers.DenseWithBias(mlp.In("fc"), h, 4*c.Width)
		h = layers.DenseWithBias(mlp.In("proj"), activation.Gelu(h), c.Width)
		x = graph.Add(x, h)
	}
	x = norm.LayerNorm(scope.In("ln_f"), x, -1).Epsilon(LayerNormEpsilon).Done()
	// The head shares the token embedding (nanoGPT's weight tying).
	wte := wteScope.GetVariable("embeddings").NodeValue(g)
	return graph.Einsum("btd,vd->btv", x, wte)
}

// Loss is the mean cross-entropy of logits [batch, T, vocab] against the
// next tokens [batch, T], PyTorch's F.cross_entropy over batch·T.
func Loss(logits, targets *graph.Node) *graph.Node {
	return loss.SparseCategoricalCrossEntropyLogits([]*graph.Node{graph.InsertAxes(targets, -1)}, []*graph.Node{logits})
}

// NoDecay are the names of the variables nanoGPT keeps out of weight decay
// (its rank < 2 parameters): biases and LayerNorm's gain and offset.
var NoDecay = []string{"biases", "gain", "offset"}

// Module is the transformer as a volt module: batches hold tokens
// [batch, T] (input 0) and the next tokens (label 0), int32.
type Module struct {
	Config
	// Optimizer; nil: AdamW(1e-3), betas (0.9, 0.99), weight decay 0.1
	// (nanoGPT's shakespeare_char), with NoDecay exempt.
	Optimizers volt.Optimizers
	// Init, if set, is deferred at the end of building the layers (e.g.
	// parity.Tensors.Apply to load PyTorch's weights).
	Init func(scope *model.Scope)
}

// StepLogits returns the next-token logits [batch, T, vocab] of tokens
// [batch, T], built under the step's scope "gpt" as every step builds them.
func (m *Module) StepLogits(s *volt.Step, tokens *graph.Node) *graph.Node {
	scope := s.Scope().In("gpt")
	if m.Init != nil {
		defer m.Init(scope)
	} else {
		var finish func()
		scope, finish = nanoGPTInit(scope)
		defer finish()
	}
	return m.Logits(scope, tokens)
}

// TrainingStep returns the batch's loss and logs it as train_loss.
func (m *Module) TrainingStep(s *volt.Step, b volt.Batch) *graph.Node {
	l := Loss(m.StepLogits(s, b.Input(0)), b.Label(0))
	s.Log("train_loss", l, volt.ProgBar)
	return l
}

// ValidationStep logs val_loss.
func (m *Module) ValidationStep(s *volt.Step, b volt.Batch) {
	s.Log("val_loss", Loss(m.StepLogits(s, b.Input(0)), b.Label(0)), volt.ProgBar)
}

// PredictStep implements volt.PredictStepper: the next-token logits
// [batch, T, vocab] at every position of the batch's tokens (what
// nanoGPT's forward returns; sampling from the last position's is the
// caller's), the output of the model ExportONNX writes.
func (m *Module) PredictStep(s *volt.Step, b volt.Batch) *graph.Node {
	return m.StepLogits(s, b.Input(0))
}

// ConfigureOptimizers returns m.Optimizers, or nanoGPT's AdamW.
func (m *Module) ConfigureOptimizers() volt.Optimizers {
	if m.Optimizers != nil {
		return m.Optimizers
	}
	return volt.Optimizers{{Optimizer: optim.AdamW(1e-3).WithBetas(0.9, 0.99).WithWeightDecay(0.1),
		Groups: []volt.ParamGroup{volt.NoWeightDecay(NoDecay...)}}}
}

// nanoGPTInit gives the variables under scope nanoGPT's _init_weights:
// N(0, 0.02) for weights and embeddings, zero biases (LayerNorm sets its
// own ones and zeros). It returns the scope to build under; call the
// returned finish after building (it zeroes the variables named biases).
func nanoGPTInit(scope *model.Scope) (*model.Scope, func()) {
	scope = scope.WithInitializer(initializer.RandomNormalFn(scope, 0.02))
	return scope, func() {
		store := scope.Store()
		prefix := strings.TrimSuffix(scope.Scope(), "/") + "/"
		for v := range store.IterVariables() {
			if !v.HasValue() && strings.HasPrefix(v.Path(), prefix) && path.Base(v.Path()) == "biases" {
				store.VariableWithShape(v.Path(), v.Shape(), initializer.Zero)
			}
		}
	}
}
