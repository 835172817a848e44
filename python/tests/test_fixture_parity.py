"""The package against the WebGPU model with no GPU and no Node: fixtures/tiny-nsa is the tiny NSA
model after two WebGPU training steps on Brown bytes, exported, with the WebGPU model's row-centred
logits and every layer's selection on the next batch (written, and kept current, by
tests/export/python-fixtures.integration.test.ts). In float64 the package's logits agree to a
relative RMS ≤ 1e-5 (about 2e-7 here: the WebGPU side is float32) and its selections are the
kernels' as a set per query and group."""

from __future__ import annotations

import json
import os

import torch
from nsa_playground import load_model, read_safetensors

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "tiny-nsa")


def test_logits_and_selections_match_the_webgpu_model():
    model = load_model(FIXTURE, dtype=torch.float64)
    with open(os.path.join(FIXTURE, "tokens.json"), encoding="utf-8") as f:
        tokens = torch.tensor(json.load(f)["tokens"], dtype=torch.int64)
    expected, _ = read_safetensors(os.path.join(FIXTURE, "expected.safetensors"))
    with torch.no_grad():
        logits = model(tokens, keep=True)
    centred = logits - logits.mean(-1, keepdim=True)
    want = expected["logits_centred"].to(torch.float64)
    err = float(torch.sqrt(((centred - want) ** 2).mean() / (want**2).mean()))
    print(f"tiny NSA fixture: logits rel RMS {err:.2e}")
    assert err <= 1e-5
    kept = model.selections()
    assert len(kept) == model.config.num_hidden_layers
    for layer, k in enumerate(kept):
        ours = k["selection"].reshape(-1, k["selection"].shape[-1]).tolist()
        theirs = expected[f"selection.{layer}"].to(torch.int64).reshape(len(ours), -1).tolist()
        mismatched = sum(1 for a, b in zip(ours, theirs) if {x for x in a if x >= 0} != {x for x in b if x >= 0})
        assert mismatched == 0, f"layer {layer}: {mismatched} of {len(ours)} rows select other blocks"
