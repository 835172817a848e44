"""python tests/export/parity_server.py: the parity script (python -m nsa_playground.parity) for many
cases in one interpreter, so the parity tests (tests/export/parity.integration.test.ts) import torch
once per PyTorch version rather than once per case.

Reads one JSON request per line on stdin, {"argv": [parity args...], "plant": null or a PLANT of
tests/export/planted_parity.py}, runs nsa_playground.parity.main(argv) (with the planted change for
that call only, restored after it), and answers one JSON line on stdout: {"ok": true} or
{"error": "..."}. Anything the script prints goes to stderr, so stdout carries the answers only.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback

from nsa_playground import nsa
from nsa_playground.parity import main

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from planted_parity import PLANTS  # noqa: E402


def serve() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        plant = request.get("plant")
        replaced = None
        try:
            if plant:
                name, replacement = PLANTS[plant]
                replaced = (name, getattr(nsa, name))
                setattr(nsa, name, replacement)
            with contextlib.redirect_stdout(sys.stderr):
                code = main(request["argv"])
            answer = {"ok": True} if code == 0 else {"error": f"exit {code}"}
        except BaseException as e:  # argparse's SystemExit included: the answer says what failed
            answer = {"error": f"{type(e).__name__}: {e}\n{traceback.format_exc()}"}
        finally:
            if replaced is not None:
                setattr(nsa, *replaced)
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    serve()
