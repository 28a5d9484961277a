package nn

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
)

// DecoderLayerBuilder configures a torch.nn.TransformerDecoderLayer:
// TransformerDecoderLayer starts it, Done applies it.
type DecoderLayerBuilder struct {
	scope                   *model.Scope
	x, memory               *graph.Node
	heads, ff               int
	dropout                 float64
	gelu, normFirst, causal bool
	tgtKeyPadding           *graph.Node
	memoryKeyPadding        *graph.Node
}

// TransformerDecoderLayer is torch.nn.TransformerDecoderLayer(d_model =
// x's last dimension, nhead, dim_feedforward=2048, dropout=0.1,
// activation="relu", norm_first=False, batch_first=True) on the target x
// [N, T, d_model] and the encoder's memory [N, S, d_model], with torch's
// variables in scope: self_attn, multihead_attn (MultiheadAttention),
// linear1, linear2 (TorchLinear), norm1, norm2, norm3 (TorchLayerNorm).
// Its options are TransformerEncoderLayer's; Causal masks the target's
// self-attention (tgt_mask = the square subsequent mask).
func TransformerDecoderLayer(scope *model.Scope, x, memory *graph.Node, heads int) *DecoderLayerBuilder {
	if x.Rank() != 3 || memory.Rank() != 3 {
		panic(fmt.Sprintf("nn.TransformerDecoderLayer: x and memory must be [N, T, d_model] and [N, S, d_model] (batch first), got %s and %s", x.Shape(), memory.Shape()))
	}
	return &DecoderLayerBuilder{scope: scope, x: x, memory: memory, heads: heads, ff: 2048, dropout: 0.1}
}

// FeedForward is torch's dim_feedforward= (2048 by default).
func (b *DecoderLayerBuilder) FeedForward(dim int) *DecoderLayerBuilder { b.ff = dim; return b }

// Dropout is torch's dropout= (0.1 by default).
func (b *DecoderLayerBuilder) Dropout(p float64) *DecoderLayerBuilder { b.dropout = p; return b }

// GELU is torch's activation="gelu"; ReLU is the default.
func (b *DecoderLayerBuilder) GELU() *DecoderLayerBuilder { b.gelu = true; return b }

// NormFirst is torch's norm_first=True (pre-norm).
func (b *DecoderLayerBuilder) NormFirst() *DecoderLayerBuilder { b.normFirst = true; return b }

// Causal masks later target positions in the self-attention.
func (b *DecoderLayerBuilder) Causal() *DecoderLayerBuilder { b.causal = true; return b }

// TgtKeyPaddingMask is torch's tgt_key_padding_mask= [N, T], true at padding.
func (b *DecoderLayerBuilder) TgtKeyPaddingMask(mask *graph.Node) *DecoderLayerBuilder {
	b.tgtKeyPadding = mask
	return b
}

// MemoryKeyPaddingMask is torch's memory_key_padding_mask= [N, S], true at
// padding.
func (b *DecoderLayerBuilder) MemoryKeyPaddingMask(mask *graph.Node) *DecoderLayerBuilder {
	b.memoryKeyPadding = mask
	return b
}

// Done returns the layer's output [N, T, d_model].
func (b *DecoderLayerBuilder) Done() *graph.Node {
	if b.dropout < 0 || b.dropout >= 1 || b.ff < 1 {
		panic(fmt.Sprintf("nn.TransformerDecoderLayer: dropout must be in [0, 1) and dim_feedforward positive, got %v and %d", b.dropout, b.ff))
	}
	d := b.x.Shape().Dim(2)
	drop := func(name string, x *graph.Node) *graph.Node {
		if b.dropout == 0 {
			return x
		}
		return layers.DropoutStatic(b.scope.In("%s", name), x, b.dropout)
	}
	selfAttention := func(x *graph.Node) *graph.Node {
		a := MultiheadAttention(b.scope.In("self_attn"), x, x, x, b.heads)
		if b.causal {
			a.Causal()
		}
		if b.tgtKeyPadding != nil {
			a.KeyPaddingMask(b.tgtKeyPadding)
		}
		out, _ := a.Done()
		return drop("dropout1", out)
	}
	crossAttention := func(x *graph.Node) *graph.Node {
		a := MultiheadAttention(b.scope.In("multihead_attn"), x, b.memory, b.memory, b.heads)
		if b.memoryKeyPadding != nil {
			a.KeyPaddingMask(b.memoryKeyPadding)
		}
		out, _ := a.Done()
		return drop("dropout2", out)
	}
	feedForward := func(x *graph.Node) *graph.Node {
		h := TorchLinear(b.scope.In("linear1"), x, b.ff, true)
		if b.gelu {
			h = gelu(h)
		} else {
			h = ReLU(h)
		}
		return drop("dropout3", TorchLinear(b.scope.In("linear2"), drop("dropout", h), d, true))
	}
	x := b.x
	norm1, norm2, norm3 := b.scope.In("norm1"), b.scope.In("norm2"), b.scope.In("norm3")
	if b.normFirst {
		x = graph.Add(x, selfAttention(TorchLayerNorm(norm1, x)))
		x = graph.Add(x, crossAttention(TorchLayerNorm(norm2, x)))
		return graph.Add(x, feedForward(TorchLayerNorm(norm3, x)))
	}
	x = TorchLayerNorm(norm1, graph.Add(x, selfAttention(x)))
	x = TorchLayerNorm(norm2, graph.Add(x, crossAttention(x)))
	return TorchLayerNorm(norm3, graph.Add(x, feedForward(x)))
}
