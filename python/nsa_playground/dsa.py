"""DeepSeek Sparse Attention (docs/dsa-spec.md) in PyTorch: the lightning indexer's scores, the token
top-k (ties to the lower token), the main attention over the selected tokens, and the indexer's KL
loss, whose target (the main attention's distribution) is detached. The layouts are the WebGPU
side's: q [B,T,H,dk], k [B,T,G,dk], v [B,T,G,dv], q_index [B,T,H_I,d_I], k_index [B,T,d_I],
w_index [B,T,H_I]. One selection per query serves every head (docs/dsa-spec.md section 3); the
caller feeds the indexer a detached input, so its loss reaches only the indexer's parameters."""

from __future__ import annotations

import math

import torch


def _causal(T: int, device: torch.device) -> torch.Tensor:
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def index_scores(q_index: torch.Tensor, k_index: torch.Tensor, w_index: torch.Tensor) -> torch.Tensor:
    """scores [B,T,T] = Σ_j w[t,j]·ReLU(q_index[t,j]·k_index[s]) / √(H_I·d_I) for s ≤ t, 0 above the diagonal."""
    _, T, HI, dI = q_index.shape
    dots = torch.relu(torch.einsum("bthe,bse->bths", q_index, k_index))
    scores = torch.einsum("bth,bths->bts", w_index, dots) / math.sqrt(HI * dI)
    return scores.masked_fill(~_causal(T, scores.device), 0.0)


def select_tokens(scores: torch.Tensor, top_k: int) -> torch.Tensor:
    """int64 [B,T,top_k]: the min(top_k, t + 1) tokens s ≤ t of highest score, ties to the lower s,
    ascending, −1 padded (docs/dsa-spec.md section 3). A NaN score raises ValueError."""
    _, T, _ = scores.shape
    causal = _causal(T, scores.device)
    if torch.isnan(scores.masked_fill(~causal, 0.0)).any():
        raise ValueError("dsa top-k: NaN score")
    keyed = scores.detach().masked_fill(~causal, float("-inf"))
    # A stable descending sort keeps equal scores (−0 and +0 included) in token order.
    order = torch.sort(keyed, dim=-1, descending=True, stable=True).indices
    width = min(top_k, T)
    take = torch.clamp(torch.arange(T, device=scores.device) + 1, max=top_k)
    slot = torch.arange(width, device=scores.device)
    chosen = torch.where(slot[None, None, :] < take[None, :, None], order[..., :width], torch.full_like(order[..., :width], T))
    chosen = torch.sort(chosen, dim=-1).values
    chosen = torch.where(chosen == T, torch.full_like(chosen, -1), chosen)
    if width < top_k:
        chosen = torch.cat([chosen, chosen.new_full((*chosen.shape[:2], top_k - width), -1)], dim=-1)
    return chosen


def selection_mask(sel: torch.Tensor, T: int) -> torch.Tensor:
    """bool [B,T,T]: whether query t's row of sel [B,T,k] holds token s."""
    mask = torch.zeros(*sel.shape[:2], T + 1, dtype=torch.bool, device=sel.device)
    mask.scatter_(-1, torch.where(sel >= 0, sel, torch.full_like(sel, T)), True)
    return mask[..., :T]


def _main_logits(q: torch.Tensor, k: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """[B,H,T,T] scaled main scores, −inf where `allowed` [B,T,T] is false."""
    H, dk = q.shape[2], q.shape[3]
    kx = k.repeat_interleave(H // k.shape[2], dim=2)
    logits = torch.einsum("bthd,bshd->bhts", q, kx) / math.sqrt(dk)
    return logits.masked_fill(~allowed[:, None], float("-inf"))


def dsa_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, allowed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention of each query over the tokens `allowed` [B,T,T] (the selection's mask, or the causal
    mask in the warm-up): out [B,T,H,dv] and lse [B,H,T]."""
    logits = _main_logits(q, k, allowed)
    lse = torch.logsumexp(logits, dim=-1)
    p = torch.exp(logits - lse[..., None])
    vx = v.repeat_interleave(q.shape[2] // v.shape[2], dim=2)
    return torch.einsum("bhts,bshd->bthd", p, vx), lse


def indexer_kl(
    q: torch.Tensor, k: torch.Tensor, scores: torch.Tensor, allowed: torch.Tensor, loss_weight: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(L_I, KL per query [B,T]): the KL divergence from the main attention's distribution over the
    tokens `allowed` (its heads' probabilities summed, L1-normalised, detached) to softmax over the same
    tokens of the index scores; L_I = loss_weight / (B·T) · Σ KL (docs/dsa-spec.md section 5)."""
    with torch.no_grad():
        heads = torch.softmax(_main_logits(q, k, allowed), dim=-1).sum(dim=1)
        target = heads / heads.sum(dim=-1, keepdim=True)
    log_r = torch.log_softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    kl_rows = torch.xlogy(target, target).sum(-1) - (target * log_r.masked_fill(~allowed, 0.0)).sum(-1)
    B, T = kl_rows.shape
    return loss_weight / (B * T) * kl_rows.sum(), kl_rows
