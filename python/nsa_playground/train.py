"""Continue training an exported model with torch.distributed, started by torchrun:

  torchrun --nproc_per_node=2 -m nsa_playground.train --from DIR --data corpus.txt --steps 1000 --out OUT

Every rank holds the whole model (DistributedDataParallel) and draws its own batches; gradients are
averaged across ranks.
The optimizer (AdamW with the exported moments), learning-rate schedule, gradient clipping, batch size
and accumulation are the directory's `train` settings (change them with --lr-max, --batch, --accum,
--total-steps). OUT gets checkpoints in the export format every --checkpoint-every steps and at the
end, so `npm run train -- --from-export OUT` brings the model back. Rank 0 prints one JSON line per
step; at the end every rank prints its parameters' SHA-256 (equal on every rank under DDP).

Data (--data): a text file, tokenized as bytes (config.json's tokenizer must be 'byte'), or a file of
little-endian int32 token ids ending in .i32. Backend: gloo on CPU, nccl with CUDA (--backend).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import sys
import time
from typing import Any

import torch
import torch.distributed as dist

from .export_dir import load_model, load_optimizer, read_config, save_directory, train_settings
from .optim import optimizer_step


def load_tokens(path: str, raw: dict[str, Any], vocab: int) -> torch.Tensor:
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".i32"):
        if len(data) % 4:
            raise SystemExit(f"--data {path}: {len(data)} bytes is not a whole number of int32 token ids")
        tokens = torch.frombuffer(bytearray(data), dtype=torch.int32).to(torch.int64)
    else:
        tokenizer = raw.get("tokenizer")
        if tokenizer != "byte":
            raise SystemExit(
                f"--data {path}: a text file needs config.json's tokenizer to be 'byte' (it is {tokenizer!r}); "
                "pass token ids as a .i32 file"
            )
        tokens = torch.frombuffer(bytearray(data), dtype=torch.uint8).to(torch.int64)
    if tokens.numel() == 0 or int(tokens.max()) >= vocab:
        raise SystemExit(f"--data {path}: token ids must lie in [0, vocab_size = {vocab}) and the file must not be empty")
    return tokens


def parameter_digest(model: torch.nn.Module) -> str:
    """SHA-256 over every parameter's name and float32 bytes (no numpy: torch only)."""
    h = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        c = p.detach().to("cpu", torch.float32).contiguous()
        h.update(name.encode())
        h.update(ctypes.string_at(c.data_ptr(), 4 * c.numel()) if c.numel() else b"")
    return h.hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nsa_playground.train", description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="src", required=True, help="an exported directory (npm run export)")
    ap.add_argument("--data", required=True, help="text file (byte tokenizer) or .i32 token ids")
    ap.add_argument("--steps", type=int, required=True, help="optimizer steps to run")
    ap.add_argument("--out", required=True, help="directory for checkpoints (the export format)")
    ap.add_argument("--total-steps", type=int, help="schedule length (train.steps), default: unchanged")
    ap.add_argument("--lr-max", type=float)
    ap.add_argument("--batch", type=int, help="sequences per micro-batch per rank")
    ap.add_argument("--accum", type=int, help="micro-batches per optimizer step")
    ap.add_argument("--checkpoint-every", type=int, default=0)
    ap.add_argument("--backend", choices=["gloo", "nccl"], help="default: nccl with CUDA, else gloo")
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    a = ap.parse_args(argv)
    if a.steps < 1:
        ap.error("--steps must be >= 1")

    cuda = torch.cuda.is_available()
    backend = a.backend or ("nccl" if cuda else "gloo")
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group(backend=backend)
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    local = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device(f"cuda:{local}") if cuda and backend == "nccl" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)

    raw, config = read_config(a.src)
    train = dict(train_settings(raw, a.src))
    for flag, key in (("total_steps", "steps"), ("lr_max", "lrMax"), ("batch", "batchSize"), ("accum", "gradAccum")):
        if getattr(a, flag) is not None:
            train[key] = getattr(a, flag)
    raw = {**raw, "train": train}
    model = load_model(a.src, dtype=getattr(torch, a.dtype), device=str(device))
    opt, step0 = load_optimizer(a.src, model, train)
    batches0 = int(raw.get("state", {}).get("batches_drawn", 0))
    tokens = load_tokens(a.data, raw, config.vocab_size)
    T = config.max_position_embeddings
    if tokens.numel() < T + 1:
        raise SystemExit(f"--data {a.data}: {tokens.numel()} tokens, fewer than seq_len + 1 = {T + 1}")

    net: torch.nn.Module = model
    if distributed:
        net = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local] if device.type == "cuda" else None)

    gen = torch.Generator().manual_seed(int(train["seed"]) * 1000003 + rank)
    B, accum = int(train["batchSize"]), int(train["gradAccum"])

    def batch():
        start = torch.randint(0, tokens.numel() - T, (B,), generator=gen)
        rows = torch.stack([tokens[s : s + T + 1] for s in start.tolist()])
        return rows[:, :-1].to(device), rows[:, 1:].to(device)

    def save(step: int) -> None:
        if rank == 0:
            save_directory(a.out, model, opt, step=step, batches_drawn=batches0 + (step - step0) * accum * world, base_config=raw)

    t0 = time.time()
    for i in range(a.steps):
        step = step0 + i
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for m in range(accum):
            x, y = batch()
            # DDP averages the gradients across ranks on the last micro-batch only.
            ctx = net.no_sync() if distributed and m < accum - 1 else _null()
            with ctx:
                logits = net(x)
                loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-1)
                (loss / accum).backward()
            total += float(loss) / accum
        stats = optimizer_step(model, opt, train, step)
        mean = torch.tensor([total], dtype=torch.float64, device=device)
        if distributed:
            dist.all_reduce(mean)
            mean /= world
        if rank == 0:
            print(
                json.dumps(
                    {
                        "step": step,
                        "loss": float(mean),
                        "lr": stats["lr"],
                        "grad_norm": stats["grad_norm"],
                        "elapsed_s": round(time.time() - t0, 3),
                    }
                ),
                flush=True,
            )
        if a.checkpoint_every > 0 and (i + 1) % a.checkpoint_every == 0 and i + 1 < a.steps:
            save(step + 1)
    save(step0 + a.steps)
    print(
        json.dumps(
            {"rank": rank, "world_size": world, "backend": backend if distributed else None, "param_sha256": parameter_digest(model)}
        ),
        flush=True,
    )
    if distributed:
        dist.barrier()
        dist.destroy_process_group()
    return 0


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    sys.exit(main())
