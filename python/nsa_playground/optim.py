"""AdamW, gradient clipping and the learning-rate schedule exactly as the WebGPU trainer applies them.

Per optimizer step s (0-based): lr = learning_rate(train, s); the gradients are scaled by
max_norm / (norm + 1e-6) when their global norm exceeds train.gradClip (> 0); then AdamW with
decoupled weight decay on matrices and the embedding only (not norm gains, biases, position
embeddings): p ← p·(1 − lr·wd); m ← β1·m + (1 − β1)·g; v ← β2·v + (1 − β2)·g²;
p ← p − lr·m̂ / (sqrt(v̂) + eps) with bias corrections at step s + 1. torch.optim.AdamW computes the
same update.

DSA (docs/dsa-spec.md section 11): a warm-up step updates the indexers' parameters only — every other
parameter, its moments and its weight decay stay exactly as they are — and the bias correction counts
the run's steps for every parameter, so the main parameters' first update (step warmupSteps + 1,
zero moments) divides by 1 − β^(warmupSteps+1), as the WebGPU trainer does.
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
    """Weight decay applies to matrices and the embedding, not to norm gains, biases, position embeddings or
    the key convolutions' taps (docs/nsa-spec.md: identity-initialised, without weight decay; the WebGPU
    trainer's parameter specs, src/definitions/params.ts)."""
    return name.endswith(".weight") and not name.endswith(("layernorm.weight", "model.norm.weight", "_conv1d.weight"))


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


def updated_params(model: torch.nn.Module, step: int) -> list[tuple[str, torch.nn.Parameter]]:
    """The parameters optimizer step `step` (0-based) updates: every one, except in a DSA model's warm-up,
    which updates the indexers' only (src/definitions/dsa-params.ts dsaUpdates)."""
    named = list(model.named_parameters())
    set_step = getattr(model, "set_dsa_step", None)
    if set_step is not None and set_step(step) == "warmup":
        from .model import is_indexer_param

        return [(n, p) for n, p in named if is_indexer_param(n)]
    return named


def optimizer_step(model: torch.nn.Module, opt: torch.optim.Optimizer, train: dict[str, Any], step: int) -> dict[str, float]:
    """Clip (train.gradClip > 0), set the step's learning rate, update the parameters the step updates
    (updated_params). Returns lr and the gradient norm (over the updated parameters' gradients)."""
    lr = learning_rate(train, step)
    params = [p for _, p in updated_params(model, step)]
    chosen = {id(p) for p in params}
    for p in model.parameters():
        if id(p) not in chosen:
            p.grad = None  # a DSA warm-up's frozen parameter: torch's AdamW skips it (no moments, no decay)
    for p in params:
        if p.grad is None:  # the WebGPU trainer updates every tensor every step (decay, moments)
            p.grad = torch.zeros_like(p)
        # Bias correction at the run's step + 1 for every parameter, whatever steps skipped it.
        state = opt.state.get(p)
        if state is None or "step" not in state:
            set_adam_state(opt, p, torch.zeros_like(p), torch.zeros_like(p), step)
        else:
            state["step"] = torch.tensor(float(step))
    clip = float(train["gradClip"])
    norm = torch.sqrt(sum((p.grad.detach().double() ** 2).sum() for p in params))
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(params, clip)
    for g in opt.param_groups:
        g["lr"] = lr
    opt.step()
    return {"lr": lr, "grad_norm": float(norm)}
