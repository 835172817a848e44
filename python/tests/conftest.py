"""Shared helpers of the package's pytest cases: a small exported directory written by the package
itself (config.json + model.safetensors + optimizer.safetensors), and a corpus for the trainer."""

from __future__ import annotations

import copy
import json
import os
import sys

import pytest

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if PACKAGE_ROOT not in sys.path:
    sys.path.insert(0, PACKAGE_ROOT)

# A tiny NSA model (every NSA field present) and the run settings `npm run export` writes (format
# version 2: the custom code's model_type, since Llama cannot run NSA).
BASE_CONFIG = {
    "format": "nsa-playground-export",
    "format_version": 2,
    "architectures": ["NsaPlaygroundForCausalLM"],
    "model_type": "nsa_playground",
    "auto_map": {
        "AutoConfig": "configuration_nsa_playground.NsaPlaygroundConfig",
        "AutoModelForCausalLM": "modeling_nsa_playground.NsaPlaygroundForCausalLM",
    },
    "torch_dtype": "float32",
    "use_cache": False,
    "bos_token_id": None,
    "eos_token_id": None,
    "pad_token_id": None,
    "vocab_size": 256,
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "v_head_dim": 8,
    "intermediate_size": 64,
    "max_position_embeddings": 32,
    "rope_theta": 10000,
    "rms_norm_eps": 1e-5,
    "attention": "nsa",
    "initializer_range": 0.02,
    "tie_word_embeddings": True,
    "hidden_act": "silu",
    "nsa": {
        "l": 8,
        "d": 4,
        "lSel": 8,
        "nSel": 2,
        "w": 8,
        "phi": "avg",
        "forceInit": True,
        "forceLocal": 1,
        "sharedKV": False,
        "gates": {"kind": "none"},
        "cmpMlpHidden": {"k": 16, "v": 16},
    },
    "tokenizer": "byte",
    "train": {
        "steps": 100,
        "batchSize": 2,
        "gradAccum": 1,
        "lrMax": 0.01,
        "lrMin": 0.001,
        "warmupSteps": 2,
        "warmupStartFraction": 0.1,
        "weightDecay": 0.1,
        "beta1": 0.9,
        "beta2": 0.95,
        "eps": 1e-8,
        "gradClip": 1,
        "seed": 1,
        "evalEvery": 0,
        "evalBatches": 0,
        "logEvery": 1,
    },
    "data": {"source": "brown", "tokenizer": "byte"},
    "state": {"step": 0, "batches_drawn": 0},
}


def base_config() -> dict:
    return copy.deepcopy(BASE_CONFIG)


def write_export(directory: str, config: dict | None = None, seed: int = 1) -> str:
    """An exported directory for `config` (default BASE_CONFIG): fresh weights, zero moments."""
    from nsa_playground import NsaLlamaForCausalLM, save_directory
    from nsa_playground.config import parse_model_config

    cfg = config or base_config()
    model = NsaLlamaForCausalLM(parse_model_config(cfg))
    model.init_weights(seed)
    save_directory(directory, model, None, step=cfg["state"]["step"], batches_drawn=cfg["state"]["batches_drawn"], base_config=cfg)
    return directory


@pytest.fixture(scope="session")
def export_dir(tmp_path_factory) -> str:
    return write_export(str(tmp_path_factory.mktemp("export")))


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("data") / "corpus.txt"
    text = "The quick brown fox jumps over the lazy dog. " * 40
    path.write_text(text, encoding="utf-8")
    return str(path)


def read_json(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)
