"""A generator of malformed config.json files: each case is (name, the file's bytes, the fields the
refusal may name). Wrong types, missing fields, negative / zero / huge / fractional / NaN /
bool-as-int values, unknown keys, non-object JSON, invalid JSON and non-UTF-8 text.

    python python/tests/malformed_configs.py OUT_DIR   writes OUT_DIR/<name>/config.json for each case
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from conftest import base_config  # noqa: E402


def _set(path: str, value: Any) -> Callable[[dict], None]:
    def apply(c: dict) -> None:
        *parents, last = path.split(".")
        for p in parents:
            c = c[p]
        c[last] = value

    return apply


def _drop(path: str) -> Callable[[dict], None]:
    def apply(c: dict) -> None:
        *parents, last = path.split(".")
        for p in parents:
            c = c[p]
        del c[last]

    return apply


def _edited(*edits: Callable[[dict], None]) -> bytes:
    c = base_config()
    for e in edits:
        e(c)
    return json.dumps(c).encode("utf-8")


def _text_with(field: str, literal: str) -> bytes:
    """BASE_CONFIG's JSON with `field`'s value replaced by a literal text (NaN, 1e400, a huge integer)."""
    *parents, last = field.split(".")
    marker = "__MARKER__"
    c = base_config()
    d = c
    for p in parents:
        d = d[p]
    d[last] = marker
    return json.dumps(c).replace(json.dumps(marker), literal).encode("utf-8")


# A config.json that says Llama (for a model Llama cannot run).
LLAMA = (_set("model_type", "llama"), _set("architectures", ["LlamaForCausalLM"]))


# (name, bytes, fields the error may name)
def cases() -> list[tuple[str, bytes, tuple[str, ...]]]:
    out: list[tuple[str, bytes, tuple[str, ...]]] = [
        ("invalid-json", b'{"format": "nsa-playground-export", ', ("(file)",)),
        ("empty-file", b"", ("(file)",)),
        ("non-utf8", b'{"format": "\xff\xfe"}', ("(file)",)),
        ("utf8-bom", b"\xef\xbb\xbf" + _edited(), ("(file)",)),
        ("deep-nesting", b"[" * 100000 + b"]" * 100000, ("(file)", "(root)")),
        ("json-array", b"[1, 2, 3]", ("(root)",)),
        ("json-string", b'"config"', ("(root)",)),
        ("json-number", b"42", ("(root)",)),
        ("json-null", b"null", ("(root)",)),
        ("format-wrong", _edited(_set("format", "gguf")), ("format",)),
        ("format-version-3", _edited(_set("format_version", 3)), ("format_version",)),
        ("model-type-v1-in-v2", _edited(_set("model_type", "nsa_llama")), ("model_type",)),
        ("model-type-llama-for-nsa", _edited(*LLAMA, _set("use_cache", True), _drop("auto_map")), ("model_type",)),
        ("architectures-mismatch", _edited(_set("architectures", ["LlamaForCausalLM"])), ("architectures",)),
        ("auto-map-elsewhere", _edited(_set("auto_map", {"AutoModelForCausalLM": "x.Y"})), ("auto_map",)),
        ("eos-beyond-vocab", _edited(_set("eos_token_id", 256)), ("eos_token_id",)),
        ("torch-dtype-bf16", _edited(_set("torch_dtype", "bfloat16")), ("torch_dtype",)),
        ("format-version-bool", _edited(_set("format_version", True)), ("format_version",)),
        ("unknown-top-key", _edited(_set("extra_field", 1)), ("extra_field",)),
        ("unknown-control-key", _edited(_set("bad\u001bkey", 1)), ("bad\\x1bkey",)),
        ("missing-hidden-size", _edited(_drop("hidden_size")), ("hidden_size",)),
        ("hidden-size-string", _edited(_set("hidden_size", "32")), ("hidden_size",)),
        ("hidden-size-zero", _edited(_set("hidden_size", 0)), ("hidden_size",)),
        ("hidden-size-negative", _edited(_set("hidden_size", -32)), ("hidden_size",)),
        ("hidden-size-fraction", _edited(_set("hidden_size", 32.5)), ("hidden_size",)),
        ("hidden-size-bool", _edited(_set("hidden_size", True)), ("hidden_size",)),
        ("hidden-size-huge", _edited(_set("hidden_size", 10**6)), ("hidden_size",)),
        ("layers-million", _edited(_set("num_hidden_layers", 10**6)), ("num_hidden_layers",)),
        ("vocab-2-40", _edited(_set("vocab_size", 2**40)), ("vocab_size",)),
        ("vocab-5000-digits", _text_with("vocab_size", "9" * 5000), ("vocab_size", "(file)")),
        ("too-many-parameters", _edited(_set("hidden_size", 65536), _set("intermediate_size", 262144)), ("(model)",)),
        ("kv-heads-not-dividing", _edited(_set("num_key_value_heads", 3)), ("num_key_value_heads",)),
        ("head-dim-odd", _edited(_set("head_dim", 7)), ("head_dim",)),
        ("rope-theta-string", _edited(_set("rope_theta", "x")), ("rope_theta",)),
        ("rope-theta-infinity", _text_with("rope_theta", "Infinity"), ("rope_theta",)),
        ("norm-eps-nan", _text_with("rms_norm_eps", "NaN"), ("rms_norm_eps",)),
        ("norm-eps-1e400", _text_with("rms_norm_eps", "1e400"), ("rms_norm_eps",)),
        ("norm-eps-zero", _edited(_set("rms_norm_eps", 0)), ("rms_norm_eps",)),
        ("attention-unknown", _edited(_set("attention", "sparse")), ("attention",)),
        ("nsa-missing", _edited(_drop("nsa")), ("nsa",)),
        # docs/nsa-spec.md section 15 (max_position_embeddings 32).
        ("window-missing", _edited(_set("attention", "window")), ("window",)),
        ("window-w-zero", _edited(_set("attention", "window"), _set("window", {"w": 0})), ("window.w",)),
        ("window-w-beyond-context", _edited(_set("attention", "window"), _set("window", {"w": 33})), ("window.w",)),
        ("moba-missing", _edited(_set("attention", "moba")), ("moba",)),
        ("moba-block-zero", _edited(_set("attention", "moba"), _set("moba", {"blockSize": 0, "topK": 1})), ("moba.blockSize",)),
        ("moba-topk-beyond-blocks", _edited(_set("attention", "moba"), _set("moba", {"blockSize": 8, "topK": 5})), ("moba.topK",)),
        ("moba-unknown-key", _edited(_set("attention", "moba"), _set("moba", {"blockSize": 8, "topK": 2, "k": 2})), ("moba.k",)),
        ("nsa-l-zero", _edited(_set("nsa.l", 0)), ("nsa.l",)),
        ("nsa-d-not-dividing", _edited(_set("nsa.d", 3)), ("nsa.d",)),
        ("nsa-phi-unknown", _edited(_set("nsa.phi", "max")), ("nsa.phi",)),
        ("nsa-force-init-int", _edited(_set("nsa.forceInit", 1)), ("nsa.forceInit",)),
        ("nsa-nsel-zero", _edited(_set("nsa.nSel", 0)), ("nsa.nSel",)),
        ("nsa-w-huge", _edited(_set("nsa.w", 2**40)), ("nsa.w",)),
        ("nsa-gates-freeze-2", _edited(_set("nsa.gates", {"kind": "freeze", "value": 2})), ("nsa.gates",)),
        ("nsa-unknown-key", _edited(_set("nsa.foo", 1)), ("nsa.foo",)),
        ("tie-embeddings-false", _edited(_set("tie_word_embeddings", False)), ("tie_word_embeddings",)),
        ("tokenizer-number", _edited(_set("tokenizer", 5)), ("tokenizer",)),
        ("train-missing", _edited(_drop("train")), ("train",)),
        ("train-not-object", _edited(_set("train", [1])), ("train",)),
        ("grad-accum-zero", _edited(_set("train.gradAccum", 0)), ("train.gradAccum",)),
        ("batch-size-fraction", _edited(_set("train.batchSize", 1.5)), ("train.batchSize",)),
        ("batch-size-bool", _edited(_set("train.batchSize", True)), ("train.batchSize",)),
        ("batch-size-huge", _edited(_set("train.batchSize", 10**9)), ("train.batchSize",)),
        ("lr-max-nan", _text_with("train.lrMax", "NaN"), ("train.lrMax",)),
        ("lr-max-negative", _edited(_set("train.lrMax", -0.1)), ("train.lrMax",)),
        ("lr-min-above-max", _edited(_set("train.lrMin", 0.5)), ("train.lrMin",)),
        ("beta2-one", _edited(_set("train.beta2", 1)), ("train.beta2",)),
        ("seed-negative", _edited(_set("train.seed", -1)), ("train.seed",)),
        ("train-unknown-key", _edited(_set("train.momentum", 0.9)), ("train.momentum",)),
        ("short-seq-steps-negative", _edited(_set("train.shortSeqSteps", -1), _set("train.shortSeqLen", 8)), ("train.shortSeqSteps",)),
        (
            "short-seq-steps-beyond-steps",
            _edited(_set("train.shortSeqSteps", 10**9), _set("train.shortSeqLen", 8)),
            ("train.shortSeqSteps",),
        ),
        ("short-seq-len-missing", _edited(_set("train.shortSeqSteps", 1)), ("train.shortSeqLen",)),
        ("short-seq-len-zero", _edited(_set("train.shortSeqSteps", 1), _set("train.shortSeqLen", 0)), ("train.shortSeqLen",)),
        ("state-missing", _edited(_drop("state")), ("state",)),
        ("batches-drawn-negative", _edited(_set("state.batches_drawn", -1)), ("state.batches_drawn",)),
        ("state-step-string", _edited(_set("state.step", "3")), ("state.step",)),
        ("state-step-2-60", _edited(_set("state.step", 2**60)), ("state.step",)),
        ("state-unknown-key", _edited(_set("state.cursor", 1)), ("state.cursor",)),
    ]
    names = [n for n, _, _ in out]
    assert len(names) == len(set(names)), "case names must be unique"
    return out


if __name__ == "__main__":
    root = sys.argv[1]
    for name, data, _ in cases():
        os.makedirs(os.path.join(root, name), exist_ok=True)
        with open(os.path.join(root, name, "config.json"), "wb") as f:
            f.write(data)
    print(f"{len(cases())} malformed config.json files under {root}")
