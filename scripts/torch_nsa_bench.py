#!/usr/bin/env python3
"""CPU figures of the PyTorch package (python/nsa_playground): a training step of a small
recall-sized model, and the peak memory and time of one attention forward + backward at a long
sequence (NSA against dense).

    python3 scripts/torch_nsa_bench.py step [--steps 6] [--threads N] [--dense-sdpa]
    python3 scripts/torch_nsa_bench.py memory [--T 4096]

`step`: dim 64, 2 layers, 4 heads / 2 groups (dk = dv = 16), T = 256, batch 64, NSA l=8 d=4 lSel=8
nSel=4 w=16 (φ avg, forceInit, forceLocal 1), vocab 64; forward, cross-entropy, backward and one
AdamW step (the package's optimizer_step), in float32. Prints one JSON line per model variant:
the best and median step time over --steps timed steps after 2 warm-up steps.

`memory`: B=1, H=8, G=2, dk=dv=64, NSA l=32 d=16 lSel=64 nSel=16 w=512 at T (default 4096): each
attention (NSA; dense masked; dense through scaled_dot_product_attention where torch has it) runs
one forward and backward in a fresh subprocess, which reports its peak resident memory
(getrusage ru_maxrss) above what it held just before the forward, and the time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402
from nsa_playground.config import GateAblation, ModelConfig, NsaConfig  # noqa: E402


def small_config(attention: str, T: int = 256) -> ModelConfig:
    nsa = NsaConfig(l=8, d=4, lSel=8, nSel=4, w=16, phi="avg", forceInit=True, forceLocal=1, sharedKV=False, gates=GateAblation())
    return ModelConfig(
        vocab_size=64,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        v_head_dim=16,
        intermediate_size=128,
        max_position_embeddings=T,
        rope_theta=10000.0,
        rms_norm_eps=1e-5,
        attention=attention,
        initializer_range=0.02,
        nsa=nsa if attention == "nsa" else None,
    )


TRAIN = {
    "steps": 1000,
    "lrMax": 3e-3,
    "lrMin": 3e-4,
    "warmupSteps": 10,
    "warmupStartFraction": 0.1,
    "weightDecay": 0.1,
    "beta1": 0.9,
    "beta2": 0.95,
    "eps": 1e-8,
    "gradClip": 1.0,
}


def bench_step(a) -> None:
    from nsa_playground import NsaLlamaForCausalLM
    from nsa_playground.optim import make_adamw, optimizer_step

    variants = [("nsa", {}), ("dense", {})]
    if a.dense_sdpa:
        variants.append(("dense", {"sdpa": True}))
    for attention, extra in variants:
        cfg = small_config(attention, a.T)
        model = NsaLlamaForCausalLM(cfg)
        model.init_weights(1)
        for k, v in extra.items():
            for layer in model.model.layers:
                setattr(layer.self_attn, k, v)
        opt = make_adamw(model.named_parameters(), TRAIN)
        g = torch.Generator().manual_seed(0)
        times = []
        for s in range(a.steps + 2):
            tokens = torch.randint(0, cfg.vocab_size, (a.batch, a.T + 1), generator=g)
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss = model.loss(tokens[:, :-1], tokens[:, 1:])
            loss.backward()
            optimizer_step(model, opt, TRAIN, s)
            if s >= 2:
                times.append(time.perf_counter() - t0)
        times.sort()
        print(
            json.dumps(
                {
                    "bench": "step",
                    "torch": torch.__version__,
                    "threads": torch.get_num_threads(),
                    "attention": attention,
                    **extra,
                    "T": a.T,
                    "batch": a.batch,
                    "best_s": round(times[0], 4),
                    "median_s": round(times[len(times) // 2], 4),
                    "loss": round(float(loss.detach()), 4),
                }
            ),
            flush=True,
        )


def memory_child(kind: str, T: int) -> None:
    from nsa_playground.nsa import attend, attend_sdpa, nsa_attention

    B, H, G, dk = 1, 8, 2, 64
    c = NsaConfig(l=32, d=16, lSel=64, nSel=16, w=512, phi="avg", forceInit=True, forceLocal=2, sharedKV=True, gates=GateAblation())
    g = torch.Generator().manual_seed(0)
    q = torch.randn(B, T, H, dk, generator=g).requires_grad_()
    k = torch.randn(B, T, G, dk, generator=g).requires_grad_()
    v = torch.randn(B, T, G, dk, generator=g).requires_grad_()
    gates = torch.rand(B, T, H, 3, generator=g)
    r = torch.randn(B, T, H, dk, generator=g)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    if kind == "nsa":
        kv = {"k_cmp": k, "v_cmp": v, "k_sel": k, "v_sel": v, "k_win": k, "v_win": v}
        o = nsa_attention(q, kv, gates, c)["o"]
    elif kind == "dense":
        o = attend(q, k, v, torch.ones(T, T, dtype=torch.bool).tril(), H // G)
    else:
        o = attend_sdpa(q, k, v, H // G)
    (o * r).sum().backward()
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"kind": kind, "peak_mib": round((peak - before) / 1024, 1), "seconds": round(seconds, 3)}))


def bench_memory(a) -> None:
    kinds = ["nsa", "dense"] + (["dense-sdpa"] if hasattr(torch.nn.functional, "scaled_dot_product_attention") else [])
    rows = {}
    for kind in kinds:
        out = subprocess.run([sys.executable, __file__, "memory-child", kind, str(a.T)], capture_output=True, text=True, check=True)
        rows[kind] = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        json.dumps(
            {
                "bench": "memory",
                "torch": torch.__version__,
                "threads": torch.get_num_threads(),
                "T": a.T,
                **rows,
                "nsa_over_dense": round(rows["nsa"]["peak_mib"] / rows["dense"]["peak_mib"], 3),
            }
        )
    )


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "memory-child":
        memory_child(sys.argv[2], int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["step", "memory"])
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--T", type=int, default=None)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--dense-sdpa", action="store_true", help="also time dense attention through scaled_dot_product_attention")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    if a.what == "step":
        a.T = a.T or 256
        bench_step(a)
    else:
        a.T = a.T or 4096
        bench_memory(a)


if __name__ == "__main__":
    main()
