#!/usr/bin/env python3
"""The Python side of bench/lm_vs_python.sh: randomly initialised models of
Pythia-160m's shape (GPT-NeoX: 12 layers, d 768, 12 heads, rotary on 25% of each head, parallel
residual, untied head, vocabulary 50,304) and of mamba-130m's (24 layers, d 768, d_state 16,
d_conv 4, expand 2, tied head, vocabulary 50,280), written here in plain PyTorch as a notebook
would write them, timed as bench_lm times the app's:
  forward   one pass over a prompt of --tokens tokens, logits at every position (inference mode)
  generate  greedy continuation of a --prompt-tokens prompt by --new tokens: a KV cache for
            GPT-NeoX; for Mamba the prompt through the parallel projections and a scan loop over
            time (as HuggingFace's MambaForCausalLM does without its CUDA kernels), then one
            recurrent step per token
Prints "<which> <what> <median seconds>".
Usage: lm_ref.py pythia|mamba forward|generate [--repeats N] [--tokens T] [--prompt-tokens P]
       [--new N] [--threads N]
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def greedy(logits, step, new):
    """`new` tokens, each the argmax after the last; `step(token)` gives the next logits."""
    out = []
    for _ in range(new):
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        out.append(nxt)
        if len(out) == new:
            break
        logits = step(nxt)
    return torch.cat(out, 1)


# ---- GPT-NeoX (Pythia) -----------------------------------------------------------------------

class Rotary:
    def __init__(self, dims, base=10000.0):
        self.dims = dims
        self.inv = 1.0 / (base ** (torch.arange(0, dims, 2).float() / dims))

    def __call__(self, x, start):  # x: (B, H, T, D); rotates the first `dims` of D
        T = x.shape[2]
        t = torch.arange(start, start + T).float()
        freqs = torch.outer(t, self.inv)
        emb = torch.cat([freqs, freqs], -1)
        cos, sin = emb.cos(), emb.sin()
        r, p = x[..., :self.dims], x[..., self.dims:]
        half = self.dims // 2
        rot = torch.cat([-r[..., half:], r[..., :half]], -1)
        return torch.cat([r * cos + rot * sin, p], -1)


class NeoxLayer(nn.Module):
    def __init__(self, d, heads, rotary):
        super().__init__()
        self.heads, self.rotary = heads, rotary
        self.input_layernorm = nn.LayerNorm(d)
        self.post_attention_layernorm = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.dense = nn.Linear(d, d)
        self.fc_in = nn.Linear(d, 4 * d)
        self.fc_out = nn.Linear(4 * d, d)

    def attention(self, x, cache):
        B, T, C = x.shape
        H, D = self.heads, C // self.heads
        q, k, v = self.qkv(x).view(B, T, H, 3 * D).permute(0, 2, 1, 3).chunk(3, dim=-1)
        start = 0 if cache is None or cache[0] is None else cache[0].shape[2]
        q, k = self.rotary(q, start), self.rotary(k, start)
        if cache is not None:
            if cache[0] is not None:
                k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            cache[0], cache[1] = k, v
        att = q @ k.transpose(-2, -1) / math.sqrt(D)
        if T > 1:
            S = k.shape[2]
            mask = torch.ones(T, S, dtype=torch.bool).tril(S - T)
            att = att.masked_fill(~mask, float("-inf"))
        y = torch.softmax(att, -1) @ v
        return self.dense(y.transpose(1, 2).reshape(B, T, C))

    def forward(self, x, cache=None):
        return x + self.attention(self.input_layernorm(x), cache) + self.fc_out(F.gelu(self.fc_in(self.post_attention_layernorm(x))))


class Pythia(nn.Module):
    def __init__(self, vocab=50304, d=768, layers=12, heads=12, rotary_pct=0.25):
        super().__init__()
        rot = Rotary(int(d // heads * rotary_pct))
        self.embed_in = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(NeoxLayer(d, heads, rot) for _ in range(layers))
        self.final_layer_norm = nn.LayerNorm(d)
        self.embed_out = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, caches=None):
        x = self.embed_in(idx)
        for i, layer in enumerate(self.layers):
            x = layer(x, None if caches is None else caches[i])
        return self.embed_out(self.final_layer_norm(x))

    def generate(self, prompt, new):
        caches = [[None, None] for _ in self.layers]
        return greedy(self(prompt, caches), lambda nxt: self(nxt, caches), new)


# ---- Mamba -----------------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class MambaMixer(nn.Module):
    def __init__(self, d, d_state=16, d_conv=4, expand=2):
        super().__init__()
        Di, N, R = expand * d, d_state, math.ceil(d / 16)
        self.Di, self.N, self.R, self.K = Di, N, R, d_conv
        self.in_proj = nn.Linear(d, 2 * Di, bias=False)
        self.conv1d = nn.Conv1d(Di, Di, d_conv, groups=Di, padding=d_conv - 1)
        self.x_proj = nn.Linear(Di, R + 2 * N, bias=False)
        self.dt_proj = nn.Linear(R, Di)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, N + 1).float()).repeat(Di, 1))
        self.D = nn.Parameter(torch.ones(Di))
        self.out_proj = nn.Linear(Di, d, bias=False)

    def forward(self, h, cache=None):
        """h: (B, T, C). With `cache` (a dict) the conv window and the state after the last token
        are left in it."""
        B, T, _ = h.shape
        x, z = self.in_proj(h).transpose(1, 2).chunk(2, dim=1)           # (B, Di, T)
        if cache is not None:
            cache["conv"] = F.pad(x, (self.K - T, 0))[..., -self.K:] if T < self.K else x[..., -self.K:]
        u = F.silu(self.conv1d(x)[..., :T])
        dt, Bm, Cm = self.x_proj(u.transpose(1, 2)).split([self.R, self.N, self.N], -1)
        delta = F.softplus(self.dt_proj(dt)).transpose(1, 2)              # (B, Di, T)
        A = -torch.exp(self.A_log)
        dA = torch.exp(delta.unsqueeze(-1) * A[:, None, :])               # (B, Di, T, N)
        dBu = delta.unsqueeze(-1) * Bm.unsqueeze(1) * u.unsqueeze(-1)     # (B, Di, T, N)
        s = h.new_zeros(B, self.Di, self.N)
        ys = []
        for t in range(T):
            s = dA[:, :, t] * s + dBu[:, :, t]
            ys.append((s * Cm[:, t].unsqueeze(1)).sum(-1))
        if cache is not None:
            cache["ssm"] = s
        y = (torch.stack(ys, 2) + u * self.D[:, None]) * F.silu(z)
        return self.out_proj(y.transpose(1, 2))

    def step(self, h, cache):  # h: (B, C)
        x, z = self.in_proj(h).chunk(2, -1)                               # (B, Di)
        cache["conv"] = torch.cat([cache["conv"][..., 1:], x.unsqueeze(-1)], -1)
        u = F.silu((cache["conv"] * self.conv1d.weight.squeeze(1)).sum(-1) + self.conv1d.bias)
        dt, Bm, Cm = self.x_proj(u).split([self.R, self.N, self.N], -1)
        delta = F.softplus(self.dt_proj(dt))
        dA = torch.exp(delta.unsqueeze(-1) * -torch.exp(self.A_log))
        cache["ssm"] = cache["ssm"] * dA + delta.unsqueeze(-1) * Bm.unsqueeze(1) * u.unsqueeze(-1)
        y = (cache["ssm"] * Cm.unsqueeze(1)).sum(-1) + u * self.D
        return self.out_proj(y * F.silu(z))


class MambaBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = RMSNorm(d)
        self.mixer = MambaMixer(d)

    def forward(self, x, cache=None):
        return x + self.mixer(self.norm(x), cache)

    def step(self, x, cache):
        return x + self.mixer.step(self.norm(x), cache)


class Mamba(nn.Module):
    def __init__(self, vocab=50280, d=768, layers=24):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(MambaBlock(d) for _ in range(layers))
        self.norm_f = RMSNorm(d)

    def forward(self, idx, caches=None):
        x = self.embedding(idx)
        for i, layer in enumerate(self.layers):
            x = layer(x, None if caches is None else caches[i])
        return self.norm_f(x) @ self.embedding.weight.t()

    def generate(self, prompt, new):
        caches = [{} for _ in self.layers]

        def step(nxt):
            x = self.embedding(nxt[:, 0])
            for layer, cache in zip(self.layers, caches):
                x = layer.step(x, cache)
            return (self.norm_f(x) @ self.embedding.weight.t()).unsqueeze(1)

        return greedy(self(prompt, caches), step, new)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("which", choices=["pythia", "mamba"])
    p.add_argument("what", choices=["forward", "generate"])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--tokens", type=int, default=1000)
    p.add_argument("--prompt-tokens", type=int, default=100)
    p.add_argument("--new", type=int, default=64)
    p.add_argument("--threads", type=int, default=0)
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = (Pythia() if a.which == "pythia" else Mamba()).eval()
    g = torch.Generator().manual_seed(1)
    times = []
    with torch.inference_mode():
        if a.what == "forward":
            idx = torch.randint(0, 50000, (1, a.tokens), generator=g)
            for r in range(a.repeats + 1):  # the first is a warm-up
                t0 = time.perf_counter()
                model(idx)
                if r > 0:
                    times.append(time.perf_counter() - t0)
        else:
            prompt = torch.randint(0, 50000, (1, a.prompt_tokens), generator=g)
            for r in range(a.repeats + 1):
                t0 = time.perf_counter()
                model.generate(prompt, a.new)
                if r > 0:
                    times.append(time.perf_counter() - t0)
    times.sort()
    print(f"{a.which} {a.what} {times[len(times) // 2]:.4f}")


if __name__ == "__main__":
    main()
