"""The loaders of the exported directory (and of the trainer's checkpoints, the same format): every
tensor's presence, shape, dtype and finiteness, the optimizer metadata, sizes checked before
allocation; save_directory never writes a non-finite tensor. Each with the package's own
safetensors reader and with the `safetensors` package where it is installed."""

from __future__ import annotations

import json
import math
import os
import shutil
import struct
import time

import pytest
import torch
from conftest import base_config, write_export
from nsa_playground import ExportFormatError, SafetensorsFormatError, load_model, load_optimizer, read_safetensors, save_directory
from nsa_playground.config import MAX_PARAMETERS, ConfigError
from nsa_playground.export_dir import MODEL_FILE, OPTIMIZER_FILE, train_settings
from nsa_playground.safetensors_io import write_safetensors

try:
    import safetensors  # noqa: F401

    READERS = ["own", "package"]
except ImportError:
    READERS = ["own"]


@pytest.fixture(params=READERS)
def reader(request, monkeypatch):
    monkeypatch.setenv("NSA_PLAYGROUND_OWN_SAFETENSORS", "1" if request.param == "own" else "0")
    return request.param


def _copy(src: str, dst) -> str:
    out = str(dst / "export")
    shutil.copytree(src, out)
    return out


def _rewrite(path: str, edit) -> None:
    tensors, metadata = read_safetensors(path)
    edit(tensors, metadata)
    write_safetensors(path, tensors, metadata)


def test_a_valid_directory_loads(export_dir, reader):
    model = load_model(export_dir)
    opt, step = load_optimizer(export_dir, model, train_settings(json.load(open(os.path.join(export_dir, "config.json"))), export_dir))
    assert step == 0
    assert all(torch.isfinite(p).all() for p in model.parameters())


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_weight_refused_naming_file_tensor_and_index(export_dir, tmp_path, reader, value):
    d = _copy(export_dir, tmp_path)
    name = "model.layers.1.mlp.up_proj.weight"

    def plant(tensors, _):
        tensors[name][5, 7] = value
        tensors[name][9, 0] = value

    _rewrite(os.path.join(d, MODEL_FILE), plant)
    with pytest.raises(ExportFormatError) as e:
        load_model(d)
    assert str(e.value).startswith(f"{os.path.join(d, MODEL_FILE)}: {name}: non-finite value {value} at index [5, 7]")


def test_non_finite_moment_refused(export_dir, tmp_path, reader):
    d = _copy(export_dir, tmp_path)
    name = "exp_avg.model.embed_tokens.weight"
    _rewrite(os.path.join(d, OPTIMIZER_FILE), lambda t, _: t[name].view(-1).__setitem__(300, math.nan))
    model = load_model(d)
    with pytest.raises(ExportFormatError) as e:
        load_optimizer(d, model, base_config()["train"])
    assert str(e.value).startswith(f"{os.path.join(d, OPTIMIZER_FILE)}: {name}: non-finite value nan at index [9, 12]")


def test_negative_second_moment_refused(export_dir, tmp_path, reader):
    d = _copy(export_dir, tmp_path)
    name = "exp_avg_sq.model.norm.weight"
    _rewrite(os.path.join(d, OPTIMIZER_FILE), lambda t, _: t[name].__setitem__(3, -1.0))
    with pytest.raises(ExportFormatError, match=rf"{OPTIMIZER_FILE}: {name}: negative second moment at index \[3\]"):
        load_optimizer(d, load_model(d), base_config()["train"])


@pytest.mark.parametrize(
    "step,why",
    [("²", "must be an integer"), ("-1", "must be an integer"), ("9" * 20, "must be an integer"), ("5", "state.step is 0")],
)
def test_optimizer_step_metadata_checked(export_dir, tmp_path, reader, step, why):
    d = _copy(export_dir, tmp_path)
    _rewrite(os.path.join(d, OPTIMIZER_FILE), lambda _, m: m.__setitem__("step", step))
    with pytest.raises(ExportFormatError, match=f"{OPTIMIZER_FILE}: __metadata__.step: .*{why}"):
        load_optimizer(d, load_model(d), base_config()["train"])


def test_missing_extra_and_misshapen_tensors_refused(export_dir, tmp_path, reader):
    d = _copy(export_dir, tmp_path)
    path = os.path.join(d, MODEL_FILE)
    original = open(path, "rb").read()
    _rewrite(path, lambda t, _: t.pop("model.norm.weight"))
    with pytest.raises(ExportFormatError, match="model.norm.weight: tensor missing"):
        load_model(d)
    open(path, "wb").write(original)
    _rewrite(path, lambda t, _: t.__setitem__("extra", torch.zeros(2)))
    with pytest.raises(ExportFormatError, match="extra: unexpected tensor"):
        load_model(d)
    open(path, "wb").write(original)
    _rewrite(path, lambda t, _: t.__setitem__("model.norm.weight", torch.ones(31)))
    with pytest.raises(ExportFormatError, match=r"model.norm.weight: expected shape \[32\], found \[31\]"):
        load_model(d)


def test_a_float64_tensor_refused(export_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("NSA_PLAYGROUND_OWN_SAFETENSORS", "1")
    d = _copy(export_dir, tmp_path)
    path = os.path.join(d, MODEL_FILE)
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    header["model.norm.weight"]["dtype"] = "F64"
    # Same byte count: 32 float32 values become 16 float64 values.
    header["model.norm.weight"]["shape"] = [16]
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n :])
    with pytest.raises(ExportFormatError, match="model.norm.weight: expected shape"):
        load_model(d)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "header-length-huge", "header-not-json"])
def test_damaged_safetensors_refused(export_dir, tmp_path, reader, damage):
    d = _copy(export_dir, tmp_path)
    path = os.path.join(d, MODEL_FILE)
    raw = open(path, "rb").read()
    data = {
        "truncated": raw[: len(raw) - 100],
        "garbage": os.urandom(len(raw)),
        "header-length-huge": struct.pack("<Q", 1 << 60) + raw[8:],
        "header-not-json": raw[:8] + b"\xff" * 16 + raw[24:],
    }[damage]
    open(path, "wb").write(data)
    with pytest.raises((ExportFormatError, SafetensorsFormatError)) as e:
        load_model(d)
    assert str(e.value).startswith(path + ": ")


def test_a_model_file_too_small_for_the_config_is_refused_before_allocation(export_dir, tmp_path):
    d = _copy(export_dir, tmp_path)
    cfg = json.load(open(os.path.join(d, "config.json")))
    cfg["num_hidden_layers"] = 1024
    cfg["hidden_size"] = 256
    cfg["intermediate_size"] = 512
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    t0 = time.perf_counter()
    with pytest.raises(ExportFormatError, match=rf"{MODEL_FILE}: \(file\): is \d+ bytes, too small for the config's \d+ float32 values"):
        load_model(d)
    print(f"a 1024-layer config over a tiny model file refused in {(time.perf_counter() - t0) * 1000:.1f} ms")


def test_a_million_layers_refused_at_once(export_dir, tmp_path):
    d = _copy(export_dir, tmp_path)
    cfg = json.load(open(os.path.join(d, "config.json")))
    cfg["num_hidden_layers"] = 10**6
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    with pytest.raises(ConfigError, match=r"num_hidden_layers: must be an integer in \[1, 1024\]"):
        load_model(d)


def test_the_parameter_count_matches_the_model():
    from nsa_playground import NsaLlamaForCausalLM
    from nsa_playground.config import parameter_count, parse_model_config

    nsa = base_config()["nsa"]
    for edit in ({}, {"attention": "dense"}, {"nsa": {**nsa, "phi": "mlp"}}, {"nsa": {**nsa, "sharedKV": True}}):
        cfg = {**base_config(), **edit}
        c = parse_model_config(cfg)
        assert parameter_count(cfg, c.nsa) == sum(p.numel() for p in NsaLlamaForCausalLM(c).parameters())
    assert MAX_PARAMETERS == 2**31


def test_save_directory_never_writes_non_finite_weights(export_dir, tmp_path):
    d = _copy(export_dir, tmp_path)
    before = {f: open(os.path.join(d, f), "rb").read() for f in os.listdir(d)}
    model = load_model(d)
    with torch.no_grad():
        model.model.norm.weight[4] = math.inf
    expected = r"model.safetensors \(not written\): model.norm.weight: non-finite value inf at index \[4\]"
    with pytest.raises(ExportFormatError, match=expected):
        save_directory(d, model, None, step=1, base_config=base_config())
    assert {f: open(os.path.join(d, f), "rb").read() for f in os.listdir(d)} == before, "the directory is unchanged"


def test_write_export_round_trips(tmp_path):
    d = write_export(str(tmp_path / "x"), seed=3)
    a = load_model(d)
    d2 = str(tmp_path / "y")
    save_directory(d2, a, None, step=0, base_config=base_config())
    b = load_model(d2)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_a_model_file_of_another_step_is_refused(export_dir, tmp_path, reader):
    # What a checkpoint write interrupted between its renames would leave: model.safetensors of the
    # next step beside config.json of the previous one.
    d = _copy(export_dir, tmp_path)
    path = os.path.join(d, MODEL_FILE)
    _rewrite(path, lambda _, m: m.__setitem__("step", "2"))
    with pytest.raises(ExportFormatError, match=rf"{MODEL_FILE}: __metadata__.step: is '2', but config.json's state.step is 0"):
        load_model(d)


def test_a_model_file_larger_than_the_config_needs_is_refused_before_it_is_read(export_dir, tmp_path):
    d = _copy(export_dir, tmp_path)
    path = os.path.join(d, MODEL_FILE)
    with open(path, "ab") as f:
        f.truncate(os.path.getsize(path) + 200_000_000)  # sparse: no disk used
    expected = rf"{MODEL_FILE}: \(file\): is \d+ bytes, more than the config's \d+ float32 values and a header need"
    with pytest.raises(ExportFormatError, match=expected):
        load_model(d)
