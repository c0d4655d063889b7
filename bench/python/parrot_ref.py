"""Plain-PyTorch reference of Parrotscope's copy experiment, for side-by-side benchmarks.

Written from the app's definitions (core/models/transformer.cpp, core/models/mamba.cpp,
base/tasks/tokentask.cpp, core/model.cpp, core/train/trainer.cpp), the way one would write
them in a notebook: nanoGPT-style Transformer with an explicit additive attention bias
(NoPE / ALiBi / Hard-ALiBi), Mamba with the selective scan as a loop over time, the copy
task's packed training rows and one-example-per-row evaluation, AdamW with two parameter
groups, warm-up then cosine decay, global-norm clipping.

Parameter names are the app's, so an app checkpoint loads with load_state_dict (check_ref.py).

Only what the benchmark needs is here; build_model() and CopyTask refuse anything else with
a message naming the option.
"""

import json
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

# ---- vocabulary (CopyVocab) -------------------------------------------------------------
PAD, BOS, SEP, EOS, FIRST_LETTER = 0, 1, 2, 3, 4
# token roles (tasks/tokentask.h)
PROMPT, SEPARATOR, ANSWER, END = "prompt", "separator", "answer", "end"


class Unsupported(Exception):
    """A config option this reference does not implement."""


def load_config(path):
    """The experiment config: `parrotscope config ...` output, a run folder's config.json, or
    a preset file. Missing sections fall back to nothing: the app's printed config is complete."""
    with open(path) as f:
        doc = json.load(f)
    if "parrotscope_run" in doc:  # a run folder's config.json
        doc = doc["experiment"]
    for section in ("task", "model", "train"):
        if section not in doc:
            raise Unsupported(f"{path}: no '{section}' section; write the config with "
                              f"`parrotscope config --preset NAME > FILE.json`")
    return doc


def check_supported(cfg):
    t, m = cfg["task"], cfg["model"]
    problems = []
    if t.get("kind") != "copy":
        problems.append(f"task.kind={t.get('kind')!r}: only 'copy' is implemented")
    if t.get("eval_kind"):
        problems.append(f"task.eval_kind={t['eval_kind']!r}: not implemented (leave it empty)")
    if m.get("kind") not in ("transformer", "mamba"):
        problems.append(f"model.kind={m.get('kind')!r}: only 'transformer' and 'mamba' are implemented")
    if m.get("kind") == "transformer":
        if m.get("positions") not in ("nope", "alibi", "hard_alibi"):
            problems.append(f"model.positions={m.get('positions')!r}: only nope, alibi and hard_alibi are implemented")
        if m.get("repeat_pass_dims"):
            problems.append("model.repeat_pass_dims=true: not implemented")
        if m["d_model"] % m["heads"]:
            problems.append("model.d_model must be a multiple of model.heads")
    if cfg["train"].get("schedule") not in ("cosine", "linear", "constant"):
        problems.append(f"train.schedule={cfg['train'].get('schedule')!r}: expected cosine, linear or constant")
    if problems:
        raise Unsupported("; ".join(problems))


# ---- Transformer (core/models/transformer.cpp) ---------------------------------------------

def attention_bias(positions, heads, num_masked_heads, T):
    """(H, T, T) additive bias: 0 or -slope*(q-k) where a query may look, -inf elsewhere."""
    pos = torch.arange(T)
    dist = pos[:, None] - pos[None, :]  # q - k
    allowed = (dist >= 0).expand(heads, T, T)
    if positions == "hard_alibi" and num_masked_heads > 0:
        # head i < m sees the last i+1 tokens (itself included); the others every earlier one
        window = torch.full((heads, 1, 1), T)
        window[:num_masked_heads, 0, 0] = torch.arange(num_masked_heads)
        allowed = allowed & (dist[None] <= window)
    bias = torch.zeros(heads, T, T)
    if positions == "alibi":
        slopes = 2.0 ** (-8.0 * torch.arange(1, heads + 1, dtype=torch.float) / heads)
        bias = -slopes.view(-1, 1, 1) * dist.clamp(min=0).float()[None]
    return bias.masked_fill(~allowed, float("-inf"))


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)

    def forward(self, x, bias, weights=None):
        B, T, C = x.shape
        H, D = self.heads, C // self.heads
        q, k, v = self.c_attn(x).view(B, T, 3, H, D).permute(2, 0, 3, 1, 4)  # (B, H, T, D) each
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D) + bias, dim=-1)
        if weights is not None:
            weights.append(att.detach())
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, d_model, hidden):
        super().__init__()
        self.c_fc = nn.Linear(d_model, hidden)
        self.c_proj = nn.Linear(hidden, d_model)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, d_model, heads, mlp_ratio, eps, parallel_residual):
        super().__init__()
        self.parallel_residual = parallel_residual
        self.ln_1 = nn.LayerNorm(d_model, eps=eps)
        self.attn = CausalSelfAttention(d_model, heads)
        self.ln_2 = nn.LayerNorm(d_model, eps=eps)
        self.mlp = MLP(d_model, mlp_ratio * d_model)

    def forward(self, x, bias, weights=None):
        if self.parallel_residual:
            return x + self.attn(self.ln_1(x), bias, weights) + self.mlp(self.ln_2(x))
        x = x + self.attn(self.ln_1(x), bias, weights)
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, vocab_size, m):
        super().__init__()
        self.positions = m["positions"]
        self.heads = m["heads"]
        self.num_masked_heads = m["num_masked_heads"] if self.positions == "hard_alibi" else 0
        C, eps = m["d_model"], m.get("layer_norm_eps", 1e-5)
        self.wte = nn.Embedding(vocab_size, C)
        self.h = nn.ModuleList(Block(C, m["heads"], m["mlp_ratio"], eps, m.get("parallel_residual", False))
                               for _ in range(m["layers"]))
        self.ln_f = nn.LayerNorm(C, eps=eps)
        self.lm_head = None if m["tie_embeddings"] else nn.Linear(C, vocab_size, bias=False)
        self._bias = {}  # T -> (H, T, T) attention bias, made once per length
        self.gpt2_init(m["layers"])

    @torch.no_grad()
    def gpt2_init(self, layers):
        for name, p in self.named_parameters():
            if name.endswith(".bias"):
                p.zero_()
            elif "ln_" in name or "norm" in name:
                p.fill_(1.0)
            elif name.endswith("c_proj.weight") or name.endswith("out_proj.weight"):
                p.normal_(0.0, 0.02 / math.sqrt(2 * layers))
            else:
                p.normal_(0.0, 0.02)

    def bias(self, T):
        if T not in self._bias:
            self._bias[T] = attention_bias(self.positions, self.heads, self.num_masked_heads, T)
        return self._bias[T]

    def forward(self, idx, weights=None):
        bias = self.bias(idx.shape[1])
        x = self.wte(idx)
        for block in self.h:
            x = block(x, bias, weights)
        x = self.ln_f(x)
        return self.lm_head(x) if self.lm_head is not None else x @ self.wte.weight.t()


# ---- Mamba (core/models/mamba.cpp) ----------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def selective_scan_ref(u, delta, A, B, C, D, z, delta_bias):
    """u, delta, z: (B, Di, T); A: (Di, N); B, C: (B, N, T); D, delta_bias: (Di).
    x_t = exp(dt_t A) x_{t-1} + dt_t B_t u_t,  y_t = C_t . x_t + D u_t,  out = y * silu(z)."""
    delta = F.softplus(delta + delta_bias[None, :, None])
    Bn, Di, T = u.shape
    x = u.new_zeros(Bn, Di, A.shape[1])
    ys = []
    for t in range(T):
        dt = delta[:, :, t, None]                                           # (B, Di, 1)
        x = torch.exp(dt * A) * x + dt * B[:, None, :, t] * u[:, :, t, None]  # (B, Di, N)
        ys.append((x * C[:, None, :, t]).sum(-1))                           # (B, Di)
    y = torch.stack(ys, dim=2) + u * D[None, :, None]
    return y * F.silu(z)


class MambaMixer(nn.Module):
    def __init__(self, d_model, d_state, d_conv, expand, dt_min=1e-3, dt_max=0.1):
        super().__init__()
        Di, N, R = expand * d_model, d_state, math.ceil(d_model / 16)
        self.d_inner, self.d_state, self.dt_rank = Di, N, R
        self.in_proj = nn.Linear(d_model, 2 * Di, bias=False)
        self.conv1d = nn.Conv1d(Di, Di, d_conv, groups=Di, padding=d_conv - 1)
        self.x_proj = nn.Linear(Di, R + 2 * N, bias=False)
        self.dt_proj = nn.Linear(R, Di)
        self.A_log = nn.Parameter(torch.empty(Di, N))
        self.D = nn.Parameter(torch.empty(Di))
        with torch.no_grad():
            std = R ** -0.5
            self.dt_proj.weight.uniform_(-std, std)
            dt = torch.exp(torch.rand(Di) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)).clamp(min=1e-4)
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))  # inverse softplus
            self.A_log.copy_(torch.log(torch.arange(1, N + 1, dtype=torch.float)).repeat(Di, 1))
            self.D.fill_(1.0)
        self.out_proj = nn.Linear(Di, d_model, bias=False)

    def project(self, h):
        """The scan's inputs: u (after conv and SiLU), dt before its bias, B, C, z."""
        T, R, N = h.shape[1], self.dt_rank, self.d_state
        x, z = self.in_proj(h).transpose(1, 2).chunk(2, dim=1)   # (B, Di, T) each
        u = F.silu(self.conv1d(x)[..., :T])                      # causal: drop the right padding
        dt, Bm, Cm = self.x_proj(u.transpose(1, 2)).split([R, N, N], dim=-1)
        dt = (dt @ self.dt_proj.weight.t()).transpose(1, 2)      # (B, Di, T); the bias goes into the scan
        return u, dt, Bm.transpose(1, 2), Cm.transpose(1, 2), z

    def forward(self, h):
        u, dt, Bm, Cm, z = self.project(h)
        y = selective_scan_ref(u, dt, -torch.exp(self.A_log), Bm, Cm, self.D, z, self.dt_proj.bias)
        return self.out_proj(y.transpose(1, 2))


class GatedMLP(nn.Module):
    def __init__(self, d_model, hidden):
        super().__init__()
        self.hidden = hidden
        self.fc1 = nn.Linear(d_model, 2 * hidden, bias=False)
        self.fc2 = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x):
        value, gate = self.fc1(x).split(self.hidden, dim=-1)
        return self.fc2(value * F.silu(gate))


class MambaBlock(nn.Module):
    def __init__(self, m):
        super().__init__()
        C = m["d_model"]
        self.norm = RMSNorm(C)
        self.mixer = MambaMixer(C, m["d_state"], m["d_conv"], m["expand"])
        if m.get("mamba_mlp_ratio", 0) > 0:
            self.norm2 = RMSNorm(C)
            self.mlp = nn.Sequential(GatedMLP(C, m["mamba_mlp_ratio"] * C))  # "mlp.0.fc1" as the app names it
        else:
            self.mlp = None

    def forward(self, x):
        x = x + self.mixer(self.norm(x))
        if self.mlp is not None:
            x = x + self.mlp(self.norm2(x))
        return x


class MambaLM(nn.Module):
    def __init__(self, vocab_size, m):
        super().__init__()
        C = m["d_model"]
        self.backbone = nn.Module()
        self.backbone.embedding = nn.Embedding(vocab_size, C)
        self.backbone.layers = nn.ModuleList(MambaBlock(m) for _ in range(m["layers"]))
        self.backbone.norm_f = RMSNorm(C)
        self.lm_head = None if m["tie_embeddings"] else nn.Linear(C, vocab_size, bias=False)
        with torch.no_grad():
            self.backbone.embedding.weight.normal_(0.0, 0.02)
            if self.lm_head is not None:
                self.lm_head.weight.normal_(0.0, 0.02)
            for block in self.backbone.layers:  # residual output projections / sqrt(layers)
                block.mixer.out_proj.weight /= math.sqrt(m["layers"])

    def forward(self, idx):
        x = self.backbone.embedding(idx)
        for block in self.backbone.layers:
            x = block(x)
        x = self.backbone.norm_f(x)
        return self.lm_head(x) if self.lm_head is not None else x @ self.backbone.embedding.weight.t()


def vocab_size(cfg):
    return FIRST_LETTER + cfg["task"]["vocab_size"]


def build_model(cfg):
    """The config's model, initialised under torch.manual_seed(cfg['seed'])."""
    check_supported(cfg)
    torch.manual_seed(cfg["seed"])
    m = cfg["model"]
    if m["kind"] == "transformer":
        return Transformer(vocab_size(cfg), m)
    return MambaLM(vocab_size(cfg), m)


# ---- the copy task (base/tasks/tokentask.cpp) -----------------------------------------------

class CopyTask:
    """`$ s | s .` with s uniform over the letters; roles mark what is scored."""

    def __init__(self, task):
        self.letters = task["vocab_size"]
        self.min_len, self.max_len = task["min_len"], task["max_len"]
        self.context_len = task["context_len"]
        if self.context_len < 2 * self.max_len + 3:
            raise Unsupported(f"task.context_len {self.context_len}: a length-{self.max_len} example needs "
                              f"{2 * self.max_len + 3} tokens")

    def example(self, rng, length=None):
        if length is None:
            length = rng.randint(self.min_len, self.max_len)
        s = [FIRST_LETTER + c for c in rng.choices(range(self.letters), k=length)]
        tokens = [BOS] + s + [SEP] + s + [EOS]
        roles = [SEPARATOR] + [PROMPT] * length + [SEPARATOR] + [ANSWER] * length + [END]
        return tokens, roles

    def train_batch(self, batch, rng):
        """Rows of examples packed back to back, cut at context_len + 1 tokens; the loss counts
        the answers and end tokens of the examples that fit whole."""
        T = self.context_len
        rows, targets, masks = [], [], []
        for _ in range(batch):
            row, scored = [], []
            while len(row) < T + 1:
                tokens, roles = self.example(rng)
                complete = len(row) + len(tokens) <= T + 1
                row += tokens
                scored += [complete and r in (ANSWER, END) for r in roles]
            rows.append(row[:T])
            targets.append(row[1:T + 1])
            masks.append(scored[1:T + 1])
        return torch.tensor(rows), torch.tensor(targets), torch.tensor(masks, dtype=torch.float)

    def eval_batch(self, length, batch, rng):
        """One example per row (teacher forcing); the mask marks the answer letters only."""
        return self.batch_of([self.example(rng, length) for _ in range(batch)])

    @staticmethod
    def batch_of(examples):
        longest = max(len(t) for t, _ in examples) - 1
        inputs = torch.full((len(examples), longest), PAD)
        targets = torch.full((len(examples), longest), PAD)
        mask = torch.zeros(len(examples), longest, dtype=torch.bool)
        for r, (tokens, roles) in enumerate(examples):
            n = len(tokens) - 1
            inputs[r, :n] = torch.tensor(tokens[:-1])
            targets[r, :n] = torch.tensor(tokens[1:])
            mask[r, :n] = torch.tensor([role == ANSWER for role in roles[1:]])
        return inputs, targets, mask


def token_loss(model, inputs, targets, mask):
    """Masked mean next-token cross-entropy (tokenLoss)."""
    logits = model(inputs)
    nll = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1), reduction="none")
    return (nll * mask.view(-1)).sum() / mask.sum().clamp(min=1.0)


@torch.inference_mode()
def score(model, inputs, targets, mask):
    """(rows all right, answer tokens right, answer tokens): teacher-forced argmax (scoreBatch)."""
    was_training = model.training
    model.eval()
    right = model(inputs).argmax(-1) == targets
    model.train(was_training)
    rows = (right | ~mask).all(1).sum().item()
    return rows, (right & mask).sum().item(), mask.sum().item()


# ---- optimisation (core/train/trainer.cpp) ---------------------------------------------------

def make_optimizer(model, t):
    """AdamW; weight decay on matrices and embeddings, not on biases, norms or A_log, D, log_dt."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        ssm = name.rsplit(".", 1)[-1] in ("A_log", "D", "log_dt")
        (decay if p.dim() >= 2 and not ssm else no_decay).append(p)
    return torch.optim.AdamW([{"params": decay, "weight_decay": t["weight_decay"]},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=t["lr"], betas=(t["beta1"], t["beta2"]))


def learning_rate(t, step):
    """Linear warm-up, then cosine (or linear) decay to min_lr_ratio * lr over the run."""
    lr, warmup = t["lr"], t["warmup_steps"]
    if warmup > 0 and step < warmup:
        return lr * (step + 1) / warmup
    progress = min(max((step - warmup) / max(1.0, t["steps"] - warmup), 0.0), 1.0)
    floor = t["min_lr_ratio"]
    if t["schedule"] == "cosine":
        return lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))
    if t["schedule"] == "linear":
        return lr * (1 - (1 - floor) * progress)
    return lr


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())


def rng_for(seed):
    return random.Random(seed)
