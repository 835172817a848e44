"""python tests/export/planted_parity.py PLANT [parity args...]: the parity script
(python -m nsa_playground.parity) with one planted semantic change, which the parity tests
(tests/export/parity.integration.test.ts) must catch. The package itself has no test switch: the
change is made here, by replacing one of its functions.

PLANT:
  ties-high   equal selection scores go to the higher block instead of the lower one
"""

from __future__ import annotations

import sys

import torch
from nsa_playground import nsa
from nsa_playground.export_dir import run_cli
from nsa_playground.parity import main


def rank_blocks_ties_high(key: torch.Tensor) -> torch.Tensor:
    """Block indices by descending score, equal scores in descending index order."""
    nb = key.shape[-1]
    return nb - 1 - torch.sort(key.flip(-1), dim=-1, descending=True, stable=True).indices


PLANTS = {"ties-high": ("rank_blocks", rank_blocks_ties_high)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in PLANTS:
        sys.exit(f"usage: planted_parity.py {{{'|'.join(PLANTS)}}} [parity args...]")
    name, replacement = PLANTS[sys.argv[1]]
    assert hasattr(nsa, name), f"nsa_playground.nsa.{name} to replace"
    setattr(nsa, name, replacement)
    sys.exit(run_cli(main, sys.argv[2:]))
