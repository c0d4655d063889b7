"""Reference data for the Gated DeltaNet family, written with flash-linear-attention's own reference
recurrence (fla-core's naive_recurrent_gated_delta_rule, fla/ops/gated_delta_rule/naive.py) and its
chunked twin (naive_chunk_gated_delta_rule) as the heart of each layer; the layer around it (the
projections, short convolutions, L2 norms, beta, the gate and the gated RMSNorm) is written here from
fla/layers/gated_deltanet.py, not from the app's code. Run once in a virtualenv over Debian's
python3-torch; the files it writes are committed, so the suite needs no Python.

    /usr/bin/python3 -m venv --system-site-packages /tmp/hf && /tmp/hf/bin/pip install fla-core einops safetensors
    /tmp/hf/bin/python tests/data/make_gated_deltanet_refs.py    # writes tests/data/gated_deltanet_tiny/

fla's kernels need Triton and a GPU; its reference functions are plain torch, so they are loaded here
from the installed package's file without importing the package's kernels.

For each of two tiny random models (gated: the decay gate on; plain: off, the plain delta rule),
gated_deltanet_tiny/NAME/ holds:
  config.json         the shape (d_model, head_dim, expand_v, d_conv, chunk_size, layers, vocab,
                      forget_gate)
  model.safetensors   the weights under fla's names (model.embeddings, model.layers.N.{attn_norm,
                      attn.{q,k,v,a,b,g,o}_proj, attn.A_log, attn.dt_bias, attn.{q,k,v}_conv1d,
                      attn.o_norm}}, model.norm), the LM head tied; blocks without fla's MLP
  refs.safetensors    tokens (2 x 11 rows, not a multiple of the chunk size), the logits, the loss
                      weights R and the gradient of sum(logits * R) for every parameter, and each
                      layer's final state (B, heads, head_dim, head_v_dim) and short convolutions'
                      last inputs (B, channels, d_conv)
"""
import importlib.util
import json
import math
import os

import fla
import torch
import torch.nn.functional as F
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "gated_deltanet_tiny")

SHAPE = dict(d_model=16, head_dim=4, expand_v=2, d_conv=4, chunk_size=4, layers=2, vocab=32)
EPS = 1e-5


def fla_reference():
    path = os.path.join(os.path.dirname(fla.__file__), "ops", "gated_delta_rule", "naive.py")
    spec = importlib.util.spec_from_file_location("fla_gated_delta_rule_naive", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NAIVE = fla_reference()


def random_weights(shape, gate, seed):
    """fla's names and shapes, values spread so that no part is trivial (norms != 1, decays between
    0.5 and 1, convolutions that mix their four inputs)."""
    g = torch.Generator().manual_seed(seed)
    C, K, E, W, V = shape["d_model"], shape["head_dim"], shape["expand_v"], shape["d_conv"], shape["vocab"]
    H = C // K
    Dk, Dv = H * K, H * K * E
    w = {"model.embeddings.weight": torch.randn(V, C, generator=g) * 0.5}
    for i in range(shape["layers"]):
        p = f"model.layers.{i}."
        w[p + "attn_norm.weight"] = 1 + 0.2 * torch.randn(C, generator=g)
        a = p + "attn."
        w[a + "q_proj.weight"] = torch.randn(Dk, C, generator=g) / math.sqrt(C)
        w[a + "k_proj.weight"] = torch.randn(Dk, C, generator=g) / math.sqrt(C)
        w[a + "v_proj.weight"] = torch.randn(Dv, C, generator=g) / math.sqrt(C)
        if gate:
            w[a + "a_proj.weight"] = torch.randn(H, C, generator=g) / math.sqrt(C)
        w[a + "b_proj.weight"] = torch.randn(H, C, generator=g) / math.sqrt(C)
        if gate:
            w[a + "A_log"] = torch.log(torch.empty(H).uniform_(0.05, 1.0, generator=g))
            w[a + "dt_bias"] = torch.randn(H, generator=g) * 0.5 - 1.0
        w[a + "q_conv1d.weight"] = torch.randn(Dk, 1, W, generator=g) * 0.5
        w[a + "k_conv1d.weight"] = torch.randn(Dk, 1, W, generator=g) * 0.5
        w[a + "v_conv1d.weight"] = torch.randn(Dv, 1, W, generator=g) * 0.5
        w[a + "g_proj.weight"] = torch.randn(Dv, C, generator=g) / math.sqrt(C)
        w[a + "o_norm.weight"] = 1 + 0.2 * torch.randn(K * E, generator=g)
        w[a + "o_proj.weight"] = torch.randn(C, Dv, generator=g) / math.sqrt(Dv)
    w["model.norm.weight"] = 1 + 0.2 * torch.randn(C, generator=g)
    return {k: v.float().contiguous() for k, v in w.items()}


def rms(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


def short_conv(x, weight):
    """fla's ShortConvolution: a causal depthwise convolution without bias, then SiLU. x (B, T, D).
    Also returns the last d_conv inputs (B, D, d_conv), zeros before the row."""
    Bn, T, D = x.shape
    W = weight.shape[-1]
    padded = torch.cat([torch.zeros(Bn, W - 1, D), x], dim=1)
    out = torch.stack([(padded[:, t:t + W, :] * weight[:, 0, :].T).sum(1) for t in range(T)], 1)
    return F.silu(out), padded[:, T - 1:T - 1 + W, :].transpose(1, 2).contiguous()


def l2norm(x):
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + 1e-6)


def layer(w, a, u, shape, gate, chunk):
    """fla's GatedDeltaNet forward over u (B, T, C), its rule computed by fla's reference."""
    Bn, T, C = u.shape
    K, E = shape["head_dim"], shape["expand_v"]
    H = C // K
    q, cq = short_conv(u @ w[a + "q_proj.weight"].T, w[a + "q_conv1d.weight"])
    k, ck = short_conv(u @ w[a + "k_proj.weight"].T, w[a + "k_conv1d.weight"])
    v, cv = short_conv(u @ w[a + "v_proj.weight"].T, w[a + "v_conv1d.weight"])
    q, k = l2norm(q.reshape(Bn, T, H, K)), l2norm(k.reshape(Bn, T, H, K))
    v = v.reshape(Bn, T, H, K * E)
    beta = torch.sigmoid(u @ w[a + "b_proj.weight"].T)
    if gate:
        g = -torch.exp(w[a + "A_log"]) * F.softplus(u @ w[a + "a_proj.weight"].T + w[a + "dt_bias"])
    else:
        g = torch.zeros(Bn, T, H)
    o, state = NAIVE.naive_recurrent_gated_delta_rule(q, k, v, beta, g, output_final_state=True)
    o2, state2 = NAIVE.naive_chunk_gated_delta_rule(q, k, v, g, beta, chunk_size=chunk, output_final_state=True)
    err = max((o - o2).abs().max().item(), (state - state2).abs().max().item())
    assert err < 1e-5, f"fla's recurrent and chunked references differ by {err}"
    gate_in = (u @ w[a + "g_proj.weight"].T).reshape(Bn, T, H, K * E)
    o = rms(o, w[a + "o_norm.weight"]) * F.silu(gate_in)
    return o.reshape(Bn, T, H * K * E) @ w[a + "o_proj.weight"].T, state, (cq, ck, cv)


def model(w, tokens, shape, gate):
    x = w["model.embeddings.weight"][tokens]
    states = []
    for i in range(shape["layers"]):
        p = f"model.layers.{i}."
        out, state, convs = layer(w, p + "attn.", rms(x, w[p + "attn_norm.weight"]), shape, gate, shape["chunk_size"])
        x = x + out
        states.append((state, convs))
    x = rms(x, w["model.norm.weight"])
    return x @ w["model.embeddings.weight"].T, states


def write(name, gate, seed):
    out = os.path.join(OUT, name)
    os.makedirs(out, exist_ok=True)
    shape = SHAPE
    w = random_weights(shape, gate, seed)
    g = torch.Generator().manual_seed(seed + 1)
    tokens = torch.randint(0, shape["vocab"], (2, 11), generator=g)
    params = {k: v.clone().requires_grad_(True) for k, v in w.items()}
    logits, states = model(params, tokens, shape, gate)
    R = torch.randn(logits.shape, generator=g)
    (logits * R).sum().backward()
    refs = {"tokens": tokens.to(torch.int64), "logits": logits.detach(), "loss_weights": R}
    for k, p in params.items():
        refs["grad." + k] = p.grad.detach()
    for i, (state, (cq, ck, cv)) in enumerate(states):
        refs[f"state.{i}.recurrent"] = state.detach().contiguous()
        refs[f"state.{i}.conv_q"] = cq.detach()
        refs[f"state.{i}.conv_k"] = ck.detach()
        refs[f"state.{i}.conv_v"] = cv.detach()
    save_file(w, os.path.join(out, "model.safetensors"))
    save_file({k: v.contiguous() for k, v in refs.items()}, os.path.join(out, "refs.safetensors"))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(dict(shape, forget_gate=gate), f, indent=2)
        f.write("\n")
    print(f"{name}: logits {tuple(logits.shape)}, {len(params)} parameters, fla's recurrent and chunked rules agree")


if __name__ == "__main__":
    torch.set_default_dtype(torch.float32)
    write("gated", True, 2024)
    write("plain", False, 4202)
