"""The config variants of HuggingFace's GPT-NeoX and Mamba that the app imports, each a tiny
random model saved by the real `transformers` (4.39), with reference logits and greedy
continuations. Run in the virtualenv make_hf_refs.py describes; the files it writes are
committed, so the suite never needs PyPI.

    /tmp/hf/bin/python tests/data/make_hf_variant_refs.py     # writes tests/data/hf_tiny/variants/

Every parameter gets noise on top of transformers' initialisation, so biases that start at zero
(use_bias) are not zero and a wrong reading of them shows in the logits.
"""
import json
import os
import shutil
import sys

import torch
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, MambaConfig, MambaForCausalLM, PreTrainedTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = os.path.join(HERE, "hf_tiny")
OUT = os.path.join(TINY, "variants")

COMMON = dict(bos_token_id=0, eos_token_id=0)
VARIANTS = {
    # Mamba: a delta rank other than ceil(hidden / 16), biases on in_proj and out_proj, none on the
    # convolution, another kernel width, state size and expansion, an untied head
    "mamba-rank-bias": (MambaForCausalLM, MambaConfig(hidden_size=32, state_size=8, num_hidden_layers=2, expand=3, conv_kernel=3,
                                                      time_step_rank=5, use_bias=True, use_conv_bias=False,
                                                      residual_in_fp32=False, tie_word_embeddings=False, pad_token_id=1, **COMMON)),
    # Mamba: the rank written out equal to "auto", residual_in_fp32, tied, a small state
    "mamba-tied-fp32": (MambaForCausalLM, MambaConfig(hidden_size=24, state_size=4, num_hidden_layers=3, expand=2, conv_kernel=4,
                                                      time_step_rank=7, use_bias=False, use_conv_bias=True, residual_in_fp32=True,
                                                      tie_word_embeddings=True, pad_token_id=1, **COMMON)),
    # GPT-NeoX: half the head rotated at another base, serial residual, tied embeddings
    "neox-serial-tied": (GPTNeoXForCausalLM, GPTNeoXConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                                           intermediate_size=96, rotary_pct=0.5, rotary_emb_base=500,
                                                           use_parallel_residual=False, tie_word_embeddings=True,
                                                           max_position_embeddings=128, **COMMON)),
    # GPT-NeoX: the whole head rotated, parallel residual, untied, 8 heads
    "neox-full-rotary": (GPTNeoXForCausalLM, GPTNeoXConfig(hidden_size=48, num_hidden_layers=2, num_attention_heads=8,
                                                           intermediate_size=192, rotary_pct=1.0, rotary_emb_base=10000,
                                                           use_parallel_residual=True, tie_word_embeddings=False,
                                                           max_position_embeddings=128, **COMMON)),
}
PROMPTS = ["Hello, World!", "the quick brown fox jumps", "phone: 6125550199\n\nname:"]


def main():
    torch.manual_seed(4321)
    tokenizer_file = os.path.join(TINY, "tokenizer", "tokenizer.json")
    fast = PreTrainedTokenizerFast(tokenizer_file=tokenizer_file, eos_token="<|endoftext|>", bos_token="<|endoftext|>",
                                   unk_token="<|endoftext|>")
    vocab = len(fast)
    refs = {}
    shutil.rmtree(OUT, ignore_errors=True)
    for name, (cls, cfg) in VARIANTS.items():
        cfg.vocab_size = vocab
        model = cls(cfg).eval()
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.05 * torch.randn_like(p))
        d = os.path.join(OUT, name)
        model.save_pretrained(d, safe_serialization=True)
        fast.save_pretrained(d)
        for extra in ("tokenizer_config.json", "special_tokens_map.json", "generation_config.json"):
            path = os.path.join(d, extra)
            if os.path.exists(path):
                os.remove(path)  # the app reads config.json, tokenizer.json and the weights
        cases = []
        for p in PROMPTS:
            ids = fast(p)["input_ids"]
            with torch.no_grad():
                x = torch.tensor([ids])
                logits = model(x).logits[0, -1].tolist()
                out = model.generate(x, max_new_tokens=12, do_sample=False, eos_token_id=None, pad_token_id=1)[0, len(ids):].tolist()
            cases.append({"prompt": p, "ids": ids, "last_logits": logits, "greedy": out})
        refs[name] = cases
        print(name, "ok", file=sys.stderr)
    with open(os.path.join(OUT, "variant_refs.json"), "w", encoding="utf-8") as f:
        json.dump(refs, f)


if __name__ == "__main__":
    main()
