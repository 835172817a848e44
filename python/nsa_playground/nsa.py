"""Native Sparse Attention as docs/nsa-spec.md states it, in plain PyTorch ops (autograd does the backward).

Shapes (a leading batch dimension B everywhere): q [B, T, H, dk]; each branch's keys [B, T, G, dk]
and values [B, T, G, dv]; gates [B, T, H, 3] (branch order cmp, sel, win); the selection
[B, T, G, nSel] (ascending block indices, -1 padded). Head i belongs to group i // (H / G).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .config import NsaConfig


def rank_blocks(key: torch.Tensor) -> torch.Tensor:
    """Block indices by descending score [..., nb]. A stable descending sort keeps equal scores in
    index order: ties go to the lower block. (The parity tests plant ties to the higher block by
    replacing this function: tests/export/planted_parity.py.)"""
    return torch.sort(key, dim=-1, descending=True, stable=True).indices


# ---- Block arithmetic (spec sections 4.1, 4.2, 5.1)


def num_cmp_blocks(T: int, c: NsaConfig) -> int:
    """Ncmp(T): complete compression blocks [k·d, k·d + l) in T tokens."""
    return 0 if T < c.l else (T - c.l) // c.d + 1


def num_sel_blocks(T: int, c: NsaConfig) -> int:
    """nBlocks = ceil(T / lSel)."""
    return (T + c.lSel - 1) // c.lSel


def cmp_visible(T: int, c: NsaConfig, device) -> torch.Tensor:
    """bool [T, Ncmp]: block k is visible to query t iff k·d + l − 1 ≤ t."""
    t = torch.arange(T, device=device)[:, None]
    k = torch.arange(num_cmp_blocks(T, c), device=device)[None, :]
    return k * c.d + c.l - 1 <= t


# ---- Compression φ (section 4.3)


class CompressionMlp(torch.nn.Module):
    """φ = mlp for one of K or V: z = concat_i(X[k·d + i] + pos[i]); out = fc2(gelu_tanh(fc1(z)))."""

    def __init__(self, block_len: int, D: int, hidden: int):
        super().__init__()
        self.l = block_len
        self.D = D
        self.pos_embed = torch.nn.Parameter(torch.zeros(block_len, D))
        self.fc1 = torch.nn.Linear(block_len * D, hidden)
        self.fc2 = torch.nn.Linear(hidden, D)

    def forward(self, blocks: torch.Tensor) -> torch.Tensor:
        """blocks [B, Ncmp, G, l, D] → [B, Ncmp, G, D]."""
        z = (blocks + self.pos_embed).flatten(-2)
        return self.fc2(F.gelu(self.fc1(z), approximate="tanh"))


def compress(x: torch.Tensor, c: NsaConfig, mlp: CompressionMlp | None) -> torch.Tensor:
    """x [B, T, G, D] → [B, Ncmp, G, D] (φ avg: the block mean; φ mlp: the MLP over the block)."""
    n = num_cmp_blocks(x.shape[1], c)
    if n == 0:
        return x.new_zeros(x.shape[0], 0, x.shape[2], x.shape[3])
    blocks = x.unfold(1, c.l, c.d)[:, :n]  # [B, Ncmp, G, D, l]
    if mlp is None:
        return blocks.mean(-1)
    return mlp(blocks.transpose(-1, -2))


# ---- Attention helpers


def _heads(x: torch.Tensor, h: int) -> torch.Tensor:
    """[B, T, G, D] → [B, H, T, D] with head i reading group i // h."""
    return x.repeat_interleave(h, dim=2).transpose(1, 2)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dim where mask is true; rows with no true entry give 0 (no NaN)."""
    if scores.shape[-1] == 0:  # no key at all (a sequence shorter than one compression block)
        return torch.zeros_like(scores)
    s = scores.masked_fill(~mask, float("-inf"))
    m = s.amax(-1, keepdim=True).detach()
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(s - m)
    denom = e.sum(-1, keepdim=True)
    return e / torch.where(denom > 0, denom, torch.ones_like(denom))


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, h: int) -> torch.Tensor:
    """q [B, T, H, dk]; k, v [B, S, G, ·]; mask broadcastable to [B, H, T, S] → [B, T, H, dv]."""
    scores = torch.matmul(q.transpose(1, 2), _heads(k, h).transpose(-1, -2)) / math.sqrt(q.shape[-1])
    p = masked_softmax(scores, mask)
    return torch.matmul(p, _heads(v, h)).transpose(1, 2)


# ---- Selection (sections 5.2 to 6)


def selection_scores(p_cmp: torch.Tensor, c: NsaConfig, G: int) -> torch.Tensor:
    """p_cmp [B, H, T, Ncmp] → P [B, T, G, nBlocks]: overlap-mapped, summed over the group's heads."""
    B, H, T, n_cmp = p_cmp.shape
    # p_slc[j] = Σ_k p_cmp[k]·overlap(k, j), summed in ascending k one block at a time (not a matmul,
    # whose blocked sums depend on where the terms sit): equal terms give bit-equal scores, so
    # exact ties stay ties and go to the lower block as the spec says.
    p_slc = p_cmp.new_zeros(B, H, T, num_sel_blocks(T, c))
    for k in range(n_cmp):
        first, last = (k * c.d) // c.lSel, (k * c.d + c.l - 1) // c.lSel
        for j in range(first, last + 1):
            ov = (min(k * c.d + c.l, (j + 1) * c.lSel) - max(k * c.d, j * c.lSel)) / c.l
            p_slc[..., j] += p_cmp[..., k] * ov
    h = H // G
    # p_slc[:, i::h] holds head g·h + i at index g: the group sum runs over ascending heads.
    P = p_slc[:, 0::h].clone()
    for i in range(1, h):
        P += p_slc[:, i::h]
    return P.transpose(1, 2)


def top_n(P: torch.Tensor, c: NsaConfig) -> torch.Tensor:
    """P [B, T, G, nBlocks] → selection int64 [B, T, G, nSel]: forced blocks, then the highest
    scores (ties to the lower block), ascending, −1 padded. No gradient flows through it."""
    B, T, G, nb = P.shape
    dev = P.device
    t = torch.arange(T, device=dev)
    bt = t // c.lSel  # the block holding t
    j = torch.arange(nb, device=dev)
    candidate = j[None, :] <= bt[:, None]  # [T, nb]
    forced = torch.zeros(T, nb, dtype=torch.bool, device=dev)
    if c.forceInit:
        forced[:, 0] = True
    for r in range(c.forceLocal):
        forced |= (j[None, :] == (bt - r)[:, None]) & ((bt - r) >= 0)[:, None]
    key = P.detach().to(torch.float64).clone()
    key = torch.where(forced[None, :, None, :], torch.full_like(key, float("inf")), key)
    key = torch.where(candidate[None, :, None, :], key, torch.full_like(key, float("-inf")))
    if torch.isnan(key).any():
        raise ValueError("selection: NaN score")
    order = rank_blocks(key)
    take = torch.clamp(bt + 1, max=c.nSel)  # min(nSel, nb(t))
    n = min(c.nSel, nb)
    chosen = order[..., :n]
    keep = torch.arange(n, device=dev)[None, :] < take[:, None]  # [T, n]
    chosen = torch.where(keep[None, :, None, :], chosen, torch.full_like(chosen, nb))
    chosen = torch.sort(chosen, dim=-1).values
    chosen = torch.where(chosen == nb, torch.full_like(chosen, -1), chosen)
    if n < c.nSel:
        chosen = torch.cat([chosen, chosen.new_full((B, T, G, c.nSel - n), -1)], dim=-1)
    return chosen


def selected_mask(sel: torch.Tensor, c: NsaConfig, T: int) -> torch.Tensor:
    """selection [B, T, G, nSel] → bool [B, G, T, S]: key s is in a selected block of (t, g) and s ≤ t."""
    B, _, G, _ = sel.shape
    nb = num_sel_blocks(T, c)
    hit = torch.zeros(B, T, G, nb + 1, dtype=torch.bool, device=sel.device)
    hit.scatter_(-1, torch.where(sel < 0, torch.full_like(sel, nb), sel), True)
    block_of = torch.arange(T, device=sel.device) // c.lSel
    m = hit[..., :nb][..., block_of]  # [B, T, G, S]
    causal = torch.ones(T, T, dtype=torch.bool, device=sel.device).tril()
    return m.permute(0, 2, 1, 3) & causal


def _group_mask_to_heads(mask: torch.Tensor, h: int) -> torch.Tensor:
    """[B, G, T, S] → [B, H, T, S]."""
    return mask.repeat_interleave(h, dim=1)


def nsa_attention(
    q: torch.Tensor,
    kv: dict[str, torch.Tensor],
    gates: torch.Tensor,
    c: NsaConfig,
    mlp_k: CompressionMlp | None = None,
    mlp_v: CompressionMlp | None = None,
    selection: torch.Tensor | None = None,
) -> dict[str, torch.Tensor]:
    """The gated NSA output and its intermediates.

    kv holds k_cmp, v_cmp, k_sel, v_sel, k_win, v_win (keys already rotated). Returns o [B, T, H, dv],
    selection, scores (P), p_cmp and each branch's output.
    """
    B, T, H, dk = q.shape
    G = kv["k_sel"].shape[2]
    h = H // G
    dev = q.device
    # Compressed branch (4.4).
    kc = compress(kv["k_cmp"], c, mlp_k)
    vc = compress(kv["v_cmp"], c, mlp_v)
    vis = cmp_visible(T, c, dev)  # [T, Ncmp]
    scores = torch.matmul(q.transpose(1, 2), _heads(kc, h).transpose(-1, -2)) / math.sqrt(dk)
    p_cmp = masked_softmax(scores, vis)
    o_cmp = torch.matmul(p_cmp, _heads(vc, h)).transpose(1, 2)
    # Selection (5, 6): a discrete choice, no gradient.
    with torch.no_grad():
        P = selection_scores(p_cmp.detach(), c, G)
        sel = top_n(P, c) if selection is None else selection
    # Selected branch (7).
    o_sel = attend(q, kv["k_sel"], kv["v_sel"], _group_mask_to_heads(selected_mask(sel, c, T), h), h)
    # Window branch (8): s in [t − w + 1, t].
    t = torch.arange(T, device=dev)
    win = (t[None, :] <= t[:, None]) & (t[None, :] > t[:, None] - c.w)
    o_win = attend(q, kv["k_win"], kv["v_win"], win, h)
    # Gated mix (9.2).
    o = gates[..., 0:1] * o_cmp + gates[..., 1:2] * o_sel + gates[..., 2:3] * o_win
    return {"o": o, "selection": sel, "scores": P, "p_cmp": p_cmp, "o_cmp": o_cmp, "o_sel": o_sel, "o_win": o_win}
