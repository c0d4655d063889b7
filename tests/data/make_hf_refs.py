"""Reference data for the pretrained-model path, made with the real HuggingFace
libraries: run once in a virtualenv with `transformers`, `tokenizers` and `safetensors` (and
torch) installed; the files it writes are committed, so the test suite never needs PyPI.

    python3 -m venv --system-site-packages /tmp/hf && /tmp/hf/bin/pip install transformers==4.39.3 tokenizers safetensors
    /tmp/hf/bin/python tests/data/make_hf_refs.py          # writes tests/data/hf_tiny/

Writes:
  hf_tiny/tokenizer/tokenizer.json   a byte-level BPE (GPT-NeoX's pipeline: NFC, ByteLevel
                                     pre-tokenizer and decoder, <|endoftext|>) trained here on
                                     resources/data/english.txt plus digits and names
  hf_tiny/tokenizer_refs.json        ids and decoded text for a few hundred strings
  hf_tiny/neox/                      a tiny random GPTNeoXForCausalLM (save_pretrained) with the
                                     tokenizer beside it
  hf_tiny/mamba/                     a tiny random MambaForCausalLM (save_pretrained, the *-hf layout)
  hf_tiny/model_refs.json            for each model: prompts' ids, the logits of the last position
                                     and the greedy continuation (16 tokens)
"""
import json
import os
import random
import sys

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, MambaConfig, MambaForCausalLM, PreTrainedTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "hf_tiny")
random.seed(1234)
torch.manual_seed(1234)


def corpus():
    data = os.path.join(ROOT, "resources", "data")
    text = open(os.path.join(data, "english.txt"), encoding="utf-8").read()
    firsts = open(os.path.join(data, "first_names.txt"), encoding="utf-8").read().split()
    lasts = open(os.path.join(data, "surnames.txt"), encoding="utf-8").read().split()
    lines = [text]
    for _ in range(400):
        lines.append(f"{random.choice(firsts)} {random.choice(lasts)}: {random.randint(600000000, 999999999)}{random.randint(0, 9)}")
    return lines, firsts, lasts


def make_tokenizer(lines):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>", "<|padding|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(lines, trainer)
    return tok


def test_strings(firsts, lasts, text):
    s = [
        "", " ", "  ", "\n", "\n\n", "\t", "a", "A", "hello world", "Hello, World!", "  leading spaces", "trailing spaces   ",
        "tabs\tand\nnewlines\r\n", "multiple   spaces   between", "don't can't won't I'm you're we've they'll he'd",
        "0123456789", "3.14159 2,718 1e-10", "phone: 6125550199", "Ünïcödé façade naïve café", "日本語のテキスト", "😀 emoji 👍🏽",
        "Ελληνικά κείμενα", "русский текст", "mixed123abc456", "<|endoftext|>", "text<|endoftext|>more text", "a<|endoftext|><|endoftext|>b",
        "e\u0301 composed vs é precomposed", "\u00a0non-breaking\u00a0space", "zero\u200bwidth", "$ a b c | a b c .",
    ]
    words = text.split()
    for _ in range(200):
        i = random.randrange(0, max(1, len(words) - 20))
        s.append(" ".join(words[i:i + random.randint(1, 20)]))
    for _ in range(60):
        book = "\n".join(f"{random.choice(firsts)} {random.choice(lasts)}: {random.randint(600000000, 999999999)}{random.randint(0, 9)}"
                         for _ in range(random.randint(1, 4)))
        s.append(book)
    return s


def main():
    os.makedirs(OUT, exist_ok=True)
    lines, firsts, lasts = corpus()
    tok = make_tokenizer(lines)
    tdir = os.path.join(OUT, "tokenizer")
    os.makedirs(tdir, exist_ok=True)
    tok.save(os.path.join(tdir, "tokenizer.json"))
    strings = test_strings(firsts, lasts, lines[0])
    refs = []
    for text in strings:
        enc = tok.encode(text)
        refs.append({"text": text, "ids": enc.ids, "decoded": tok.decode(enc.ids, skip_special_tokens=False)})
    json.dump({"tokenizer": "tokenizer/tokenizer.json", "cases": refs}, open(os.path.join(OUT, "tokenizer_refs.json"), "w"),
              ensure_ascii=False, indent=0)

    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>", unk_token="<|endoftext|>")
    vocab = tok.get_vocab_size()
    neox_cfg = GPTNeoXConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                             rotary_pct=0.25, max_position_embeddings=256, use_parallel_residual=True, tie_word_embeddings=False,
                             bos_token_id=0, eos_token_id=0)
    mamba_cfg = MambaConfig(vocab_size=vocab, hidden_size=32, state_size=8, num_hidden_layers=2, expand=2, conv_kernel=4,
                            bos_token_id=0, eos_token_id=0, pad_token_id=1, tie_word_embeddings=True)
    prompts = ["Hello, World!", "the quick brown fox", strings[-1], "phone: 6125550199\n\nname:"]
    model_refs = {}
    for name, model in (("neox", GPTNeoXForCausalLM(neox_cfg)), ("mamba", MambaForCausalLM(mamba_cfg))):
        model.eval()
        d = os.path.join(OUT, name)
        model.save_pretrained(d, safe_serialization=True)
        fast.save_pretrained(d)
        cases = []
        for p in prompts:
            ids = tok.encode(p).ids
            with torch.no_grad():
                x = torch.tensor([ids])
                logits = model(x).logits[0, -1].tolist()
                out = model.generate(x, max_new_tokens=16, do_sample=False, eos_token_id=None, pad_token_id=1)[0, len(ids):].tolist()
            cases.append({"prompt": p, "ids": ids, "last_logits": logits, "greedy": out})
        model_refs[name] = cases
    json.dump(model_refs, open(os.path.join(OUT, "model_refs.json"), "w"), ensure_ascii=False)
    print("wrote", OUT, file=sys.stderr)


if __name__ == "__main__":
    main()
