"""Writes a small decoder with Hugging Face GPT-2's module names and layouts
(transformers' GPT2LMHeadModel, written here in plain torch: Debian has no
python3-transformers), for gpt2's tests (PyTorch 1.13):

    /usr/bin/python3 gpt2/testdata/gen.py

gpt2.pt     torch.save(model.state_dict()): transformer.wte/wpe, h.{i}.ln_1,
            attn.c_attn and attn.c_proj (Conv1D: weight [in, out]), attn.bias
            (the causal-mask buffer older checkpoints hold), ln_2, mlp.c_fc,
            mlp.c_proj, ln_f, and lm_head.weight tied to wte (one storage)
golden.pt   eval_ids [2, 12] and their logits [2, 12, vocab] (eval mode);
            train_ids [20·2, 12], the batches of 20 fine-tuning steps (one batch
            repeated, so the loss falls; AdamW
            lr 1e-2, weight decay 0.01 on every parameter, the language-model
            loss: cross-entropy of the logits at t against the ids at t+1),
            and losses [20], each step's loss before its update
"""
import math
import os

import torch
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(2)
VOCAB, POSITIONS, EMBED, LAYERS, HEADS, T = 64, 16, 16, 2, 2, 12


class Conv1D(torch.nn.Module):  # transformers.pytorch_utils.Conv1D
    def __init__(self, nf, nx):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = torch.nn.Parameter(torch.randn(nf) * 0.02)

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).reshape(*x.shape[:-1], -1)


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(POSITIONS, POSITIONS, dtype=torch.bool)).view(1, 1, POSITIONS, POSITIONS))
        self.c_attn = Conv1D(3 * EMBED, EMBED)
        self.c_proj = Conv1D(EMBED, EMBED)

    def forward(self, x):
        n, t, e = x.shape
        q, k, v = self.c_attn(x).split(e, dim=2)
        heads = lambda y: y.view(n, t, HEADS, e // HEADS).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        w = q @ k.transpose(-1, -2) / math.sqrt(e // HEADS)
        w = w.masked_fill(~self.bias[:, :, :t, :t], float("-inf")).softmax(-1)
        return self.c_proj((w @ v).transpose(1, 2).reshape(n, t, e))


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = Conv1D(4 * EMBED, EMBED)
        self.c_proj = Conv1D(EMBED, 4 * EMBED)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))  # GPT-2's gelu_new


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.attn = torch.nn.LayerNorm(EMBED), Attention()
        self.ln_2, self.mlp = torch.nn.LayerNorm(EMBED), MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Transformer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = torch.nn.Embedding(VOCAB, EMBED), torch.nn.Embedding(POSITIONS, EMBED)
        self.h = torch.nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln_f = torch.nn.LayerNorm(EMBED)


class GPT2LMHeadModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = Transformer()
        self.lm_head = torch.nn.Linear(EMBED, VOCAB, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied

    def forward(self, ids):
        tr = self.transformer
        x = tr.wte(ids) + tr.wpe(torch.arange(ids.shape[1]))
        for block in tr.h:
            x = block(x)
        return self.lm_head(tr.ln_f(x))


model = GPT2LMHeadModel()
with torch.no_grad():  # GPT-2's N(0, 0.02) embeddings; layer norms away from ones and zeros, so their use shows
    model.transformer.wte.weight.normal_(0, 0.02)
    model.transformer.wpe.weight.normal_(0, 0.02)
    for name, p in model.named_parameters():
        if "ln_" in name:
            p.uniform_(0.8, 1.2) if name.endswith("weight") else p.uniform_(-0.1, 0.1)
torch.save(model.state_dict(), os.path.join(here, "gpt2.pt"))

eval_ids = torch.randint(0, VOCAB, (2, T))
model.eval()
with torch.no_grad():
    eval_logits = model(eval_ids)

model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
train_ids = torch.randint(0, VOCAB, (2, T)).repeat(20, 1)  # one batch, 20 times: the loss falls as it is learned
losses = []
for step in range(20):
    ids = train_ids[2 * step:2 * step + 2]
    logits = model(ids)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
torch.save({"eval_ids": eval_ids, "eval_logits": eval_logits, "train_ids": train_ids,
            "losses": torch.tensor(losses, dtype=torch.float64)}, os.path.join(here, "golden.pt"))
print("losses", losses[0], losses[-1])
