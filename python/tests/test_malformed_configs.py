"""Every malformed config.json (malformed_configs.py) is refused by the trainer with exit 2 and one
line `error: <file>: <field>: <why>`, never a traceback, and at once (10^6 layers included)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from conftest import PACKAGE_ROOT
from malformed_configs import cases
from nsa_playground.export_dir import run_cli
from nsa_playground.train import main as train_main

CASES = cases()


def test_the_generator_makes_at_least_35_files():
    assert len(CASES) >= 35


def _refusal(directory: str, err: str, fields: tuple[str, ...]) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"one line expected, got:\n{err}"
    assert "Traceback" not in err
    config = os.path.join(directory, "config.json")
    expected = [f"error: {config}: {f}: " for f in fields]
    assert any(lines[0].startswith(e) for e in expected), f"expected one of {expected}, got {lines[0]!r}"


@pytest.mark.parametrize("name,data,fields", CASES, ids=[c[0] for c in CASES])
def test_malformed_config_refused(tmp_path, corpus, capsys, name, data, fields):
    (tmp_path / "config.json").write_bytes(data)
    t0 = time.perf_counter()
    code = run_cli(train_main, ["--from", str(tmp_path), "--data", corpus, "--steps", "1", "--out", str(tmp_path / "out")])
    seconds = time.perf_counter() - t0
    captured = capsys.readouterr()
    assert code == 2
    _refusal(str(tmp_path), captured.err, fields)
    assert not (tmp_path / "out").exists(), "nothing written"
    print(f"{name}: refused in {seconds * 1000:.1f} ms")


# The command itself (a process: exit status, stderr) for a few of them, 10^6 layers included.
@pytest.mark.parametrize("name", ["layers-million", "non-utf8", "norm-eps-nan", "grad-accum-zero", "json-array"])
def test_malformed_config_refused_by_the_command(tmp_path, corpus, name):
    data, fields = next((d, f) for n, d, f in CASES if n == name)
    (tmp_path / "config.json").write_bytes(data)
    r = subprocess.run(
        [sys.executable, "-m", "nsa_playground.train", "--from", str(tmp_path), "--data", corpus, "--steps", "1", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        # PYTHONWARNINGS: torch 2.x without numpy warns on import ("Failed to initialize NumPy"), not this package's output.
        env={**os.environ, "PYTHONPATH": PACKAGE_ROOT, "PYTHONWARNINGS": "ignore"},
        timeout=120,
    )
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    _refusal(str(tmp_path), r.stderr, fields)


@pytest.mark.parametrize(
    "where,fields",
    [("missing", ("(file)",)), ("directory", ("(file)",))],
)
def test_unreadable_config_refused(tmp_path, corpus, capsys, where, fields):
    if where == "directory":
        (tmp_path / "config.json").mkdir()
    code = run_cli(train_main, ["--from", str(tmp_path), "--data", corpus, "--steps", "1", "--out", str(tmp_path / "out")])
    assert code == 2
    _refusal(str(tmp_path), capsys.readouterr().err, fields)
