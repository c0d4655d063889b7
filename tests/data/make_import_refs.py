#!/usr/bin/python3
"""Writes the importer test data in tests/data (committed, so the tests run without Python).

Run with Debian's Python and python3-torch:  /usr/bin/python3 tests/data/make_import_refs.py

mamba_tiny/: a tiny random model in mamba_ssm's MambaLMHeadModel layout (config.json and
model.safetensors with backbone.embedding, backbone.layers.N.{norm,mixer.*}, backbone.norm_f;
lm_head tied), the same weights as F16 and BF16, split into two shards with an index, and as
torch.save files (a plain dict and a raw OrderedDict). refs.json holds a token row and the
logits of this script's own forward pass: a plain loop over time written from the Mamba paper
(Gu & Dao, 2023, algorithm 2) and mamba_ssm's block structure, not from the app's code.
"""
import json
import math
import os
import struct
from collections import OrderedDict

import torch

torch.manual_seed(1234)
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "mamba_tiny")
os.makedirs(OUT, exist_ok=True)

d_model, n_layer, d_state, d_conv, expand, vocab = 16, 2, 4, 4, 2, 30
pad = 8
vocab_padded = (vocab + pad - 1) // pad * pad  # mamba_ssm pads the vocabulary to a multiple of 8
d_inner = expand * d_model
dt_rank = math.ceil(d_model / 16)


def rnd(*shape, scale=0.3):
    return torch.randn(*shape) * scale


sd = OrderedDict()
sd["backbone.embedding.weight"] = rnd(vocab_padded, d_model, scale=0.5)
for i in range(n_layer):
    p = f"backbone.layers.{i}."
    sd[p + "norm.weight"] = 1 + rnd(d_model, scale=0.1)
    sd[p + "mixer.in_proj.weight"] = rnd(2 * d_inner, d_model)
    sd[p + "mixer.conv1d.weight"] = rnd(d_inner, 1, d_conv)
    sd[p + "mixer.conv1d.bias"] = rnd(d_inner, scale=0.1)
    sd[p + "mixer.x_proj.weight"] = rnd(dt_rank + 2 * d_state, d_inner)
    sd[p + "mixer.dt_proj.weight"] = rnd(d_inner, dt_rank)
    sd[p + "mixer.dt_proj.bias"] = rnd(d_inner, scale=0.5) - 2.0
    sd[p + "mixer.A_log"] = torch.log(torch.arange(1, d_state + 1, dtype=torch.float32)).repeat(d_inner, 1) + rnd(d_inner, d_state, scale=0.1)
    sd[p + "mixer.D"] = 1 + rnd(d_inner, scale=0.1)
    sd[p + "mixer.out_proj.weight"] = rnd(d_model, d_inner)
sd["backbone.norm_f.weight"] = 1 + rnd(d_model, scale=0.1)


def rms_norm(x, w, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def mixer(x, p, w):  # x: (T, d_model)
    T = x.shape[0]
    xz = x @ w[p + "in_proj.weight"].T
    u, z = xz[:, :d_inner], xz[:, d_inner:]
    # causal depthwise convolution: out[t, c] = b[c] + sum_k w[c, k] * u[t - (K-1) + k, c]
    conv_w, conv_b = w[p + "conv1d.weight"][:, 0, :], w[p + "conv1d.bias"]
    v = torch.zeros_like(u)
    for t in range(T):
        acc = conv_b.clone()
        for k in range(d_conv):
            s = t - (d_conv - 1) + k
            if s >= 0:
                acc = acc + conv_w[:, k] * u[s]
        v[t] = acc
    u = torch.nn.functional.silu(v)
    xdbl = u @ w[p + "x_proj.weight"].T
    dt = torch.nn.functional.softplus(xdbl[:, :dt_rank] @ w[p + "dt_proj.weight"].T + w[p + "dt_proj.bias"])
    B, C = xdbl[:, dt_rank:dt_rank + d_state], xdbl[:, dt_rank + d_state:]
    A = -torch.exp(w[p + "A_log"])
    h = torch.zeros(d_inner, d_state)
    ys = []
    for t in range(T):
        h = torch.exp(dt[t][:, None] * A) * h + dt[t][:, None] * B[t][None, :] * u[t][:, None]
        ys.append((h * C[t][None, :]).sum(-1) + w[p + "D"] * u[t])
    y = torch.stack(ys) * torch.nn.functional.silu(z)
    return y @ w[p + "out_proj.weight"].T


def forward(tokens, w):
    x = w["backbone.embedding.weight"][tokens]
    for i in range(n_layer):
        p = f"backbone.layers.{i}."
        x = x + mixer(rms_norm(x, w[p + "norm.weight"]), p + "mixer.", w)
    x = rms_norm(x, w["backbone.norm_f.weight"])
    return x @ w["backbone.embedding.weight"].T  # tied


DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}


def save_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.contiguous()
        raw = t.view(torch.int16).numpy().tobytes() if t.dtype in (torch.float16, torch.bfloat16) else t.numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


config = {"d_model": d_model, "n_layer": n_layer, "vocab_size": vocab, "ssm_cfg": {"d_state": d_state, "d_conv": d_conv, "expand": expand},
          "rms_norm": True, "residual_in_fp32": True, "fused_add_norm": True, "pad_vocab_size_multiple": pad, "tie_embeddings": True}
with open(os.path.join(OUT, "config.json"), "w") as f:
    json.dump(config, f, indent=2)

tokens = [1, 4, 5, 6, 7, 2, 4, 5, 6, 7, 3, 17, 29, 0]
refs = {"tokens": tokens}
with torch.no_grad():
    for name, dtype in [("model.safetensors", torch.float32), ("model-f16.safetensors", torch.float16), ("model-bf16.safetensors", torch.bfloat16)]:
        w = {k: v.to(dtype) for k, v in sd.items()}
        save_safetensors(os.path.join(OUT, name), w)
        logits = forward(torch.tensor(tokens), {k: v.float() for k, v in w.items()})  # the file's values, in float32
        refs[name] = logits.tolist()
    # two shards and an index, as HuggingFace writes large models
    names = list(sd.keys())
    shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2], "model-00002-of-00002.safetensors": names[len(names) // 2:]}
    os.makedirs(os.path.join(OUT, "sharded"), exist_ok=True)
    weight_map = {}
    for shard, keys in shards.items():
        save_safetensors(os.path.join(OUT, "sharded", shard), {k: sd[k] for k in keys})
        weight_map.update({k: shard for k in keys})
    with open(os.path.join(OUT, "sharded", "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": sum(v.numel() * 4 for v in sd.values())}, "weight_map": weight_map}, f, indent=1)
    with open(os.path.join(OUT, "sharded", "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    # torch.save files: a plain dict, and the raw OrderedDict that model.state_dict() returns
    torch.save(dict(sd), os.path.join(OUT, "pytorch_model.bin"))
    torch.save(sd, os.path.join(OUT, "ordered_dict.bin"))
with open(os.path.join(OUT, "refs.json"), "w") as f:
    json.dump(refs, f)
print("wrote", OUT)
