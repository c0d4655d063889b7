#!/usr/bin/env python3
"""Train parrot_ref's model on the copy task from an app config, and time it as the app does.

  train_ref.py --config CFG.json --threads 2 --seed 1 --steps 150 [--skip 10]
      one JSON line: seconds_per_step = (training seconds at the last step - at step `skip`)
      / (steps - skip), training seconds counting batch making, forward, backward, clipping
      and the AdamW step (the app's metrics.csv elapsed column), and the final loss.

  train_ref.py --config CFG.json --threads 2 --seed 1 --target-accuracy 0.95 --eval-every 100
               --eval-samples 256 --eval-length 20 [--max-steps M]
      the config's schedule; stop at the first periodic evaluation (teacher-forced string
      accuracy on eval-samples strings of eval-length, one batch, drawn once per run) that
      reaches the target; one JSON line with the step, wall seconds since training started
      (evaluations included) and the accuracy, or reached: false.
"""

import argparse
import json
import math
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parrot_ref as ref  # noqa: E402

import torch  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", required=True, help="experiment JSON (parrotscope config ... > FILE)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=None, help="default: the config's seed")
    ap.add_argument("--steps", type=int, help="timing mode: train this many steps")
    ap.add_argument("--skip", type=int, default=10, help="timing mode: warm-up steps left out of the time")
    ap.add_argument("--target-accuracy", type=float, help="time-to-result mode: the string accuracy to reach")
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--eval-samples", type=int, default=256)
    ap.add_argument("--eval-length", type=int, default=20)
    ap.add_argument("--max-steps", type=int, help="time-to-result mode: default the config's train.steps")
    a = ap.parse_args()
    if (a.steps is None) == (a.target_accuracy is None):
        ap.error("give one of --steps N or --target-accuracy P")

    torch.set_num_threads(a.threads)
    try:
        cfg = ref.load_config(a.config)
        if a.seed is not None:
            cfg["seed"] = a.seed
        model = ref.build_model(cfg)
        task = ref.CopyTask(cfg["task"])
    except ref.Unsupported as e:
        sys.exit(f"train_ref.py: {e}")
    t = dict(cfg["train"])
    if a.steps is not None:
        if a.steps <= a.skip:
            ap.error("--steps must be larger than --skip")
        t["steps"] = a.steps  # the app's --steps N: the schedule spans the run
    elif a.max_steps is not None:
        t["steps"] = a.max_steps
    opt = ref.make_optimizer(model, t)
    rng = ref.rng_for(cfg["seed"] * 0x9E3779B97F4A7C15 + 12345)
    model.train()

    evaluation = None
    if a.target_accuracy is not None:
        eval_rng = ref.rng_for(cfg["seed"] + 777)
        evaluation = task.eval_batch(a.eval_length, a.eval_samples, eval_rng)

    active = 0.0          # training seconds, as the app's elapsed column
    elapsed_at = {}       # step -> training seconds
    evals = []
    wall0 = time.perf_counter()
    loss_value = float("nan")
    result = None
    for s in range(t["steps"]):
        t0 = time.perf_counter()
        inputs, targets, mask = task.train_batch(t["batch_size"], rng)
        lr = ref.learning_rate(t, s)
        for g in opt.param_groups:
            g["lr"] = lr
        loss = ref.token_loss(model, inputs, targets, mask)
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            sys.exit(f"train_ref.py: the loss became {loss_value} at step {s + 1}")
        opt.zero_grad()
        loss.backward()
        if t["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), t["grad_clip"])
        opt.step()
        active += time.perf_counter() - t0
        step = s + 1
        elapsed_at[step] = active
        if evaluation is not None and (step % a.eval_every == 0 or step == t["steps"]):
            rows, right, answers = ref.score(model, *evaluation)
            accuracy = rows / a.eval_samples
            wall = time.perf_counter() - wall0
            evals.append([step, round(wall, 3), accuracy])
            if accuracy >= a.target_accuracy:
                result = {"reached": True, "step": step, "wall_s": round(wall, 3), "accuracy": accuracy}
                break

    if a.steps is not None:
        per_step = (elapsed_at[a.steps] - elapsed_at[a.skip]) / (a.steps - a.skip)
        out = {"mode": "steps", "model": cfg["model"]["kind"], "parameters": ref.parameter_count(model),
               "threads": torch.get_num_threads(), "steps": a.steps, "skip": a.skip,
               "seconds_per_step": per_step, "final_loss": loss_value}
    else:
        if result is None:
            result = {"reached": False, "step": step, "wall_s": round(time.perf_counter() - wall0, 3),
                      "accuracy": evals[-1][2] if evals else None}
        out = {"mode": "target", "model": cfg["model"]["kind"], "parameters": ref.parameter_count(model),
               "threads": torch.get_num_threads(), "target": a.target_accuracy, "eval_length": a.eval_length,
               "eval_samples": a.eval_samples, "eval_every": a.eval_every, **result,
               "train_s": round(active, 3), "final_loss": loss_value, "evals": evals}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
