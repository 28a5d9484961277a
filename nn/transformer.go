package nn

import (
	"fmt"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
)

// EncoderLayerBuilder configures a torch.nn.TransformerEncoderLayer:
// TransformerEncoderLayer starts it, Done applies it.
type EncoderLayerBuilder struct {
	layerParts
	x              *graph.Node
	causal         bool
	attnMask       *graph.Node
	keyPaddingMask *graph.Node
}

// TransformerEncoderLayer is torch.nn.TransformerEncoderLayer(d_model =
// x's last dimension, nhead, dim_feedforward=2048, dropout=0.1,
// activation="relu", norm_first=False, batch_first=True) on x [N, L,
// d_model], with torch's variables in scope: self_attn (MultiheadAttention),
// linear1, linear2 (TorchLinear), norm1, norm2 (TorchLayerNorm), so a
// torch state dict's "layers.0.self_attn.in_proj_weight" loads into scope
// "layers/0". Dropout applies in training steps only (GoMLX's training
// flag), as torch's in train().
func TransformerEncoderLayer(scope *model.Scope, x *graph.Node, heads int) *EncoderLayerBuilder {
	if x.Rank() != 3 {
		panic(fmt.Sprintf("nn.TransformerEncoderLayer: x must be [N, L, d_model] (batch first), got %s", x.Shape()))
	}
	return &EncoderLayerBuilder{layerParts: newLayerParts(scope, heads), x: x}
}

// FeedForward is torch's dim_feedforward= (2048 by default).
func (b *EncoderLayerBuilder) FeedForward(dim int) *EncoderLayerBuilder {
	b.ff = dim
	return b
}

// Dropout is torch's dropout= (0.1 by default), after the attention, in
// the feed-forward block and after it.
func (b *EncoderLayerBuilder) Dropout(p float64) *EncoderLayerBuilder {
	b.dropout = p
	return b
}

// GELU is torch's activation="gelu" (the exact, erf form); ReLU is the
// default.
func (b *EncoderLayerBuilder) GELU() *EncoderLayerBuilder {
	b.gelu = true
	return b
}

// NormFirst is torch's norm_first=True (pre-norm): x + attn(norm1(x)),
// then x + ff(norm2(x)); the default is post-norm, norm1(x + attn(x)),
// then norm2(x + ff(x)).
func (b *EncoderLayerBuilder) NormFirst() *EncoderLayerBuilder {
	b.normFirst = true
	return b
}

// Causal masks later positions (src_mask = the square subsequent mask).
func (b *EncoderLayerBuilder) Causal() *EncoderLayerBuilder {
	b.causal = true
	return b
}

// AttnMask is torch's src_mask= [L, L] (MultiheadAttention's AttnMask).
func (b *EncoderLayerBuilder) AttnMask(mask *graph.Node) *EncoderLayerBuilder {
	b.attnMask = mask
	return b
}

// KeyPaddingMask is torch's src_key_padding_mask= [N, L], true at padding.
func (b *EncoderLayerBuilder) KeyPaddingMask(mask *graph.Node) *EncoderLayerBuilder {
	b.keyPaddingMask = mask
	return b
}

// Done returns the layer's output [N, L, d_model].
func (b *EncoderLayerBuilder) Done() *graph.Node {
	b.check("TransformerEncoderLayer")
	selfAttention := func(x *graph.Node) *graph.Node {
		a := MultiheadAttention(b.scope.In("self_attn"), x, x, x, b.heads)
		if b.causal {
			a.Causal()
		}
		if b.attnMask != nil {
			a.AttnMask(b.attnMask)
		}
		if b.keyPaddingMask != nil {
			a.KeyPaddingMask(b.keyPaddingMask)
		}
		out, _ := a.Done()
		return b.drop("dropout1", out)
	}
	feedForward := func(x *graph.Node) *graph.Node { return b.feedForward(x, "dropout2") }
	return b.residuals(b.x, sublayer{"norm1", selfAttention}, sublayer{"norm2", feedForward})
}
