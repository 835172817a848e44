"""The model configuration of an exported directory (config.json), with validation.

config.json states every model field under Hugging Face Llama names (hidden_size, num_hidden_layers,
num_attention_heads, num_key_value_heads, head_dim, intermediate_size, rope_theta, rms_norm_eps, ...)
plus `v_head_dim`, `attention` ('dense' or 'nsa') and an `nsa` object (docs/nsa-spec.md section 2).
Every error names config.json's field.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any

EXPORT_FORMAT = "nsa-playground-export"
EXPORT_VERSION = 1
BRANCHES = ("cmp", "sel", "win")


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

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        if self.nsa is not None:
            d["nsa"]["gates"] = self.nsa.gates.to_json()
            d["nsa"]["cmpMlpHidden"] = {"k": 2 * self.head_dim, "v": 2 * self.v_head_dim}
        return d


def _is_int(x: Any, lo: int = 1) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= lo


def _check_nsa(raw: Any, c: dict[str, Any], fail) -> NsaConfig:
    if not isinstance(raw, dict):
        fail("nsa", "must be an object when attention is 'nsa'")
    for k in ("l", "d", "lSel", "nSel", "w"):
        if not _is_int(raw.get(k)):
            fail(f"nsa.{k}", f"must be an integer >= 1 (got {raw.get(k)!r})")
    if not _is_int(raw.get("forceLocal"), 0):
        fail("nsa.forceLocal", f"must be an integer >= 0 (got {raw.get('forceLocal')!r})")
    for k in ("forceInit", "sharedKV"):
        if not isinstance(raw.get(k), bool):
            fail(f"nsa.{k}", f"must be true or false (got {raw.get(k)!r})")
    if raw.get("phi") not in ("avg", "mlp"):
        fail("nsa.phi", f"must be 'avg' or 'mlp' (got {raw.get('phi')!r})")
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
                (isinstance(g.get("value"), (int, float)) and 0 <= g["value"] <= 1)
                or (
                    isinstance(g.get("value"), list)
                    and len(g["value"]) == 3
                    and all(isinstance(v, (int, float)) and 0 <= v <= 1 for v in g["value"])
                )
            )
        )
    )
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
    for k in (
        "vocab_size",
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "v_head_dim",
        "intermediate_size",
        "max_position_embeddings",
    ):
        if not _is_int(c.get(k)):
            fail(k, f"must be an integer >= 1 (got {c.get(k)!r})")
    if c["num_attention_heads"] % c["num_key_value_heads"]:
        fail(
            "num_key_value_heads", f"must divide num_attention_heads ({c['num_attention_heads']} heads, {c['num_key_value_heads']} groups)"
        )
    if c["head_dim"] % 2:
        fail("head_dim", f"must be even for RoPE (got {c['head_dim']})")
    for k, lo, hi in (("rope_theta", 1, float("inf")), ("rms_norm_eps", 0, 1), ("initializer_range", 0, 1)):
        v = c.get(k)
        if not (isinstance(v, (int, float)) and not isinstance(v, bool) and lo < v < hi):
            fail(k, f"must be a number in ({lo}, {hi}) (got {v!r})")
    if c.get("attention") not in ("dense", "nsa"):
        fail("attention", f"must be 'dense' or 'nsa' (got {c.get('attention')!r})")
    nsa = _check_nsa(c.get("nsa"), c, fail) if c["attention"] == "nsa" else None
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
    )


def read_config_json(directory: str) -> dict[str, Any]:
    """config.json of an exported directory, checked to be this format."""
    path = os.path.join(directory, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except OSError as e:
        raise ConfigError(path, "(file)", f"cannot be read ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise ConfigError(path, "(file)", f"is not valid JSON ({e})") from None
    if not isinstance(raw, dict):
        raise ConfigError(path, "(root)", "is not a JSON object")
    if raw.get("format") != EXPORT_FORMAT:
        raise ConfigError(path, "format", f"is {raw.get('format')!r}, not {EXPORT_FORMAT!r}")
    if raw.get("format_version") != EXPORT_VERSION:
        raise ConfigError(path, "format_version", f"is {raw.get('format_version')!r}; this package reads version {EXPORT_VERSION}")
    return raw


def required_sections(raw: dict[str, Any], path: str, names: list[str]) -> None:
    for n in names:
        if not isinstance(raw.get(n), dict):
            raise ConfigError(path, n, "is missing or not an object")
