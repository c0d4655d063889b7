"""The HuggingFace side of bench/lm_vs_python.sh --transformers PYTHON: the same randomly
initialised shapes bench_lm builds (Pythia-160m / mamba-130m, or with --size 410m Pythia-410m /
mamba-370m), as `transformers`' own GPTNeoXForCausalLM and MambaForCausalLM, timed on what the
copy paper's tests run:
  generate    greedy continuation of a --prompt-tokens prompt by exactly --new tokens
              (transformers' generate, KV cache / recurrent state; no early stop)
  perplexity  the loss of every token of a --tokens text after those before it (one forward,
              log-softmax, gather), as its evaluation scripts compute it
Prints "<which> <what> <median seconds>". Needs a virtualenv with torch and transformers (PyPI);
the suite never runs it.
"""
import argparse
import time

import torch
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, MambaConfig, MambaForCausalLM


def build(which, large):
    d = 1024 if large else 768
    if which == "pythia":
        cfg = GPTNeoXConfig(vocab_size=50304, hidden_size=d, num_hidden_layers=24 if large else 12,
                            num_attention_heads=16 if large else 12, intermediate_size=4 * d, rotary_pct=0.25,
                            max_position_embeddings=2048, use_parallel_residual=True, tie_word_embeddings=False)
        return GPTNeoXForCausalLM(cfg)
    cfg = MambaConfig(vocab_size=50280, hidden_size=d, num_hidden_layers=48 if large else 24, state_size=16, expand=2,
                      conv_kernel=4, tie_word_embeddings=True)
    return MambaForCausalLM(cfg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("which", choices=["pythia", "mamba"])
    ap.add_argument("what", choices=["generate", "perplexity"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--prompt-tokens", type=int, default=100)
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--size", choices=["160m", "410m"], default="160m")
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = build(a.which, a.size == "410m").eval()
    g = torch.Generator().manual_seed(1)
    times = []
    with torch.inference_mode():
        for r in range(a.repeats + 1):  # the first is a warm-up
            if a.what == "generate":
                x = torch.randint(0, 50000, (1, a.prompt_tokens), generator=g)
                t0 = time.perf_counter()
                model.generate(x, max_new_tokens=a.new, min_new_tokens=a.new, do_sample=False, eos_token_id=None, pad_token_id=0)
            else:
                x = torch.randint(0, 50000, (1, a.tokens), generator=g)
                t0 = time.perf_counter()
                logp = torch.log_softmax(model(x).logits.float(), -1)[0]
                (-logp[:-1].gather(-1, x[0, 1:].unsqueeze(-1))).mean().item()
            if r > 0:
                times.append(time.perf_counter() - t0)
    times.sort()
    print(f"{a.which} {a.what} {times[len(times) // 2]:.4f}")


if __name__ == "__main__":
    main()
