"""Writes attention.json: torch.nn.MultiheadAttention and
TransformerEncoderLayer (PyTorch 1.13, batch_first=True, train mode with
dropout 0) on seeded random inputs with causal, float and key-padding
masks, in the format of layers_gen.py, for torch_layers_test.go.

    /usr/bin/python3 nn/testdata/attention_gen.py
"""
import json
import os

import torch

torch.manual_seed(39039)
cases = []


def tensor(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "values": t.detach().double().reshape(-1).tolist()}


def masks(args, n, length):
    kw = {}
    if args.get("causal"):
        kw["attn_mask"] = torch.triu(torch.ones(length, length, dtype=torch.bool), 1)
    if "attn_mask" in args:
        kw["attn_mask"] = torch.tensor(args["attn_mask"])
    if "key_padding_mask" in args:
        kw["key_padding_mask"] = torch.tensor(args["key_padding_mask"])
    return kw


def randomize(module):
    with torch.no_grad():  # biases and norms away from torch's zeros and ones, so their use shows
        for name, p in module.named_parameters():
            if "norm" in name or name.endswith("bias"):
                p.uniform_(-0.5, 0.5) if name.endswith("bias") else p.uniform_(0.5, 1.5)


def add(name, layer, module, x, args, run):
    module.train()
    randomize(module)
    x = x.clone().requires_grad_(True)
    out = run(module, x)
    r = torch.randn(out.shape)
    (out * r).sum().backward()
    cases.append({
        "name": name, "layer": layer, "args": args, "input": tensor(x),
        "params": {k: tensor(v) for k, v in module.state_dict().items()},
        "upstream": tensor(r), "output": tensor(out), "grad_input": tensor(x.grad),
        "grad_params": {k: tensor(p.grad) for k, p in module.named_parameters() if p.grad is not None},
    })


def mha(e, h, bias=True):
    return torch.nn.MultiheadAttention(e, h, batch_first=True, bias=bias)


def mha_out(args):
    return lambda m, x: m(x, x, x, need_weights=False, **masks(args, x.shape[0], x.shape[1]))[0]


def mha_weights(args):
    return lambda m, x: m(x, x, x, need_weights=True, **masks(args, x.shape[0], x.shape[1]))[1]


a = {"heads": 2}
add("mha_self", "MultiheadAttention", mha(8, 2), torch.randn(2, 5, 8), a, mha_out(a))
a = {"heads": 3, "causal": True}
add("mha_causal", "MultiheadAttention", mha(6, 3), torch.randn(2, 4, 6), a, mha_out(a))
a = {"heads": 4, "key_padding_mask": [[False, False, False, True, True], [False, False, False, False, False], [False, True, False, False, True]]}
add("mha_key_padding", "MultiheadAttention", mha(8, 4), torch.randn(3, 5, 8), a, mha_out(a))
a = {"heads": 2, "attn_mask": (torch.randn(4, 4) * 0.5).tolist()}
add("mha_float_mask_no_bias", "MultiheadAttention", mha(4, 2, bias=False), torch.randn(2, 4, 4), {**a, "bias": False}, mha_out(a))
a = {"heads": 2, "causal": True, "key_padding_mask": [[False, False, True], [False, False, False]]}
add("mha_weights_causal_padding", "MultiheadAttentionWeights", mha(6, 2), torch.randn(2, 3, 6), a, mha_weights(a))


def encoder(d, h, ff, **kw):
    return torch.nn.TransformerEncoderLayer(d, h, dim_feedforward=ff, dropout=0.0, batch_first=True, **kw)


def enc_out(args):
    def run(m, x):
        kw = masks(args, x.shape[0], x.shape[1])
        return m(x, src_mask=kw.get("attn_mask"), src_key_padding_mask=kw.get("key_padding_mask"))
    return run


a = {"heads": 2, "ff": 16}
add("encoder_post_norm_relu", "TransformerEncoderLayer", encoder(8, 2, 16), torch.randn(2, 4, 8), a, enc_out(a))
a = {"heads": 2, "ff": 12, "norm_first": True, "gelu": True, "causal": True}
add("encoder_pre_norm_gelu_causal", "TransformerEncoderLayer", encoder(6, 2, 12, norm_first=True, activation="gelu"),
    torch.randn(2, 5, 6), a, enc_out(a))
a = {"heads": 4, "ff": 10, "key_padding_mask": [[False, False, False, True], [False, False, False, False], [False, False, True, True]]}
add("encoder_post_norm_padding", "TransformerEncoderLayer", encoder(8, 4, 10), torch.randn(3, 4, 8), a, enc_out(a))



def add_decoder(name, module, x, memory, args):
    module.train()
    randomize(module)
    x, memory = x.clone().requires_grad_(True), memory.clone().requires_grad_(True)
    t = x.shape[1]
    tgt_mask = torch.triu(torch.ones(t, t, dtype=torch.bool), 1) if args.get("causal") else None
    tkpm = torch.tensor(args["tgt_key_padding_mask"]) if "tgt_key_padding_mask" in args else None
    mkpm = torch.tensor(args["memory_key_padding_mask"]) if "memory_key_padding_mask" in args else None
    out = module(x, memory, tgt_mask=tgt_mask, tgt_key_padding_mask=tkpm, memory_key_padding_mask=mkpm)
    r = torch.randn(out.shape)
    (out * r).sum().backward()
    cases.append({
        "name": name, "layer": "TransformerDecoderLayer", "args": args, "input": tensor(x), "memory": tensor(memory),
        "params": {k: tensor(v) for k, v in module.state_dict().items()},
        "upstream": tensor(r), "output": tensor(out), "grad_input": tensor(x.grad), "grad_memory": tensor(memory.grad),
        "grad_params": {k: tensor(p.grad) for k, p in module.named_parameters() if p.grad is not None},
    })


def decoder(d, h, ff, **kw):
    return torch.nn.TransformerDecoderLayer(d, h, dim_feedforward=ff, dropout=0.0, batch_first=True, **kw)


add_decoder("decoder_post_norm_relu_causal", decoder(8, 2, 16), torch.randn(2, 4, 8), torch.randn(2, 6, 8),
            {"heads": 2, "ff": 16, "causal": True})
add_decoder("decoder_pre_norm_gelu_padding", decoder(6, 3, 10, norm_first=True, activation="gelu"), torch.randn(2, 3, 6),
            torch.randn(2, 5, 6), {"heads": 3, "ff": 10, "norm_first": True, "gelu": True, "causal": True,
                                   "tgt_key_padding_mask": [[False, False, True], [False, False, False]],
                                   "memory_key_padding_mask": [[False, False, False, True, True], [False, True, False, False, False]]})

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention.json"), "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f)
    f.write("\n")
