package nn_test

import (
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/nn"
)

// boolMask reads a [rows][cols] bool argument as a constant, or nil.
func (c layerCase) boolMask(g *graph.Graph, name string) *graph.Node {
	rows, ok := c.Args[name].([]any)
	if !ok {
		return nil
	}
	mask := make([][]bool, len(rows))
	for i, row := range rows {
		for _, v := range row.([]any) {
			mask[i] = append(mask[i], v.(bool))
		}
	}
	return graph.Const(g, mask)
}

// floatMask reads a [rows][cols] float argument as a constant, or nil.
func (c layerCase) floatMask(g *graph.Graph, name string) *graph.Node {
	rows, ok := c.Args[name].([]any)
	if !ok {
		return nil
	}
	mask := make([][]float32, len(rows))
	for i, row := range rows {
		for _, v := range row.([]any) {
			mask[i] = append(mask[i], float32(v.(float64)))
		}
	}
	return graph.Const(g, mask)
}

// attention is the case's self-attention, masks applied.
func (c layerCase) attention(scope *model.Scope, x *graph.Node) *nn.AttentionBuilder {
	a := nn.MultiheadAttention(scope, x, x, x, c.int("heads", 0))
	if !c.bool("bias", true) {
		a.NoBias()
	}
	if c.bool("causal", false) {
		a.Causal()
	}
	if m := c.floatMask(x.Graph(), "attn_mask"); m != nil {
		a.AttnMask(m)
	}
	if m := c.boolMask(x.Graph(), "key_padding_mask"); m != nil {
		a.KeyPaddingMask(m)
	}
	return a
}

var attentionLayers = map[string]func(c layerCase, scope *model.Scope, x *graph.Node) *graph.Node{
	"MultiheadAttention": func(c layerCase, scope *model.Scope, x *graph.Node) *graph.Node {
		out, _ := c.attention(scope, x).Done()
		return out
	},
	"MultiheadAttentionWeights": func(c layerCase, scope *model.Scope, x *graph.Node) *graph.Node {
		_, weights := c.attention(scope, x).Done()
		return weights
	},
	"TransformerEncoderLayer": func(c layerCase, scope *model.Scope, x *graph.Node) *graph.Node {
		b := nn.TransformerEncoderLayer(scope, x, c.int("heads", 0)).FeedForward(c.int("ff", 0)).Dropout(0)
		if c.bool("norm_first", false) {
			b.NormFirst()
		}
		if c.bool("gelu", false) {
			b.GELU()
		}
		if c.bool("causal", false) {
			b.Causal()
		}
		if m := c.boolMask(x.Graph(), "key_padding_mask"); m != nil {
			b.KeyPaddingMask(m)
		}
		return b.Done()
	},
	"TransformerDecoderLayer": func(c layerCase, scope *model.Scope, x *graph.Node) *graph.Node {
		b := nn.TransformerDecoderLayer(scope, x, c.memory, c.int("heads", 0)).FeedForward(c.int("ff", 0)).Dropout(0)
		if c.bool("norm_first", false) {
			b.NormFirst()
		}
		if c.bool("gelu", false) {
			b.GELU()
		}
		if c.bool("causal", false) {
			b.Causal()
		}
		if m := c.boolMask(x.Graph(), "tgt_key_padding_mask"); m != nil {
			b.TgtKeyPaddingMask(m)
		}
		if m := c.boolMask(x.Graph(), "memory_key_padding_mask"); m != nil {
			b.MemoryKeyPaddingMask(m)
		}
		return b.Done()
	},
}

// TestAttentionAsTorch: MultiheadAttention (self-attention; causal, float
// and key-padding masks; no bias; the head-averaged weights),
// TransformerEncoderLayer (post-norm ReLU, pre-norm GELU causal, key
// padding) and TransformerDecoderLayer (post-norm causal; pre-norm GELU
// with target and memory padding; the memory's gradient too) load torch's state_dicts by torch's keys (in_proj_weight,
// out_proj.weight, self_attn.…, linear1.…, norm1.…) and give torch's
// outputs and gradients (attention_gen.py's cases) within 1e-5.
func TestAttentionAsTorch(t *testing.T) {
	checkLayerCases(t, "testdata/attention.json", attentionLayers, 1e-5)
}
