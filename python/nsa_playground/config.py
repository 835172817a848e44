"""The model configuration of an exported directory (config.json), with validation.

config.json states every model field under Hugging Face Llama names (hidden_size, num_hidden_layers,
num_attention_heads, num_key_value_heads, head_dim, intermediate_size, rope_theta, rms_norm_eps, ...)
plus `v_head_dim`, `attention` ('dense', 'nsa', 'window', 'moba' or 'dsa') and an `nsa`, `window` ({w}), `moba`
({blockSize, topK}) or `dsa` ({indexHeads, indexDim, topK, warmupSteps, lossWeight}) object (docs/nsa-spec.md
sections 2 and 15, docs/dsa-spec.md section 8).
Every error names config.json's field.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any

EXPORT_FORMAT = "nsa-playground-export"
# Version 2 is a Hugging Face model directory (model_type llama, or nsa_playground with auto_map and
# the custom code); version 1 (model_type nsa_llama) was written before and is still read.
EXPORT_VERSION = 2
READ_VERSIONS = (1, 2)
# config.json's architectures and model_type, by version: 2's Llama (a dense model Llama runs exactly)
# or the custom code (export_dir.llama_blockers says which).
ARCHITECTURES = {
    1: ((["NsaLlamaForCausalLM"], "nsa_llama"),),
    2: ((["LlamaForCausalLM"], "llama"), (["NsaPlaygroundForCausalLM"], "nsa_playground")),
}
AUTO_MAP = {
    "AutoConfig": "configuration_nsa_playground.NsaPlaygroundConfig",
    "AutoModelForCausalLM": "modeling_nsa_playground.NsaPlaygroundForCausalLM",
}
BRANCHES = ("cmp", "sel", "win")
# model.attention (docs/nsa-spec.md section 15 for window and moba, docs/dsa-spec.md for dsa).
ATTENTIONS = ("dense", "nsa", "window", "moba", "dsa")

# Bounds checked before anything is allocated (a config.json of 10^6 layers is refused at once).
# Each size field has its own ceiling, and the whole model at most MAX_PARAMETERS parameters
# (2^31: 8 GiB of float32 weights, 24 GiB with AdamW's two moments).
MAX_SIZES = {
    "vocab_size": 1 << 20,
    "hidden_size": 1 << 16,
    "num_hidden_layers": 1 << 10,
    "num_attention_heads": 1 << 10,
    "num_key_value_heads": 1 << 10,
    "head_dim": 1 << 12,
    "v_head_dim": 1 << 12,
    "intermediate_size": 1 << 18,
    "max_position_embeddings": 1 << 20,
}
MAX_NSA = {"l": 1 << 12, "d": 1 << 12, "lSel": 1 << 12, "nSel": 1 << 12, "w": 1 << 20, "forceLocal": 1 << 12}
MAX_PARAMETERS = 1 << 31
# Widest key convolution (taps), as the TypeScript side's MAX_SHORT_CONV.
MAX_SHORT_CONV = 64
# config.json is a few kilobytes; a larger one is refused before it is parsed.
MAX_CONFIG_BYTES = 1 << 20
# The largest integer a double (the TypeScript side's number) holds exactly: steps, cursors, seeds.
MAX_SAFE_INTEGER = (1 << 53) - 1
# Every top-level key config.json may hold (what `npm run export` writes); any other is refused.
CONFIG_KEYS = frozenset(
    (
        "format",
        "format_version",
        "architectures",
        "model_type",
        *MAX_SIZES,
        "rope_theta",
        "rms_norm_eps",
        "attention",
        "initializer_range",
        "position_encoding",
        "short_conv",
        "tie_word_embeddings",
        "hidden_act",
        # Hugging Face's (version 2)
        "auto_map",
        "torch_dtype",
        "use_cache",
        "bos_token_id",
        "eos_token_id",
        "pad_token_id",
        "attention_bias",
        "attention_dropout",
        "mlp_bias",
        "pretraining_tp",
        "nsa",
        "window",
        "moba",
        "dsa",
        "tokenizer",
        "train",
        "data",
        "state",
    )
)
NSA_KEYS = frozenset(("l", "d", "lSel", "nSel", "w", "phi", "forceInit", "forceLocal", "sharedKV", "gates", "cmpMlpHidden"))
# config.json's `dsa` object, in the TypeScript side's order (src/definitions/dsa-config.ts DsaConfig).
DSA_KEYS = ("indexHeads", "indexDim", "topK", "warmupSteps", "lossWeight")
MAX_DSA = {"topK": 1 << 20, "indexHeads": 1 << 10}


class ConfigError(ValueError):
    """A config.json field that is missing or invalid: `field` names it (e.g. 'nsa.lSel')."""

    def __init__(self, path: str, field_name: str, detail: str):
        super().__init__(f"{path}: {field_name}: {detail}")
        self.path = path
        self.field = field_name


@dataclass
class GateAblation:
    """'none', 'force' (one branch's gate 1, the others 0) or 'freeze' (constant gates)."""

    kind: str = "none"
    branch: str | None = None
    value: float | tuple[float, float, float] | None = None

    def constants(self) -> tuple[float, float, float] | None:
        """The gate values an ablation fixes, in branch order; None without an ablation."""
        if self.kind == "force":
            return tuple(1.0 if b == self.branch else 0.0 for b in BRANCHES)  # type: ignore[return-value]
        if self.kind == "freeze":
            v = self.value
            return (float(v), float(v), float(v)) if isinstance(v, (int, float)) else tuple(float(x) for x in v)  # type: ignore[return-value,union-attr]
        return None

    def to_json(self) -> dict[str, Any]:
        if self.kind == "force":
            return {"kind": "force", "branch": self.branch}
        if self.kind == "freeze":
            return {"kind": "freeze", "value": self.value if isinstance(self.value, (int, float)) else list(self.value or ())}
        return {"kind": "none"}


@dataclass
class NsaConfig:
    l: int  # noqa: E741 -- compression block length: the spec's l and config.json's key
    d: int  # compression stride
    lSel: int  # selection block length (the paper's l')
    nSel: int  # selected blocks per query and group
    w: int  # sliding window
    phi: str  # 'avg' or 'mlp'
    forceInit: bool
    forceLocal: int
    sharedKV: bool
    gates: GateAblation = field(default_factory=GateAblation)


@dataclass
class ModelConfig:
    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    v_head_dim: int
    intermediate_size: int
    max_position_embeddings: int
    rope_theta: float
    rms_norm_eps: float
    attention: str
    initializer_range: float
    nsa: NsaConfig | None = None
    # docs/nsa-spec.md section 3.1: 'rope' or 'none' (no positional encoding at all).
    position_encoding: str = "rope"
    # Width of the causal depthwise convolution on every key projection (0: none).
    short_conv: int = 0
    # docs/nsa-spec.md section 15: {"w"} when attention is 'window', {"blockSize", "topK"} when 'moba'.
    window: dict[str, int] | None = None
    moba: dict[str, int] | None = None
    # docs/dsa-spec.md: {"indexHeads", "indexDim", "topK", "warmupSteps", "lossWeight"} when attention is 'dsa'.
    dsa: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        if self.nsa is not None:
            d["nsa"]["gates"] = self.nsa.gates.to_json()
            d["nsa"]["cmpMlpHidden"] = {"k": 2 * self.head_dim, "v": 2 * self.v_head_dim}
        return d


def _is_int(x: Any, lo: int = 1, hi: int = MAX_SAFE_INTEGER) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


class _Missing:
    def __repr__(self) -> str:
        return "nothing: the field is missing"


MISSING = _Missing()


def show(x: Any) -> str:
    """A JSON value for an error message: short, one line, control characters escaped."""
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def esc(key: Any) -> str:
    """A JSON key (or path) as a field name: control characters escaped, at most 60 characters."""
    text = repr(str(key))[1:-1]
    return text if len(text) <= 60 else text[:57] + "..."


def _check_nsa(raw: Any, c: dict[str, Any], fail) -> NsaConfig:
    if not isinstance(raw, dict):
        fail("nsa", "must be an object when attention is 'nsa'")
    for k in raw:
        if k not in NSA_KEYS:
            fail(f"nsa.{esc(k)}", "unknown key")
    for k in ("l", "d", "lSel", "nSel", "w"):
        if not _is_int(raw.get(k), 1, MAX_NSA[k]):
            fail(f"nsa.{k}", f"must be an integer in [1, {MAX_NSA[k]}] (got {show(raw.get(k, MISSING))})")
    if not _is_int(raw.get("forceLocal"), 0, MAX_NSA["forceLocal"]):
        fail("nsa.forceLocal", f"must be an integer in [0, {MAX_NSA['forceLocal']}] (got {show(raw.get('forceLocal'))})")
    for k in ("forceInit", "sharedKV"):
        if not isinstance(raw.get(k), bool):
            fail(f"nsa.{k}", f"must be true or false (got {show(raw.get(k))})")
    if raw.get("phi") not in ("avg", "mlp"):
        fail("nsa.phi", f"must be 'avg' or 'mlp' (got {show(raw.get('phi'))})")
    lcmp, d, lsel = raw["l"], raw["d"], raw["lSel"]
    if lcmp % d:
        fail("nsa.d", f"d ({d}) must divide l ({lcmp})")
    if lsel % d:
        fail("nsa.d", f"d ({d}) must divide lSel ({lsel})")
    if lcmp > lsel:
        fail("nsa.lSel", f"lSel ({lsel}) must be >= l ({lcmp})")
    forced = (1 if raw["forceInit"] else 0) + raw["forceLocal"]
    if raw["nSel"] < forced:
        fail("nsa.nSel", f"nSel ({raw['nSel']}) must be >= forceInit + forceLocal ({forced})")
    g = raw.get("gates", {"kind": "none"})
    ok = isinstance(g, dict) and (
        g.get("kind") == "none"
        or (g.get("kind") == "force" and g.get("branch") in BRANCHES)
        or (
            g.get("kind") == "freeze"
            and (
                (_is_number(g.get("value")) and 0 <= g["value"] <= 1)
                or (isinstance(g.get("value"), list) and len(g["value"]) == 3 and all(_is_number(v) and 0 <= v <= 1 for v in g["value"]))
            )
        )
    )
    if ok:
        allowed = {"none": {"kind"}, "force": {"kind", "branch"}, "freeze": {"kind", "value"}}[g["kind"]]
        extra = sorted(str(k) for k in g if k not in allowed)
        if extra:
            fail(f"nsa.gates.{esc(extra[0])}", f"unknown key for kind {g['kind']!r}")
    if not ok:
        fail(
            "nsa.gates",
            "must be {kind:'none'}, {kind:'force', branch:'cmp'|'sel'|'win'} or {kind:'freeze', value in [0,1] or [cmp, sel, win]}",
        )
    value = g.get("value")
    gates = GateAblation(kind=g["kind"], branch=g.get("branch"), value=tuple(value) if isinstance(value, list) else value)
    return NsaConfig(
        l=lcmp,
        d=d,
        lSel=lsel,
        nSel=raw["nSel"],
        w=raw["w"],
        phi=raw["phi"],
        forceInit=raw["forceInit"],
        forceLocal=raw["forceLocal"],
        sharedKV=raw["sharedKV"],
        gates=gates,
    )


def parse_model_config(c: dict[str, Any], path: str = "config.json") -> ModelConfig:
    """Validates the model fields of a config.json object; raises ConfigError naming the field."""

    def fail(name: str, detail: str):
        raise ConfigError(path, name, detail)

    if not isinstance(c, dict):
        fail("(root)", "is not a JSON object")
    for k, hi in MAX_SIZES.items():
        lo = 0 if k == "intermediate_size" else 1  # 0: attention-only layers
        if not _is_int(c.get(k), lo, hi):
            fail(k, f"must be an integer in [{lo}, {hi}] (got {show(c.get(k, MISSING))})")
    if c.get("position_encoding", "rope") not in ("rope", "none"):
        fail("position_encoding", f"must be 'rope' or 'none' (got {show(c.get('position_encoding'))})")
    if not _is_int(c.get("short_conv", 0), 0, MAX_SHORT_CONV):
        fail("short_conv", f"must be an integer in [0, {MAX_SHORT_CONV}] (0: none; got {show(c.get('short_conv'))})")
    if c["num_attention_heads"] % c["num_key_value_heads"]:
        fail(
            "num_key_value_heads", f"must divide num_attention_heads ({c['num_attention_heads']} heads, {c['num_key_value_heads']} groups)"
        )
    if c["head_dim"] % 2:
        fail("head_dim", f"must be even for RoPE (got {c['head_dim']})")
    for k, lo, hi in (("rope_theta", 1, float("inf")), ("rms_norm_eps", 0, 1), ("initializer_range", 0, 1)):
        v = c.get(k)
        if not (_is_number(v) and lo < v < hi):
            fail(k, f"must be a finite number in ({lo}, {hi}) (got {show(c.get(k, MISSING))})")
    if c.get("attention") not in ATTENTIONS:
        fail("attention", f"must be one of {', '.join(map(repr, ATTENTIONS))} (got {show(c.get('attention'))})")
    nsa = _check_nsa(c.get("nsa"), c, fail) if c["attention"] == "nsa" else None
    window = _check_window(c.get("window"), c, fail) if c["attention"] == "window" else None
    moba = _check_moba(c.get("moba"), c, fail) if c["attention"] == "moba" else None
    dsa = _check_dsa(c.get("dsa"), c, fail) if c["attention"] == "dsa" else None
    if c["attention"] == "dense" and c.get("nsa") is not None and not isinstance(c.get("nsa"), dict):
        fail("nsa", f"must be an object or null (got {show(c.get('nsa'))})")
    count = parameter_count(c, nsa, dsa)
    if count > MAX_PARAMETERS:
        fail("(model)", f"{count} parameters exceed this package's bound of {MAX_PARAMETERS} (2^31; config.py MAX_PARAMETERS)")
    return ModelConfig(
        vocab_size=c["vocab_size"],
        hidden_size=c["hidden_size"],
        num_hidden_layers=c["num_hidden_layers"],
        num_attention_heads=c["num_attention_heads"],
        num_key_value_heads=c["num_key_value_heads"],
        head_dim=c["head_dim"],
        v_head_dim=c["v_head_dim"],
        intermediate_size=c["intermediate_size"],
        max_position_embeddings=c["max_position_embeddings"],
        rope_theta=float(c["rope_theta"]),
        rms_norm_eps=float(c["rms_norm_eps"]),
        attention=c["attention"],
        initializer_range=float(c["initializer_range"]),
        nsa=nsa,
        position_encoding=c.get("position_encoding", "rope"),
        short_conv=c.get("short_conv", 0),
        window=window,
        moba=moba,
        dsa=dsa,
    )


def _check_window(raw: Any, c: dict[str, Any], fail) -> dict[str, int]:
    """docs/nsa-spec.md 15.1: {w}, an integer in [1, max_position_embeddings]."""
    if not isinstance(raw, dict):
        fail("window", "must be an object {w} when attention is 'window'")
    for k in raw:
        if k != "w":
            fail(f"window.{esc(k)}", "unknown key")
    T = c["max_position_embeddings"]
    if not _is_int(raw.get("w"), 1, T):
        fail("window.w", f"must be an integer in [1, max_position_embeddings = {T}] (got {show(raw.get('w', MISSING))})")
    return {"w": raw["w"]}


def _check_moba(raw: Any, c: dict[str, Any], fail) -> dict[str, int]:
    """docs/nsa-spec.md 15.2: {blockSize ≤ max_position_embeddings, topK ≤ ceil(T / blockSize)}."""
    if not isinstance(raw, dict):
        fail("moba", "must be an object {blockSize, topK} when attention is 'moba'")
    for k in raw:
        if k not in ("blockSize", "topK"):
            fail(f"moba.{esc(k)}", "unknown key")
    T = c["max_position_embeddings"]
    if not _is_int(raw.get("blockSize"), 1, T):
        fail("moba.blockSize", f"must be an integer in [1, max_position_embeddings = {T}] (got {show(raw.get('blockSize', MISSING))})")
    blocks = -(-T // raw["blockSize"])
    if not _is_int(raw.get("topK"), 1, blocks):
        got = show(raw.get("topK", MISSING))
        fail("moba.topK", f"must be an integer in [1, {blocks}] (the blocks of blockSize {raw['blockSize']} in {T}; got {got})")
    return {"blockSize": raw["blockSize"], "topK": raw["topK"]}


def _check_dsa(raw: Any, c: dict[str, Any], fail) -> dict[str, Any]:
    """docs/dsa-spec.md section 8 (src/definitions/dsa-config.ts validateDsaConfig): topK, indexHeads
    integers ≥ 1, indexDim an even integer in [2, head_dim], warmupSteps an integer ≥ 0, lossWeight a
    finite number > 0."""
    if not isinstance(raw, dict):
        fail("dsa", "must be an object {indexHeads, indexDim, topK, warmupSteps, lossWeight} when attention is 'dsa'")
    for k in raw:
        if k not in DSA_KEYS:
            fail(f"dsa.{esc(k)}", "unknown key")
    for k in ("topK", "indexHeads"):
        if not _is_int(raw.get(k), 1, MAX_DSA[k]):
            fail(f"dsa.{k}", f"must be an integer in [1, {MAX_DSA[k]}] (got {show(raw.get(k, MISSING))})")
    dk = c["head_dim"]
    d = raw.get("indexDim", MISSING)
    if not _is_int(d, 1, dk) or d % 2:
        fail("dsa.indexDim", f"must be an even integer in [2, head_dim = {dk}] (RoPE rotates pairs; got {show(d)})")
    if not _is_int(raw.get("warmupSteps"), 0, MAX_SAFE_INTEGER):
        fail("dsa.warmupSteps", f"must be an integer in [0, {MAX_SAFE_INTEGER}] (got {show(raw.get('warmupSteps', MISSING))})")
    w = raw.get("lossWeight", MISSING)
    if not (_is_number(w) and w > 0):
        fail("dsa.lossWeight", f"must be a finite number > 0 (got {show(w)})")
    return {k: raw[k] for k in DSA_KEYS}


def parameter_count(c: dict[str, Any], nsa: NsaConfig | None, dsa: dict[str, Any] | None = None) -> int:
    """The model's parameter count from validated sizes, computed without allocating anything."""
    C, H, G, dk, dv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["v_head_dim"]
    kv_sets = 3 if nsa is not None and not nsa.sharedKV else 1
    attn = C * H * dk + H * dv * C + kv_sets * C * G * (dk + dv)
    if nsa is not None:
        attn += C * 3 * H + 3 * H
        if nsa.phi == "mlp":
            for D in (dk, dv):
                attn += nsa.l * D + (nsa.l * D * 2 * D + 2 * D) + (2 * D * D + D)
    attn += kv_sets * G * dk * c.get("short_conv", 0)
    if dsa is not None:
        # The lightning indexer: wq [C, H_I·d_I], wk [C, d_I], weights_proj [C, H_I] (docs/dsa-spec.md section 6).
        attn += C * (dsa["indexHeads"] * dsa["indexDim"] + dsa["indexDim"] + dsa["indexHeads"])
    F = c["intermediate_size"]
    layer = C + attn + (C + 3 * C * F if F > 0 else 0)
    return c["vocab_size"] * C + C + c["num_hidden_layers"] * layer


class _NonFinite:
    """Where the JSON text held NaN, Infinity or -Infinity (Python's json reads them; JSON has none)."""

    def __init__(self, name: str):
        self.name = name


def _first_non_finite(x: Any, where: str) -> tuple[str, str] | None:
    """The field path and text of the first NaN/±Infinity (or a number too large for a double) in parsed JSON."""
    if isinstance(x, _NonFinite):
        return where, x.name
    if isinstance(x, float) and not math.isfinite(x):
        return where, "a number beyond the double range"
    items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
    for k, v in items:
        found = _first_non_finite(v, f"{where}.{k}" if where and isinstance(k, str) else f"{where}[{k}]" if where else str(k))
        if found:
            return found
    return None


def parse_json_bytes(data: bytes, path: str, error=None) -> Any:
    """JSON from a file's bytes; any fault (not UTF-8, not JSON, NaN/Infinity, too deep) raises `error`."""
    error = error or ConfigError
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(path, "(file)", f"is not UTF-8 (byte {e.start}: {data[e.start : e.start + 1]!r})") from None
    try:
        value = json.loads(text, parse_constant=_NonFinite)
    except json.JSONDecodeError as e:
        raise error(path, "(file)", f"is not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except (ValueError, RecursionError) as e:
        raise error(path, "(file)", f"is not valid JSON ({type(e).__name__}: {str(e)[:80]})") from None
    try:
        bad = _first_non_finite(value, "")
    except RecursionError:
        raise error(path, "(file)", "is nested too deeply") from None
    if bad:
        raise error(path, esc(bad[0] or "(root)"), f"is {bad[1]} (not a finite JSON number)")
    return value


def read_config_json(directory: str) -> dict[str, Any]:
    """config.json of an exported directory, checked to be this format, with no key it does not know."""
    path = os.path.join(directory, "config.json")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise ConfigError(path, "(file)", f"cannot be read ({e.strerror})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(path, "(file)", f"is larger than {MAX_CONFIG_BYTES} bytes")
    raw = parse_json_bytes(data, path)
    if not isinstance(raw, dict):
        raise ConfigError(path, "(root)", f"is not a JSON object (got {type(raw).__name__})")
    if raw.get("format") != EXPORT_FORMAT:
        raise ConfigError(path, "format", f"is {show(raw.get('format'))}, not {EXPORT_FORMAT!r}")
    version = raw.get("format_version")
    if version not in READ_VERSIONS or isinstance(version, bool):
        versions = " and ".join(map(str, READ_VERSIONS))
        raise ConfigError(path, "format_version", f"is {show(version)}; this package reads versions {versions}")
    for k in raw:
        if k not in CONFIG_KEYS:
            raise ConfigError(path, esc(k), "unknown key (not a field of the export format)")
    arch_of = {t: a for a, t in ARCHITECTURES[version]}
    model_type = raw.get("model_type", MISSING)
    if "model_type" in raw or version == 2:
        if model_type not in arch_of:
            raise ConfigError(path, "model_type", f"is {show(model_type)}; this format's is {' or '.join(map(repr, arch_of))}")
    else:
        model_type = next(iter(arch_of))
    if ("architectures" in raw or version == 2) and raw.get("architectures") != arch_of[model_type]:
        got = show(raw.get("architectures", MISSING))
        raise ConfigError(path, "architectures", f"is {got}; model_type {model_type!r} is {arch_of[model_type]!r}")
    fixed = [("tie_word_embeddings", True), ("hidden_act", "silu")]
    if version == 2:
        fixed += [("torch_dtype", "float32")]
        if model_type == "nsa_playground":
            fixed += [("auto_map", AUTO_MAP), ("use_cache", False)]
        else:
            fixed += [("attention_bias", False), ("mlp_bias", False), ("pretraining_tp", 1), ("use_cache", True)]
    for k, want in fixed:
        if k in raw and (raw[k] != want or type(raw[k]) is not type(want)):
            raise ConfigError(path, k, f"is {show(raw[k])}; this model's is {want!r}")
    vocab = raw.get("vocab_size") if _is_int(raw.get("vocab_size")) else MAX_SIZES["vocab_size"]
    for k in ("bos_token_id", "eos_token_id", "pad_token_id"):
        v = raw.get(k)
        if v is not None and not _is_int(v, 0, vocab - 1):
            raise ConfigError(path, k, f"must be null or a token id in [0, vocab_size) (got {show(v)})")
    if "attention_dropout" in raw and (raw["attention_dropout"] != 0 or isinstance(raw["attention_dropout"], bool)):
        raise ConfigError(path, "attention_dropout", f"is {show(raw['attention_dropout'])}; this model has no dropout (0)")
    if not (raw.get("tokenizer") is None or isinstance(raw.get("tokenizer"), str)):
        raise ConfigError(path, "tokenizer", f"must be a string or null (got {show(raw.get('tokenizer'))})")
    for k in ("train", "data", "state"):
        if k in raw and not isinstance(raw[k], dict):
            raise ConfigError(path, k, f"must be an object (got {show(raw[k])})")
    return raw


def required_sections(raw: dict[str, Any], path: str, names: list[str]) -> None:
    for n in names:
        if not isinstance(raw.get(n), dict):
            raise ConfigError(path, n, "is missing or not an object")
