"""torchrun ... python/tests/nan_rank_runner.py RANK CALL [train args...]: the trainer with the model's
forward returning NaN logits on rank RANK at its CALL-th call (1-based), for the distributed
non-finite test in test_trainer.py."""

from __future__ import annotations

import math
import os
import sys

from nsa_playground import NsaLlamaForCausalLM
from nsa_playground.export_dir import run_cli
from nsa_playground.train import main

if __name__ == "__main__":
    rank, at = int(sys.argv[1]), int(sys.argv[2])
    forward = NsaLlamaForCausalLM.forward
    calls = [0]

    def poisoned(self, tokens, *args, **kw):
        logits = forward(self, tokens, *args, **kw)
        calls[0] += 1
        return logits * math.nan if calls[0] == at and int(os.environ.get("RANK", "0")) == rank else logits

    NsaLlamaForCausalLM.forward = poisoned
    sys.exit(run_cli(main, sys.argv[3:]))
