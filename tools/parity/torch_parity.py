"""Helpers for volt's step-by-step parity tests against PyTorch.

A parity case is one safetensors file written here and read by package
parity (Go): the model's initial weights under the GoMLX variable paths
volt's model gives them (already in GoMLX's layout), the batches in the
order PyTorch trained on them, PyTorch's loss at every step and its
weights after the last (trained(...)). The Go test loads the weights into
the model (parity.Tensors.Apply), trains the same steps with the same
optimizer, clipping and schedule, and compares the losses and the trained
weights.

safetensors (https://github.com/huggingface/safetensors) is written by hand
(Debian ships no python3-safetensors): an 8-byte little-endian header size,
a JSON header {name: {dtype, shape, data_offsets}} padded with spaces to a
multiple of 8, then the tensors' little-endian bytes. The Go side reads it
with github.com/nlpodyssey/safetensors, an independent reader.

Layout converters for other zoo models live here too: a PyTorch layer's
parameters -> GoMLX's variables (name and layout).
"""

import argparse
import json
import os
import struct

import numpy as np
import torch

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "parity", "testdata")

DTYPES = {np.dtype("float32"): "F32", np.dtype("float64"): "F64", np.dtype("int64"): "I64", np.dtype("int32"): "I32"}


def save_safetensors(path, tensors, metadata=None):
    """Writes {name: numpy array or torch tensor} as a safetensors file, names sorted."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name in sorted(tensors):
        a = tensors[name]
        if isinstance(a, torch.Tensor):
            a = a.detach().cpu().numpy()
        a = np.ascontiguousarray(a)
        if a.dtype not in DTYPES:
            raise ValueError(f"{name}: dtype {a.dtype} not supported")
        raw = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": DTYPES[a.dtype], "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def out_dir():
    """The folder a case script writes into: its --out flag, by default
    package parity's testdata."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=TESTDATA)
    return ap.parse_args().out


def params(weights):
    """The initial weights as a case file holds them: {"params" + GoMLX
    path: a copy of the tensor}, detached from the model that trains on."""
    return {"params" + k: v.detach().clone() for k, v in weights.items()}


def trained(weights):
    """The weights after training, as a case file holds them: {"trained" +
    GoMLX path: a copy of the tensor}. The Go test compares volt's
    variables after the same steps with them: they catch what the losses
    barely see, such as a wrong attention scale while the scores are still
    near zero. Adam's steps amplify rounding (the same script at one
    thread and at two differs by 5e-5 in them), so package parity's
    TestCasesAreCurrent compares them more loosely than the losses."""
    return {"trained" + k: v.detach().clone() for k, v in weights.items()}


def linear(layer, scope):
    """nn.Linear -> layers.Dense under scope: weights [in, out], biases [out]."""
    out = {f"{scope}/dense/weights": layer.weight.detach().t().contiguous()}
    if layer.bias is not None:
        out[f"{scope}/dense/biases"] = layer.bias.detach()
    return out


def conv2d(layer, scope):
    """nn.Conv2d -> layers.Convolution (channels-last) under scope:
    weights [kh, kw, in, out], biases [out]."""
    out = {f"{scope}/conv/weights": layer.weight.detach().permute(2, 3, 1, 0).contiguous()}
    if layer.bias is not None:
        out[f"{scope}/conv/biases"] = layer.bias.detach()
    return out


def embedding(layer, scope):
    """nn.Embedding -> layers.Embedding under scope: embeddings [num_embeddings,
    embedding_dim], PyTorch's weight as is (both index rows by token)."""
    return {f"{scope}/embeddings": layer.weight.detach()}


def layer_norm(layer, scope):
    """nn.LayerNorm -> norm.LayerNorm under scope: gain, offset."""
    return {f"{scope}/layer_normalization/gain": layer.weight.detach(),
            f"{scope}/layer_normalization/offset": layer.bias.detach()}


def batch_norm(layer, scope):
    """nn.BatchNorm1d/2d/3d -> package batchnorm under scope: its trainable
    weight and bias, under PyTorch's own names."""
    return {f"{scope}/weight": layer.weight.detach(), f"{scope}/bias": layer.bias.detach()}


def batch_norm_buffers(layer, scope):
    """nn.BatchNorm1d/2d/3d's buffers -> package batchnorm's non-trainable
    variables under scope: running_mean, running_var, num_batches_tracked
    (int64 scalar)."""
    return {f"{scope}/running_mean": layer.running_mean.detach(), f"{scope}/running_var": layer.running_var.detach(),
            f"{scope}/num_batches_tracked": layer.num_batches_tracked.detach().reshape(())}


def gru(layer, scope):
    """nn.GRU (one layer, unidirectional, batch_first) -> volt's nn.GRU under
    scope: PyTorch's own tensors and gate order (r, z, n), without the _l0
    suffix."""
    return {f"{scope}/{name}": getattr(layer, name + "_l0").detach().contiguous()
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}


def lstm(layer, scope):
    """nn.LSTM (one layer, unidirectional, batch_first) -> layers/lstm under scope.

    PyTorch stacks the gates as (input, forget, cell, output) in [4*hidden, in];
    GoMLX keeps [directions, 4, hidden, in] in the order (input, output,
    forget, cell) (layers/lstm/lstm.go, ONNX's order), and both bias vectors
    in biasesW [directions, 8, hidden]: the 4 input biases, then the 4
    recurrent ones."""
    h = layer.hidden_size
    order = [0, 3, 1, 2]  # GoMLX's gate k is PyTorch's gate order[k]
    w_ih = layer.weight_ih_l0.detach().reshape(4, h, -1)[order].reshape(1, 4, h, -1)
    w_hh = layer.weight_hh_l0.detach().reshape(4, h, h)[order].reshape(1, 4, h, h)
    b_ih = layer.bias_ih_l0.detach().reshape(4, h)[order]
    b_hh = layer.bias_hh_l0.detach().reshape(4, h)[order]
    return {f"{scope}/inputsW": w_ih.contiguous(), f"{scope}/recurrentW": w_hh.contiguous(),
            f"{scope}/biasesW": torch.cat([b_ih, b_hh]).reshape(1, 8, h).contiguous()}


def check_stable(name, losses, exact, bound=2e-5):
    """Refuses a case whose float32 losses differ from the same run's
    float64 ones (exact) by more than bound relative: a chaotic case makes
    the Go test compare rounding, not training. Returns the largest
    difference."""
    stray = float(np.max(np.abs(np.asarray(losses) - np.asarray(exact)) / np.abs(np.asarray(exact))))
    if stray > bound:
        raise SystemExit(f"{name}: float32 losses differ from float64 ones by {stray:.3g} relative: change the case")
    return stray


def check_finite(losses):
    if not all(np.isfinite(losses)):
        raise SystemExit("PyTorch's losses are not finite: change the case")


def batches(steps, size, *arrays):
    """Yields steps tuples of torch tensors: batch s of each array is its
    rows s*size..(s+1)*size (torch.from_numpy, no copy), the order the
    Go test feeds them."""
    for s in range(steps):
        yield tuple(torch.from_numpy(a[s * size:(s + 1) * size]) for a in arrays)


def train(model, batches, loss_fn, opt, sched=None, clip=None):
    """Trains model one step a batch as Lightning's automatic optimization
    does it: loss_fn(model, *batch), zero_grad, backward, clip_grad_norm_
    to clip (when given), opt.step(), sched.step() (when given: interval
    "step"). Returns PyTorch's loss before each step (float64 of its
    dtype's loss) and refuses a case whose losses are not finite."""
    losses = []
    for batch in batches:
        loss = loss_fn(model, *batch)
        losses.append(float(loss.item()))
        opt.zero_grad()
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        if sched is not None:
            sched.step()
    check_finite(losses)
    return np.array(losses, dtype=np.float64)
