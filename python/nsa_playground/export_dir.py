"""The exported directory (what `npm run export` writes and `npm run train -- --from-export` reads):

  config.json            every model and NSA field (Hugging Face Llama names + `attention`, `nsa`),
                         the tokenizer name, the run's `train` and `data` settings and `state`
                         ({step, batches_drawn}: optimizer steps done, training batches drawn)
  model.safetensors      the weights under Hugging Face Llama names, nn.Linear [out, in] orientation
  optimizer.safetensors  AdamW's moments `exp_avg.<name>` and `exp_avg_sq.<name>` (same names and
                         orientation as the weights; metadata `step`)

This module loads and saves it; errors name the file and the tensor or field.
"""

from __future__ import annotations

import json
import os
from typing import Any

import torch

from .config import ConfigError, ModelConfig, parse_model_config, read_config_json, required_sections
from .model import NsaLlamaForCausalLM
from .optim import make_adamw, set_adam_state
from .safetensors_io import read_safetensors, write_safetensors

MODEL_FILE = "model.safetensors"
OPTIMIZER_FILE = "optimizer.safetensors"
CONFIG_FILE = "config.json"


class ExportFormatError(ValueError):
    """A tensor of an exported directory that is missing, extra or of the wrong shape."""

    def __init__(self, path: str, field: str, detail: str):
        super().__init__(f"{path}: {field}: {detail}")
        self.path = path
        self.field = field


def read_config(directory: str) -> tuple[dict[str, Any], ModelConfig]:
    """config.json as read, and its validated model config."""
    raw = read_config_json(directory)
    path = os.path.join(directory, CONFIG_FILE)
    return raw, parse_model_config(raw, path)


def _check_tensors(path: str, found: dict[str, torch.Tensor], expected: dict[str, torch.Tensor], prefix: str = "") -> None:
    for name, t in expected.items():
        got = found.get(prefix + name)
        if got is None:
            raise ExportFormatError(path, prefix + name, f"tensor missing (expected shape {list(t.shape)})")
        if tuple(got.shape) != tuple(t.shape):
            raise ExportFormatError(path, prefix + name, f"expected shape {list(t.shape)}, found {list(got.shape)}")
    known = {prefix + n for n in expected}
    for name in found:
        if name not in known:
            raise ExportFormatError(path, name, "unexpected tensor (not a parameter of this model)")


def load_model(directory: str, dtype: torch.dtype = torch.float32, device: str = "cpu") -> NsaLlamaForCausalLM:
    _, config = read_config(directory)
    model = NsaLlamaForCausalLM(config)
    path = os.path.join(directory, MODEL_FILE)
    if not os.path.exists(path):
        raise ExportFormatError(path, "(file)", "is missing")
    tensors, _ = read_safetensors(path)
    expected = dict(model.named_parameters())
    _check_tensors(path, tensors, expected)
    with torch.no_grad():
        for name, p in expected.items():
            p.copy_(tensors[name])
    return model.to(device=device, dtype=dtype)


def load_optimizer(directory: str, model: torch.nn.Module, train: dict[str, Any]) -> tuple[torch.optim.AdamW, int]:
    """AdamW over `model` (torch's own, with the exported moments) and the optimizer steps done."""
    path = os.path.join(directory, OPTIMIZER_FILE)
    if not os.path.exists(path):
        raise ExportFormatError(path, "(file)", "is missing")
    tensors, metadata = read_safetensors(path)
    named = dict(model.named_parameters())
    for group in ("exp_avg.", "exp_avg_sq."):
        _check_tensors(path, {k: v for k, v in tensors.items() if k.startswith(group)}, named, group)
    step_text = metadata.get("step", "")
    if not step_text.isdigit():
        raise ExportFormatError(path, "__metadata__.step", f"must be a non-negative integer (got {step_text!r})")
    step = int(step_text)
    opt = make_adamw(named.items(), train)
    if step > 0:
        for name, p in named.items():
            set_adam_state(opt, p, tensors[f"exp_avg.{name}"], tensors[f"exp_avg_sq.{name}"], step)
    return opt, step


def _moments(model: torch.nn.Module, opt: torch.optim.Optimizer | None) -> dict[str, torch.Tensor]:
    out: dict[str, torch.Tensor] = {}
    for kind in ("exp_avg", "exp_avg_sq"):
        for name, p in model.named_parameters():
            state = opt.state.get(p, {}) if opt is not None else {}
            out[f"{kind}.{name}"] = state[kind] if kind in state else torch.zeros_like(p)
    return out


def save_directory(
    directory: str,
    model: NsaLlamaForCausalLM,
    optimizer: torch.optim.Optimizer | None = None,
    step: int = 0,
    batches_drawn: int = 0,
    base_config: dict[str, Any] | None = None,
) -> None:
    """Writes config.json, model.safetensors and optimizer.safetensors (each atomically).

    base_config: the config.json this model came from; its train, data, tokenizer and any field this
    package does not interpret are kept, `state` is replaced and train.steps raised to `step` if lower.
    """
    os.makedirs(directory, exist_ok=True)
    cfg: dict[str, Any] = json.loads(json.dumps(base_config or {}))
    model_json = model.config.to_json()
    if model.config.nsa is None:
        model_json.pop("nsa")  # a dense model keeps the NSA settings it came with, if any
    cfg.update(model_json)
    cfg.update(
        {
            "format": "nsa-playground-export",
            "format_version": 1,
            "architectures": ["NsaLlamaForCausalLM"],
            "model_type": "nsa_llama",
            "tie_word_embeddings": True,
            "hidden_act": "silu",
        }
    )
    if isinstance(cfg.get("train"), dict) and cfg["train"].get("steps", 0) < step:
        cfg["train"]["steps"] = step
    cfg["state"] = {"step": step, "batches_drawn": batches_drawn}
    named = {n: p.detach() for n, p in model.named_parameters()}
    write_safetensors(os.path.join(directory, MODEL_FILE), named, {"format": "nsa-playground-export"})
    write_safetensors(
        os.path.join(directory, OPTIMIZER_FILE), _moments(model, optimizer), {"format": "nsa-playground-export", "step": str(step)}
    )
    tmp = os.path.join(directory, f".{CONFIG_FILE}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    os.replace(tmp, os.path.join(directory, CONFIG_FILE))


def train_settings(raw: dict[str, Any], directory: str) -> dict[str, Any]:
    """config.json's `train` section (the run's optimizer and schedule settings)."""
    path = os.path.join(directory, CONFIG_FILE)
    required_sections(raw, path, ["train"])
    for k in (
        "lrMax",
        "lrMin",
        "warmupSteps",
        "steps",
        "warmupStartFraction",
        "weightDecay",
        "beta1",
        "beta2",
        "eps",
        "gradClip",
        "batchSize",
        "gradAccum",
        "seed",
    ):
        v = raw["train"].get(k)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise ConfigError(path, f"train.{k}", f"must be a number (got {v!r})")
    return raw["train"]
