package nn

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// DecoderLayerBuilder configures a torch.nn.TransformerDecoderLayer:
// TransformerDecoderLayer starts it, Done applies it.
type DecoderLayerBuilder struct {
	layerParts
	x, memory        *graph.Node
	causal           bool
	tgtKeyPadding    *graph.Node
	memoryKeyPadding *graph.Node
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
	return &DecoderLayerBuilder{layerParts: newLayerParts(scope, heads), x: x, memory: memory}
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
	b.check("TransformerDecoderLayer")
	selfAttention := func(x *graph.Node) *graph.Node {
		a := MultiheadAttention(b.scope.In("self_attn"), x, x, x, b.heads)
		if b.causal {
			a.Causal()
		}
		if b.tgtKeyPadding != nil {
			a.KeyPaddingMask(b.tgtKeyPadding)
		}
		out, _ := a.Done()
		return b.drop("dropout1", out)
	}
	crossAttention := func(x *graph.Node) *graph.Node {
		a := MultiheadAttention(b.scope.In("multihead_attn"), x, b.memory, b.memory, b.heads)
		if b.memoryKeyPadding != nil {
			a.KeyPaddingMask(b.memoryKeyPadding)
		}
		out, _ := a.Done()
		return b.drop("dropout2", out)
	}
	feedForward := func(x *graph.Node) *graph.Node { return b.feedForward(x, "dropout3") }
	return b.residuals(b.x, sublayer{"norm1", selfAttention}, sublayer{"norm2", crossAttention}, sublayer{"norm3", feedForward})
}
