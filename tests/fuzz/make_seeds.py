#!/usr/bin/env python3
"""Writes the small hand-made seeds of the fuzz corpora (tests/fuzz/corpus/*/seed-*): a
safetensors file with one tensor of each dtype and metadata, and torch.save zips of a tiny state
dict, plain and with an OrderedDict, written by the standard library alone (no torch): the same
pickle opcodes and zip layout as torch.save. The other seeds are copies of the test fixtures."""
import collections
import io
import json
import pickle
import struct
import sys
import types
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def safetensors(tensors, metadata=None):
    header, blob = {}, b""
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + blob


# Stand-ins for torch's globals, so that pickle writes GLOBAL 'torch._utils _rebuild_tensor_v2' etc.
torch = types.ModuleType("torch")
torch_utils = types.ModuleType("torch._utils")
sys.modules["torch"], sys.modules["torch._utils"] = torch, torch_utils


def _rebuild_tensor_v2(*args):
    raise NotImplementedError


_rebuild_tensor_v2.__module__ = "torch._utils"
torch_utils._rebuild_tensor_v2 = _rebuild_tensor_v2
for storage in ("FloatStorage", "HalfStorage", "BFloat16Storage", "LongStorage"):
    setattr(torch, storage, type(storage, (), {"__module__": "torch"}))


class Storage:
    def __init__(self, kind, key, numel):
        self.kind, self.key, self.numel = kind, key, numel


class Tensor:
    def __init__(self, storage, shape):
        self.storage, self.shape = storage, shape

    def __reduce__(self):
        stride, s = [], 1
        for d in reversed(self.shape):
            stride.insert(0, s)
            s *= d
        return (_rebuild_tensor_v2, (self.storage, 0, tuple(self.shape), tuple(stride), False, collections.OrderedDict()))


class Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", getattr(torch, obj.kind), obj.key, "cpu", obj.numel)
        return None


def torch_zip(state, blobs, name="archive"):
    buf = io.BytesIO()
    Pickler(buf, protocol=2).dump(state)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{name}/data.pkl", buf.getvalue())
        z.writestr(f"{name}/byteorder", "little")
        for key, data in blobs.items():
            z.writestr(f"{name}/data/{key}", data)
        z.writestr(f"{name}/version", "3\n")
    return out.getvalue()


def main():
    f32 = struct.pack("<6f", 0.5, -1.0, 2.0, 0.25, 3.0, -0.125)
    st = safetensors({
        "a.weight": ("F32", [2, 3], f32),
        "b.half": ("F16", [2], struct.pack("<2H", 0x3C00, 0xC000)),
        "c.bf16": ("BF16", [2], struct.pack("<2H", 0x3F80, 0xBF80)),
        "d.f64": ("F64", [1], struct.pack("<d", 1.5)),
        "e.ids": ("I64", [2], struct.pack("<2q", 7, -7)),
        "f.mask": ("BOOL", [3], b"\x01\x00\x01"),
        "g.empty": ("F32", [0, 4], b""),
    }, {"format": "pt", "note": "seed"})
    (HERE / "corpus/safetensors/seed-dtypes.safetensors").write_bytes(st)
    w, b = Storage("FloatStorage", "0", 6), Storage("HalfStorage", "1", 2)
    plain = {"layer.weight": Tensor(w, [2, 3]), "layer.bias": Tensor(b, [2])}
    blobs = {"0": f32, "1": struct.pack("<2H", 0x3C00, 0xC000)}
    (HERE / "corpus/torchzip/seed-dict.bin").write_bytes(torch_zip(plain, blobs))
    (HERE / "corpus/torchzip/seed-ordered.bin").write_bytes(
        torch_zip(collections.OrderedDict(plain), blobs, "pytorch_model"))
    # a tokenizer.json of GPT-NeoX's layout with a handful of tokens
    letters = {c: i + 2 for i, c in enumerate("abcdeĠ")}
    letters.update({"ab": 8, "Ġa": 9, "Ġab": 10})
    tok = {"version": "1.0", "truncation": None, "padding": None,
           "added_tokens": [{"id": 0, "content": "<|endoftext|>", "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": False, "special": True},
                            {"id": 1, "content": "<|padding|>", "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": False, "special": True}],
           "normalizer": {"type": "NFC"},
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
           "post_processor": None,
           "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                     "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                     "vocab": letters, "merges": ["a b", "Ġ a", "Ġa b"]}}
    (HERE / "corpus/tokenizer/seed-small.json").write_text(json.dumps(tok, ensure_ascii=False, indent=1))
    # a SQuAD v2 file: one paragraph with two answerable questions and an impossible one
    squad = {"version": "v2.0", "data": [{"title": "Seed", "paragraphs": [{
        "context": "The parrot repeats what it hears. It lives for sixty years.",
        "qas": [{"id": "q1", "question": "What does the parrot repeat?", "is_impossible": False,
                 "answers": [{"text": "what it hears", "answer_start": 19}]},
                {"id": "q2", "question": "How long does it live?", "is_impossible": False,
                 "answers": [{"text": "sixty years", "answer_start": 47}, {"text": "for sixty years", "answer_start": 43}]},
                {"id": "q3", "question": "What colour is it?", "is_impossible": True, "answers": [],
                 "plausible_answers": [{"text": "parrot", "answer_start": 4}]}]}]}]}
    (HERE / "corpus/squad/seed-v2.json").write_text(json.dumps(squad, indent=1))
    texts = {"english": "Alice was beginning to get very tired of sitting by her sister on the bank.\n",
             "unicode": "caf\u00e9 na\u0131\u0308ve \u2014 \u4e2d\u6587 \U0001f99c\u200d \ufb01 e\u0301",
             "numbers": "In 1865, 3.14159 and 1,000,000 -- 'tis 42% of it's all.\t\t  \r\n",
             "special": "<|endoftext|>a<|padding|> <|endoftext|><|endoftext"}
    for name, text in texts.items():
        (HERE / f"corpus/bpe/seed-{name}.txt").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
