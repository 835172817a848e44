"""learn.py's held-out scorer on the hand-made logits tests/train/passkey.test.ts scores in TypeScript
(two sequences, two answers each, one tie): the same accuracy, whole keys, accuracy per answer and
per-sequence marks the WebGPU engine's AnswerTally gives, exactly."""

from __future__ import annotations

import torch
from nsa_playground.learn import score

I = -1  # noqa: E741 (the TypeScript test's name for IGNORE_TARGET)
FLAT = [0.0] * 5
# Row by row (sequence r, input t): the unscored rows are flat and never read.
LOGITS = [
    [FLAT, FLAT, [0, 3, 0, 0, 0], [0, 0, 2, 0, 1]],  # r0: argmax 1 at t2, argmax 2 at t3
    [FLAT, FLAT, [1, 0, 0, 4, 0], [0, 2, 0, 0, 2]],  # r1: argmax 3 at t2, a tie of 1 and 4 at t3
]


class FixedLogits(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tensor(LOGITS, dtype=torch.float64)[: x.shape[0]]


def test_score_matches_the_answer_tally_with_per_sequence_marks():
    x = torch.zeros(2, 4, dtype=torch.long)
    y = torch.tensor([[I, I, 1, 2], [I, I, 3, 4]])
    s = score(FixedLogits(), [(x, y)])
    assert s["answers"] == 4
    assert s["accuracy"] == 0.75  # the tie counts as wrong
    assert s["sequence_accuracy"] == 0.5
    assert s["accuracy_by_answer"] == [1.0, 0.5]
    assert s["answers_right"] == ["11", "10"]


def test_marks_follow_the_batches_in_order():
    x = torch.zeros(2, 4, dtype=torch.long)
    right = torch.tensor([[I, I, 1, 2], [I, I, 3, 1]])
    wrong = torch.tensor([[I, I, 0, 0], [I, I, 0, 0]])
    s = score(FixedLogits(), [(x, right), (x, wrong)])
    assert s["answers_right"] == ["11", "10", "00", "00"]
    assert s["accuracy_by_answer"] == [2 / 4, 1 / 4]
