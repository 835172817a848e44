"""python -m nsa_playground.parity --dir DIR --batches BATCHES.json --out OUT_DIR [--dtype float64]

The PyTorch side of the parity tests: loads an exported directory (model and AdamW state), then for
the first optimizer step's batch writes the logits, every NSA layer's selection and the gradients,
takes one AdamW step (the directory's `train` settings, learning rate of step `state.step`) and
reports the loss of every step's batch before its update.

BATCHES.json: {"steps": [{"micro": [{"tokens": [[...T]...B], "targets": [[...]]}, ...]}, ...]}
(targets of −1 are not scored; a step's loss is the mean over its micro-batches' scored targets).
OUT_DIR/result.json: {"losses": [...], "lr": [...], "step": first step}; OUT_DIR/tensors.safetensors:
`logits` [B, T, V] of step 0's first micro-batch, `selection.<layer>` [B, T, G, nSel] (NSA) and
`grad.<name>` of step 0 (Hugging Face names, nn.Linear orientation).
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


def step_loss(model, micro: list[dict[str, Any]], keep: bool) -> torch.Tensor:
    total = None
    scored = 0
    for m in micro:
        tokens = torch.tensor(m["tokens"], dtype=torch.int64)
        targets = torch.tensor(m["targets"], dtype=torch.int64)
        logits = model(tokens, keep=keep)
        keep = False  # keep the first micro-batch's selections only
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-1, reduction="sum")
        total = loss if total is None else total + loss
        scored += int((targets != -1).sum())
    return total / scored


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nsa_playground.parity")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--batches", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float64")
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
    for i, s in enumerate(steps):
        opt.zero_grad(set_to_none=True)
        first = s["micro"][0]
        if i == 0:
            with torch.no_grad():
                tensors["logits"] = model(torch.tensor(first["tokens"], dtype=torch.int64), keep=True)
            for layer, kept in enumerate(model.selections()):
                if kept is not None:
                    tensors[f"selection.{layer}"] = kept["selection"].to(torch.float32)
        loss = step_loss(model, s["micro"], keep=False)
        losses.append(float(loss))
        if i == len(steps) - 1:
            break
        loss.backward()
        if i == 0:
            for name, p in model.named_parameters():
                tensors[f"grad.{name}"] = p.grad.detach().clone()
        lrs.append(optimizer_step(model, opt, train, step + i)["lr"])
    os.makedirs(a.out, exist_ok=True)
    write_safetensors(os.path.join(a.out, "tensors.safetensors"), tensors)
    with open(os.path.join(a.out, "result.json"), "w", encoding="utf-8") as f:
        json.dump({"losses": losses, "lr": lrs, "step": step, "torch": torch.__version__}, f)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
