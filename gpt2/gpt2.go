// Package gpt2 is a decoder with the names and layouts of Hugging Face's
// GPT-2 (transformers' GPT2LMHeadModel), built from package nn's
// torch-named layers, so that a GPT-2 state dict loads into it with
// package statedict ([LoadOptions]) and gives GPT-2's logits ([Logits],
// of the size [Config] says):
//
//	weights, err := statedict.Read("model.safetensors")
//	...
//	logits := func() *graph.Node {
//		transformer := scope.In("transformer")
//		defer weights.Apply(transformer, gpt2.LoadOptions()...)
//		return gpt2.Logits(transformer, ids, gpt2.Config{Vocab: 50257, Positions: 1024, Embed: 768, Layers: 12, Heads: 12})
//	}()
//
// The variables are under the scope given (GPT2LMHeadModel's transformer),
// as the state dict's keys after "transformer.": wte/weight, wpe/weight,
// h/0/ln_1/weight, h/0/attn/c_attn/weight, …, ln_f/bias. GPT-2's Conv1D layers (c_attn,
// c_proj, c_fc) store their weights [in, out]; here they are
// torch.nn.Linear's [out, in] (nn.TorchLinear), and statedict.GPT2Conv1D
// transposes them as they load. The language-model head is tied to wte,
// as in GPT-2: lm_head.weight, which torch's state_dict() repeats, is
// left out when loading (LoadOptions).
package gpt2

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/voltml/volt/nn"
	"github.com/voltml/volt/statedict"
)

// Config is GPT-2's size: GPT2Config's vocab_size, n_positions, n_embd,
// n_layer and n_head. Dropout (GPT-2's 0.1 in training) is not applied.
type Config struct {
	Vocab, Positions, Embed, Layers, Heads int
}

// LoadOptions are the statedict options that load a GPT-2 state dict
// (keys "transformer.…") into Logits's variables: Conv1D weights transposed, the tied lm_head.weight and
// the causal-mask buffers of older checkpoints (h.*.attn.bias,
// h.*.attn.masked_bias) left out.
func LoadOptions() []statedict.Option {
	return []statedict.Option{
		statedict.StripPrefix("transformer."), statedict.GPT2Conv1D(),
		statedict.Exclude("lm_head."), statedict.ExcludeMatching("*.attn.bias", "*.attn.masked_bias"),
	}
}

// Logits returns GPT-2's next-token logits [N, T, Vocab] for token ids
// [N, T] (int32 or int64, T ≤ Positions), in float32, with the
// transformer's variables in scope.
func Logits(scope *model.Scope, ids *graph.Node, cfg Config) *graph.Node {
	if ids.Rank() != 2 || !ids.DType().IsInt() || ids.Shape().Dim(1) > cfg.Positions || cfg.Embed%cfg.Heads != 0 {
		panic(fmt.Sprintf("gpt2.Logits: ids must be integer [N, T] with T ≤ %d positions and Embed %d divisible by Heads %d, got %s",
			cfg.Positions, cfg.Embed, cfg.Heads, ids.Shape()))
	}
	t := scope
	n, length := ids.Shape().Dim(0), ids.Shape().Dim(1)
	positions := graph.Iota(ids.Graph(), shapes.Make(dtypes.Int32, length), 0)
	x := graph.Add(nn.Embedding(t.In("wte"), ids, cfg.Vocab, cfg.Embed, dtypes.Float32),
		graph.ExpandAxes(nn.Embedding(t.In("wpe"), positions, cfg.Positions, cfg.Embed, dtypes.Float32), 0))
	h := t.In("h")
	for i := range cfg.Layers {
		x = block(h.In("%d", i), x, cfg)
	}
	x = nn.TorchLayerNorm(t.In("ln_f"), x)
	wte := t.Store().GetVariable(model.JoinPath(t.Scope(), "wte", "weight")).NodeValue(x.Graph()) // the tied head: x·wteᵀ
	return graph.Reshape(graph.DotGeneral(x, []int{2}, nil, wte, []int{1}, nil), n, length, cfg.Vocab)
}

// block is GPT2Block: x + attn(ln_1(x)), then + mlp(ln_2(x)).
func block(scope *model.Scope, x *graph.Node, cfg Config) *graph.Node {
	x = graph.Add(x, attention(scope.In("attn"), nn.TorchLayerNorm(scope.In("ln_1"), x), cfg))
	mlp := scope.In("mlp")
	h := nn.TorchLinear(mlp.In("c_fc"), nn.TorchLayerNorm(scope.In("ln_2"), x), 4*cfg.Embed, true)
	return graph.Add(x, nn.TorchLinear(mlp.In("c_proj"), nn.GELUTanh(h), cfg.Embed, true))
}

// attention is GPT2Attention: c_attn's query, key and value, causal
// multi-head attention, c_proj.
func attention(scope *model.Scope, x *graph.Node, cfg Config) *graph.Node {
	n, length, e := x.Shape().Dim(0), x.Shape().Dim(1), cfg.Embed
	qkv := nn.TorchLinear(scope.In("c_attn"), x, 3*e, true) // [N, T, 3E]
	heads := func(i int) *graph.Node {
		part := graph.Slice(qkv, graph.AxisRange(), graph.AxisRange(), graph.AxisRange(i*e, (i+1)*e))
		return graph.TransposeAllAxes(graph.Reshape(part, n, length, cfg.Heads, e/cfg.Heads), 0, 2, 1, 3) // [N, H, T, D]
	}
	out := nn.ScaledDotProductAttention(heads(0), heads(1), heads(2), true)
	out = graph.Reshape(graph.TransposeAllAxes(out, 0, 2, 1, 3), n, length, e)
	return nn.TorchLinear(scope.In("c_proj"), out, e, true)
}
