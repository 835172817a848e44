"""The export format's Hugging Face side, as this package writes and reads it (format version 2): a
dense model Llama runs exactly is `llama` with no code beside it; NSA, or values of another size than
the keys, is `nsa_playground` with `auto_map` and the package's own sources copied beside it; the
safetensors files say `format: pt`; a version-1 export (model_type nsa_llama) still loads; and a
sequence shorter than one compression block runs (generate() starts from short prompts).
transformers itself loads these directories in tests/export/hf-transformers.integration.test.ts."""

from __future__ import annotations

import json
import os

import torch
from conftest import PACKAGE_ROOT, base_config, read_json, write_export
from nsa_playground import load_model, read_safetensors
from nsa_playground.config import parse_model_config
from nsa_playground.export_dir import CODE_FILES, MODEL_FILE, OPTIMIZER_FILE, llama_blockers
from nsa_playground.model import NsaLlamaForCausalLM


def dense_config(**model) -> dict:
    c = base_config()
    c.update(attention="dense", **model)
    return c


def test_a_dense_model_is_a_llama_with_no_code(tmp_path):
    d = write_export(str(tmp_path / "dense"), dense_config())
    cfg = read_json(os.path.join(d, "config.json"))
    assert (cfg["model_type"], cfg["architectures"], cfg["format_version"]) == ("llama", ["LlamaForCausalLM"], 2)
    assert "auto_map" not in cfg
    assert (cfg["attention_bias"], cfg["mlp_bias"], cfg["tie_word_embeddings"], cfg["torch_dtype"]) == (False, False, True, "float32")
    assert not [f for f in CODE_FILES if os.path.exists(os.path.join(d, f))]
    for f in (MODEL_FILE, OPTIMIZER_FILE):
        assert read_safetensors(os.path.join(d, f))[1]["format"] == "pt"
    assert os.path.exists(os.path.join(d, "README.md"))
    load_model(d)


def test_nsa_and_other_value_sizes_get_the_custom_code(tmp_path):
    for name, cfg in (("nsa", base_config()), ("dv", dense_config(v_head_dim=16))):
        d = write_export(str(tmp_path / name), cfg)
        got = read_json(os.path.join(d, "config.json"))
        assert (got["model_type"], got["architectures"]) == ("nsa_playground", ["NsaPlaygroundForCausalLM"]), name
        assert set(got["auto_map"]) == {"AutoConfig", "AutoModelForCausalLM"}
        assert "attention_bias" not in got
        for f in CODE_FILES:
            with open(os.path.join(d, f), encoding="utf-8") as a:
                copied = a.read()
            with open(os.path.join(PACKAGE_ROOT, "nsa_playground", f), encoding="utf-8") as b:
                assert copied == b.read(), f"{name}: {f} is the package's own file"
        load_model(d)


def test_a_model_field_llama_does_not_know_routes_to_the_custom_code():
    config = parse_model_config(dense_config())
    assert llama_blockers(config) == []
    config.__dict__["sliding_window"] = 64  # an option Llama has no field for
    assert llama_blockers(config) == ["sliding_window is 64 (Llama has no such option)"]


def test_a_version_1_export_still_loads(tmp_path):
    d = write_export(str(tmp_path / "v1"), base_config())
    path = os.path.join(d, "config.json")
    cfg = read_json(path)
    for k in ("auto_map", "torch_dtype", "use_cache", "bos_token_id", "eos_token_id", "pad_token_id"):
        del cfg[k]
    cfg.update(format_version=1, architectures=["NsaLlamaForCausalLM"], model_type="nsa_llama")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cfg, f)
    x = torch.randint(0, 256, (1, 16))
    assert torch.equal(load_model(d)(x), load_model(write_export(str(tmp_path / "v2"), base_config()))(x))


def test_prefixes_shorter_than_a_compression_block_match_the_full_sequence():
    """Causal: logits of every prefix (lengths 1 … T, below l = 8 too) equal the full sequence's (|Δ| ≤ 1e-5)."""
    model = NsaLlamaForCausalLM(parse_model_config(base_config()))
    model.init_weights(3)
    x = torch.randint(0, 256, (2, 20), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        full = model(x)
        for t in range(1, 20):
            assert float((model(x[:, :t]) - full[:, :t]).abs().max()) <= 1e-5, t
