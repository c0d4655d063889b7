"""Writes a randomly initialised HuggingFace model folder of a real model's shape, stored as
a pretrained checkpoint is (model.safetensors in F16, BF16 or F32, config.json), with the tiny
test tokenizer beside it, for bench/lm_memory.sh. Needs a virtualenv with torch and
transformers (PyPI); the suite never runs it.

Usage: python write_random_hf.py pythia-1.4b|pythia-410m|mamba-370m|mamba-1.4b OUT [--dtype float16]
"""
import argparse
import pathlib
import shutil

import torch
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, MambaConfig, MambaForCausalLM

SHAPES = {
    # Pythia's configs on the hub: hidden size, layers, heads; intermediate 4x, rotary 25%
    "pythia-410m": dict(hidden=1024, layers=24, heads=16),
    "pythia-1.4b": dict(hidden=2048, layers=24, heads=16),
    # state-spaces/mamba-*-hf: hidden size, layers; d_state 16, expand 2
    "mamba-370m": dict(hidden=1024, layers=48),
    "mamba-1.4b": dict(hidden=2048, layers=48),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shape", choices=sorted(SHAPES))
    ap.add_argument("out")
    ap.add_argument("--dtype", choices=["float16", "bfloat16", "float32"], default="float16")
    a = ap.parse_args()
    s = SHAPES[a.shape]
    torch.manual_seed(1)
    if a.shape.startswith("pythia"):
        cfg = GPTNeoXConfig(vocab_size=50304, hidden_size=s["hidden"], num_hidden_layers=s["layers"],
                            num_attention_heads=s["heads"], intermediate_size=4 * s["hidden"], rotary_pct=0.25,
                            max_position_embeddings=2048, use_parallel_residual=True, tie_word_embeddings=False)
        model = GPTNeoXForCausalLM(cfg)
    else:
        cfg = MambaConfig(vocab_size=50280, hidden_size=s["hidden"], num_hidden_layers=s["layers"], state_size=16,
                          expand=2, conv_kernel=4, tie_word_embeddings=True)
        model = MambaForCausalLM(cfg)
    model = model.to(getattr(torch, a.dtype))
    out = pathlib.Path(a.out)
    model.save_pretrained(out, safe_serialization=True, max_shard_size="20GB")
    tok = pathlib.Path(__file__).resolve().parents[2] / "tests/data/hf_tiny/tokenizer/tokenizer.json"
    shutil.copy(tok, out / "tokenizer.json")
    print(out, sum(p.numel() for p in model.parameters()), "parameters", a.dtype)


if __name__ == "__main__":
    main()
