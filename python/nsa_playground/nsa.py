"""Native Sparse Attention as docs/nsa-spec.md states it, in plain PyTorch ops (autograd does the backward).

Shapes (a leading batch dimension B everywhere): q [B, T, H, dk]; each branch's keys [B, T, G, dk]
and values [B, T, G, dv]; gates [B, T, H, 3] (branch order cmp, sel, win); the selection
[B, T, G, nSel] (ascending block indices, -1 padded). Head i belongs to group i // (H / G).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
import torch.utils.checkpoint

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


def _softmax_nonempty(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dim where mask is true, for rows that each hold at least one true entry
    (the selected and window branches: every query reads a key). Half-precision scores (autocast)
    are normalised in float32."""
    if scores.dtype in (torch.float16, torch.bfloat16):
        scores = scores.float()
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, h: int) -> torch.Tensor:
    """q [B, T, H, dk]; k, v [B, S, G, ·]; mask broadcastable to [B, H, T, S] → [B, T, H, dv].
    The plain masked path: the reference for every faster one."""
    scores = torch.matmul(q.transpose(1, 2), _heads(k, h).transpose(-1, -2)) / math.sqrt(q.shape[-1])
    p = masked_softmax(scores, mask)
    return torch.matmul(p, _heads(v, h)).transpose(1, 2)


def has_sdpa() -> bool:
    """Whether this torch has scaled_dot_product_attention (torch ≥ 2.0)."""
    return hasattr(F, "scaled_dot_product_attention")


def attend_sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, h: int) -> torch.Tensor:
    """Dense causal attention through torch's scaled_dot_product_attention (torch ≥ 2.0; its fused
    kernels where the device has them): q [B, T, H, dk]; k, v [B, T, G, ·] → [B, T, H, dv]. Same
    result as attend() with a causal mask up to float rounding."""
    if not has_sdpa():
        raise RuntimeError(f"dense attention 'sdpa' needs torch >= 2.0 (scaled_dot_product_attention); this torch is {torch.__version__}")
    qh = q.transpose(1, 2)
    if h > 1 and _sdpa_gqa():
        o = F.scaled_dot_product_attention(qh, k.transpose(1, 2), v.transpose(1, 2), is_causal=True, enable_gqa=True)
    else:
        o = F.scaled_dot_product_attention(qh, _heads(k, h), _heads(v, h), is_causal=True)
    return o.transpose(1, 2)


def _sdpa_gqa() -> bool:
    """torch ≥ 2.5: scaled_dot_product_attention takes enable_gqa (grouped K/V without a copy per head)."""
    major, minor = (int("".join(ch for ch in x if ch.isdigit()) or 0) for x in torch.__version__.split(".")[:2])
    return (major, minor) >= (2, 5)


# ---- Selection (sections 5.2 to 6)


def overlap_table(n_cmp: int, nb: int, c: NsaConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """For each selection block j, the compressed blocks k that overlap it, as a fixed number R of
    offsets: k = first(j) + r for r < R, first(j) = j·lSel/d − l/d + 1 (the lowest k whose block
    [k·d, k·d + l) reaches into [j·lSel, (j + 1)·lSel)). Returns (k [nb, R] clamped into range,
    overlap(k, j) [nb, R] as float64, 0 where k is not a block or does not overlap j)."""
    R = c.lSel // c.d + c.l // c.d - 1
    j = torch.arange(nb, dtype=torch.int64)[:, None]
    k = j * (c.lSel // c.d) - c.l // c.d + 1 + torch.arange(R, dtype=torch.int64)[None, :]
    lo = torch.maximum(k * c.d, j * c.lSel)
    hi = torch.minimum(k * c.d + c.l, (j + 1) * c.lSel)
    inside = (k >= 0) & (k < n_cmp) & (hi > lo)
    ov = torch.where(inside, (hi - lo).to(torch.float64) / c.l, torch.zeros((), dtype=torch.float64))
    return k.clamp(0, max(n_cmp - 1, 0)), ov


def selection_scores(p_cmp: torch.Tensor, c: NsaConfig, G: int) -> torch.Tensor:
    """p_cmp [B, H, T, Ncmp] → P [B, T, G, nBlocks]: overlap-mapped, summed over the group's heads."""
    B, H, T, n_cmp = p_cmp.shape
    nb = num_sel_blocks(T, c)
    # p_slc[j] = Σ_k p_cmp[k]·overlap(k, j), summed in ascending k (not a matmul, whose blocked sums
    # depend on where the terms sit): equal terms give bit-equal scores, so exact ties stay ties and
    # go to the lower block as the spec says. Every j is done at once: a fixed loop over the R
    # offsets of the k that can touch j, in ascending k; a term that does not exist adds an exact 0.
    p_slc = p_cmp.new_zeros(B, H, T, nb)
    if n_cmp > 0:
        ks, ov = overlap_table(n_cmp, nb, c)
        ks, ov = ks.to(p_cmp.device), ov.to(device=p_cmp.device, dtype=p_cmp.dtype)
        for r in range(ks.shape[1]):
            p_slc += p_cmp[..., ks[:, r]] * ov[:, r]
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
    """selection [B, T, G, nSel] → bool [B, G, T, S]: key s is in a selected block of (t, g) and s ≤ t.
    (The T × T reference path, impl='masked'.)"""
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


# ---- The selected and window branches on gathered keys (sections 7, 8)

# A branch whose gathered keys and values (or window scores) hold at most WHOLE_ELEMENTS elements
# runs in one pass (autograd keeps its intermediates: the fastest way for short sequences). A larger
# one is cut into query pieces of at most PIECE_ELEMENTS, and with autograd on each piece is
# recomputed in the backward (torch.utils.checkpoint): the peak memory stays O(piece) instead of
# O(T · keys per query).
WHOLE_ELEMENTS = 1 << 25
PIECE_ELEMENTS = 1 << 23


def _piece_len(T: int, per_query: int) -> int:
    """Queries per piece: all T when they fit WHOLE_ELEMENTS, else as many as fit PIECE_ELEMENTS (≥ 1)."""
    return T if T * per_query <= WHOLE_ELEMENTS else max(1, PIECE_ELEMENTS // per_query)


def _by_pieces(fn, T: int, piece: int, tensors: tuple[torch.Tensor, ...], fixed: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """fn(t0, *(x[:, t0:t1] for x in tensors), *fixed) → [B, t1 − t0, ...] for consecutive query
    pieces [t0, t1), concatenated along dim 1. Several pieces with autograd on: each is checkpointed."""
    if piece >= T:
        return fn(0, *tensors, *fixed)
    grad = torch.is_grad_enabled() and any(x.requires_grad for x in (*tensors, *fixed))
    outs = []
    for t0 in range(0, T, piece):
        args = (*(x[:, t0 : t0 + piece] for x in tensors), *fixed)
        if grad:
            outs.append(torch.utils.checkpoint.checkpoint(fn, t0, *args, use_reentrant=True))
        else:
            outs.append(fn(t0, *args))
    return torch.cat(outs, dim=1)


def keys_read(sel: torch.Tensor, c: NsaConfig) -> tuple[int, int, int]:
    """Σ over every (b, t, g) of the key rows each branch reads (docs/nsa-spec.md section 10), for a
    selection [B, T, G, nSel]: the compressed blocks complete by t, the positions ≤ t of the selected
    blocks (−1 pads: none) and min(w, t + 1). What the WebGPU model's kernels count each step."""
    B, T, G, _ = sel.shape
    t = torch.arange(T, device=sel.device)
    cmp = sum(num_cmp_blocks(u + 1, c) for u in range(T)) * B * G  # query u sees Ncmp(u + 1) blocks
    pos = sel[..., None] * c.lSel + torch.arange(c.lSel, device=sel.device)  # [B, T, G, nSel, lSel]
    chosen = int(((sel[..., None] >= 0) & (pos <= t[None, :, None, None, None])).sum())
    win = int(torch.clamp(t + 1, max=c.w).sum()) * B * G
    return cmp, chosen, win


def check_selection(sel: torch.Tensor, c: NsaConfig, T: int) -> None:
    """A selection [B, T, G, nSel] given to nsa_attention: int, blocks in [−1, nBlocks), and every
    row's first entry a candidate block of its query (so that every query reads a key)."""
    nb = num_sel_blocks(T, c)
    if sel.dtype not in (torch.int64, torch.int32) or sel.dim() != 4 or sel.shape[1] != T or sel.shape[3] != c.nSel:
        raise ValueError(f"selection: must be an int64 tensor [B, T={T}, G, nSel={c.nSel}] (got {sel.dtype} {list(sel.shape)})")
    if sel.numel() == 0:
        return
    if int(sel.min()) < -1 or int(sel.max()) >= nb:
        raise ValueError(f"selection: block indices must lie in [-1, {nb}) (−1 pads; nBlocks = {nb} at T = {T})")
    bt = torch.arange(T, device=sel.device)[None, :, None] // c.lSel
    first = sel[..., 0]
    if bool(((first < 0) | (first > bt)).any()):
        raise ValueError("selection: a row's first block must be a candidate of its query (0 ≤ j ≤ t // lSel): every query reads a key")


def selected_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, sel: torch.Tensor, c: NsaConfig) -> torch.Tensor:
    """The selected branch (section 7) on gathered blocks: q [B, T, H, dk]; k, v [B, T, G, ·];
    sel [B, T, G, nSel] → [B, T, H, dv]. Query t of group g reads the nSel·lSel keys of its selected
    blocks (gathered from a [B·G·nBlocks, lSel, ·] view), masked to s ≤ t and to real blocks (−1
    pads): O(T · nSel · lSel) memory and time."""
    B, T, H, dk = q.shape
    G, dv = k.shape[2], v.shape[-1]
    h, L, n = H // G, c.lSel, sel.shape[-1]
    nb = num_sel_blocks(T, c)
    pad = nb * L - T
    if T == 0:
        return q.new_zeros(B, 0, H, dv)

    def blocks(x: torch.Tensor) -> torch.Tensor:  # [B, T, G, D] → [B·G·nb, L, D]
        D = x.shape[-1]
        return F.pad(x, (0, 0, 0, 0, 0, pad)).view(B, nb, L, G, D).permute(0, 3, 1, 2, 4).reshape(B * G * nb, L, D)

    base = (torch.arange(B, device=q.device)[:, None, None, None] * G + torch.arange(G, device=q.device)[None, None, :, None]) * nb
    flat = base + sel.clamp(min=0)  # [B, T, G, n]: the row of each selected block; −1 reads block 0, masked
    pos = sel[..., None] * L + torch.arange(L, device=q.device)  # [B, T, G, n, L]
    t = torch.arange(T, device=q.device)[None, :, None, None, None]
    valid = ((sel[..., None] >= 0) & (pos <= t)).view(B, T, G, 1, n * L)

    def piece(t0: int, qp: torch.Tensor, flatp: torch.Tensor, validp: torch.Tensor, kb: torch.Tensor, vb: torch.Tensor) -> torch.Tensor:
        Tp = qp.shape[1]
        idx = flatp.reshape(-1)
        kg = kb.index_select(0, idx)  # [B·Tp·G·n, L, dk]
        vg = vb.index_select(0, idx)  # [B·Tp·G·n, L, dv]
        if h * L * max(dk, dv) >= 400:
            # One product per (query, group): [h, dk] · [dk, nSel·lSel].
            s = torch.matmul(qp.reshape(B, Tp, G, h, dk), kg.view(B, Tp, G, n * L, dk).transpose(-1, -2)) / math.sqrt(dk)
            p = _softmax_nonempty(s, validp).to(vg.dtype)
            return torch.matmul(p, vg.view(B, Tp, G, n * L, dv)).reshape(B, Tp, H, dv)
        # Tiny blocks: one product per (query, group, selected block), [h, dk] · [dk, lSel], since
        # torch's CPU bmm runs batches of such tiny matrices (< 400 multiply-adds) in one parallel
        # loop, while larger ones go to one BLAS call each.
        qb = qp.reshape(B, Tp, G, 1, h, dk).expand(B, Tp, G, n, h, dk).reshape(-1, h, dk)
        s = torch.bmm(qb, kg.transpose(1, 2)) / math.sqrt(dk)  # [B·Tp·G·n, h, L]
        s = s.view(B, Tp, G, n, h, L).transpose(3, 4).reshape(B, Tp, G, h, n * L)
        p = _softmax_nonempty(s, validp).to(vg.dtype)
        p = p.view(B, Tp, G, h, n, L).transpose(3, 4).reshape(-1, h, L)
        return torch.bmm(p, vg).view(B, Tp, G, n, h, dv).sum(3).reshape(B, Tp, H, dv)

    return _by_pieces(piece, T, _piece_len(T, B * G * n * L * (dk + dv)), (q, flat, valid), (blocks(k), blocks(v)))


def window_chunk(w: int, T: int) -> int:
    """Queries per sliding-window chunk: a chunk of c queries reads the c + w − 1 keys that end at its
    last query (c = w/4, within [16, 128], at most T)."""
    return max(1, min(T, max(16, min(128, w // 4))))


def window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, w: int) -> torch.Tensor:
    """The window branch (section 8) in sliding chunks: q [B, T, H, dk]; k, v [B, T, G, ·] →
    [B, T, H, dv]. Each chunk of c consecutive queries attends to the c + w − 1 keys ending at its
    last query (an unfold of the left-padded keys), masked to [t − w + 1, t] and to real positions:
    O(T · (w + c)) memory and time."""
    B, T, H, dk = q.shape
    G, dv = k.shape[2], v.shape[-1]
    h = H // G
    if T == 0:
        return q.new_zeros(B, 0, H, dv)
    c = window_chunk(w, T)
    span = c + w - 1

    def piece(t0: int, qp: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        Tq = qp.shape[1]
        n_chunks = -(-Tq // c)
        Tpad = n_chunks * c
        # Keys [t0 − w + 1, t0 + Tpad): padded with zeros before 0 and after T (masked below).
        lo = t0 - (w - 1)
        ks = k[:, max(lo, 0) : min(t0 + Tpad, T)]
        vs = v[:, max(lo, 0) : min(t0 + Tpad, T)]
        before, after = max(0, -lo), max(0, t0 + Tpad - T)
        kc = F.pad(ks, (0, 0, 0, 0, before, after)).unfold(1, span, c).permute(0, 2, 1, 4, 3)  # [B, G, nC, span, dk]
        vc = F.pad(vs, (0, 0, 0, 0, before, after)).unfold(1, span, c).permute(0, 2, 1, 4, 3)
        qc = F.pad(qp, (0, 0, 0, 0, 0, Tpad - Tq)).view(B, n_chunks, c, G, h, dk).permute(0, 3, 1, 2, 4, 5)
        s = torch.matmul(qc.reshape(B, G, n_chunks, c * h, dk), kc.transpose(-1, -2)) / math.sqrt(dk)
        # Query t0 + i·c + r reads span position u (key lo + i·c + u) iff 0 ≤ u − r ≤ w − 1 and the key ≥ 0.
        r = torch.arange(c, device=q.device)[:, None]
        u = torch.arange(span, device=q.device)[None, :]
        i = torch.arange(n_chunks, device=q.device)[:, None, None]
        mask = ((u - r >= 0) & (u - r <= w - 1))[None] & (lo + i * c + u[None] >= 0)  # [nC, c, span]
        p = _softmax_nonempty(s.view(B, G, n_chunks, c, h, span), mask[None, None, :, :, None, :])
        o = torch.matmul(p.view(B, G, n_chunks, c * h, span).to(vc.dtype), vc)  # [B, G, nC, c·h, dv]
        return o.view(B, G, n_chunks, c, h, dv).permute(0, 2, 3, 1, 4, 5).reshape(B, Tpad, H, dv)[:, :Tq]

    # Per query: its scores, masked scores and probabilities over span keys (and the chunk's keys).
    return _by_pieces(piece, T, max(c, _piece_len(T, 3 * B * H * (span + c)) // c * c), (q,), (k, v))


def compressed_attention(q: torch.Tensor, kc: torch.Tensor, vc: torch.Tensor, c: NsaConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """The compressed branch (section 4.4): q [B, T, H, dk]; kc, vc [B, Ncmp, G, ·] → (O_cmp
    [B, T, H, dv], p_cmp [B, H, T, Ncmp]). Each group's h heads are one matrix product (no copy of
    the keys per head). Scores and probabilities in float32 at least (under autocast too), so that
    the selection scores keep their ties and ranks."""
    B, T, H, dk = q.shape
    n_cmp, G, dv = kc.shape[1], kc.shape[2], vc.shape[-1]
    h = H // G
    dtype = torch.promote_types(q.dtype, torch.float32)
    with _no_autocast(q.device.type):
        qg = q.to(dtype).transpose(1, 2).reshape(B, G, h * T, dk)
        scores = torch.matmul(qg, kc.to(dtype).permute(0, 2, 3, 1)) / math.sqrt(dk)  # [B, G, h·T, Ncmp]
        p_cmp = masked_softmax(scores.view(B, H, T, n_cmp), cmp_visible(T, c, q.device))
        o = torch.matmul(p_cmp.view(B, G, h * T, n_cmp), vc.to(dtype).transpose(1, 2))  # [B, G, h·T, dv]
    return o.view(B, H, T, dv).transpose(1, 2), p_cmp


class _no_autocast:
    """Autocast off inside (torch 1.13 and 2.x; a no-op where autocast is not on)."""

    def __init__(self, device_type: str):
        self.device_type = device_type if device_type in ("cpu", "cuda") else "cpu"
        self.ctx = None

    def __enter__(self):
        if _autocast_on(self.device_type):
            self.ctx = torch.autocast(self.device_type, enabled=False)
            self.ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self.ctx is not None:
            self.ctx.__exit__(*exc)
        return False


def nsa_attention(
    q: torch.Tensor,
    kv: dict[str, torch.Tensor],
    gates: torch.Tensor,
    c: NsaConfig,
    mlp_k: CompressionMlp | None = None,
    mlp_v: CompressionMlp | None = None,
    selection: torch.Tensor | None = None,
    impl: str = "auto",
) -> dict[str, torch.Tensor]:
    """The gated NSA output and its intermediates.

    kv holds k_cmp, v_cmp, k_sel, v_sel, k_win, v_win (keys already rotated). Returns o [B, T, H, dv],
    selection, scores (P), p_cmp and each branch's output. impl: 'gather' (the selected and window
    branches read only their keys: O(T · (nSel·lSel + w)) memory and time) or 'masked' (the plain
    T × T masks: the reference the tests hold 'gather' to); 'auto' (default) picks 'gather' when a
    query's selected and window keys are fewer than half the sequence, else 'masked' (at short T
    the masks cost less than the gathers: 0.6 against 0.95 s a step for mqar-tiny on this CPU).
    """
    if impl not in ("auto", "gather", "masked"):
        raise ValueError(f"impl: must be 'auto', 'gather' or 'masked' (got {impl!r})")
    B, T, H, dk = q.shape
    if impl == "auto":
        impl = "gather" if 2 * (c.nSel * c.lSel + c.w) < T else "masked"
    G = kv["k_sel"].shape[2]
    h = H // G
    dev = q.device
    # Compressed branch (4.4).
    kc = compress(kv["k_cmp"], c, mlp_k)
    vc = compress(kv["v_cmp"], c, mlp_v)
    if impl == "gather":
        o_cmp, p_cmp = compressed_attention(q, kc, vc, c)
        if not _autocast_on(dev.type):
            o_cmp = o_cmp.to(q.dtype)
    else:
        vis = cmp_visible(T, c, dev)  # [T, Ncmp]
        scores = torch.matmul(q.transpose(1, 2), _heads(kc, h).transpose(-1, -2)) / math.sqrt(dk)
        p_cmp = masked_softmax(scores, vis)
        o_cmp = torch.matmul(p_cmp, _heads(vc, h)).transpose(1, 2)
    # Selection (5, 6): a discrete choice, no gradient.
    with torch.no_grad():
        P = selection_scores(p_cmp.detach(), c, G)
        if selection is None:
            sel = top_n(P, c)
        else:
            check_selection(selection, c, T)
            sel = selection
    if impl == "gather":
        o_sel = selected_attention(q, kv["k_sel"], kv["v_sel"], sel, c)
        o_win = window_attention(q, kv["k_win"], kv["v_win"], c.w)
    else:
        # Selected branch (7).
        o_sel = attend(q, kv["k_sel"], kv["v_sel"], _group_mask_to_heads(selected_mask(sel, c, T), h), h)
        # Window branch (8): s in [t − w + 1, t].
        t = torch.arange(T, device=dev)
        win = (t[None, :] <= t[:, None]) & (t[None, :] > t[:, None] - c.w)
        o_win = attend(q, kv["k_win"], kv["v_win"], win, h)
    # Gated mix (9.2).
    o = gates[..., 0:1] * o_cmp + gates[..., 1:2] * o_sel + gates[..., 2:3] * o_win
    return {"o": o, "selection": sel, "scores": P, "p_cmp": p_cmp, "o_cmp": o_cmp, "o_sel": o_sel, "o_win": o_win}


def _autocast_on(device_type: str) -> bool:
    """Whether autocast is on for this device type (torch ≥ 2.4 takes the type; 1.13 has one call per type)."""
    try:
        return bool(torch.is_autocast_enabled(device_type if device_type in ("cpu", "cuda") else "cpu"))
    except TypeError:
        return torch.is_autocast_enabled() if device_type == "cuda" else torch.is_autocast_cpu_enabled()


# ---- The mechanisms of docs/nsa-spec.md section 15, from the NSA pieces above


def window_only(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, w: int, impl: str = "auto") -> dict[str, torch.Tensor]:
    """Sliding-window attention alone (15.1): the window branch of section 8 on the layer's one K/V pair."""
    B, T, H, _ = q.shape
    h = H // k.shape[2]
    if impl == "auto":
        impl = "gather" if 2 * w < T else "masked"
    if impl == "gather":
        return {"o": window_attention(q, k, v, w)}
    t = torch.arange(T, device=q.device)
    win = (t[None, :] <= t[:, None]) & (t[None, :] > t[:, None] - w)
    return {"o": attend(q, k, v, win, h)}


def moba_nsa_config(block_size: int, top_k: int) -> NsaConfig:
    """MoBA as the NSA config whose pieces compute it (15.2): l = d = lSel = B, nSel = k, own block forced."""
    return NsaConfig(l=block_size, d=block_size, lSel=block_size, nSel=top_k, w=1, phi="avg", forceInit=False, forceLocal=1, sharedKV=True)


def moba_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    block_size: int,
    top_k: int,
    selection: torch.Tensor | None = None,
    impl: str = "auto",
) -> dict[str, torch.Tensor]:
    """MoBA (15.2): block means of K (φ = avg, l = d = lSel = B), each head's softmax over the complete
    blocks, the group's summed scores, top-k with the own block forced (ties to the lower block), the
    selected branch over the chosen blocks. No gradient flows through the means (they only rank)."""
    c = moba_nsa_config(block_size, top_k)
    B, T, H, dk = q.shape
    G = k.shape[2]
    h = H // G
    if impl == "auto":
        impl = "gather" if 2 * top_k * block_size < T else "masked"
    with torch.no_grad():
        kc = compress(k.detach(), c, None)
        scores = torch.matmul(q.detach().transpose(1, 2), _heads(kc, h).transpose(-1, -2)) / math.sqrt(dk)
        p = masked_softmax(scores, cmp_visible(T, c, q.device))
        P = selection_scores(p, c, G)
        if selection is None:
            sel = top_n(P, c)
        else:
            check_selection(selection, c, T)
            sel = selection
    if impl == "gather":
        o = selected_attention(q, k, v, sel, c)
    else:
        o = attend(q, k, v, _group_mask_to_heads(selected_mask(sel, c, T), h), h)
    return {"o": o, "selection": sel, "scores": P, "p_cmp": p}
