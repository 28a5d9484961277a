#!/usr/bin/python3
"""PyTorch side of the character-transformer parity case (package parity's
TestCharGPTParity; the Go model is examples/chargpt/gpt).

nanoGPT's model.py (Karpathy), written out for torch 1.13 (no
scaled_dot_product_attention: the manual causal path nanoGPT falls back
to): token + position embeddings, pre-norm blocks (LayerNorm eps 1e-5,
causal self-attention with one c_attn Linear for q, k, v and scores scaled
by 1/sqrt(head_dim), exact nn.GELU MLP of 4x width), final LayerNorm, head
tied to the token embedding; biases on (bias=True). nanoGPT's init
(N(0, 0.02), c_proj 0.02/sqrt(2 layers)), then biases and LayerNorm
parameters perturbed so that their conversion matters.

2 layers, 2 heads, width 32, block 16, batch 8; the corpus is
examples/chargpt/opticks.txt, bytes as tokens (vocabulary: the sorted
distinct bytes), windows drawn with numpy's seeded generator. AdamW(lr 3e-3,
betas (0.9, 0.99), weight decay 0.1) with nanoGPT's split (no decay on
rank < 2 parameters: biases and LayerNorm), clip_grad_norm_ 1.0,
CosineAnnealingLR(50, eta_min 1e-4) stepped every batch; 50 steps. The
file holds the initial weights (params/...), the batches, every step's loss
and the weights after the 50 steps (trained/..., but the key biases,
whose gradients are zero but for rounding): at initialisation the
attention scores are near zero, so a wrong scale barely moves the losses
but does move the trained weights.

    /usr/bin/python3 tools/parity/chargpt.py [--out DIR]
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_parity  # noqa: E402

CORPUS = os.path.join(HERE, "..", "..", "examples", "chargpt", "opticks.txt")
STEPS, BATCH, BLOCK, LAYERS, HEADS, WIDTH = 50, 8, 16, 2, 2, 32


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(WIDTH, 3 * WIDTH)
        self.c_proj = nn.Linear(WIDTH, WIDTH)
        self.register_buffer("mask", torch.tril(torch.ones(BLOCK, BLOCK)).view(1, 1, BLOCK, BLOCK))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(WIDTH, dim=2)
        q = q.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        k = k.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        v = v.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(WIDTH), CausalSelfAttention(), nn.LayerNorm(WIDTH)
        self.c_fc, self.gelu, self.c_proj = nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(self.gelu(self.c_fc(self.ln_2(x))))


class GPT(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, WIDTH), nn.Embedding(BLOCK, WIDTH)
        self.h = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(WIDTH)
        self.lm_head = nn.Linear(WIDTH, vocab, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * LAYERS))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets):
        t = idx.size(1)
        x = self.wte(idx) + self.wpe(torch.arange(t, dtype=torch.long))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def to_gomlx(model):
    """GoMLX variables of examples/chargpt/gpt under "/gpt" (see its package
    doc), by path."""
    out = {"/gpt/wte/embeddings": model.wte.weight, "/gpt/wpe/embeddings": model.wpe.weight}
    for i, block in enumerate(model.h):
        s = f"/gpt/block_{i}"
        out.update(torch_parity.layer_norm(block.ln_1, f"{s}/ln_1"))
        out.update(torch_parity.layer_norm(block.ln_2, f"{s}/ln_2"))
        w, b = block.attn.c_attn.weight.detach(), block.attn.c_attn.bias.detach()
        for j, name in enumerate(["query", "key", "value"]):
            # nn.Linear's [out, in] rows j*W..(j+1)*W. GoMLX's Dense with output dims
            # [heads, head_dim] keeps flat weights [in, heads*head_dim] and biases
            # [heads*head_dim] and reshapes its output: head h owns outputs h*D..(h+1)*D,
            # as nanoGPT's view(B, T, heads, head_dim).
            out[f"{s}/attn/MultiHeadAttention/{name}/dense/weights"] = w[j * WIDTH:(j + 1) * WIDTH].t().contiguous()
            out[f"{s}/attn/MultiHeadAttention/{name}/dense/biases"] = b[j * WIDTH:(j + 1) * WIDTH]
        out.update(torch_parity.linear(block.attn.c_proj, f"{s}/attn/MultiHeadAttention/output"))
        out.update(torch_parity.linear(block.c_fc, f"{s}/mlp/fc"))
        out.update(torch_parity.linear(block.c_proj, f"{s}/mlp/proj"))
    out.update(torch_parity.layer_norm(model.ln_f, "/gpt/ln_f"))
    return out


def main():
    out = torch_parity.out_dir()
    with open(CORPUS, "rb") as f:
        corpus = np.frombuffer(f.read(), dtype=np.uint8)
    vocab = np.unique(corpus)
    tokens = np.searchsorted(vocab, corpus).astype(np.int64)
    torch.set_num_threads(1)  # the same rounding on every machine's thread count
    torch.manual_seed(23)
    model = GPT(len(vocab))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() < 2:
                p.add_(0.05 * torch.randn_like(p))
    params = torch_parity.params(to_gomlx(model))
    rng = np.random.default_rng(23)
    starts = rng.integers(0, len(tokens) - BLOCK - 1, size=STEPS * BATCH)
    x = np.stack([tokens[s:s + BLOCK] for s in starts])
    y = np.stack([tokens[s + 1:s + 1 + BLOCK] for s in starts])
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=3e-3, betas=(0.9, 0.99))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS, eta_min=1e-4)
    losses = torch_parity.train(model, torch_parity.batches(STEPS, BATCH, x, y), lambda m, xb, yb: m(xb, yb),
                                opt, sched, clip=1.0)
    # Not the key biases: softmax ignores what they add (q·b_k, the same for
    # every key of a row), so their gradients are rounding and what they
    # hold after training is noise (they move 2e-6 in the 50 steps).
    weights = {k: v for k, v in to_gomlx(model).items() if not k.endswith("/key/dense/biases")}
    tensors = {**params, **torch_parity.trained(weights)}
    tensors["x"], tensors["y"], tensors["loss"] = x.astype(np.int32), y.astype(np.int32), losses
    torch_parity.save_safetensors(os.path.join(out, "chargpt_adamw.safetensors"), tensors,
                                  {"torch_version": torch.__version__, "batch_size": BATCH, "steps": STEPS,
                                   "vocab": len(vocab)})
    print(f"chargpt_adamw: vocab {len(vocab)}, loss {losses[0]:.6f} -> {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
