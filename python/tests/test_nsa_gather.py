"""The gathered NSA (nsa_attention impl='gather': selected blocks and window keys gathered, O(T·(nSel·lSel
+ w))) against the plain T × T masked path (impl='masked'), in float64: outputs and every gradient
within 1e-12 (measured ≤ 4e-15), identical selections, on configs that cover partial blocks, −1
padding, forced blocks, w ≥ T, T < l and T = 1; the same when the query range is cut into
checkpointed pieces. selection_scores equals the per-block double loop it replaced bit for bit, and
exact ties still go to the lower block."""

from __future__ import annotations

import pytest
import torch
from nsa_playground import nsa as N
from nsa_playground.config import GateAblation, NsaConfig

TOL = 1e-12
BRANCH_INPUTS = ("k_cmp", "v_cmp", "k_sel", "v_sel", "k_win", "v_win")


def cfg(l, d, lSel, nSel, w, forceInit=True, forceLocal=1):  # noqa: E741
    return NsaConfig(
        l=l, d=d, lSel=lSel, nSel=nSel, w=w, phi="avg", forceInit=forceInit, forceLocal=forceLocal, sharedKV=False, gates=GateAblation()
    )


CASES = [
    # (config, T, H, G)
    (cfg(8, 4, 16, 3, 16), 64, 4, 2),  # the tiny preset's NSA
    (cfg(8, 4, 8, 4, 16), 37, 4, 2),  # recall-sized blocks, a partial last block
    (cfg(4, 2, 12, 2, 5, forceInit=False, forceLocal=0), 50, 3, 1),  # nothing forced, lSel = 3·l
    (cfg(8, 8, 8, 3, 100, forceInit=True, forceLocal=2), 45, 6, 3),  # w ≥ T: the window is dense
    (cfg(8, 4, 8, 2, 3), 5, 2, 2),  # T < l: no compressed block at all
    (cfg(4, 4, 4, 1, 1, forceInit=False, forceLocal=1), 1, 2, 1),  # one token
]


def run(c, T, H, G, impl, seed=0):
    g = torch.Generator().manual_seed(seed)
    B, dk, dv = 2, 6, 4
    q = torch.randn(B, T, H, dk, generator=g, dtype=torch.float64, requires_grad=True)
    kv = {n: torch.randn(B, T, G, dk if n[0] == "k" else dv, generator=g, dtype=torch.float64, requires_grad=True) for n in BRANCH_INPUTS}
    gates = torch.rand(B, T, H, 3, generator=g, dtype=torch.float64, requires_grad=True)
    out = N.nsa_attention(q, kv, gates, c, impl=impl)
    r = torch.randn(out["o"].shape, generator=g, dtype=torch.float64)
    (out["o"] * r).sum().backward()
    inputs = {"q": q, "gates": gates, **kv}
    grads = {n: x.grad if x.grad is not None else torch.zeros_like(x) for n, x in inputs.items()}
    return out, grads


def max_err(a, b):
    return float((a - b).detach().abs().max()) if a.numel() else 0.0


@pytest.mark.parametrize("case", range(len(CASES)))
def test_gather_equals_masked_outputs_and_gradients(case, monkeypatch):
    c, T, H, G = CASES[case]
    ref, ref_g = run(c, T, H, G, "masked")
    for pieces in (False, True):
        if pieces:  # every branch cut into pieces of a few queries, each checkpointed
            monkeypatch.setattr(N, "WHOLE_ELEMENTS", 1)
            monkeypatch.setattr(N, "PIECE_ELEMENTS", 2000)
        out, grads = run(c, T, H, G, "gather")
        assert torch.equal(out["selection"], ref["selection"]), f"selection (pieces={pieces})"
        for k in ("o", "o_cmp", "o_sel", "o_win", "p_cmp", "scores"):
            assert max_err(out[k], ref[k]) <= TOL, f"{k} (pieces={pieces}): {max_err(out[k], ref[k])}"
        for k in grads:
            assert max_err(grads[k], ref_g[k]) <= TOL, f"d{k} (pieces={pieces}): {max_err(grads[k], ref_g[k])}"


def test_a_wrong_selection_row_would_be_caught():
    """The comparison above has power: one selection entry moved changes o_sel far beyond TOL."""
    c, T, H, G = CASES[0]
    g = torch.Generator().manual_seed(3)
    q = torch.randn(1, T, H, 6, generator=g, dtype=torch.float64)
    kv = {n: torch.randn(1, T, G, 6 if n[0] == "k" else 4, generator=g, dtype=torch.float64) for n in BRANCH_INPUTS}
    gates = torch.rand(1, T, H, 3, generator=g, dtype=torch.float64)
    out = N.nsa_attention(q, kv, gates, c)
    sel = out["selection"].clone()
    t = T - 1  # the last query: 4 candidates, 3 selected; swap a free choice for the unselected block
    row = sel[0, t, 0].tolist()
    missing = next(j for j in range(4) if j not in row)
    sel[0, t, 0] = torch.tensor(sorted([j for j in row if j in (0, 3)] + [missing]))
    moved = N.nsa_attention(q, kv, gates, c, selection=sel)
    assert max_err(moved["o_sel"], out["o_sel"]) > 1e-3


def old_selection_scores(p_cmp, c, G):
    """The per-block double loop selection_scores replaced (ascending k per j)."""
    B, H, T, n_cmp = p_cmp.shape
    p_slc = p_cmp.new_zeros(B, H, T, N.num_sel_blocks(T, c))
    for k in range(n_cmp):
        first, last = (k * c.d) // c.lSel, (k * c.d + c.l - 1) // c.lSel
        for j in range(first, last + 1):
            ov = (min(k * c.d + c.l, (j + 1) * c.lSel) - max(k * c.d, j * c.lSel)) / c.l
            p_slc[..., j] += p_cmp[..., k] * ov
    h = H // G
    P = p_slc[:, 0::h].clone()
    for i in range(1, h):
        P += p_slc[:, i::h]
    return P.transpose(1, 2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(8, 4, 16, 64), (8, 4, 8, 37), (4, 2, 12, 50), (12, 4, 12, 61), (8, 8, 8, 45), (6, 3, 6, 5)])
def test_selection_scores_equal_the_double_loop_bit_for_bit(shape, dtype):
    l, d, lSel, T = shape  # noqa: E741
    c = cfg(l, d, lSel, 2, 8)
    p = torch.softmax(torch.randn(2, 4, T, N.num_cmp_blocks(T, c), generator=torch.Generator().manual_seed(T), dtype=dtype), -1)
    assert torch.equal(N.selection_scores(p, c, 2), old_selection_scores(p, c, 2))


def test_exact_ties_go_to_the_lower_block():
    """Zeroed compressed keys: every compressed score is equal, so interior blocks tie exactly; the
    free choices are the lowest non-forced candidates (the spec's rule), in both impls."""
    c = cfg(8, 4, 8, 4, 8)
    T, H, G = 64, 4, 2
    g = torch.Generator().manual_seed(5)
    q = torch.randn(1, T, H, 8, generator=g)
    kv = {n: torch.randn(1, T, G, 8, generator=g) for n in BRANCH_INPUTS}
    kv["k_cmp"] = torch.zeros(1, T, G, 8)
    gates = torch.rand(1, T, H, 3, generator=g)
    for impl in ("gather", "masked"):
        sel = N.nsa_attention(q, kv, gates, c, impl=impl)["selection"]
        t = 63  # bt = 7; forced 0 and 7; blocks 1..6 hold 8 compressed blocks' full mass each except the
        # edges; the two free slots go to the lowest of the tied best blocks.
        P = N.nsa_attention(q, kv, gates, c)["scores"][0, t, 0]
        best = P[1:7].max()
        tied = [j for j in range(1, 7) if P[j] == best]
        assert len(tied) >= 3, f"ties planted: {P.tolist()}"
        assert sel[0, t, 0].tolist() == [0, *tied[:2], 7], impl


def test_a_selection_that_leaves_a_query_without_keys_is_refused():
    c = cfg(8, 4, 8, 2, 8)
    q = torch.randn(1, 16, 2, 4)
    kv = {n: torch.randn(1, 16, 1, 4) for n in BRANCH_INPUTS}
    sel = torch.full((1, 16, 1, 2), -1, dtype=torch.int64)
    with pytest.raises(ValueError, match="first block must be a candidate"):
        N.nsa_attention(q, kv, torch.rand(1, 16, 2, 3), c, selection=sel)
    with pytest.raises(ValueError, match=r"block indices must lie in \[-1, 2\)"):
        N.nsa_attention(q, kv, torch.rand(1, 16, 2, 3), c, selection=sel + 3)


@pytest.mark.skipif(not N.has_sdpa(), reason="scaled_dot_product_attention needs torch >= 2.0")
def test_sdpa_equals_the_masked_dense_path():
    g = torch.Generator().manual_seed(2)
    q = torch.randn(2, 33, 4, 8, generator=g, dtype=torch.float64)
    k = torch.randn(2, 33, 2, 8, generator=g, dtype=torch.float64)
    v = torch.randn(2, 33, 2, 8, generator=g, dtype=torch.float64)
    ref = N.attend(q, k, v, torch.ones(33, 33, dtype=torch.bool).tril(), 2)
    assert max_err(N.attend_sdpa(q, k, v, 2), ref) <= TOL


@pytest.mark.parametrize("T,H,G,B_,k", [(37, 4, 2, 4, 3), (29, 3, 3, 3, 2), (9, 2, 1, 4, 3)])
def test_moba_and_window_gather_equal_masked(T, H, G, B_, k):
    """docs/nsa-spec.md section 15: window and MoBA, gathered = masked (outputs and gradients ≤ 1e-12,
    selections equal); MoBA's own block is always selected and the others are complete past blocks."""
    g = torch.Generator().manual_seed(T)
    q = torch.randn(2, T, H, 6, dtype=torch.float64, generator=g, requires_grad=True)
    kk = torch.randn(2, T, G, 6, dtype=torch.float64, generator=g, requires_grad=True)
    v = torch.randn(2, T, G, 5, dtype=torch.float64, generator=g, requires_grad=True)

    def grads(out):
        for x in (q, kk, v):
            x.grad = None
        out["o"].sum().backward()
        return [x.grad.clone() for x in (q, kk, v)]

    for run in (lambda impl: N.window_only(q, kk, v, 5, impl), lambda impl: N.moba_attention(q, kk, v, B_, k, None, impl)):
        a, b = run("gather"), run("masked")
        assert (a["o"] - b["o"]).abs().max() <= TOL
        for x, y in zip(grads(a), grads(b)):
            assert (x - y).abs().max() <= TOL
        if "selection" in a:
            assert torch.equal(a["selection"], b["selection"])
            t = torch.arange(T)[None, :, None, None]
            sel = a["selection"]
            assert bool((sel == (t // B_)).any(-1).all()), "own block always selected"
            assert bool(((sel < 0) | (sel == t // B_) | ((sel + 1) * B_ - 1 <= t)).all()), "others complete and past"


@pytest.mark.parametrize("case", range(len(CASES)))
def test_keys_read_counts_what_each_branch_reads(case):
    """keys_read (what learn.py reports and the WebGPU kernels count) against the masked path's own
    masks: visible compressed blocks, the selected mask and the window mask, summed over every row."""
    c, T, H, G = CASES[case]
    out, _ = run(c, T, H, G, "masked")
    sel = out["selection"]
    B = sel.shape[0]
    t = torch.arange(T)
    win = (t[None, :] <= t[:, None]) & (t[None, :] > t[:, None] - c.w)
    want = (
        int(N.cmp_visible(T, c, "cpu").sum()) * B * G,
        int(N.selected_mask(sel, c, T).sum()),
        int(win.sum()) * B * G,
    )
    assert N.keys_read(sel, c) == want
