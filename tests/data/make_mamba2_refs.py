"""Reference data for the Mamba-2 family, written with the real HuggingFace library and checked
against a step-by-step recurrence written here from the SSD paper (Dao and Gu, 2024, "Transformers
are SSMs", section 3) and mamba_ssm's Mamba2.step, not from the app's code. Run once in a virtualenv
over Debian's python3-torch; the files it writes are committed, so the suite needs no Python.

    /usr/bin/python3 -m venv --system-site-packages /tmp/hf && /tmp/hf/bin/pip install transformers==4.48.3 safetensors
    /tmp/hf/bin/python tests/data/make_mamba2_refs.py          # writes tests/data/mamba2_tiny/

For each of two tiny random models (g1: one group of B and C, whose output transformers'
Mamba2ForCausalLM computes too and which is checked against it; g2: two groups, where the gated
RMSNorm normalises each group's share of the inner width, as mamba_ssm's Mamba2 does and
transformers 4.48 does not), mamba2_tiny/NAME/ holds:
  config.json         the shape (d_model, d_state, head_dim, expand, n_groups, d_conv, chunk_size,
                      layers, vocab)
  model.safetensors   the weights under mamba_ssm's names (backbone.embedding, backbone.layers.N.
                      {norm, mixer.in_proj, mixer.conv1d, mixer.dt_bias, mixer.A_log, mixer.D,
                      mixer.norm, mixer.out_proj}, backbone.norm_f), the LM head tied
  refs.safetensors    tokens (2 x 11 rows, not a multiple of the chunk size), the logits, the loss
                      weights R and the gradient of sum(logits * R) for every parameter, and each
                      layer's final scan state (B, heads, head_dim, d_state) and convolution inputs
                      (B, conv channels, d_conv)
"""
import json
import math
import os

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "mamba2_tiny")

SHAPE = dict(d_model=16, d_state=8, head_dim=8, expand=2, d_conv=4, chunk_size=4, layers=2, vocab=32)
EPS = 1e-5


def random_weights(shape, n_groups, seed):
    """mamba_ssm's names and shapes, values spread so that no part is trivial (D != 1, norms != 1)."""
    g = torch.Generator().manual_seed(seed)
    C, N, P, E, K, V = shape["d_model"], shape["d_state"], shape["head_dim"], shape["expand"], shape["d_conv"], shape["vocab"]
    Di = E * C
    H = Di // P
    conv = Di + 2 * n_groups * N
    w = {"backbone.embedding.weight": torch.randn(V, C, generator=g) * 0.5}
    for i in range(shape["layers"]):
        p = f"backbone.layers.{i}."
        w[p + "norm.weight"] = 1 + 0.2 * torch.randn(C, generator=g)
        w[p + "mixer.in_proj.weight"] = torch.randn(2 * Di + 2 * n_groups * N + H, C, generator=g) / math.sqrt(C)
        w[p + "mixer.conv1d.weight"] = torch.randn(conv, 1, K, generator=g) * 0.5
        w[p + "mixer.conv1d.bias"] = torch.randn(conv, generator=g) * 0.1
        w[p + "mixer.dt_bias"] = torch.randn(H, generator=g) * 0.5 - 1.0
        w[p + "mixer.A_log"] = torch.log(torch.empty(H).uniform_(1, 16, generator=g))
        w[p + "mixer.D"] = 1 + 0.3 * torch.randn(H, generator=g)
        w[p + "mixer.norm.weight"] = 1 + 0.2 * torch.randn(Di, generator=g)
        w[p + "mixer.out_proj.weight"] = torch.randn(C, Di, generator=g) / math.sqrt(Di)
    w["backbone.norm_f.weight"] = 1 + 0.2 * torch.randn(C, generator=g)
    return {k: v.float().contiguous() for k, v in w.items()}


def rms(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


def mixer_step_by_step(w, p, u, shape, n_groups):
    """One mixer over u (B, T, C), a token at a time: h_t = exp(dt_t A) h_{t-1} + dt_t x_t B_t^T,
    y_t = h_t C_t + D x_t per head, then the gate and the grouped RMSNorm, then out_proj."""
    Bn, T, _ = u.shape
    N, P, K = shape["d_state"], shape["head_dim"], shape["d_conv"]
    Di = shape["expand"] * shape["d_model"]
    H, G = Di // P, n_groups
    zxbcdt = u @ w[p + "in_proj.weight"].T
    z, xBC, dt = torch.split(zxbcdt, [Di, Di + 2 * G * N, H], dim=-1)
    # the causal depthwise convolution over the last K inputs, then SiLU
    conv_w, conv_b = w[p + "conv1d.weight"][:, 0, :], w[p + "conv1d.bias"]
    padded = torch.cat([torch.zeros(Bn, K - 1, xBC.shape[-1]), xBC], dim=1)
    xBC = F.silu(torch.stack([(padded[:, t:t + K, :] * conv_w.T).sum(1) for t in range(T)], 1) + conv_b)
    conv_state = padded[:, T - 1:T - 1 + K, :].transpose(1, 2).contiguous() if T >= 1 else None  # the last K inputs
    x, Bm, Cm = torch.split(xBC, [Di, G * N, G * N], dim=-1)
    dt = F.softplus(dt + w[p + "dt_bias"])  # (B, T, H)
    A = -torch.exp(w[p + "A_log"])  # (H)
    D = w[p + "D"]
    x = x.reshape(Bn, T, H, P)
    Bm = Bm.reshape(Bn, T, G, N)
    Cm = Cm.reshape(Bn, T, G, N)
    h = torch.zeros(Bn, H, P, N)
    ys = []
    for t in range(T):
        y_t = []
        new_h = []
        for hd in range(H):
            g = hd // (H // G)
            decay = torch.exp(dt[:, t, hd] * A[hd])  # (B)
            state = decay[:, None, None] * h[:, hd] + dt[:, t, hd][:, None, None] * x[:, t, hd, :, None] * Bm[:, t, g, None, :]
            new_h.append(state)
            y_t.append((state * Cm[:, t, g, None, :]).sum(-1) + D[hd] * x[:, t, hd])
        h = torch.stack(new_h, 1)
        ys.append(torch.stack(y_t, 1))
    y = torch.stack(ys, 1).reshape(Bn, T, Di)
    y = y * F.silu(z)
    y = rms(y.reshape(Bn, T, G, Di // G), w[p + "norm.weight"].reshape(G, Di // G)).reshape(Bn, T, Di)
    return y @ w[p + "out_proj.weight"].T, h, conv_state


def model_step_by_step(w, tokens, shape, n_groups):
    x = w["backbone.embedding.weight"][tokens]
    states = []
    for i in range(shape["layers"]):
        p = f"backbone.layers.{i}."
        out, h, conv = mixer_step_by_step(w, p + "mixer.", rms(x, w[p + "norm.weight"]), shape, n_groups)
        x = x + out
        states.append((h, conv))
    x = rms(x, w["backbone.norm_f.weight"])
    return x @ w["backbone.embedding.weight"].T, states


def hf_logits(w, tokens, shape):
    """The same weights in transformers' Mamba2ForCausalLM (its torch path, chunked SSD)."""
    from transformers import Mamba2Config, Mamba2ForCausalLM
    C, N, P, E = shape["d_model"], shape["d_state"], shape["head_dim"], shape["expand"]
    config = Mamba2Config(vocab_size=shape["vocab"], hidden_size=C, state_size=N, num_heads=E * C // P, head_dim=P, expand=E,
                          n_groups=1, conv_kernel=shape["d_conv"], chunk_size=shape["chunk_size"],
                          num_hidden_layers=shape["layers"], use_bias=False, use_conv_bias=True, layer_norm_epsilon=EPS,
                          tie_word_embeddings=True, rms_norm=True, residual_in_fp32=True)
    model = Mamba2ForCausalLM(config).eval()
    hf = {k.replace("backbone.embedding.", "backbone.embeddings."): v for k, v in w.items()}
    hf["lm_head.weight"] = w["backbone.embedding.weight"]
    missing, unexpected = model.load_state_dict(hf, strict=False)
    assert not unexpected and not [m for m in missing if m != "lm_head.weight"], (missing, unexpected)
    with torch.no_grad():
        return model(tokens, use_cache=False).logits


def write(name, n_groups, seed, check_hf):
    out = os.path.join(OUT, name)
    os.makedirs(out, exist_ok=True)
    shape = SHAPE
    w = random_weights(shape, n_groups, seed)
    g = torch.Generator().manual_seed(seed + 1)
    tokens = torch.randint(0, shape["vocab"], (2, 11), generator=g)
    params = {k: v.clone().requires_grad_(True) for k, v in w.items()}
    logits, states = model_step_by_step(params, tokens, shape, n_groups)
    R = torch.randn(logits.shape, generator=g)
    (logits * R).sum().backward()
    if check_hf:
        theirs = hf_logits(w, tokens, shape)
        err = (theirs - logits.detach()).abs().max().item()
        assert err < 1e-5, f"transformers' Mamba2 and the step-by-step recurrence differ by {err}"
        print(f"{name}: transformers' Mamba2ForCausalLM and the recurrence agree to {err:.2e}")
    refs = {"tokens": tokens.to(torch.int64), "logits": logits.detach(), "loss_weights": R}
    for k, p in params.items():
        refs["grad." + k] = p.grad.detach()
    for i, (h, conv) in enumerate(states):
        refs[f"state.{i}.ssm"] = h.detach().contiguous()
        refs[f"state.{i}.conv"] = conv.detach().contiguous()
    save_file(w, os.path.join(out, "model.safetensors"))
    save_file({k: v.contiguous() for k, v in refs.items()}, os.path.join(out, "refs.safetensors"))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(dict(shape, n_groups=n_groups), f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    torch.set_default_dtype(torch.float32)
    write("g1", 1, 1234, check_hf=True)
    write("g2", 2, 4321, check_hf=False)
