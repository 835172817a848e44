"""needle.py on hand-made sequences (the same cases tests/train/needle-read.test.ts checks in
TypeScript): each answer's source, a selection that holds it or not, and the tally's split of the
accuracy by routing."""

from __future__ import annotations

import torch
from nsa_playground.needle import NeedleTally, answer_sources, source_selected

I = -1  # noqa: E741 (IGNORE_TARGET)

# Row 0, recall: pairs (5 → 7) at 1–2 and (6 → 8) at 3–4; queries 6 at 6 and 5 at 8.
# Row 1, passkey-like: needle 9 at 1, digits 3 4 3 4 at 2–5, query marker 2 at 7, answers 3 4 3 4
# (targets of 7–10): the first digit has no earlier bigram (2, 3); digit 3's bigram (4, 3) is found
# at its first place (4), not in the answer's own earlier digits; a repeated bigram takes the earliest.
X = torch.tensor(
    [
        [0, 5, 7, 6, 8, 0, 6, 0, 5, 0, 0, 0],
        [0, 9, 3, 4, 3, 4, 0, 2, 3, 4, 3, 0],
    ]
)
Y = torch.tensor(
    [
        [I, I, I, I, I, I, 8, I, 7, I, I, I],
        [I, I, I, I, I, I, I, 3, 4, 3, 4, I],
    ]
)


def test_answer_sources():
    src = answer_sources(X, Y)
    want = torch.full((2, 12), -1)
    want[0, 6], want[0, 8] = 4, 2
    want[1, 8], want[1, 9], want[1, 10] = 3, 4, 3  # (3, 4) first at 2–3; (4, 3) at 3–4; (3, 4) again at 2–3
    assert torch.equal(src, want)


def test_a_source_at_or_after_the_query_is_not_one():
    x = torch.tensor([[1, 2, 1, 2]])
    y = torch.tensor([[I, I, 2, I]])
    assert answer_sources(x, y).tolist() == [[-1, -1, 1, -1]]
    y = torch.tensor([[I, 1, I, I]])  # t = 1: the bigram (2, 1) starts only at 1, its copy at 2 > t
    assert answer_sources(x, y).tolist() == [[-1, -1, -1, -1]]
    y = torch.tensor([[2, I, I, I]])  # t = 0: nothing before it
    assert answer_sources(x, y).tolist() == [[-1, -1, -1, -1]]


def test_selected_by_block_in_any_group_and_pads_never_match():
    src = torch.tensor([[4, -1, 9]])
    block = 4  # src 4 → block 1, src 9 → block 2
    sel = torch.full((1, 3, 2, 2), -1)
    sel[0, 0, 1] = torch.tensor([0, 1])  # group 1 holds block 1
    sel[0, 2, 0] = torch.tensor([0, 3])  # neither group holds block 2
    assert source_selected(sel, src, block).tolist() == [[True, False, False]]
    # Tokens (DSA, block 1): the position itself.
    sel[0, 2, 1] = torch.tensor([9, -1])
    assert source_selected(sel, src, 1).tolist() == [[False, False, True]]


def test_tally_splits_accuracy_by_routing():
    src = answer_sources(X, Y)
    T = X.shape[1]
    # Layer 0 selects block 1 (positions 2–3) for every query; layer 1 selects block 2 (4–5) everywhere.
    layer0 = torch.full((2, T, 1, 1), 1)
    layer1 = torch.full((2, T, 1, 1), 2)
    right = torch.zeros(2, T, dtype=torch.bool)
    right[0, 6] = right[1, 7] = right[1, 9] = True
    tally = NeedleTally(2)
    tally.add([layer0, layer1], src, 2, right)
    s = tally.score()
    # Sources: 4 (block 2), 2 (block 1), 3 (1), 4 (2), 3 (1) — 5 answers with one; row 1's t = 7 has none.
    assert s["answers"] == 5
    assert s["selected_by_layer"] == [3 / 5, 2 / 5]
    assert s["selected_any"] == 1.0
    assert s["accuracy_selected"] == 2 / 5  # right: (0, 6) and (1, 9); (1, 7) has no source
    assert s["accuracy_missed"] is None
