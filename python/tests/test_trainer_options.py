"""The trainer's options (python -m nsa_playground.train, one process): a run continued from its own
checkpoint draws the batches after the ones it trained on (its losses are the uninterrupted run's,
≤ 1e-6), the learning-rate schedule stays the exported one unless --total-steps says otherwise,
--grad-checkpoint recomputes every layer (same losses ≤ 1e-6, twice the layer forwards) and --bf16
autocasts (losses within 0.05 of float32's but not equal); a run inside its sequence-length warm-up is
refused."""

from __future__ import annotations

import json
import math
import shutil

import pytest
from nsa_playground import learning_rate
from nsa_playground.export_dir import run_cli
from nsa_playground.model import DecoderLayer
from nsa_playground.train import main as train_main

TOL = 1e-6


def train(capsys, *args: str) -> list[dict]:
    code = run_cli(train_main, list(args))
    out = capsys.readouterr()
    assert code == 0, out.err
    return [json.loads(line) for line in out.out.splitlines() if line.startswith('{"step"')]


@pytest.fixture(autouse=True)
def single_process(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)


def test_a_continued_run_draws_new_batches(export_dir, corpus, tmp_path, capsys):
    whole = train(capsys, "--from", export_dir, "--data", corpus, "--steps", "4", "--out", str(tmp_path / "whole"))
    first = train(capsys, "--from", export_dir, "--data", corpus, "--steps", "2", "--out", str(tmp_path / "a"))
    second = train(capsys, "--from", str(tmp_path / "a"), "--data", corpus, "--steps", "2", "--out", str(tmp_path / "b"))
    losses = [r["loss"] for r in whole]
    assert [r["step"] for r in first + second] == [0, 1, 2, 3]
    for i, r in enumerate(first + second):
        assert abs(r["loss"] - losses[i]) <= TOL, f"step {i}: {r['loss']} vs uninterrupted {losses[i]}"
    # Replaying the first batches would give other losses: the batches of steps 2, 3 are not those of 0, 1.
    assert min(abs(losses[2] - losses[0]), abs(losses[3] - losses[1])) > 1e-3
    state = json.load(open(tmp_path / "b" / "config.json"))["state"]
    assert state == {"step": 4, "batches_drawn": 4}


def test_the_exported_schedule_is_kept_unless_total_steps_says_otherwise(export_dir, corpus, tmp_path, capsys):
    cfg = json.load(open(f"{export_dir}/config.json"))["train"]
    kept = train(capsys, "--from", export_dir, "--data", corpus, "--steps", "4", "--out", str(tmp_path / "kept"))
    for r in kept:
        assert math.isclose(r["lr"], learning_rate(cfg, r["step"]), rel_tol=0, abs_tol=1e-15)
    assert json.load(open(tmp_path / "kept" / "config.json"))["train"]["steps"] == cfg["steps"]
    short = train(capsys, "--from", export_dir, "--data", corpus, "--steps", "4", "--total-steps", "4", "--out", str(tmp_path / "short"))
    for r in short:
        assert math.isclose(r["lr"], learning_rate({**cfg, "steps": 4}, r["step"]), rel_tol=0, abs_tol=1e-15)
    assert short[3]["lr"] != kept[3]["lr"]


def test_a_run_inside_its_sequence_length_warm_up_is_refused_naming_the_field(export_dir, corpus, tmp_path, capsys):
    # This trainer does not run the warm-up's shorter sequences (npm run train does): a directory at
    # step 0 of a 2-step warm-up is refused before any training; with the warm-up's steps at 0 it trains.
    raw = json.load(open(f"{export_dir}/config.json"))
    for warm, refused in ((2, True), (0, False)):
        d = tmp_path / f"warm{warm}"
        shutil.copytree(export_dir, d)
        edited = {**raw, "train": {**raw["train"], "shortSeqSteps": warm, "shortSeqLen": 8}}
        (d / "config.json").write_text(json.dumps(edited))
        code = run_cli(
            train_main, ["--from", str(d), "--data", corpus, "--steps", "1", "--total-steps", "8", "--out", str(tmp_path / f"out{warm}")]
        )
        err = capsys.readouterr().err
        if refused:
            assert code == 2 and "train.shortSeqSteps" in err and "inside its sequence-length warm-up" in err, err
        else:
            assert code == 0, err


def test_grad_checkpoint_recomputes_each_layer_and_keeps_the_losses(export_dir, corpus, tmp_path, capsys, monkeypatch):
    calls = {"n": 0}
    forward = DecoderLayer.forward

    def counted(self, *args, **kw):
        calls["n"] += 1
        return forward(self, *args, **kw)

    monkeypatch.setattr(DecoderLayer, "forward", counted)
    plain = train(capsys, "--from", export_dir, "--data", corpus, "--steps", "2", "--out", str(tmp_path / "plain"))
    n_plain, calls["n"] = calls["n"], 0
    ckpt = train(capsys, "--from", export_dir, "--data", corpus, "--steps", "2", "--out", str(tmp_path / "ckpt"), "--grad-checkpoint")
    assert n_plain == 2 * 2  # 2 steps × 2 layers
    assert calls["n"] == 2 * n_plain, "every layer's forward runs again in the backward"
    for a, b in zip(plain, ckpt):
        assert abs(a["loss"] - b["loss"]) <= TOL and abs(a["grad_norm"] - b["grad_norm"]) <= TOL


def test_bf16_autocasts_the_forward(export_dir, corpus, tmp_path, capsys):
    f32 = train(capsys, "--from", export_dir, "--data", corpus, "--steps", "2", "--out", str(tmp_path / "f32"))
    bf16 = train(capsys, "--from", export_dir, "--data", corpus, "--steps", "2", "--out", str(tmp_path / "bf16"), "--bf16")
    for a, b in zip(f32, bf16):
        assert math.isfinite(b["loss"])
        assert 0 < abs(a["loss"] - b["loss"]) <= 0.05, (a["loss"], b["loss"])


def test_bf16_with_float64_is_refused(export_dir, corpus, tmp_path, capsys):
    code = run_cli(
        train_main, ["--from", export_dir, "--data", corpus, "--steps", "1", "--out", str(tmp_path / "x"), "--bf16", "--dtype", "float64"]
    )
    assert code == 2
    assert "--bf16: autocasts a float32 model; drop --dtype float64" in capsys.readouterr().err


def test_weight_decay_as_the_webgpu_trainer_decays():
    """Matrices and the embedding decay; norm gains, biases, the compression MLP's position embeddings
    and the key convolutions' taps do not (src/definitions/params.ts, docs/nsa-spec.md)."""
    from conftest import base_config
    from nsa_playground import NsaLlamaForCausalLM
    from nsa_playground.config import parse_model_config
    from nsa_playground.optim import decays

    cfg = base_config()
    cfg["short_conv"] = 3
    cfg["nsa"]["phi"] = "mlp"
    model = NsaLlamaForCausalLM(parse_model_config(cfg))
    kept = sorted({n.split("layers.0.")[-1] for n, _ in model.named_parameters() if not decays(n) and "layers.1." not in n})
    assert kept == [
        "input_layernorm.weight",
        "model.norm.weight",
        "post_attention_layernorm.weight",
        "self_attn.branch_gate.bias",
        "self_attn.compress_k.fc1.bias",
        "self_attn.compress_k.fc2.bias",
        "self_attn.compress_k.pos_embed",
        "self_attn.compress_v.fc1.bias",
        "self_attn.compress_v.fc2.bias",
        "self_attn.compress_v.pos_embed",
        "self_attn.k_cmp_conv1d.weight",
        "self_attn.k_sel_conv1d.weight",
        "self_attn.k_win_conv1d.weight",
    ]
