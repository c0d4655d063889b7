#!/usr/bin/env python3
"""Show that parrot_ref's models are the app's: load an app checkpoint into the Python model
and compare what both compute.

  check_ref.py [--app build/app/parrotscope] [--kind transformer|mamba|both] [--steps 5]
  check_ref.py --checkpoint RUN/checkpoints/last.safetensors

Without --checkpoint it trains a model of each kind for --steps steps with the app (the
default experiment; Mamba with --match-params transformer) and checks it, and that the Python
model built under a seed has the app's initial weights for that seed. For a checkpoint:
  1. the tensor names and shapes in the file are exactly the Python model's parameters;
  2. on a fixed copy input, the app's per-head attention weights (Transformer) or step sizes
     and state norms (Mamba, every block), from `parrotscope inspect --figure ... --out CSV`,
     equal the Python forward's within the CSV's 6 significant digits;
  3. on the app's own evaluation strings (`parrotscope sample --task copy --seed L` draws
     exactly the strings of `parrotscope eval --seed 0` at length L), the Python model gets the same
     number of strings and answer letters right as `parrotscope eval --json` reports.
Reads safetensors with the standard library and torch.frombuffer (no safetensors package).
Exit status 0 when everything matches.
"""

import argparse
import csv
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parrot_ref as ref  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64}


def read_safetensors(path):
    """(tensors by name, __metadata__): an 8-byte little-endian header size, a JSON header,
    then the raw data, each tensor at its data_offsets."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = bytearray(blob[8 + n:])
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        t = torch.frombuffer(data[begin:end], dtype=DTYPES[info["dtype"]]) if end > begin else torch.empty(0)
        tensors[name] = t.reshape(info["shape"]).float().clone()
    return tensors, meta


def config_from_metadata(meta):
    """The experiment config the app saved in the checkpoint."""
    if meta.get("format") != "parrotscope":
        raise SystemExit("not a Parrotscope checkpoint (no __metadata__.format = parrotscope)")
    cfg = json.loads(meta["experiment"])
    for section in ("task", "model", "train"):
        cfg[section] = json.loads(meta[section])
    return cfg


def app(args, *words):
    r = subprocess.run([args.app, *words, "--threads", str(args.threads)], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{args.app} {' '.join(words)} failed:\n{r.stdout}{r.stderr}")
    return r.stdout


def read_matrix(path):
    """An inspect --figure CSV: header row of keys, then one row per query position."""
    with open(path) as f:
        rows = list(csv.reader(f))
    return [r[0] for r in rows[1:]], torch.tensor([[float(v) for v in r[1:]] for r in rows[1:]])


def close(name, app_values, py_values, report):
    diff = (app_values - py_values).abs()
    tol = 2e-6 + 1e-5 * app_values.abs()  # the CSV keeps 6 significant digits
    ok = bool((diff <= tol).all())
    report.append((ok, f"{name}: max |app - python| = {diff.max().item():.2e}"))


@torch.no_grad()
def mamba_probes(model, idx):
    """Per block: delta = softplus(dt + bias) (T, Di) and the state norms |x_t[d]| (T, Di)."""
    out = []
    x = model.backbone.embedding(idx)
    for block in model.backbone.layers:
        mixer = block.mixer
        u, dt, Bm, Cm, _ = mixer.project(block.norm(x))
        delta = F.softplus(dt + mixer.dt_proj.bias[None, :, None])          # (1, Di, T)
        A = -torch.exp(mixer.A_log)
        state, norms = torch.zeros(1, mixer.d_inner, mixer.d_state), []
        for t in range(idx.shape[1]):
            dtt = delta[:, :, t, None]
            state = torch.exp(dtt * A) * state + dtt * Bm[:, None, :, t] * u[:, :, t, None]
            norms.append(state.norm(dim=-1))
        out.append((delta[0].t(), torch.stack(norms, 1)[0]))
        x = block(x)
    return out


def check_init(args, preset_args, seed, workdir):
    """The app's initial weights (one step at lr 1e-30 changes them by ~1e-30) against the
    Python model's under the same seed: the same construction order draws the same numbers."""
    run = os.path.join(workdir, "init")
    app(args, "train", "--preset", args.preset, *preset_args, "--out", run, "--steps", "1", "--seed", str(seed),
        "--set", "train.lr=1e-30", "--set", "task.eval_lengths=20", "--set", "task.eval_samples=4")
    tensors, meta = read_safetensors(os.path.join(run, "checkpoints", "last.safetensors"))
    ours = ref.build_model(config_from_metadata(meta)).state_dict()
    if set(ours) != set(tensors):
        return False, "initial weights: the parameter names differ"
    worst = max((ours[k] - tensors[k]).abs().max().item() for k in ours)
    return worst < 1e-20, f"initial weights under seed {seed}: max |app - python| = {worst:.1e} (the app's 1e-30 step)"


def check(args, checkpoint, workdir):
    report = []
    tensors, meta = read_safetensors(checkpoint)
    cfg = config_from_metadata(meta)
    model = ref.build_model(cfg)
    kind = cfg["model"]["kind"]
    print(f"{checkpoint}: {kind}, d_model {cfg['model']['d_model']}, step {meta.get('step')}")

    # 1. names and shapes
    ours = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    theirs = {k: tuple(v.shape) for k, v in tensors.items()}
    missing, unexpected = sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours))
    wrong = sorted(k for k in set(ours) & set(theirs) if ours[k] != theirs[k])
    report.append((not (missing or unexpected or wrong),
                   f"{len(ours)} parameter tensors, {sum(v.numel() for v in tensors.values())} values; "
                   f"missing {missing or 'none'}, unexpected {unexpected or 'none'}, wrong shape {wrong or 'none'}"))
    if missing or unexpected or wrong:
        return report
    model.load_state_dict(tensors)
    model.eval()

    # 2. inside the forward, on one copy input
    letters = "abcdefghijklmnopqrst"[:min(20, cfg["task"]["vocab_size"])]
    ids = [ref.FIRST_LETTER + ord(c) - ord("a") for c in letters]
    idx = torch.tensor([[ref.BOS] + ids + [ref.SEP] + ids + [ref.EOS]])
    layers = cfg["model"]["layers"]
    if kind == "transformer":
        weights = []
        with torch.no_grad():
            model(idx, weights)
        heads = cfg["model"]["heads"]
        for layer in range(layers):
            maps = []
            for head in range(heads):
                path = os.path.join(workdir, f"att-{layer}-{head}.csv")
                app(args, "inspect", "--checkpoint", checkpoint, "--input", letters, "--figure", "attention",
                    "--layer", str(layer), "--head", str(head), "--out", path)
                labels, values = read_matrix(path)
                if len(labels) != idx.shape[1]:
                    raise SystemExit(f"inspect made an input of {len(labels)} tokens, expected {idx.shape[1]}")
                maps.append(values)
            close(f"attention weights, layer {layer}, {heads} heads", torch.stack(maps), weights[layer][0], report)
    else:
        probes = mamba_probes(model, idx)
        for layer in range(layers):
            for figure, ours_value in zip(("delta", "state"), probes[layer]):
                path = os.path.join(workdir, f"{figure}-{layer}.csv")
                app(args, "inspect", "--checkpoint", checkpoint, "--input", letters, "--figure", figure,
                    "--layer", str(layer), "--out", path)
                _, values = read_matrix(path)
                close(f"{'step size' if figure == 'delta' else 'state norm'} block {layer}", values, ours_value, report)

    # 3. the app's evaluation, string for string
    L, n = args.length, args.samples
    # (sample --task, not --config: with --preset or --config the app's sample takes --seed as
    # the experiment's seed and draws from seed 1 whatever is asked)
    examples = json.loads(app(args, "sample", "--task", "copy", "--set", f"task.vocab_size={cfg['task']['vocab_size']}",
                              "--length", str(L), "--count", str(n), "--seed", str(L), "--json"))
    batch = ref.CopyTask.batch_of([(e["tokens"], e["roles"]) for e in examples])
    rows, right, answers = ref.score(model, *batch)
    result = json.loads(app(args, "eval", "--checkpoint", checkpoint, "--lengths", str(L), "--samples", str(n),
                            "--seed", "0", "--json"))
    app_rows = round(result["string_accuracy"][0] * n)
    app_right = round(result["char_accuracy"][0] * answers)
    # argmax near-ties may flip a token or two between two float orders of summation
    ok = abs(rows - app_rows) <= 1 and abs(right - app_right) <= max(2, answers // 1000)
    report.append((ok, f"evaluation at length {L} on {n} strings: strings right app {app_rows} python {rows}; "
                       f"answer letters right app {app_right} python {right} of {answers}"))
    return report


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--app", default=os.path.join(ROOT, "build", "app", "parrotscope"))
    ap.add_argument("--checkpoint", help="an app checkpoint (.safetensors); default: train new ones")
    ap.add_argument("--kind", choices=("transformer", "mamba", "both"), default="both")
    ap.add_argument("--preset", default="copy-hard-alibi")
    ap.add_argument("--steps", type=int, default=5, help="steps of the checkpoints trained here")
    ap.add_argument("--length", type=int, default=20)
    ap.add_argument("--samples", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if not os.access(args.app, os.X_OK):
        raise SystemExit(f"{args.app}: not found; build it first (bash packaging/run.sh, or --app PATH)")
    failed = False
    extras = {"transformer": [], "mamba": ["--set", "model.kind=mamba", "--match-params", "transformer"]}
    with tempfile.TemporaryDirectory() as tmp:
        checkpoints = [args.checkpoint] if args.checkpoint else []
        if not args.checkpoint:
            for kind in ("transformer", "mamba") if args.kind == "both" else (args.kind,):
                run = os.path.join(tmp, f"run-{kind}")
                app(args, "train", "--preset", args.preset, *extras[kind], "--out", run, "--steps", str(args.steps),
                    "--set", "task.eval_lengths=20", "--set", "task.eval_samples=16")
                checkpoints.append(os.path.join(run, "checkpoints", "last.safetensors"))
        for i, checkpoint in enumerate(checkpoints):
            work = os.path.join(tmp, f"check-{i}")
            os.makedirs(work)
            lines = check(args, checkpoint, work)
            if not args.checkpoint:
                kind = ("transformer", "mamba")[i] if args.kind == "both" else args.kind
                lines.insert(1, check_init(args, extras[kind], 3, work))
            for ok, line in lines:
                failed |= not ok
                print(f"  {'ok  ' if ok else 'FAIL'} {line}")
    print("the Python reference computes what the app computes" if not failed else "MISMATCH between the app and the reference")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
