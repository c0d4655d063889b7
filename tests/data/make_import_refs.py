#!/usr/bin/python3
"""Writes the importer test data in tests/data (committed, so the tests run without Python).

Run with Debian's Python and python3-torch:  /usr/bin/python3 tests/data/make_import_refs.py

mamba_tiny/: a tiny random model in mamba_ssm's MambaLMHeadModel layout (config.json and
model.safetensors with backbone.embedding, backbone.layers.N.{norm,mixer.*}, backbone.norm_f;
lm_head tied), the same weights as F16 and BF16, split into two shards with an index, and as
torch.save files (a plain dict and a raw OrderedDict). refs.json holds a token row and the
logits of this script's own forward pass: a plain loop over time written from the Mamba paper
(Gu & Dao, 2023, algorithm 2) and mamba_ssm's block structure, not from the app's code.

neox_tiny/: tiny random GPT-NeoX models in HuggingFace's layout (gpt_neox.embed_in,
gpt_neox.layers.N.{input_layernorm, post_attention_layernorm, attention.query_key_value,
attention.dense, mlp.dense_h_to_4h, mlp.dense_4h_to_h}, gpt_neox.final_layer_norm, embed_out),
one folder per class with its config.json: pythia/ (GPTNeoXForCausalLM: partial rotary, parallel
residual; model.safetensors and a torch.save plain dict carrying the old causal-mask and
inv_freq buffers), hard_alibi/, alibi/ and nope/ (the copy paper's classes, which append each
head's unrotated query/key dims a second time before the dot product; nope/ is sequential, not
parallel, residual). own_tiny/: the pythia weights under the app's own Transformer names
(wte, h.N.ln_1, h.N.attn.c_attn with its rows in the app's [q|k|v][head][dim] order, …) as a
torch.save plain dict, with the app's experiment config in config.json: the same logits.
The reference is a loop over heads, queries and keys with the rotation
written out pair by pair, from the GPT-NeoX description, not from the app's code.
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

# ---- GPT-NeoX --------------------------------------------------------------------------------
NEOX = os.path.join(HERE, "neox_tiny")
hidden, heads, n_layers, vocab_neox = 16, 4, 2, 30
head_dim = hidden // heads
inter = 4 * hidden

nw = {"gpt_neox.embed_in.weight": rnd(vocab_neox, hidden, scale=0.5)}
for i in range(n_layers):
    p = f"gpt_neox.layers.{i}."
    nw[p + "input_layernorm.weight"] = 1 + rnd(hidden, scale=0.1)
    nw[p + "input_layernorm.bias"] = rnd(hidden, scale=0.1)
    nw[p + "post_attention_layernorm.weight"] = 1 + rnd(hidden, scale=0.1)
    nw[p + "post_attention_layernorm.bias"] = rnd(hidden, scale=0.1)
    nw[p + "attention.query_key_value.weight"] = rnd(3 * hidden, hidden, scale=0.5)
    nw[p + "attention.query_key_value.bias"] = rnd(3 * hidden, scale=0.1)
    nw[p + "attention.dense.weight"] = rnd(hidden, hidden)
    nw[p + "attention.dense.bias"] = rnd(hidden, scale=0.1)
    nw[p + "mlp.dense_h_to_4h.weight"] = rnd(inter, hidden)
    nw[p + "mlp.dense_h_to_4h.bias"] = rnd(inter, scale=0.1)
    nw[p + "mlp.dense_4h_to_h.weight"] = rnd(hidden, inter)
    nw[p + "mlp.dense_4h_to_h.bias"] = rnd(hidden, scale=0.1)
nw["gpt_neox.final_layer_norm.weight"] = 1 + rnd(hidden, scale=0.1)
nw["gpt_neox.final_layer_norm.bias"] = rnd(hidden, scale=0.1)
nw["embed_out.weight"] = rnd(vocab_neox, hidden, scale=0.5)


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def gelu(x):  # the exact GELU
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def rotate(vec, pos, r, base):
    """GPT-NeoX rotary on the first r dims: pairs (i, i + r/2) turned by pos * base^(-2i/r)."""
    out = vec.clone()
    for i in range(r // 2):
        theta = pos * base ** (-2.0 * i / r)
        a, b = vec[i], vec[i + r // 2]
        out[i] = a * math.cos(theta) - b * math.sin(theta)
        out[i + r // 2] = b * math.cos(theta) + a * math.sin(theta)
    return out


def neox_forward(tokens, w, cfg):
    kind, eps = cfg["kind"], cfg["layer_norm_eps"]
    r = int(head_dim * cfg["rotary_pct"])
    T = len(tokens)
    x = w["gpt_neox.embed_in.weight"][tokens]
    for i in range(n_layers):
        p = f"gpt_neox.layers.{i}."
        h = layer_norm(x, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
        qkv = (h @ w[p + "attention.query_key_value.weight"].T + w[p + "attention.query_key_value.bias"]).view(T, heads, 3 * head_dim)
        att = torch.zeros(T, heads, head_dim)
        for hd in range(heads):
            slope = 2.0 ** (-8.0 * (hd + 1) / heads)
            for t in range(T):
                q = qkv[t, hd, :head_dim]
                scores, values = [], []
                for s in range(t + 1):
                    if kind == "hard_alibi" and hd < cfg["num_masked_heads"] and t - s > hd:
                        continue  # masked head hd sees the last hd + 1 tokens
                    k, v = qkv[s, hd, head_dim:2 * head_dim], qkv[s, hd, 2 * head_dim:]
                    if kind == "rope":
                        score = torch.dot(rotate(q, t, r, cfg["rotary_emb_base"]), rotate(k, s, r, cfg["rotary_emb_base"]))
                    else:  # the copy paper's classes: cat(q, q[r:]) . cat(k, k[r:])
                        score = torch.dot(q, k) + torch.dot(q[r:], k[r:])
                    score = score / math.sqrt(head_dim)
                    if kind == "alibi":
                        score = score - slope * (t - s)
                    scores.append(score)
                    values.append(v)
                weights = torch.softmax(torch.stack(scores), 0)
                att[t, hd] = sum(wt * v for wt, v in zip(weights, values))
        a = att.reshape(T, hidden) @ w[p + "attention.dense.weight"].T + w[p + "attention.dense.bias"]

        def mlp(y):
            return gelu(y @ w[p + "mlp.dense_h_to_4h.weight"].T + w[p + "mlp.dense_h_to_4h.bias"]) @ w[p + "mlp.dense_4h_to_h.weight"].T + w[p + "mlp.dense_4h_to_h.bias"]

        ln2 = lambda y: layer_norm(y, w[p + "post_attention_layernorm.weight"], w[p + "post_attention_layernorm.bias"], eps)
        if cfg["use_parallel_residual"]:
            x = x + a + mlp(ln2(x))
        else:
            x = x + a
            x = x + mlp(ln2(x))
    x = layer_norm(x, w["gpt_neox.final_layer_norm.weight"], w["gpt_neox.final_layer_norm.bias"], eps)
    return x @ w["embed_out.weight"].T


variants = {
    "pythia": {"kind": "rope", "architectures": ["GPTNeoXForCausalLM"], "rotary_pct": 0.5, "rotary_emb_base": 10000,
               "use_parallel_residual": True, "layer_norm_eps": 1e-5},
    "hard_alibi": {"kind": "hard_alibi", "architectures": ["GPTNeoXHardAlibiForCausalLM"], "num_masked_heads": 2, "rotary_pct": 0.25,
                   "rotary_emb_base": 10000, "use_parallel_residual": True, "layer_norm_eps": 1e-5},
    "alibi": {"kind": "alibi", "architectures": ["GPTNeoXAlibiForCausalLM"], "rotary_pct": 0.25, "rotary_emb_base": 10000,
              "use_parallel_residual": True, "layer_norm_eps": 1e-5},
    "nope": {"kind": "nope", "architectures": ["GPTNeoXNoPEForCausalLM"], "rotary_pct": 0.25, "rotary_emb_base": 10000,
             "use_parallel_residual": False, "layer_norm_eps": 1e-4},
}
neox_tokens = [1, 4, 5, 6, 7, 8, 2, 4, 5, 6, 7, 8, 3, 29]
neox_refs = {"tokens": neox_tokens}
with torch.no_grad():
    for name, v in variants.items():
        folder = os.path.join(NEOX, name)
        os.makedirs(folder, exist_ok=True)
        cfg = {"architectures": v["architectures"], "model_type": "gpt_neox", "hidden_size": hidden, "num_attention_heads": heads,
               "num_hidden_layers": n_layers, "intermediate_size": inter, "vocab_size": vocab_neox, "hidden_act": "gelu",
               "rotary_pct": v["rotary_pct"], "rotary_emb_base": v["rotary_emb_base"], "max_position_embeddings": 2048,
               "use_parallel_residual": v["use_parallel_residual"], "layer_norm_eps": v["layer_norm_eps"], "tie_word_embeddings": False,
               "bos_token_id": 0, "eos_token_id": 0}
        if "num_masked_heads" in v:
            cfg["num_masked_heads"] = v["num_masked_heads"]
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
        save_safetensors(os.path.join(folder, "model.safetensors"), nw)
        neox_refs[name] = neox_forward(torch.tensor(neox_tokens), nw, v).tolist()
    # HuggingFace's older pytorch_model.bin: a plain dict, with the buffers it used to save
    bin_dict = dict(nw)
    for i in range(n_layers):
        p = f"gpt_neox.layers.{i}.attention."
        bin_dict[p + "bias"] = torch.tril(torch.ones(8, 8, dtype=torch.bool)).view(1, 1, 8, 8)
        bin_dict[p + "masked_bias"] = torch.tensor(-1e9)
        bin_dict[p + "rotary_emb.inv_freq"] = 1.0 / (10000 ** (torch.arange(0, 2, 2).float() / 2))
    # a transposed view saved as is: the reader must follow its strides
    bin_dict["embed_out.weight"] = nw["embed_out.weight"].T.contiguous().T
    torch.save(bin_dict, os.path.join(NEOX, "pythia", "pytorch_model.bin"))
    # the app's own Transformer, saved from Python: a plain dict and the app's experiment config
    own = {}
    for name, t in nw.items():
        if name.endswith("query_key_value.weight") or name.endswith("query_key_value.bias"):
            t = t.view(heads, 3, head_dim, *t.shape[1:]).transpose(0, 1).reshape(t.shape)  # [head][qkv][dim] -> [qkv][head][dim]
        for theirs, ours in [("gpt_neox.embed_in", "wte"), ("gpt_neox.final_layer_norm", "ln_f"), ("embed_out", "lm_head"),
                             ("gpt_neox.layers.", "h."), ("input_layernorm", "ln_1"), ("post_attention_layernorm", "ln_2"),
                             ("attention.query_key_value", "attn.c_attn"), ("attention.dense", "attn.c_proj"),
                             ("mlp.dense_h_to_4h", "mlp.c_fc"), ("mlp.dense_4h_to_h", "mlp.c_proj")]:
            name = name.replace(theirs, ours)
        own[name] = t
    OWN = os.path.join(HERE, "own_tiny")
    os.makedirs(OWN, exist_ok=True)
    torch.save(own, os.path.join(OWN, "pytorch_model.bin"))
    with open(os.path.join(OWN, "config.json"), "w") as f:
        json.dump({"name": "own-tiny", "task": {"kind": "copy", "vocab_size": vocab_neox - 4},
                   "model": {"kind": "transformer", "positions": "rope", "layers": n_layers, "d_model": hidden, "heads": heads,
                             "mlp_ratio": inter // hidden, "rotary_fraction": 0.5, "parallel_residual": True, "tie_embeddings": False}},
                  f, indent=2)
with open(os.path.join(NEOX, "refs.json"), "w") as f:
    json.dump(neox_refs, f)
print("wrote", NEOX)
