"""torchrun ... python/tests/fault_runner.py FAULT RANK CALL [train args...]: the trainer with a fault
planted in the model's forward on rank RANK at its CALL-th call (1-based), for test_trainer.py:

  nan     the forward returns NaN logits (a non-finite loss on one rank)
  sleep   the forward sleeps 120 s (a wedged rank: alive, its heartbeat going on, its step not)
"""

from __future__ import annotations

import math
import os
import sys
import time

from nsa_playground import NsaLlamaForCausalLM
from nsa_playground.export_dir import run_cli
from nsa_playground.train import main

if __name__ == "__main__":
    fault, rank, at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    assert fault in ("nan", "sleep"), f"unknown fault {fault!r}"
    forward = NsaLlamaForCausalLM.forward
    calls = [0]

    def planted(self, tokens, *args, **kw):
        calls[0] += 1
        here = calls[0] == at and int(os.environ.get("RANK", "0")) == rank
        if here and fault == "sleep":
            time.sleep(120)
        logits = forward(self, tokens, *args, **kw)
        return logits * math.nan if here and fault == "nan" else logits

    NsaLlamaForCausalLM.forward = planted
    sys.exit(run_cli(main, sys.argv[4:]))
