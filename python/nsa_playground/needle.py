"""Routing of a task's answers (docs/models-and-tasks.md, "Needle selected"): for each scored answer,
the position it is copied from — its source, the earliest s < t with x[s − 1] = x[t] and x[s] = y[t]
(recall: the pair's value; passkey: the needle's digit) — and whether a layer's selection read it:
NSA and MoBA when the block ⌊s / block⌋ is among the query's selected blocks, DSA when s is among its
selected tokens, in any KV group. The twin of src/train/eval/needle-read.ts (shares no code with it).
"""

from __future__ import annotations

import torch


def answer_sources(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x, y int64 [B, T] (targets −1 where not scored) → [B, T]: the source of each scored answer, −1
    where the target is not scored or no earlier bigram (x[t], y[t]) exists."""
    B, T = x.shape
    src = torch.full((B, T), -1, dtype=torch.long)
    s = torch.arange(1, T)
    for b in range(B):
        t = (y[b] >= 0).nonzero()[:, 0]  # the row's answers [A]
        if t.numel() == 0:
            continue
        # [A, T − 1]: candidate s = 1 … T − 1 before t whose bigram (x[s − 1], x[s]) is (x[t], y[t]).
        hit = (x[b, :-1][None, :] == x[b, t][:, None]) & (x[b, 1:][None, :] == y[b, t][:, None]) & (s[None, :] < t[:, None])
        first = torch.where(hit.any(-1), s[hit.int().argmax(-1)], torch.full_like(t, -1))
        src[b, t] = first
    return src


def selection_block(model: torch.nn.Module) -> int | None:
    """Positions per selected unit of the model's attention: NSA's lSel, MoBA's block, DSA's 1 (a
    token); None for attentions without a selection (dense, the window)."""
    c = model.config
    if c.attention == "nsa":
        return c.nsa.lSel
    if c.attention == "moba":
        return int(c.moba["blockSize"])
    if c.attention == "dsa":
        return 1
    return None


def source_selected(sel: torch.Tensor, src: torch.Tensor, block: int) -> torch.Tensor:
    """sel [B, T, G, K] (−1 padded) and src [B, T] → bool [B, T]: some group's selection holds src's unit."""
    unit = torch.where(src >= 0, src // block, torch.full_like(src, -2))  # −2 matches no entry, not even a pad
    return (sel == unit[:, :, None, None]).any(-1).any(-1)


class NeedleTally:
    """Running sums over held-out batches: per layer, answers whose source the layer selected; how
    many of the answers with a source were right when some layer selected it, and when none did."""

    def __init__(self, layers: int):
        self.answers = 0
        self.by_layer = [0] * layers
        self.selected = self.selected_right = self.missed_right = 0

    def add(self, selections: list[torch.Tensor], src: torch.Tensor, block: int, right: torch.Tensor) -> None:
        """selections: per layer [B, T, G, K]; src [B, T] (answer_sources); right bool [B, T]."""
        has = src >= 0
        hits = [source_selected(s, src, block) & has for s in selections]
        any_hit = torch.stack(hits).any(0)
        self.answers += int(has.sum())
        for i, h in enumerate(hits):
            self.by_layer[i] += int(h.sum())
        self.selected += int(any_hit.sum())
        self.selected_right += int((any_hit & right).sum())
        self.missed_right += int((has & ~any_hit & right).sum())

    def score(self) -> dict[str, object]:
        n, hit = self.answers, self.selected

        def frac(a: int, b: int) -> float | None:
            return a / b if b else None

        return {
            "answers": n,
            "selected_by_layer": [frac(k, n) for k in self.by_layer],
            "selected_any": frac(hit, n),
            "accuracy_selected": frac(self.selected_right, hit),
            "accuracy_missed": frac(self.missed_right, n - hit),
        }
