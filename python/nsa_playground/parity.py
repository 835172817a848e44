"""python -m nsa_playground.parity --dir DIR --batches BATCHES.json --out OUT_DIR [--dtype float64]

The PyTorch side of the parity tests: loads an exported directory (model and AdamW state), then for
the first optimizer step's batch writes the logits, every NSA layer's selection and the gradients,
takes one AdamW step (the directory's `train` settings, learning rate of step `state.step`) and
reports the loss of every step's batch before its update. Every step runs as the WebGPU trainer runs it:
a DSA model (docs/dsa-spec.md section 11) in the step's phase, its indexer loss beside the cross-entropy.

BATCHES.json: {"steps": [{"micro": [{"tokens": [[...T]...B], "targets": [[...]]}, ...]}, ...]}
(targets of −1 are not scored; a step's loss is the mean over its micro-batches' scored targets).
OUT_DIR/result.json: {"losses": [...], "lr": [...], "step": first step} (DSA: and "index_losses", the
step's mean Σ_layers L_I, and "dsa_phases"); OUT_DIR/tensors.safetensors: `logits` [B, T, V] of step 0's
first micro-batch, `selection.<layer>` [B, T, G, nSel or topK] (NSA, MoBA, DSA) and `grad.<name>` of
step 0 (Hugging Face names, nn.Linear orientation); with --every-step the same of every later step i
(`logits@i`, `selection@i.<layer>`, `grad@i.<name>`) and `param.<name>` after the last update.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import torch

from .export_dir import load_model, load_optimizer, read_config, run_cli, train_settings
from .optim import optimizer_step
from .safetensors_io import write_safetensors


def step_loss(model, micro: list[dict[str, Any]], keep: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The step's cross-entropy (over all its micro-batches' scored targets) and, for DSA, the mean over
    its micro-batches of Σ_layers L_I (the WebGPU trainer's λ / (B·T·gradAccum) scaling)."""
    total = None
    index_total = None
    scored = 0
    for m in micro:
        tokens = torch.tensor(m["tokens"], dtype=torch.int64)
        targets = torch.tensor(m["targets"], dtype=torch.int64)
        logits = model(tokens, keep=keep)
        keep = False  # keep the first micro-batch's selections only
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-1, reduction="sum")
        total = loss if total is None else total + loss
        index_loss = model.index_loss()
        if index_loss is not None:
            index_total = index_loss if index_total is None else index_total + index_loss
        scored += int((targets != -1).sum())
    return total / scored, None if index_total is None else index_total / len(micro)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nsa_playground.parity")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--batches", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    ap.add_argument(
        "--every-step",
        action="store_true",
        help="logits, selections and gradients of every step (logits@i, selection@i.<layer>, grad@i.<name>; step 0's unsuffixed) "
        "and the parameters after the last update (param.<name>)",
    )
    a = ap.parse_args(argv)
    dtype = getattr(torch, a.dtype)
    raw, _ = read_config(a.dir)
    train = train_settings(raw, a.dir)
    model = load_model(a.dir, dtype=dtype)
    opt, step = load_optimizer(a.dir, model, train)
    with open(a.batches, encoding="utf-8") as f:
        steps = json.load(f)["steps"]
    losses: list[float] = []
    lrs: list[float] = []
    tensors: dict[str, torch.Tensor] = {}
    index_losses: list[float] = []
    phases: list[str] = []
    for i, s in enumerate(steps):
        opt.zero_grad(set_to_none=True)
        phase = model.set_dsa_step(step + i)  # DSA: this step's phase
        if phase is not None:
            phases.append(phase)
        first = s["micro"][0]
        if i == 0 or a.every_step:
            with torch.no_grad():
                logits = model(torch.tensor(first["tokens"], dtype=torch.int64), keep=True)
            suffix = "" if i == 0 else f"@{i}"
            tensors[f"logits{suffix}"] = logits
            for layer, kept in enumerate(model.selections()):
                if kept is not None:
                    tensors[f"selection{suffix}.{layer}"] = kept["selection"].to(torch.float32)
        loss, index_loss = step_loss(model, s["micro"], keep=False)
        losses.append(float(loss))
        if index_loss is not None:
            index_losses.append(float(index_loss.detach()))
        if i == len(steps) - 1:
            break
        model.objective(loss, index_loss).backward()
        if i == 0 or a.every_step:
            for name, p in model.named_parameters():
                # A DSA warm-up's frozen parameters get no gradient: written as zeros (the WebGPU side's).
                g = p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p)
                tensors[f"grad{'' if i == 0 else f'@{i}'}.{name}"] = g
        lrs.append(optimizer_step(model, opt, train, step + i)["lr"])
    if a.every_step:
        for name, p in model.named_parameters():
            tensors[f"param.{name}"] = p.detach().clone()
    os.makedirs(a.out, exist_ok=True)
    write_safetensors(os.path.join(a.out, "tensors.safetensors"), tensors)
    result: dict[str, Any] = {"losses": losses, "lr": lrs, "step": step, "torch": torch.__version__}
    if phases:
        result.update({"index_losses": index_losses, "dsa_phases": phases})
    with open(os.path.join(a.out, "result.json"), "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
