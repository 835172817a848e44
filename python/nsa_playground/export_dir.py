"""The exported directory (what `npm run export` writes and `npm run train -- --from-export` reads),
a Hugging Face model directory:

  config.json            every model and NSA field (Hugging Face Llama names + `attention`, `nsa`),
                         the tokenizer name and its special ids, the run's `train` and `data`
                         settings and `state` ({step, batches_drawn}: optimizer steps done, training
                         batches drawn); model_type `llama` when Llama runs the model exactly,
                         else `nsa_playground` with `auto_map` to the custom code beside it
  model.safetensors      the weights under Hugging Face Llama names, nn.Linear [out, in] orientation
  optimizer.safetensors  AdamW's moments `exp_avg.<name>` and `exp_avg_sq.<name>` (same names and
                         orientation as the weights; metadata `step`)
  tokenizer.json, tokenizer_config.json, special_tokens_map.json, README.md (the model card), and
  for the custom code modeling_nsa_playground.py, configuration_nsa_playground.py and this
  package's model sources (CODE_FILES)

This module loads and saves it; errors name the file and the tensor or field.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any

import torch

from .config import (
    AUTO_MAP,
    EXPORT_FORMAT,
    EXPORT_VERSION,
    MAX_SAFE_INTEGER,
    MISSING,
    ConfigError,
    ModelConfig,
    esc,
    parameter_count,
    parse_model_config,
    read_config_json,
    required_sections,
    show,
)
from .model import NsaLlamaForCausalLM
from .optim import make_adamw, set_adam_state
from .safetensors_io import MAX_HEADER_BYTES, read_safetensors, write_safetensors

MODEL_FILE = "model.safetensors"
OPTIMIZER_FILE = "optimizer.safetensors"
CONFIG_FILE = "config.json"
# Copied from the source directory into a checkpoint the trainer writes (the tokenizer does not change).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
# The Hugging Face custom code of a model Llama cannot express: this package's files of these names
# (the two wrappers and what they import relatively; src/train/export/code-files.ts lists the same).
CODE_FILES = (
    "configuration_nsa_playground.py",
    "modeling_nsa_playground.py",
    "config.py",
    "model.py",
    "nsa.py",
    "dsa.py",
    "export_dir.py",
    "optim.py",
    "safetensors_io.py",
)
# ModelConfig fields the Llama mapping knows; any other field set means Llama cannot run the model.
LLAMA_KNOWN = frozenset(
    (
        "vocab_size",
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "v_head_dim",
        "intermediate_size",
        "max_position_embeddings",
        "rope_theta",
        "rms_norm_eps",
        "attention",
        "initializer_range",
        "nsa",
    )
)
# Model options Llama lacks, with the value at which the model is still exactly a Llama.
LLAMA_NEUTRAL = {"position_encoding": "rope", "short_conv": 0}
# The model options a config.json may leave out, and what their absence means (docs/nsa-spec.md 3.1).
OPTIONAL_MODEL_DEFAULTS = {"position_encoding": "rope", "short_conv": 0, "window": None, "moba": None, "dsa": None}
LLAMA_ONLY = {"attention_bias": False, "attention_dropout": 0, "mlp_bias": False, "pretraining_tp": 1}


def llama_blockers(config: ModelConfig) -> list[str]:
    """Why Hugging Face's Llama cannot run this model exactly (empty: it can; the same rule as
    src/train/export/config-json.ts). A field the Llama mapping does not know is a reason."""
    why = []
    if config.attention != "dense":
        why.append(f"attention is {config.attention!r} (Llama's is dense)")
    if config.v_head_dim != config.head_dim:
        why.append(f"v_head_dim ({config.v_head_dim}) differs from head_dim ({config.head_dim})")
    if config.intermediate_size == 0:
        why.append("intermediate_size is 0 (attention-only layers; every Llama layer has an MLP)")
    for k, v in vars(config).items():
        if k not in LLAMA_KNOWN and v is not None and not (k in LLAMA_NEUTRAL and LLAMA_NEUTRAL[k] == v):
            why.append(f"{k} is {v!r} (Llama has no such option)")
    return why


class ExportFormatError(ValueError):
    """A tensor of an exported directory that is missing, extra or of the wrong shape."""

    def __init__(self, path: str, field: str, detail: str):
        super().__init__(f"{path}: {field}: {detail}")
        self.path = path
        self.field = field


class InputError(ValueError):
    """A command-line input at fault (a data file, a flag): `where` names it."""

    def __init__(self, where: str, field: str, detail: str):
        super().__init__(f"{where}: {field}: {detail}")


def run_cli(main, argv=None) -> int:
    """Runs a command's main; a refused input file or field ends it with `error: <file>: <field>: <why>`
    on stderr and exit 2 (never a traceback)."""
    from .safetensors_io import SafetensorsFormatError

    try:
        return main(argv)
    except (ConfigError, ExportFormatError, SafetensorsFormatError, InputError) as e:
        print(f"error: {e}", file=sys.stderr, flush=True)
        return 2


def read_config(directory: str) -> tuple[dict[str, Any], ModelConfig]:
    """config.json as read, and its validated model config."""
    raw = read_config_json(directory)
    path = os.path.join(directory, CONFIG_FILE)
    config = parse_model_config(raw, path)
    if raw.get("format_version") == EXPORT_VERSION:
        # transformers' own Llama loads a `llama` config.json: one it would run differently is refused.
        blockers = llama_blockers(config)
        want = "nsa_playground" if blockers else "llama"
        if raw.get("model_type") != want:
            why = f" ({'; '.join(blockers)}: Llama cannot run it)" if blockers else ""
            raise ConfigError(path, "model_type", f"is {show(raw.get('model_type'))}, but this model is {want!r}{why}")
    if "train" in raw:
        check_train(raw["train"], path)
    if "state" in raw:
        read_state(directory, raw)
    return raw, config


def first_non_finite(t: torch.Tensor) -> tuple[list[int], float] | None:
    """The index and value of a tensor's first NaN or ±Inf (row-major order), or None when all are finite."""
    bad = ~torch.isfinite(t)
    if not bool(bad.any()):
        return None
    flat = int(bad.flatten().nonzero()[0, 0])
    index = []
    for size in reversed(t.shape):
        index.append(flat % size)
        flat //= size
    index.reverse()
    return index, float(t[tuple(index)]) if index else float(t)


def check_finite(path: str, name: str, t: torch.Tensor) -> None:
    """Refuses a tensor holding NaN or ±Inf, naming the file, tensor and first bad index."""
    found = first_non_finite(t)
    if found is not None:
        index, value = found
        count = int((~torch.isfinite(t)).sum())
        raise ExportFormatError(path, name, f"non-finite value {value} at index {index} ({count} of {t.numel()} values are NaN or ±Inf)")


def _check_tensors(path: str, found: dict[str, torch.Tensor], expected: dict[str, torch.Tensor], prefix: str = "") -> None:
    for name, t in expected.items():
        got = found.get(prefix + name)
        if got is None:
            raise ExportFormatError(path, prefix + name, f"tensor missing (expected shape {list(t.shape)})")
        if tuple(got.shape) != tuple(t.shape):
            raise ExportFormatError(path, prefix + name, f"expected shape {list(t.shape)}, found {list(got.shape)}")
        if got.dtype != torch.float32:
            raise ExportFormatError(path, prefix + name, f"dtype {got.dtype} (the export format holds float32 tensors)")
        check_finite(path, prefix + name, got)
    known = {prefix + n for n in expected}
    for name in found:
        if name not in known:
            raise ExportFormatError(path, name, "unexpected tensor (not a parameter of this model)")


def _file_holds(path: str, count: int) -> None:
    """Refuses a missing file, or one too small for `count` float32 values, before anything is allocated."""
    try:
        size = os.path.getsize(path)
    except OSError as e:
        raise ExportFormatError(path, "(file)", f"cannot be read ({e.strerror or e})") from None
    if size < 8 + 4 * count:
        raise ExportFormatError(path, "(file)", f"is {size} bytes, too small for the config's {count} float32 values")
    # Nothing but the header (at most MAX_HEADER_BYTES) beside them: a larger file is refused before it is read.
    if size > 8 + MAX_HEADER_BYTES + 4 * count:
        raise ExportFormatError(path, "(file)", f"is {size} bytes, more than the config's {count} float32 values and a header need")


def load_model(directory: str, dtype: torch.dtype = torch.float32, device: str = "cpu") -> NsaLlamaForCausalLM:
    raw, config = read_config(directory)
    path = os.path.join(directory, MODEL_FILE)
    _file_holds(path, parameter_count(raw, config.nsa, config.dsa))
    model = NsaLlamaForCausalLM(config)
    tensors, metadata = read_safetensors(path)
    expected = dict(model.named_parameters())
    _check_tensors(path, tensors, expected)
    # This package's checkpoints name their step in the model file too (npm run export's do not): a
    # write interrupted between model.safetensors and config.json is refused, not loaded mismatched.
    if "step" in metadata and "state" in raw and metadata["step"] != str(raw["state"]["step"]):
        detail = f"is {show(metadata['step'])}, but config.json's state.step is {raw['state']['step']} (an interrupted checkpoint write)"
        raise ExportFormatError(path, "__metadata__.step", detail)
    with torch.no_grad():
        for name, p in expected.items():
            p.copy_(tensors[name])
    # DSA: the phase of the last optimizer step done (docs/dsa-spec.md section 11).
    model.set_dsa_steps_done(int(raw["state"]["step"]) if "state" in raw else 0)
    return model.to(device=device, dtype=dtype)


def load_optimizer(directory: str, model: torch.nn.Module, train: dict[str, Any]) -> tuple[torch.optim.AdamW, int]:
    """AdamW over `model` (torch's own, with the exported moments) and the optimizer steps done."""
    path = os.path.join(directory, OPTIMIZER_FILE)
    named = dict(model.named_parameters())
    _file_holds(path, 2 * sum(p.numel() for p in named.values()))
    tensors, metadata = read_safetensors(path)
    for name in tensors:
        if not name.startswith(("exp_avg.", "exp_avg_sq.")):
            raise ExportFormatError(path, name, "unexpected tensor (not exp_avg.<name> or exp_avg_sq.<name>)")
    for group in ("exp_avg.", "exp_avg_sq."):
        _check_tensors(path, {k: v for k, v in tensors.items() if k.startswith(group)}, named, group)
    for name, v in tensors.items():
        if name.startswith("exp_avg_sq.") and bool((v < 0).any()):
            raise ExportFormatError(path, name, f"negative second moment at index {first_negative(v)} (AdamW's exp_avg_sq is >= 0)")
    step_text = metadata.get("step", "")
    if not (step_text.isascii() and step_text.isdigit() and len(step_text) <= 16 and int(step_text) <= MAX_SAFE_INTEGER):
        raise ExportFormatError(path, "__metadata__.step", f"must be an integer in [0, {MAX_SAFE_INTEGER}] (got {show(step_text)})")
    step = int(step_text)
    state = read_state(directory)
    if step != state["step"]:
        raise ExportFormatError(path, "__metadata__.step", f"is {step}, but config.json's state.step is {state['step']}")
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
    source_dir: str | None = None,
) -> None:
    """Writes config.json, model.safetensors and optimizer.safetensors (each atomically), a model card
    (README.md), the custom code when Llama cannot run the model, and source_dir's tokenizer files.

    base_config: the config.json this model came from; its train, data, tokenizer and any field this
    package does not interpret are kept, `state` is replaced and train.steps raised to `step` if lower.
    source_dir: the exported directory the model came from (its tokenizer files are copied).
    """
    os.makedirs(directory, exist_ok=True)
    cfg: dict[str, Any] = json.loads(json.dumps(base_config or {}))
    model_json = model.config.to_json()
    if model.config.nsa is None:
        model_json.pop("nsa")  # a dense model keeps the NSA settings it came with, if any
    # Optional model options: written when the source config had them or they differ from their
    # default, so a config comes back exactly as the TypeScript side wrote it.
    for key, default in OPTIONAL_MODEL_DEFAULTS.items():
        if key not in cfg and model_json.get(key) == default:
            model_json.pop(key)
    cfg.update(model_json)
    blockers = llama_blockers(model.config)
    cfg.update(
        {
            "format": EXPORT_FORMAT,
            "format_version": EXPORT_VERSION,
            "architectures": ["NsaPlaygroundForCausalLM" if blockers else "LlamaForCausalLM"],
            "model_type": "nsa_playground" if blockers else "llama",
            "tie_word_embeddings": True,
            "hidden_act": "silu",
            "torch_dtype": "float32",
            "use_cache": not blockers,
        }
    )
    for k in ("bos_token_id", "eos_token_id", "pad_token_id"):
        cfg.setdefault(k, None)
    if blockers:
        cfg["auto_map"] = dict(AUTO_MAP)
        for k in LLAMA_ONLY:
            cfg.pop(k, None)
    else:
        cfg.pop("auto_map", None)
        cfg.update(LLAMA_ONLY)
    if isinstance(cfg.get("train"), dict) and cfg["train"].get("steps", 0) < step:
        cfg["train"]["steps"] = step
    cfg["state"] = {"step": step, "batches_drawn": batches_drawn}
    named = {n: p.detach() for n, p in model.named_parameters()}
    moments = _moments(model, optimizer)
    # Never written: a NaN or ±Inf weight or moment (the files already there stay as they are).
    for file, group in ((MODEL_FILE, named), (OPTIMIZER_FILE, moments)):
        for name, t in group.items():
            check_finite(os.path.join(directory, file) + " (not written)", name, t)
    # All three files are written in full (temp files, fsync'd) before any is renamed into place, so
    # a process stopped or killed while writing leaves the previous checkpoint as it was; the renames
    # that follow take microseconds, and an interruption between them is refused on load (the model
    # file's `step` against config.json's state.step).
    # safetensors metadata format 'pt': what transformers requires to load the file.
    meta = {"format": "pt", "step": str(step)}
    staged = [
        (write_safetensors(os.path.join(directory, MODEL_FILE), named, meta, commit=False), MODEL_FILE),
        (write_safetensors(os.path.join(directory, OPTIMIZER_FILE), moments, meta, commit=False), OPTIMIZER_FILE),
    ]
    tmp = os.path.join(directory, f".{CONFIG_FILE}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    staged.append((tmp, CONFIG_FILE))
    for tmp_path, name in staged:
        os.replace(tmp_path, os.path.join(directory, name))
    _write_companions(directory, cfg, blockers, source_dir)


def _write_text(path: str, text: str) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _write_companions(directory: str, cfg: dict[str, Any], blockers: list[str], source_dir: str | None) -> None:
    """The files beside the weights: the custom code (or none, for Llama), the tokenizer files of the
    source directory, and a model card."""
    here = os.path.dirname(os.path.abspath(__file__))
    for name in CODE_FILES:
        target = os.path.join(directory, name)
        if blockers:
            with open(os.path.join(here, name), encoding="utf-8") as f:
                _write_text(target, f.read())
        elif os.path.exists(target):
            os.remove(target)
    if source_dir is not None and os.path.abspath(source_dir) != os.path.abspath(directory):
        for name in TOKENIZER_FILES:
            src = os.path.join(source_dir, name)
            if os.path.exists(src):
                with open(src, encoding="utf-8") as f:
                    _write_text(os.path.join(directory, name), f.read())
    remote = ", trust_remote_code=True" if blockers else ""
    kind = f"custom code (Llama cannot run it: {'; '.join(blockers)})" if blockers else "a Hugging Face Llama (LlamaForCausalLM)"
    card = f"""---
library_name: transformers
tags: [nsa-playground, {"native-sparse-attention" if blockers else "llama"}]
---

# nsa-playground model ({cfg.get("attention")}, step {cfg["state"]["step"]})

Written by the nsa-playground PyTorch package (python -m nsa_playground.train) after {cfg["state"]["step"]} optimizer steps
({cfg["state"]["batches_drawn"]} batches drawn in all); {kind}. config.json holds the model, the run's `train` and
`data` settings and `state`; optimizer.safetensors AdamW's moments.

```python
from transformers import AutoModelForCausalLM, AutoTokenizer
model = AutoModelForCausalLM.from_pretrained("path/to/this/dir"{remote})
tok = AutoTokenizer.from_pretrained("path/to/this/dir"{remote})   # present when the source export had one
```

Or `nsa_playground.NsaLlamaForCausalLM.from_pretrained("path/to/this/dir")`, and back in the playground with
`npm run train -- --from-export path/to/this/dir`.
"""
    _write_text(os.path.join(directory, "README.md"), card)


def first_negative(t: torch.Tensor) -> list[int]:
    flat = int((t < 0).flatten().nonzero()[0, 0])
    index = []
    for size in reversed(t.shape):
        index.append(flat % size)
        flat //= size
    return index[::-1]


# config.json's `train` fields as the TypeScript trainer validates them (src/train/config.ts):
# integers with their least value, numbers with their range ("[" / "(" closed / open ends).
# Sizes that allocate (batchSize, gradAccum) and schedule lengths are bounded above as well.
MAX_BATCH = 1 << 16
MAX_ACCUM = 1 << 16
TRAIN_INTS = {
    "steps": (1, MAX_SAFE_INTEGER),
    "batchSize": (1, MAX_BATCH),
    "gradAccum": (1, MAX_ACCUM),
    "warmupSteps": (0, MAX_SAFE_INTEGER),
    "seed": (0, MAX_SAFE_INTEGER),
    "evalEvery": (0, MAX_SAFE_INTEGER),
    "evalBatches": (0, MAX_SAFE_INTEGER),
    "logEvery": (1, MAX_SAFE_INTEGER),
    "shortSeqSteps": (0, MAX_SAFE_INTEGER),
    "shortSeqLen": (0, MAX_SAFE_INTEGER),
    "shortSeqPairs": (0, MAX_SAFE_INTEGER),
}
TRAIN_NUMBERS = {
    "lrMax": ("(", 0, 10, "]"),
    "lrMin": ("[", 0, 10, "]"),
    "warmupStartFraction": ("(", 0, 1, "]"),
    "weightDecay": ("[", 0, 10, "]"),
    "beta1": ("[", 0, 1, ")"),
    "beta2": ("[", 0, 1, ")"),
    "eps": ("(", 0, 1, "]"),
    "gradClip": ("[", 0, 1e6, "]"),
}
# Optional fields (the WebGPU trainer's divergence guard; this trainer keeps them as they are).
# The sequence-length warm-up (shortSeqSteps at shortSeqLen tokens, a recall task's shortSeqPairs):
# nsa_playground.learn trains it; nsa_playground.train refuses a run still inside it.
TRAIN_OPTIONAL = (
    "evalEvery",
    "evalBatches",
    "logEvery",
    "divergenceFactor",
    "divergenceSteps",
    "shortSeqSteps",
    "shortSeqLen",
    "shortSeqPairs",
)


def _in_range(v: Any, lo_end: str, lo: float, hi: float, hi_end: str) -> bool:
    if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)):
        return False
    return (v > lo if lo_end == "(" else v >= lo) and (v < hi if hi_end == ")" else v <= hi)


def check_train(t: Any, path: str, prefix: str = "train") -> dict[str, Any]:
    """Validates a `train` object (every field, unknown keys refused); raises ConfigError naming the field."""
    if not isinstance(t, dict):
        raise ConfigError(path, prefix, f"is missing or not an object (got {show(t)})")
    for k in t:
        if k not in TRAIN_INTS and k not in TRAIN_NUMBERS and k not in TRAIN_OPTIONAL:
            raise ConfigError(path, f"{prefix}.{esc(k)}", "unknown key (not a training setting)")
    for k, (lo, hi) in TRAIN_INTS.items():
        if k in TRAIN_OPTIONAL and k not in t:
            continue
        v = t.get(k)
        if not (isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi):
            raise ConfigError(path, f"{prefix}.{k}", f"must be an integer in [{lo}, {hi}] (got {show(t.get(k, MISSING))})")
    for k, (lo_end, lo, hi, hi_end) in TRAIN_NUMBERS.items():
        if not _in_range(t.get(k), lo_end, lo, hi, hi_end):
            got = show(t.get(k, MISSING))
            raise ConfigError(path, f"{prefix}.{k}", f"must be a finite number in {lo_end}{lo}, {hi}{hi_end} (got {got})")
    if t.get("shortSeqSteps", 0) > t["steps"]:
        raise ConfigError(path, f"{prefix}.shortSeqSteps", f"must not exceed steps ({t['shortSeqSteps']} > {t['steps']})")
    if t.get("shortSeqSteps", 0) > 0 and t.get("shortSeqLen", 0) < 1:
        got = show(t.get("shortSeqLen", MISSING))
        detail = f"is required (>= 1) when shortSeqSteps is {t['shortSeqSteps']} (the warm-up's sequence length; got {got})"
        raise ConfigError(path, f"{prefix}.shortSeqLen", detail)
    if t["lrMin"] > t["lrMax"]:
        raise ConfigError(path, f"{prefix}.lrMin", f"must not exceed lrMax ({t['lrMin']} > {t['lrMax']})")
    f = t.get("divergenceFactor", 0)
    if not (_in_range(f, "[", 0, 1e6, "]") and (f == 0 or f > 1)):
        raise ConfigError(path, f"{prefix}.divergenceFactor", f"must be 0 (no guard) or in (1, 1e6] (got {show(f)})")
    s = t.get("divergenceSteps", 1)
    if not (isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= MAX_SAFE_INTEGER):
        raise ConfigError(path, f"{prefix}.divergenceSteps", f"must be an integer in [1, {MAX_SAFE_INTEGER}] (got {show(s)})")
    return t


def train_settings(raw: dict[str, Any], directory: str) -> dict[str, Any]:
    """config.json's `train` section (the run's optimizer and schedule settings), every field validated."""
    path = os.path.join(directory, CONFIG_FILE)
    required_sections(raw, path, ["train"])
    return check_train(raw["train"], path)


def read_state(directory: str, raw: dict[str, Any] | None = None) -> dict[str, int]:
    """config.json's `state`: {step, batches_drawn}, integers in [0, 2^53 - 1] (no other key)."""
    path = os.path.join(directory, CONFIG_FILE)
    if raw is None:
        raw = read_config_json(directory)
    required_sections(raw, path, ["state"])
    st = raw["state"]
    for k in st:
        if k not in ("step", "batches_drawn"):
            raise ConfigError(path, f"state.{esc(k)}", "unknown key (state holds step and batches_drawn)")
    for k in ("step", "batches_drawn"):
        v = st.get(k)
        if not (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_SAFE_INTEGER):
            raise ConfigError(path, f"state.{k}", f"must be an integer in [0, {MAX_SAFE_INTEGER}] (got {show(st.get(k, MISSING))})")
    return {"step": st["step"], "batches_drawn": st["batches_drawn"]}
