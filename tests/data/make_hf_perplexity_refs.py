"""Reference token losses for perplexity, made with the real HuggingFace `transformers` on the
tiny fixture models (hf_tiny/neox, hf_tiny/mamba). Run in the virtualenv make_hf_refs.py
describes; writes hf_tiny/perplexity_refs.json, committed, so the suite never needs PyPI.

    /tmp/hf/bin/python tests/data/make_hf_perplexity_refs.py

For each model: a text (the first paragraphs of resources/data/alice.txt), cut into windows of
WINDOW tokens one after another; every token but each window's first is scored by the negative
log-likelihood of the model's next-token distribution (nats). Written: the ids, the window, every
token's loss and their mean.
"""
import json
import os

import torch
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TINY = os.path.join(HERE, "hf_tiny")
WINDOW = 100


def text():
    lines = [l for l in open(os.path.join(ROOT, "resources", "data", "alice.txt"), encoding="utf-8").read().split("\n")
             if l and not l.startswith("#")]
    return "\n".join(lines[:3])


def main():
    torch.set_grad_enabled(False)
    out = {"text": text(), "window": WINDOW}
    for name in ("neox", "mamba"):
        folder = os.path.join(TINY, name)
        tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(folder, "tokenizer.json"))
        model = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float32).eval()
        ids = tok(out["text"])["input_ids"]
        losses = []
        for a in range(0, len(ids) - 1, WINDOW):
            piece = torch.tensor([ids[a:a + WINDOW]])
            if piece.shape[1] < 2:
                break
            logp = torch.log_softmax(model(piece).logits.float(), -1)[0]
            nll = -logp[:-1].gather(-1, piece[0, 1:].unsqueeze(-1)).squeeze(-1)
            losses += nll.tolist()
        out[name] = {"ids": ids, "token_losses": losses, "loss": sum(losses) / len(losses)}
        print(f"{name}: {len(ids)} tokens, loss {out[name]['loss']:.6f}")
    with open(os.path.join(TINY, "perplexity_refs.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


main()
