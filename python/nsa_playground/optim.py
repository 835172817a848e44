"""AdamW, gradient clipping and the learning-rate schedule exactly as the WebGPU trainer applies them.

Per optimizer step s (0-based): lr = learning_rate(train, s); the gradients are scaled by
max_norm / (norm + 1e-6) when their global norm exceeds train.gradClip (> 0); then AdamW with
decoupled weight decay on matrices and the embedding only (not norm gains, biases, position
embeddings): p ← p·(1 − lr·wd); m ← β1·m + (1 − β1)·g; v ← β2·v + (1 − β2)·g²;
p ← p − lr·m̂ / (sqrt(v̂) + eps) with bias corrections at step s + 1. torch.optim.AdamW computes the
same update.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import torch


def learning_rate(train: dict[str, Any], step: int) -> float:
    """Linear warmup from lrMax·warmupStartFraction, cosine to lrMin at train.steps, lrMin after."""
    lr_max, lr_min = float(train["lrMax"]), float(train["lrMin"])
    warmup, total, f = int(train["warmupSteps"]), int(train["steps"]), float(train["warmupStartFraction"])
    if step < warmup:
        return lr_max * (f + (1 - f) * step / warmup)
    if step >= total:
        return lr_min
    progress = (step - warmup) / (total - warmup)
    return lr_min + 0.5 * (lr_max - lr_min) * (1 + math.cos(math.pi * progress))


def decays(name: str) -> bool:
    """Weight decay applies to matrices and the embedding, not to norm gains, biases or position embeddings."""
    return name.endswith(".weight") and not name.endswith(("layernorm.weight", "model.norm.weight"))


def make_adamw(named: Iterable[tuple[str, torch.nn.Parameter]], train: dict[str, Any]) -> torch.optim.AdamW:
    named = list(named)
    groups: list[dict[str, Any]] = [
        {"params": [p for n, p in named if decays(n)], "weight_decay": float(train["weightDecay"])},
        {"params": [p for n, p in named if not decays(n)], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(
        groups, lr=float(train["lrMax"]), betas=(float(train["beta1"]), float(train["beta2"])), eps=float(train["eps"])
    )


def set_adam_state(opt: torch.optim.Optimizer, p: torch.nn.Parameter, m: torch.Tensor, v: torch.Tensor, step: int) -> None:
    """AdamW's moments after `step` optimizer steps (the next update uses step + 1)."""
    opt.state[p] = {
        "step": torch.tensor(float(step)),
        "exp_avg": m.to(p.dtype).to(p.device).clone(),
        "exp_avg_sq": v.to(p.dtype).to(p.device).clone(),
    }


def optimizer_step(model: torch.nn.Module, opt: torch.optim.Optimizer, train: dict[str, Any], step: int) -> dict[str, float]:
    """Clip (train.gradClip > 0), set the step's learning rate, update. Returns lr and the gradient norm."""
    lr = learning_rate(train, step)
    params = list(model.parameters())
    for p in params:
        if p.grad is None:  # the WebGPU trainer updates every tensor every step (decay, moments)
            p.grad = torch.zeros_like(p)
    clip = float(train["gradClip"])
    norm = torch.sqrt(sum((p.grad.detach().double() ** 2).sum() for p in params))
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(params, clip)
    for g in opt.param_groups:
        g["lr"] = lr
    opt.step()
    return {"lr": lr, "grad_norm": float(norm)}
