"""The trainer (python -m nsa_playground.train): a non-finite loss or gradient stops it before the
update with exit 3 and the last good checkpoint untouched; a checkpoint holding NaN is refused
(exit 2); flags out of range are refused (exit 2); under torchrun a SIGSTOPped rank ends the whole
job (exit non-zero), the survivor naming the stopped rank, the checkpoint intact."""

from __future__ import annotations

import glob
import hashlib
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
import torch
from conftest import PACKAGE_ROOT, base_config
from nsa_playground import NsaLlamaForCausalLM, load_model, load_optimizer
from nsa_playground.export_dir import MODEL_FILE, run_cli
from nsa_playground.safetensors_io import read_safetensors, write_safetensors
from nsa_playground.train import EXIT_NON_FINITE
from nsa_playground.train import main as train_main


def _digests(directory: str) -> dict[str, str]:
    return {f: hashlib.sha256(open(os.path.join(directory, f), "rb").read()).hexdigest() for f in sorted(os.listdir(directory))}


@pytest.mark.parametrize("what", ["loss", "gradient"])
def test_a_non_finite_step_stops_the_run_and_keeps_the_last_checkpoint(export_dir, corpus, tmp_path, monkeypatch, capsys, what):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    out = str(tmp_path / "out")
    forward = NsaLlamaForCausalLM.forward
    calls = {"n": 0, "snapshot": None}

    def poisoned(self, tokens, *args, **kw):
        logits = forward(self, tokens, *args, **kw)
        calls["n"] += 1
        if calls["n"] == 3:  # step 2 (batch 2, gradAccum 1): the checkpoint of step 2 was written just before
            calls["snapshot"] = _digests(out)
            if what == "loss":
                return logits * math.nan
            logits.register_hook(lambda g: g * math.inf)
        return logits

    monkeypatch.setattr(NsaLlamaForCausalLM, "forward", poisoned)
    code = run_cli(train_main, ["--from", export_dir, "--data", corpus, "--steps", "6", "--out", out, "--checkpoint-every", "1"])
    err = capsys.readouterr().err
    assert code == EXIT_NON_FINITE, err
    assert f"error: step 2: non-finite {what}" in err
    assert f"the last good checkpoint in {out} (step 2) is untouched" in err
    assert _digests(out) == calls["snapshot"], "the checkpoint of step 2 is byte for byte what it was"
    cfg = json.load(open(os.path.join(out, "config.json")))
    assert cfg["state"]["step"] == 2
    model = load_model(out)
    load_optimizer(out, model, cfg["train"])
    assert all(bool(torch.isfinite(p).all()) for p in model.parameters())


def test_a_checkpoint_holding_nan_is_not_trained_on(export_dir, corpus, tmp_path, capsys):
    d = str(tmp_path / "export")
    shutil.copytree(export_dir, d)
    path = os.path.join(d, MODEL_FILE)
    tensors, meta = read_safetensors(path)
    tensors["model.layers.0.self_attn.q_proj.weight"][2, 3] = math.nan
    write_safetensors(path, tensors, meta)
    code = run_cli(train_main, ["--from", d, "--data", corpus, "--steps", "2", "--out", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"error: {path}: model.layers.0.self_attn.q_proj.weight: non-finite value nan at index [2, 3] (1 of 1024 values are NaN or ±Inf)"
    )
    assert not os.path.exists(tmp_path / "out")


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--accum", "0"], "--accum: must be an integer in [1, 65536] (got 0)"),
        (["--batch", "1.5"], "--batch: must be an integer (got '1.5')"),
        (["--steps", "-1"], "--steps: must be an integer in [1, 9007199254740991] (got -1)"),
        (["--lr-max", "nan"], "--lr-max: must be a finite number > 0 (got nan)"),
        (["--step-timeout", "0"], "--step-timeout: must be a finite number > 0 (got 0)"),
        (["--pg-timeout", "inf"], "--pg-timeout: must be a finite number > 0 (got inf)"),
    ],
)
def test_flags_out_of_range_refused(export_dir, corpus, tmp_path, capsys, flags, message):
    argv = ["--from", export_dir, "--data", corpus, "--steps", "1", "--out", str(tmp_path / "o"), *flags]
    with pytest.raises(SystemExit) as e:
        run_cli(train_main, argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_data_file_checked(export_dir, tmp_path, capsys):
    short = tmp_path / "short.txt"
    short.write_text("abc")
    ids = tmp_path / "ids.i32"
    ids.write_bytes(b"\x00\x01\x00")
    for path, why in ((short, "3 tokens, fewer than seq_len + 1 = 33"), (ids, "3 bytes is not a whole number of int32 token ids")):
        assert run_cli(train_main, ["--from", export_dir, "--data", str(path), "--steps", "1", "--out", str(tmp_path / "o")]) == 2
        assert capsys.readouterr().err.strip() == f"error: {path}: --data: {why}"


STEP_TIMEOUT = 4.0


def _one_node() -> list[str]:
    """torchrun's flags for a one-node job on a free port: --standalone is port 29400 on torch 1.13,
    which another torchrun on the machine may hold."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return ["--nnodes", "1", "--rdzv_backend", "c10d", "--rdzv_endpoint", f"127.0.0.1:{port}"]


def _rank_error(stderr: str, rank: int) -> str | None:
    """Rank `rank`'s error message in a job's stderr. Two ranks that fail at once can land in one line
    of torchrun's merged output (one message, then the other's with no newline between), so the
    message ends at the next "error: rank N: " as well as at the end of its line."""
    m = re.search(rf"error: rank {rank}: .*?(?=error: rank \d+: |$)", stderr, flags=re.M)
    return m.group(0) if m else None


def _rank_pid(out: str, rank: int) -> int | None:
    for proc in glob.glob("/proc/[0-9]*"):
        try:
            cmdline = open(f"{proc}/cmdline", "rb").read().split(b"\0")
            environ = open(f"{proc}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"nsa_playground.train" in cmdline and out.encode() in cmdline and f"RANK={rank}".encode() in environ:
            return int(proc.rsplit("/", 1)[1])
    return None


@pytest.mark.parametrize("victim", [1, 0])
def test_a_stopped_rank_ends_the_job_naming_it(export_dir, corpus, tmp_path, victim):
    out = str(tmp_path / "out")
    cmd = [sys.executable, "-m", "torch.distributed.run", *_one_node(), "--nproc_per_node=2", "--monitor_interval", "1"]
    # torch 1.13's launcher on Python 3.11 needs --redirects 1 (see tests/export/torchrun.integration.test.ts).
    cmd += ["--redirects", "1", "--tee", "1", "--log_dir", str(tmp_path / "logs")]
    cmd += ["-m", "nsa_playground.train", "--from", export_dir, "--data", corpus, "--steps", "100000", "--out", out]
    cmd += ["--checkpoint-every", "2", "--step-timeout", str(STEP_TIMEOUT), "--pg-timeout", "60"]
    env = {**os.environ, "PYTHONPATH": PACKAGE_ROOT, "OMP_NUM_THREADS": "1"}
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    stopped = None
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and job.poll() is None:
            try:
                if json.load(open(os.path.join(out, "config.json")))["state"]["step"] >= 4:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.2)
        assert job.poll() is None, f"the job ended before a checkpoint of step 4:\n{job.communicate()[1]}"
        stopped = _rank_pid(out, victim)
        assert stopped is not None, f"rank {victim}'s process"
        os.kill(stopped, signal.SIGSTOP)
        t0 = time.monotonic()
        # A hang guard only (the job must end by itself); the time it took is reported, not asserted.
        _, err = job.communicate(timeout=120)
        seconds = time.monotonic() - t0
    finally:
        if job.poll() is None:
            job.kill()
            job.communicate()
        if stopped is not None:
            try:
                os.kill(stopped, signal.SIGKILL)
            except OSError:
                pass
    print(f"rank {victim} SIGSTOPped: the job ended {seconds:.1f} s later (--step-timeout {STEP_TIMEOUT:g}; exit {job.returncode})")
    assert job.returncode != 0
    survivor = 1 - victim
    line = _rank_error(err, survivor)
    assert line is not None, err
    assert f"(--step-timeout {STEP_TIMEOUT:g})" in line or "a collective failed" in line
    assert f"rank {victim} (pid {stopped} on " in line and "stopped or dead" in line, line
    assert "Traceback" not in err.split(f"error: rank {survivor}: ")[0]
    cfg = json.load(open(os.path.join(out, "config.json")))
    assert cfg["state"]["step"] >= 4 and cfg["state"]["step"] % 2 == 0
    model = load_model(out)
    _, step = load_optimizer(out, model, cfg["train"])
    assert step == cfg["state"]["step"]
    assert cfg["state"]["batches_drawn"] == step * 2 * base_config()["train"]["gradAccum"]


def test_a_non_finite_loss_on_one_rank_stops_every_rank(export_dir, corpus, tmp_path):
    out = str(tmp_path / "out")
    runner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_runner.py")
    cmd = [sys.executable, "-m", "torch.distributed.run", *_one_node(), "--nproc_per_node=2", "--monitor_interval", "1"]
    cmd += ["--redirects", "1", "--tee", "1", "--log_dir", str(tmp_path / "logs")]
    # Rank 1's third forward (step 2) returns NaN; checkpoints after every step.
    cmd += [runner, "nan", "1", "3", "--from", export_dir, "--data", corpus, "--steps", "6", "--out", out, "--checkpoint-every", "1"]
    env = {**os.environ, "PYTHONPATH": PACKAGE_ROOT, "OMP_NUM_THREADS": "1"}
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode != 0, r.stderr
    assert "error: step 2: non-finite loss (mean loss nan, gradient norm nan) on 1 of 2 ranks; stopped before the update: " in r.stderr
    assert f"the last good checkpoint in {out} (step 2) is untouched" in r.stderr
    assert "exitcode  : 3" in r.stderr, "both ranks end with exit 3"
    cfg = json.load(open(os.path.join(out, "config.json")))
    assert cfg["state"]["step"] == 2
    model = load_model(out)
    load_optimizer(out, model, cfg["train"])


def test_a_wedged_rank_is_named(export_dir, corpus, tmp_path):
    out = str(tmp_path / "out")
    runner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_runner.py")
    cmd = [sys.executable, "-m", "torch.distributed.run", *_one_node(), "--nproc_per_node=2", "--monitor_interval", "1"]
    cmd += ["--redirects", "1", "--tee", "1", "--log_dir", str(tmp_path / "logs")]
    # Rank 1's fifth forward (step 4) sleeps: alive (its heartbeat goes on) but wedged.
    cmd += [runner, "sleep", "1", "5", "--from", export_dir, "--data", corpus, "--steps", "100", "--out", out, "--checkpoint-every", "2"]
    cmd += ["--step-timeout", str(STEP_TIMEOUT), "--pg-timeout", "60"]
    env = {**os.environ, "PYTHONPATH": PACKAGE_ROOT, "OMP_NUM_THREADS": "1"}
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=180)
    print(f"rank 1 wedged: the job ended after {time.monotonic() - t0:.1f} s in all")
    assert r.returncode != 0
    line = _rank_error(r.stderr, 0)
    assert line is not None, r.stderr
    # Rank 0's watchdog fires, or rank 1's fires first and rank 0's collective then fails: either way rank 0 names rank 1.
    assert "step 4 (backward) has not finished" in line or "a collective failed" in line, line
    assert "rank 1 (pid " in line and "is alive but at step 4 (forward): wedged" in line, line
    own = _rank_error(r.stderr, 1)
    if own is not None:  # rank 1's own watchdog, when it fires before torchrun ends it
        assert "this rank (pid " in own and "is the one wedged" in own, own
    cfg = json.load(open(os.path.join(out, "config.json")))
    assert cfg["state"]["step"] == 4
    load_optimizer(out, load_model(out), cfg["train"])


def test_the_watchdog_stops_its_threads_and_drops_its_store_on_close():
    # A finished run's heartbeat thread, left inside a store call while the interpreter shut down,
    # once ended rank 0 with SIGABRT after its last line (torch 2.x): main() closes the watchdog first.
    import datetime

    import torch.distributed as dist
    from nsa_playground.train import Watchdog

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = dist.TCPStore("127.0.0.1", port, 1, True, datetime.timedelta(seconds=30))
    dist.init_process_group("gloo", store=server, rank=0, world_size=1)
    try:
        watchdog = Watchdog(0, 1, 30.0, 0.05, ("127.0.0.1", port))
        deadline = time.monotonic() + 10
        while json.loads(server.get("nsa-watchdog/0").decode())["beat"] < 3:
            assert time.monotonic() < deadline, "no heartbeat written in 10 s"
            time.sleep(0.02)
        assert [t.is_alive() for t in watchdog.threads] == [True, True]
        t0 = time.monotonic()
        watchdog.close()
        assert time.monotonic() - t0 < 1.0
        assert [t.is_alive() for t in watchdog.threads] == [False, False]
        assert watchdog.store is None
        beat = json.loads(server.get("nsa-watchdog/0").decode())["beat"]
        time.sleep(0.2)
        assert json.loads(server.get("nsa-watchdog/0").decode())["beat"] == beat  # no heartbeat after close
    finally:
        dist.destroy_process_group()
