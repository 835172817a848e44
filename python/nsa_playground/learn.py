"""The PyTorch engine of `npm run learn`: trains one grid point of a task preset on the batches the
TypeScript side streams (the project's one task generator, so both engines see the same data bit for
bit) and scores held-out answers as the WebGPU engine does.

    python -m nsa_playground.learn --from DIR [--eval-batches N] [--eval-every K] [--target A] [--threads T]

DIR is an export directory of the fresh model (config.json with its train settings, model.safetensors
with the seeded initial weights: the WebGPU trainer's own). stdin carries N held-out batches, then one
training batch per step; a batch is B·T int32 tokens then B·T int32 targets (little-endian), a target
of -1 not scored. T is the model's length, except in a sequence-length warm-up's steps
(train.shortSeqSteps), whose batches are B·train.shortSeqLen tokens; held-out batches are always at the
model's length. stdout: one JSON line per step ({"kind": "step", "step", "loss", "lr", "grad_norm"}, and
"index_loss" for DSA: Σ over layers of the indexer's L_I; "keys_counted" for NSA: per branch, the key
rows per query and group the step's selection read, averaged over the layers, as the WebGPU trainer
counts them),
per evaluation ({"kind": "eval", "step", "accuracy", "answers", "sequence_accuracy", "accuracy_by_answer",
"answers_right": per held-out sequence a string, one character per answer, "1" right, "0" wrong;
"needle" for NSA, MoBA and DSA: needle.py's routing of the answers; "seconds"}) and a
last {"kind": "done", "step", "reached"} line. Training stops at train.steps, or after the first
evaluation whose answer accuracy is at least --target.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter

import torch

from .export_dir import load_model, read_config
from .needle import NeedleTally, answer_sources, selection_block
from .nsa import keys_read
from .optim import make_adamw, optimizer_step


def _read_exact(stream, n: int) -> bytes | None:
    """n bytes from the stream, or None at its end (the sender stopped)."""
    chunks, got = [], 0
    while got < n:
        chunk = stream.read(n - got)
        if not chunk:
            if got:
                raise SystemExit(f"learn: stdin ended inside a batch ({got} of {n} bytes)")
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_batch(stream, B: int, T: int) -> tuple[torch.Tensor, torch.Tensor] | None:
    raw = _read_exact(stream, 8 * B * T)
    if raw is None:
        return None
    data = torch.frombuffer(bytearray(raw), dtype=torch.int32).view(2, B, T).long()
    return data[0], data[1]


def score(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]]) -> dict[str, object]:
    """Answer accuracy: a scored target is right when its logit is strictly above every other (a tie
    is wrong), as src/train/eval/answer-score.ts; a sequence is right when all its answers are. A
    model with a selection (NSA, MoBA, DSA) also has its answers' routing tallied: "needle"
    (needle.py)."""
    block = selection_block(model) if hasattr(model, "selections") else None
    needles = NeedleTally(model.config.num_hidden_layers) if block is not None else None
    answers = correct = sequences = whole = 0
    right_at: Counter[int] = Counter()  # [j]: right answers among each sequence's j-th scored target
    answers_at: Counter[int] = Counter()
    marks: list[str] = []  # per sequence, one character per answer: "1" right, "0" wrong
    with torch.no_grad():
        for x, y in batches:
            logits = model(x, keep=True) if needles else model(x)
            scored = y >= 0
            target = y.clamp(min=0)
            t_logit = logits.gather(-1, target[..., None])[..., 0]
            others = logits.scatter(-1, target[..., None], float("-inf")).amax(-1)
            right = (t_logit > others) & scored
            if needles:
                needles.add([kept["selection"] for kept in model.selections()], answer_sources(x, y), block, right)
            answers += int(scored.sum())
            correct += int(right.sum())
            sequences += x.shape[0]
            whole += int((right | ~scored).all(-1).sum())
            index = (scored.long().cumsum(-1) - 1)[scored]  # each answer's index within its sequence
            answers_at.update(index.tolist())
            right_at.update(index[right[scored]].tolist())
            for right_row, scored_row in zip(right.tolist(), scored.tolist()):
                marks.append("".join("1" if ok else "0" for ok, on in zip(right_row, scored_row) if on))
    return {
        "accuracy": correct / answers,
        "answers": answers,
        "sequence_accuracy": whole / sequences,
        "accuracy_by_answer": [right_at[j] / answers_at[j] for j in range(len(answers_at))],
        "answers_right": marks,
        **({"needle": needles.score()} if needles else {}),
    }


def counted_keys(model: torch.nn.Module) -> dict[str, float]:
    """An NSA model's last forward (keep=True): key rows per query and group per branch, the mean over
    its B·T·G rows and the layers."""
    c = model.config.nsa
    kept = [s for s in model.selections() if s is not None]
    sums = [0.0, 0.0, 0.0]
    for s in kept:
        sel = s["selection"]
        rows = sel.shape[0] * sel.shape[1] * sel.shape[2]
        for i, k in enumerate(keys_read(sel, c)):
            sums[i] += k / rows / len(kept)
    return dict(zip(("cmp", "sel", "win"), sums))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nsa_playground.learn", description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="source", required=True, help="export directory of the fresh model")
    ap.add_argument("--eval-batches", type=int, default=4)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--target", type=float, default=1.1, help="stop at the first evaluation with at least this accuracy")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args(argv)
    if a.eval_batches < 1 or a.eval_every < 1 or a.threads < 1:
        ap.error("--eval-batches, --eval-every and --threads must be ≥ 1")
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    raw, cfg = read_config(a.source)
    train = raw["train"]
    model = load_model(a.source)
    model.train()
    opt = make_adamw(model.named_parameters(), train)
    B, T, steps = int(train["batchSize"]), cfg.max_position_embeddings, int(train["steps"])
    # A sequence-length warm-up (train.shortSeqSteps, shortSeqLen): its steps' batches are B·shortSeqLen.
    short_steps = int(train.get("shortSeqSteps") or 0) if train.get("shortSeqLen") else 0
    short_len = int(train.get("shortSeqLen") or T)
    stdin = sys.stdin.buffer
    held = []
    for i in range(a.eval_batches):
        b = read_batch(stdin, B, T)
        if b is None:
            raise SystemExit(f"learn: stdin ended after {i} of {a.eval_batches} held-out batches")
        held.append(b)

    def emit(obj: dict) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    nsa = model.config.attention == "nsa"  # NSA: each step keeps its selections, and its keys are counted
    t0 = time.perf_counter()
    step = 0
    reached = False
    while step < steps:
        b = read_batch(stdin, B, short_len if step < short_steps else T)
        if b is None:
            raise SystemExit(f"learn: stdin ended at step {step} of {steps}")
        x, y = b
        opt.zero_grad(set_to_none=True)
        model.set_dsa_step(step)  # DSA: the step's phase (dense warm-up or sparse)
        loss, index_loss = model.losses(x, y, keep=nsa)
        model.objective(loss, index_loss).backward()
        info = optimizer_step(model, opt, train, step)
        step += 1
        line = {"kind": "step", "step": step, "loss": float(loss), "lr": info["lr"], "grad_norm": info["grad_norm"]}
        if index_loss is not None:
            line["index_loss"] = float(index_loss.detach())
        if nsa:
            line["keys_counted"] = counted_keys(model)
        emit(line)
        if step % a.eval_every == 0 or step == steps:
            s = score(model, held)
            emit({"kind": "eval", "step": step, **s, "seconds": round(time.perf_counter() - t0, 2)})
            if s["accuracy"] >= a.target:
                reached = True
                break
    emit({"kind": "done", "step": step, "reached": reached, "seconds": round(time.perf_counter() - t0, 2)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
