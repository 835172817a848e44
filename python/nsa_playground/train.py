"""Continue training an exported model with torch.distributed, started by torchrun:

  torchrun --nproc_per_node=2 -m nsa_playground.train --from DIR --data corpus.txt --steps 1000 --out OUT

Every rank holds the whole model (DistributedDataParallel) and draws its own batches; gradients are
averaged across ranks. Batch n of the job (counted over every rank from config.json's
state.batches_drawn) depends on the seed and n only: a run continued from its own checkpoint draws
the batches after those it trained on. The learning-rate schedule is the directory's train.steps
whatever --steps is (--total-steps changes it). --bf16 autocasts the forward to bfloat16,
--grad-checkpoint recomputes each decoder layer in the backward, --sdpa runs dense attention through
torch's scaled_dot_product_attention (torch >= 2.0).
A DSA model (attention 'dsa', docs/dsa-spec.md section 11) trains in the phase of each step: the first
dsa.warmupSteps steps of the run (counted from state.step 0) update the indexers only, by their KL loss;
later steps update everything, the cross-entropy through the selected tokens and the indexers by their
loss. Its step lines add "index_loss" (Σ over layers of L_I) and "dsa_phase".
The optimizer (AdamW with the exported moments), learning-rate schedule, gradient clipping, batch size
and accumulation are the directory's `train` settings (change them with --lr-max, --batch, --accum,
--total-steps). OUT gets checkpoints in the export format every --checkpoint-every steps and at the
end, so `npm run train -- --from-export OUT` brings the model back. Rank 0 prints one JSON line per
step; at the end every rank prints its parameters' SHA-256 (equal on every rank under DDP).

Data (--data): a text file, tokenized as bytes (config.json's tokenizer must be 'byte'), or a file of
little-endian int32 token ids ending in .i32. Backend: gloo on CPU, nccl with CUDA (--backend).

Exit status: 0 done; 2 an input refused (`error: <file>: <field>: <why>`, every config.json field
and tensor is checked, NaN/±Inf included); 3 a non-finite loss or gradient (nothing updated or
written after it: OUT keeps the last good checkpoint); 4 a rank stopped, wedged or failed (the
per-step watchdog, --step-timeout, or the process group's --pg-timeout; the message names the rank).
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import hashlib
import json
import math
import os
import signal
import socket
import sys
import threading
import time
from typing import Any

import torch
import torch.distributed as dist

from .config import MAX_SAFE_INTEGER
from .export_dir import (
    MAX_ACCUM,
    MAX_BATCH,
    InputError,
    check_train,
    load_model,
    load_optimizer,
    read_config,
    read_state,
    run_cli,
    save_directory,
    train_settings,
)
from .nsa import has_sdpa
from .optim import optimizer_step

EXIT_NON_FINITE = 3
EXIT_RANK = 4
# Token files are read whole: bounded so a wrong path (a disk image) is refused, not swapped in.
MAX_DATA_BYTES = 1 << 34


def load_tokens(path: str, raw: dict[str, Any], vocab: int) -> torch.Tensor:
    try:
        size = os.path.getsize(path)
        if size > MAX_DATA_BYTES:
            raise InputError(path, "--data", f"{size} bytes exceed the {MAX_DATA_BYTES}-byte bound (train.py MAX_DATA_BYTES)")
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(path, "--data", f"cannot be read ({e.strerror or e})") from None
    if path.endswith(".i32"):
        if len(data) % 4:
            raise InputError(path, "--data", f"{len(data)} bytes is not a whole number of int32 token ids")
        tokens = torch.frombuffer(bytearray(data), dtype=torch.int32).to(torch.int64) if data else torch.empty(0, dtype=torch.int64)
    else:
        tokenizer = raw.get("tokenizer")
        if tokenizer != "byte":
            raise InputError(
                path,
                "--data",
                f"a text file needs config.json's tokenizer to be 'byte' (it is {tokenizer!r}); pass token ids as a .i32 file",
            )
        tokens = torch.frombuffer(bytearray(data), dtype=torch.uint8).to(torch.int64) if data else torch.empty(0, dtype=torch.int64)
    if tokens.numel() == 0:
        raise InputError(path, "--data", "is empty")
    bad = ((tokens < 0) | (tokens >= vocab)).nonzero()
    if bad.numel():
        i = int(bad[0, 0])
        raise InputError(path, "--data", f"token {i} is {int(tokens[i])}, outside [0, vocab_size = {vocab})")
    return tokens


def parameter_digest(model: torch.nn.Module) -> str:
    """SHA-256 over every parameter's name and float32 bytes (no numpy: torch only)."""
    h = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        c = p.detach().to("cpu", torch.float32).contiguous()
        h.update(name.encode())
        h.update(ctypes.string_at(c.data_ptr(), 4 * c.numel()) if c.numel() else b"")
    return h.hexdigest()


# A step's phases in order: a rank behind another (an earlier step, or an earlier phase of the same
# step) is the one holding it up.
PHASES = {"start-up": 0, "forward": 1, "backward": 2, "loss all-reduce": 3, "checkpoint": 4, "final barrier": 5}


class Watchdog:
    """Ends the whole job when this rank's step (or any phase that waits on other ranks) has not
    finished within `timeout` seconds: a stopped (SIGSTOP), dead or wedged rank otherwise blocks
    every other rank's collectives forever.

    Every rank writes a heartbeat (a counter, its step and phase, host and pid) into the job's store
    every `interval` seconds from a thread of its own, and reads the others'. When it fires, the
    message names the ranks whose heartbeat stopped (stopped or dead) or that are behind (wedged);
    a stopped rank on this host is sent SIGKILL so that torchrun ends the job at once.
    Bound: this rank ends within timeout + min(1, interval / 2) seconds of its last progress (plus
    torchrun's monitor interval to end the job).
    """

    def __init__(self, rank: int, world: int, timeout: float, interval: float, store_address: tuple[str, int] | None):
        self.rank, self.world, self.timeout, self.interval = rank, world, timeout, interval
        self.step, self.phase = -1, "start-up"
        self.marked = time.monotonic()
        self.beat = 0
        self.seen: dict[int, tuple[str, float]] = {}  # rank -> (last heartbeat text, monotonic time it changed)
        self.peers: dict[int, dict[str, Any]] = {}
        self.store = None
        self.store_address = store_address
        self.store_error: str | None = None
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        if store_address is not None:
            self.store = dist.TCPStore(store_address[0], store_address[1], None, False, datetime.timedelta(seconds=max(1.0, 2 * interval)))
        self._publish()
        # Every rank's first heartbeat is in the store before any rank reads them (a read of a key
        # not yet written would block).
        dist.barrier()
        self._poll()  # every rank's host and pid known from the start
        # Two threads: the heartbeats (store reads and writes, which block while the store's host is
        # stopped) and the deadline, which fires on time whatever the store does.
        self.threads = [
            threading.Thread(target=self._guarded, args=(self._heartbeats,), name="nsa-heartbeat", daemon=True),
            threading.Thread(target=self._guarded, args=(self._deadline,), name="nsa-watchdog", daemon=True),
        ]
        for t in self.threads:
            t.start()

    def close(self) -> None:
        """Stops both threads and drops the store client, before the process exits. A heartbeat
        still inside a store call while the interpreter shuts down can end a finished run with
        SIGABRT ("terminate called without an active exception": seen on torch 2.x, rank 0, after
        its last line). A thread blocked on a stopped store is left after 2 · interval + 1 s."""
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=2 * self.interval + 1)
        self.store = None

    def mark(self, step: int, phase: str, restart: bool = True) -> None:
        """This rank is at `step`, `phase`; restart: the deadline counts from now (a new step)."""
        with self.lock:
            self.step, self.phase = step, phase
            if restart:
                self.marked = time.monotonic()

    def _publish(self) -> None:
        store = self.store  # close() may drop it meanwhile
        if store is None:
            return
        self.beat += 1
        text = json.dumps({"beat": self.beat, "step": self.step, "phase": self.phase, "host": socket.gethostname(), "pid": os.getpid()})
        try:
            store.set(f"nsa-watchdog/{self.rank}", text)
        except RuntimeError as e:
            self.store_error = str(e).splitlines()[0][:200]

    def _poll(self) -> None:
        store = self.store  # close() may drop it meanwhile
        if store is None:
            return
        now = time.monotonic()
        for r in range(self.world):
            if r == self.rank:
                continue
            try:
                text = store.get(f"nsa-watchdog/{r}").decode()
            except RuntimeError as e:
                self.store_error = str(e).splitlines()[0][:200]
                return
            if self.seen.get(r, ("", 0.0))[0] != text:
                self.peers[r] = json.loads(text)
                self.seen[r] = (text, now)

    def diagnosis(self) -> str:
        """Which ranks hold the job up, from the heartbeats: stopped/dead ones first, then those behind."""
        now = time.monotonic()
        seen, peers = dict(self.seen), dict(self.peers)
        stale, behind, ahead = [], [], 0
        for r in range(self.world):
            if r == self.rank:
                continue
            if r not in seen or r not in peers:
                stale.append(f"rank {r}: no heartbeat ever seen (never started, stopped or dead)")
                continue
            age = now - seen[r][1]
            p = peers[r]
            if age > 3 * self.interval:
                stale.append(
                    f"rank {r} (pid {p['pid']} on {p['host']}): no heartbeat for {age:.1f} s, last at step {p['step']} "
                    f"({p['phase']}): stopped or dead"
                )
            elif (p["step"], PHASES.get(p["phase"], -1)) < (self.step, PHASES.get(self.phase, -1)):
                behind.append(f"rank {r} (pid {p['pid']} on {p['host']}) is alive but at step {p['step']} ({p['phase']}): wedged")
            else:
                ahead += 1
        if self.store_error and not stale:
            host, port = self.store_address or ("?", 0)
            stale.append(
                f"the job's store at {host}:{port} does not answer ({self.store_error}): the rank or agent hosting it is stopped or dead"
            )
        found = stale + behind
        if found:
            return "; ".join(found)
        if ahead == self.world - 1:
            return f"every other rank is alive and ahead: this rank (pid {os.getpid()} on {socket.gethostname()}) is the one wedged"
        return "every other rank's heartbeat is live and at this step (a collective is wedged)"

    def kill_stopped_local_peers(self) -> list[str]:
        killed = []
        now = time.monotonic()
        peers = dict(self.peers)
        for r, (_, changed) in dict(self.seen).items():
            p = peers[r]
            if now - changed > 3 * self.interval and p["host"] == socket.gethostname():
                try:
                    os.kill(int(p["pid"]), signal.SIGKILL)
                    killed.append(f"sent SIGKILL to rank {r} (pid {p['pid']})")
                except OSError:
                    pass
        return killed

    def fail(self, why: str) -> None:
        """Ends this rank (exit 4) with a message naming the ranks at fault (from the heartbeats seen so far)."""
        msg = f"error: rank {self.rank}: {why}; {self.diagnosis()}"
        killed = self.kill_stopped_local_peers()
        if killed:
            msg += "; " + ", ".join(killed)
        print(msg + "; the checkpoints already written are intact", file=sys.stderr, flush=True)
        os._exit(EXIT_RANK)

    def _guarded(self, loop) -> None:
        try:
            loop()
        except Exception as e:  # a watchdog that fails must not leave the job unwatched
            print(f"error: rank {self.rank}: the watchdog failed ({type(e).__name__}: {e}); ending this rank", file=sys.stderr, flush=True)
            os._exit(EXIT_RANK)

    def _heartbeats(self) -> None:
        while not self.stopping.wait(self.interval):
            self._publish()
            self._poll()

    def _deadline(self) -> None:
        while not self.stopping.wait(min(1.0, self.interval / 2)):
            with self.lock:
                idle, step, phase = time.monotonic() - self.marked, self.step, self.phase
            if idle > self.timeout and phase != "checkpoint":
                self.fail(f"step {step} ({phase}) has not finished in {idle:.1f} s (--step-timeout {self.timeout:g})")


def _positive(text: str) -> float:
    v = float(text)
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0 (got {text})")
    return v


def _int_in(lo: int, hi: int):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer (got {text!r})") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be an integer in [{lo}, {hi}] (got {v})")
        return v

    return parse


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nsa_playground.train", description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="src", required=True, help="an exported directory (npm run export)")
    ap.add_argument("--data", required=True, help="text file (byte tokenizer) or .i32 token ids")
    ap.add_argument("--steps", type=_int_in(1, MAX_SAFE_INTEGER), required=True, help="optimizer steps to run")
    ap.add_argument("--out", required=True, help="directory for checkpoints (the export format)")
    ap.add_argument("--total-steps", type=_int_in(1, MAX_SAFE_INTEGER), help="schedule length (train.steps), default: unchanged")
    ap.add_argument("--lr-max", type=_positive)
    ap.add_argument("--batch", type=_int_in(1, MAX_BATCH), help="sequences per micro-batch per rank")
    ap.add_argument("--accum", type=_int_in(1, MAX_ACCUM), help="micro-batches per optimizer step")
    ap.add_argument("--checkpoint-every", type=_int_in(0, MAX_SAFE_INTEGER), default=0)
    ap.add_argument("--backend", choices=["gloo", "nccl"], help="default: nccl with CUDA, else gloo")
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--bf16", action="store_true", help="autocast the forward to bfloat16 (CPU and CUDA; weights and AdamW stay float32)")
    ap.add_argument("--grad-checkpoint", action="store_true", help="recompute each decoder layer's activations in the backward")
    ap.add_argument("--sdpa", action="store_true", help="dense attention through torch's scaled_dot_product_attention (torch >= 2.0)")
    ap.add_argument(
        "--step-timeout",
        type=_positive,
        default=600.0,
        help="seconds one step (or the final barrier) may take before the watchdog ends the job, naming the rank that holds it up "
        "(default 600)",
    )
    ap.add_argument(
        "--pg-timeout",
        type=_positive,
        default=1800.0,
        help="the process group's timeout (init_process_group(timeout=...)): a collective waiting longer fails (default 1800)",
    )
    a = ap.parse_args(argv)

    cuda = torch.cuda.is_available()
    backend = a.backend or ("nccl" if cuda else "gloo")
    distributed = "WORLD_SIZE" in os.environ

    # Every input is checked before the process group forms: a refused file ends every rank alike.
    raw, config = read_config(a.src)
    train = dict(train_settings(raw, a.src))
    for flag, key in (("total_steps", "steps"), ("lr_max", "lrMax"), ("batch", "batchSize"), ("accum", "gradAccum")):
        if getattr(a, flag) is not None:
            train[key] = getattr(a, flag)
    check_train(train, "command line", "train (with the flags)")
    state = read_state(a.src, raw)
    batches0 = state["batches_drawn"]
    # A sequence-length warm-up still under way (its steps train shorter sequences) is not run here.
    if train.get("shortSeqLen") and state["step"] < train.get("shortSeqSteps", 0):
        raise InputError(
            os.path.join(a.src, "config.json"),
            "train.shortSeqSteps",
            f"the run is at step {state['step']}, inside its sequence-length warm-up ({train['shortSeqSteps']} steps at "
            f"{train['shortSeqLen']} tokens), which this trainer does not run: finish the warm-up with npm run train, "
            "or remove train.shortSeqSteps and train.shortSeqLen",
        )
    tokens = load_tokens(a.data, raw, config.vocab_size)
    T = config.max_position_embeddings
    if tokens.numel() < T + 1:
        raise InputError(a.data, "--data", f"{tokens.numel()} tokens, fewer than seq_len + 1 = {T + 1}")

    watchdog = None
    if distributed:
        dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=a.pg_timeout))
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if distributed:
        address = (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])) if "MASTER_ADDR" in os.environ else None
        watchdog = Watchdog(rank, world, a.step_timeout, min(5.0, a.step_timeout / 5), address)
    device = torch.device(f"cuda:{local}") if cuda and backend == "nccl" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)

    if a.bf16 and a.dtype != "float32":
        raise InputError("command line", "--bf16", f"autocasts a float32 model; drop --dtype {a.dtype}")
    if a.sdpa and not has_sdpa():
        raise InputError("command line", "--sdpa", f"needs torch >= 2.0 (scaled_dot_product_attention); this torch is {torch.__version__}")
    raw = {**raw, "train": train}
    model = load_model(a.src, dtype=getattr(torch, a.dtype), device=str(device))
    model.grad_checkpoint = a.grad_checkpoint
    for layer in model.model.layers:
        layer.self_attn.sdpa = a.sdpa
    opt, step0 = load_optimizer(a.src, model, train)

    def mark(step: int, phase: str, restart: bool = True) -> None:
        if watchdog is not None:
            watchdog.mark(step, phase, restart)

    try:
        return _train(a, model, opt, step0, batches0, raw, train, tokens, T, device, rank, world, distributed, backend, mark)
    except RuntimeError as e:
        if watchdog is None:
            raise
        # A collective that failed or passed --pg-timeout (gloo: "Timed out waiting ... for recv"; a peer gone: "Connection closed").
        watchdog.fail(f"a collective failed ({str(e).strip().splitlines()[-1][:200]})")
        return EXIT_RANK
    finally:
        if watchdog is not None:
            watchdog.close()


def _train(a, model, opt, step0, batches0, raw, train, tokens, T, device, rank, world, distributed, backend, mark) -> int:
    net: torch.nn.Module = model
    if distributed:
        net = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)

    B, accum = int(train["batchSize"]), int(train["gradAccum"])

    def batch(n: int):
        """The job's n-th batch (counted over every rank, from config.json's state.batches_drawn on):
        its windows depend on the seed and n only, so a run continued from its checkpoint draws the
        batches after the ones already trained on, never the same ones again."""
        digest = hashlib.sha256(f"nsa-playground batch {int(train['seed'])} {n}".encode()).digest()
        gen = torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") >> 1)
        start = torch.randint(0, tokens.numel() - T, (B,), generator=gen)
        rows = torch.stack([tokens[s : s + T + 1] for s in start.tolist()])
        return rows[:, :-1].to(device), rows[:, 1:].to(device)

    saved = None

    def save(step: int) -> None:
        nonlocal saved
        mark(step, "checkpoint")
        if rank == 0:
            save_directory(
                a.out, model, opt, step=step, batches_drawn=batches0 + (step - step0) * accum * world, base_config=raw, source_dir=a.src
            )
        saved = step

    t0 = time.time()
    for i in range(a.steps):
        step = step0 + i
        mark(step, "forward")
        opt.zero_grad(set_to_none=True)
        # DSA (docs/dsa-spec.md section 11): the step's phase; the warm-up's backward is L_I's alone.
        model.set_dsa_step(step)
        total = 0.0
        total_index = 0.0
        for m in range(accum):
            x, y = batch(batches0 + ((step - step0) * accum + m) * world + rank)
            # DDP averages the gradients across ranks on the last micro-batch only.
            ctx = net.no_sync() if distributed and m < accum - 1 else _null()
            with ctx:
                mark(step, "forward", restart=False)
                with torch.autocast(device.type, dtype=torch.bfloat16, enabled=a.bf16):
                    logits = net(x)
                loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), y.flatten(), ignore_index=-1)
                index_loss = model.index_loss()
                mark(step, "backward", restart=False)
                (model.objective(loss, index_loss, every_param=distributed) / accum).backward()
            total += float(loss.detach()) / accum
            if index_loss is not None:
                total_index += float(index_loss.detach()) / accum
        # Checked before the update, on every rank alike: the loss, and the gradients (averaged across ranks).
        grad_sq = sum(float((p.grad.detach().double() ** 2).sum()) for p in model.parameters() if p.grad is not None)
        mark(step, "loss all-reduce", restart=False)
        finite = math.isfinite(total) and math.isfinite(total_index)
        mean = torch.tensor([total, 0.0 if finite else 1.0, 0.0 if math.isfinite(grad_sq) else 1.0, total_index], dtype=torch.float64)
        mean = mean.to(device)
        if distributed:
            dist.all_reduce(mean)
        loss_mean, bad_loss, bad_grad = float(mean[0]) / world, int(mean[1]), int(mean[2])
        index_mean = float(mean[3]) / world
        if bad_loss or bad_grad or not math.isfinite(loss_mean):
            what = "loss" if bad_loss or not math.isfinite(loss_mean) else "gradient"
            where = f"rank {rank}" if not distributed else f"{bad_loss or bad_grad} of {world} ranks"
            kept = (
                f"the last good checkpoint in {a.out} (step {saved}) is untouched"
                if saved is not None
                else f"no checkpoint was written; {a.src} is untouched"
            )
            if rank == 0:
                print(
                    f"error: step {step}: non-finite {what} (mean loss {loss_mean}, gradient norm {math.sqrt(grad_sq)}) on {where}; "
                    f"stopped before the update: {kept}",
                    file=sys.stderr,
                    flush=True,
                )
            if distributed:
                dist.destroy_process_group()
            return EXIT_NON_FINITE
        stats = optimizer_step(model, opt, train, step)
        if rank == 0:
            line = {"step": step, "loss": loss_mean, "lr": stats["lr"], "grad_norm": stats["grad_norm"]}
            if model.config.dsa is not None:
                line.update({"index_loss": index_mean, "dsa_phase": model.dsa_phase})
            line["elapsed_s"] = round(time.time() - t0, 3)
            print(json.dumps(line), flush=True)
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
        mark(step0 + a.steps, "final barrier")
        dist.barrier()
        dist.destroy_process_group()
    return 0


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    sys.exit(run_cli(main))
