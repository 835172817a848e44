"""The model with attention 'dsa' (docs/dsa-spec.md sections 5, 6, 11): config.json's `dsa` block checked
field by field; the indexer's parameters under the TypeScript export's names, through an export round
trip; the warm-up gives gradients to the indexers only, the sparse phase to everything, L_I never
reaches a main parameter and the cross-entropy never an indexer; top-k ≥ T is the dense model; AdamW
leaves the warm-up's frozen parameters (and their moments) untouched and corrects the main parameters'
first update at the run's step; --grad-checkpoint gives the same gradients; the trainer crosses the
warm-up, its step lines carry index_loss and the phase, and a run continued from its checkpoint is the
uninterrupted run (≤ 1e-6). The step-by-step parity with the float64 twin is
tests/dsa/torch-parity.integration.test.ts."""

from __future__ import annotations

import json
import os

import pytest
import torch
from conftest import base_config, read_json, write_export
from nsa_playground import NsaLlamaForCausalLM, load_model, load_optimizer
from nsa_playground.config import ConfigError, parameter_count, parse_model_config
from nsa_playground.export_dir import CODE_FILES, run_cli
from nsa_playground.model import is_indexer_param
from nsa_playground.optim import learning_rate, make_adamw, optimizer_step
from nsa_playground.train import main as train_main

DSA = {"indexHeads": 2, "indexDim": 4, "topK": 6, "warmupSteps": 1, "lossWeight": 0.7}


def dsa_config(**dsa) -> dict:
    c = base_config()
    c.pop("nsa")
    c.update(attention="dsa", dsa={**DSA, **dsa})
    return c


def fresh(seed: int = 3, **dsa) -> NsaLlamaForCausalLM:
    model = NsaLlamaForCausalLM(parse_model_config(dsa_config(**dsa))).double()
    model.init_weights(seed)
    return model


def batch(seed: int = 0, B: int = 2, T: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (B, T), generator=g), torch.randint(0, 256, (B, T), generator=g)


def grads(model: NsaLlamaForCausalLM, phase: str, x, y) -> dict[str, torch.Tensor | None]:
    model.zero_grad(set_to_none=True)
    model.dsa_phase = phase
    ce, index_loss = model.losses(x, y)
    model.objective(ce, index_loss).backward()
    return {n: None if p.grad is None else p.grad.clone() for n, p in model.named_parameters()}


@pytest.mark.parametrize(
    "dsa, field",
    [
        ({"topK": 0}, "dsa.topK"),
        ({"indexHeads": 1.5}, "dsa.indexHeads"),
        ({"indexDim": 3}, "dsa.indexDim"),
        ({"indexDim": 10}, "dsa.indexDim"),  # wider than head_dim 8
        ({"warmupSteps": -1}, "dsa.warmupSteps"),
        ({"lossWeight": 0}, "dsa.lossWeight"),
        ({"extra": 1}, "dsa.extra"),
    ],
)
def test_the_dsa_block_is_checked_field_by_field(dsa, field):
    with pytest.raises(ConfigError) as e:
        parse_model_config(dsa_config(**dsa))
    assert e.value.field == field


def test_a_missing_dsa_block_is_named():
    c = dsa_config()
    c.pop("dsa")
    with pytest.raises(ConfigError) as e:
        parse_model_config(c)
    assert e.value.field == "dsa"


def test_indexer_parameters_and_an_export_round_trip(tmp_path):
    cfg = dsa_config()
    model = NsaLlamaForCausalLM(parse_model_config(cfg))
    names = {n: tuple(p.shape) for n, p in model.named_parameters() if is_indexer_param(n)}
    C, HI, dI = 32, DSA["indexHeads"], DSA["indexDim"]
    for layer in range(2):
        p = f"model.layers.{layer}.self_attn.indexer."
        assert names.pop(f"{p}wq.weight") == (HI * dI, C)
        assert names.pop(f"{p}wk.weight") == (dI, C)
        assert names.pop(f"{p}weights_proj.weight") == (HI, C)
    assert names == {}
    assert parameter_count(cfg, None, model.config.dsa) == sum(p.numel() for p in model.parameters())
    d = write_export(str(tmp_path / "dsa"), cfg)
    got = read_json(os.path.join(d, "config.json"))
    assert got["model_type"] == "nsa_playground" and got["dsa"] == DSA
    assert "dsa.py" in CODE_FILES and os.path.exists(os.path.join(d, "dsa.py"))
    loaded = load_model(d)
    assert loaded.config.dsa == DSA
    saved = NsaLlamaForCausalLM(parse_model_config(cfg))
    saved.init_weights(1)
    for (n, a), (_, b) in zip(loaded.named_parameters(), saved.named_parameters()):
        assert torch.equal(a, b), n
    # A fresh export runs as its first step will (the warm-up); after the warm-up's steps, sparse.
    assert loaded.dsa_phase == "warmup"
    assert loaded.set_dsa_steps_done(DSA["warmupSteps"] + 1) == "sparse"


def test_the_phases_reach_the_parameters_the_spec_says():
    model = fresh()
    x, y = batch()
    warm = grads(model, "warmup", x, y)
    for n, g in warm.items():
        assert (g is not None) == is_indexer_param(n), n
    sparse = grads(model, "sparse", x, y)
    assert all(g is not None and bool(g.abs().sum() > 0) for g in sparse.values())
    # The cross-entropy alone reaches no indexer; L_I alone reaches nothing but the indexers.
    model.zero_grad(set_to_none=True)
    ce, index_loss = model.losses(x, y)
    named = dict(model.named_parameters())
    indexers = [p for n, p in named.items() if is_indexer_param(n)]
    main = [p for n, p in named.items() if not is_indexer_param(n)]
    assert all(g is None for g in torch.autograd.grad(ce, indexers, retain_graph=True, allow_unused=True))
    assert all(g is None for g in torch.autograd.grad(index_loss, main, allow_unused=True))
    # In the sparse phase the main parameters' gradient is the cross-entropy's alone.
    ce_only = torch.autograd.grad(model.losses(x, y)[0], main)
    for n, g in zip([n for n in named if not is_indexer_param(n)], ce_only):
        assert torch.allclose(sparse[n], g, rtol=1e-12, atol=1e-15), n


def test_top_k_of_every_token_is_the_dense_model():
    x, _ = batch(1)
    dsa = fresh(topK=32)
    dsa.dsa_phase = "sparse"
    dense = NsaLlamaForCausalLM(parse_model_config({**base_config(), "attention": "dense"})).double()
    state = {n: p for n, p in dsa.state_dict().items() if ".indexer." not in n}
    dense.load_state_dict(state)
    with torch.no_grad():
        err = (dsa(x) - dense(x)).abs().max() / dense(x).abs().max()
    assert float(err) <= 1e-12


def test_adamw_freezes_the_main_model_in_the_warm_up_and_counts_the_runs_steps():
    warmup = 2
    model = fresh(warmupSteps=warmup)
    train = dict(base_config()["train"], gradClip=0.0, weightDecay=0.5)
    opt = make_adamw(model.named_parameters(), train)
    init = {n: p.detach().clone() for n, p in model.named_parameters()}
    x, y = batch(2)
    for step in range(warmup):
        opt.zero_grad(set_to_none=True)
        model.set_dsa_step(step)
        model.objective(*model.losses(x, y)).backward()
        optimizer_step(model, opt, train, step)
        for n, p in model.named_parameters():
            assert torch.equal(p, init[n]) != is_indexer_param(n), n
            assert (p in opt.state) == is_indexer_param(n), n  # no moments for a frozen parameter
    # Step warmup + 1 is the main parameters' first update: zero moments, bias corrections at that step.
    opt.zero_grad(set_to_none=True)
    assert model.set_dsa_step(warmup) == "sparse"
    model.objective(*model.losses(x, y)).backward()
    g = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    optimizer_step(model, opt, train, warmup)
    b1, b2, eps, wd = (train[k] for k in ("beta1", "beta2", "eps", "weightDecay"))
    lr = learning_rate(train, warmup)
    t = warmup + 1
    name = "model.layers.0.self_attn.q_proj.weight"
    m_hat = (1 - b1) * g[name] / (1 - b1**t)
    v_hat = (1 - b2) * g[name] ** 2 / (1 - b2**t)
    want = init[name] * (1 - lr * wd) - lr * m_hat / (v_hat.sqrt() + eps)
    got = dict(model.named_parameters())[name]
    assert float((got.detach() - want).abs().max()) <= 1e-15
    assert float(opt.state[got]["step"]) == t


@pytest.mark.parametrize("phase", ["warmup", "sparse"])
def test_grad_checkpointing_gives_the_same_gradients(phase):
    model = fresh()
    x, y = batch(3)
    plain = grads(model, phase, x, y)
    model.grad_checkpoint = True
    again = grads(model, phase, x, y)
    for n, g in plain.items():
        if g is None:  # the warm-up's frozen parameters: zeros through the checkpoint, never used
            assert again[n] is None or not bool(again[n].any()), n
        else:
            assert torch.allclose(again[n], g, rtol=1e-12, atol=1e-15), n


def _train(capsys, *args: str) -> list[dict]:
    code = run_cli(train_main, list(args))
    out = capsys.readouterr()
    assert code == 0, out.err
    return [json.loads(line) for line in out.out.splitlines() if line.startswith('{"step"')]


def test_the_trainer_crosses_the_warm_up_and_resumes_exactly(corpus, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    src = write_export(str(tmp_path / "src"), dsa_config(warmupSteps=2))
    common = ["--data", corpus, "--dtype", "float64"]
    whole = _train(capsys, "--from", src, *common, "--steps", "4", "--out", str(tmp_path / "whole"))
    assert [r["dsa_phase"] for r in whole] == ["warmup", "warmup", "sparse", "sparse"]
    assert all(r["index_loss"] > 0 for r in whole)
    first = _train(capsys, "--from", src, *common, "--steps", "1", "--out", str(tmp_path / "a"))
    second = _train(capsys, "--from", str(tmp_path / "a"), *common, "--steps", "3", "--out", str(tmp_path / "b"))
    for i, r in enumerate(first + second):
        for k in ("loss", "index_loss", "grad_norm"):
            assert abs(r[k] - whole[i][k]) <= 1e-6 * abs(whole[i][k]), f"step {i} {k}: {r[k]} vs {whole[i][k]}"
    out = str(tmp_path / "whole")
    model = load_model(out)
    load_optimizer(out, model, read_json(os.path.join(out, "config.json"))["train"])
    assert model.dsa_phase == "sparse"


def test_bf16_keeps_the_indexer_loss_in_float32(corpus, tmp_path, capsys, monkeypatch):
    """--bf16 autocasts the model, but the indexer, its top-k and L_I run in float32: L_I (~1e-5 here,
    below bfloat16's resolution) stays within 5 % of the float32 run's, and positive."""
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    src = write_export(str(tmp_path / "src"), dsa_config(warmupSteps=1))
    f32 = _train(capsys, "--from", src, "--data", corpus, "--steps", "2", "--out", str(tmp_path / "f32"))
    bf16 = _train(capsys, "--from", src, "--data", corpus, "--steps", "2", "--out", str(tmp_path / "bf16"), "--bf16")
    for a, b in zip(f32, bf16):
        assert b["index_loss"] > 0 and abs(b["index_loss"] - a["index_loss"]) <= 0.05 * a["index_loss"], (a, b)
