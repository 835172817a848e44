#!/usr/bin/env python3
"""PyTorch side of the offline GPU bundle: times the dense models that `npm run bench` timed, with
the same configuration, batch and sequence length, so tokens/s can be read side by side.

    python3 scripts/gpu/torch_bench.py --bench OUTDIR/bench.jsonl --out OUTDIR/torch.json [--steps 10]

Reads the `preset` lines of bench.jsonl (each carries its exact model config and batch). For every
dense one it trains the same Llama-style model (tied embedding, RMSNorm, GQA attention with RoPE,
SwiGLU MLP; AdamW with gradient clipping at 1.0) on random tokens in float32 — TF32 off, since our
kernels compute in strict float32 — with attention written out in eager ops ('eager') and with
torch.nn.functional.scaled_dot_product_attention ('sdpa'), and reports ms/step and tokens/s after
3 warm-up steps. Every line, dense and NSA, is also timed with this repository's own PyTorch model
(python/nsa_playground, the export target: plain PyTorch ops implementing docs/nsa-spec.md exactly,
written for parity, not speed) as mode 'nsa_playground'; it gets at most --slow-budget seconds.

Without CUDA it writes {"skipped": reason} and exits 0, unless --allow-cpu (used to test this
script on a machine without a GPU, at small sizes).
"""

import argparse
import json
import math
import os
import sys
import time

# The package's source (python/ in the repository and in the bundle), importable without pip.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

# Our model config's fields and their config.json names (src/train/export/config-json.ts).
HF_NAMES = {
    "vocabSize": "vocab_size",
    "dim": "hidden_size",
    "nLayers": "num_hidden_layers",
    "nHeads": "num_attention_heads",
    "nKvGroups": "num_key_value_heads",
    "dk": "head_dim",
    "dv": "v_head_dim",
    "ffnHidden": "intermediate_size",
    "seqLen": "max_position_embeddings",
    "ropeTheta": "rope_theta",
    "normEps": "rms_norm_eps",
    "attention": "attention",
    "initStd": "initializer_range",
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bench", required=True, help="bench.jsonl written by `npm run bench`")
    p.add_argument("--out", required=True, help="where to write the JSON results")
    p.add_argument("--steps", type=int, default=10, help="timed steps per model and mode (default 10)")
    p.add_argument("--allow-cpu", action="store_true", help="run on the CPU when CUDA is absent (tests only)")
    p.add_argument(
        "--slow-budget",
        type=float,
        default=120.0,
        help="seconds one step of the nsa_playground model may take before it is not timed (default 120)",
    )
    return p.parse_args()


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def preset_lines(path):
    lines = []
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            raw = raw.strip()
            if not raw.startswith("{"):
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{n}: not JSON ({e})") from e
            if obj.get("kind") == "preset":
                # tokens_per_s is null in scripts/gpu/preset-configs.ts's lines (no WebGPU figure to compare).
                for field in ("model", "batch_size", "grad_accum", "tokens_per_s"):
                    if field not in obj:
                        raise SystemExit(f"{path}:{n}: preset line lacks '{field}' (bench.jsonl from an older npm run bench?)")
                lines.append(obj)
    return lines


def nsa_playground_model(torch, cfg):
    """python/nsa_playground's model for this config, wrapped to (tokens, targets) → loss."""
    from nsa_playground.config import parse_model_config
    from nsa_playground.model import NsaLlamaForCausalLM

    hf = {HF_NAMES[k]: v for k, v in cfg.items() if k in HF_NAMES}
    if cfg["attention"] == "nsa":
        hf["nsa"] = cfg["nsa"]
    model = NsaLlamaForCausalLM(parse_model_config(hf, "bench.jsonl"))
    model.init_weights(1)

    class Loss(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, tokens, targets):
            return self.model.loss(tokens, targets)

    return Loss()


def build_model(torch, cfg, mode):
    if mode == "nsa_playground":
        return nsa_playground_model(torch, cfg)
    nn = torch.nn
    F = torch.nn.functional
    C, H, G, dk, dv = cfg["dim"], cfg["nHeads"], cfg["nKvGroups"], cfg["dk"], cfg["dv"]
    T, eps = cfg["seqLen"], cfg["normEps"]

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(C))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * self.weight

    inv = 1.0 / (cfg["ropeTheta"] ** (torch.arange(0, dk, 2, dtype=torch.float64) / dk))
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = ang.cos().float(), ang.sin().float()

    def rope(x):  # x [B, T, heads, dk], pairs (2i, 2i+1) rotated by position
        x1, x2 = x[..., 0::2], x[..., 1::2]
        c, s = cos[None, :, None, :].to(x.device), sin[None, :, None, :].to(x.device)
        return torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1).flatten(-2)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.wq = nn.Linear(C, H * dk, bias=False)
            self.wk = nn.Linear(C, G * dk, bias=False)
            self.wv = nn.Linear(C, G * dv, bias=False)
            self.wo = nn.Linear(H * dv, C, bias=False)

        def forward(self, x):
            B = x.shape[0]
            q = rope(self.wq(x).view(B, T, H, dk)).transpose(1, 2)
            k = rope(self.wk(x).view(B, T, G, dk)).transpose(1, 2)
            v = self.wv(x).view(B, T, G, dv).transpose(1, 2)
            k = k.repeat_interleave(H // G, dim=1)
            v = v.repeat_interleave(H // G, dim=1)
            if mode == "sdpa":
                o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                s = (q @ k.transpose(-1, -2)) / math.sqrt(dk)
                mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
                o = s.masked_fill(mask, float("-inf")).softmax(-1) @ v
            return self.wo(o.transpose(1, 2).reshape(B, T, H * dv))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn_norm, self.attn = RMSNorm(), Attention()
            self.mlp_norm = RMSNorm()
            self.w1 = nn.Linear(C, cfg["ffnHidden"], bias=False)
            self.w3 = nn.Linear(C, cfg["ffnHidden"], bias=False)
            self.w2 = nn.Linear(cfg["ffnHidden"], C, bias=False)

        def forward(self, x):
            x = x + self.attn(self.attn_norm(x))
            h = self.mlp_norm(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(cfg["vocabSize"], C)
            self.blocks = nn.ModuleList(Block() for _ in range(cfg["nLayers"]))
            self.final_norm = RMSNorm()
            for p in self.parameters():
                if p.dim() == 2:
                    nn.init.normal_(p, std=cfg["initStd"])

        def forward(self, tokens, targets):
            x = self.wte(tokens)
            for b in self.blocks:
                x = b(x)
            logits = self.final_norm(x) @ self.wte.weight.t()
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    return Model()


def time_model(torch, line, mode, steps, device, slow_budget=None):
    cfg = line["model"]
    model = build_model(torch, cfg, mode).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    B, T, V = line["batch_size"], cfg["seqLen"], cfg["vocabSize"]
    g = torch.Generator(device="cpu").manual_seed(1)
    batches = [torch.randint(0, V, (B, T + 1), generator=g).to(device) for _ in range(line["grad_accum"])]

    def step():
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for b in batches:
            loss = model(b[:, :-1], b[:, 1:]) / len(batches)
            loss.backward()
            total += loss.detach()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return total

    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    t_first = time.perf_counter()
    step()
    sync()
    first_s = time.perf_counter() - t_first
    if slow_budget is not None and first_s > slow_budget:
        return {"skipped": f"one step took {first_s:.0f} s (> --slow-budget {slow_budget:.0f} s)"}
    if slow_budget is not None:  # the slow model: fewer steps
        steps = max(1, min(steps, int(slow_budget / max(first_s, 1e-3))))
    for _ in range(2):
        step()
    sync()
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    sync()
    ms = (time.perf_counter() - t0) * 1000 / steps
    tokens = B * T * line["grad_accum"]
    return {"ms_per_step": ms, "tokens_per_s": tokens / (ms / 1000), "final_loss": float(loss), "timed_steps": steps}


def main():
    args = parse_args()
    try:
        import torch
    except ImportError as e:
        write(args.out, {"skipped": f"no torch in this python3 ({e})"})
        print(f"torch_bench: skipped, no torch ({e})", file=sys.stderr)
        return 0
    if torch.cuda.is_available():
        device = "cuda"
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    elif args.allow_cpu:
        device = "cpu"
    else:
        write(args.out, {"skipped": f"torch {torch.__version__} sees no CUDA device"})
        print("torch_bench: skipped, no CUDA", file=sys.stderr)
        return 0
    torch.manual_seed(1)
    env = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
        "cuda": torch.version.cuda,
        "float32_matmul": "strict float32 (TF32 off)",
    }
    print(f"torch_bench: {json.dumps(env)}", file=sys.stderr)
    results = []
    for line in preset_lines(args.bench):
        base = {
            "preset": line["preset"],
            "attention": line["attention"],
            "batch_size": line["batch_size"],
            "seq_len": line["model"]["seqLen"],
            "ours_tokens_per_s": line["tokens_per_s"],
        }
        modes = ("eager", "sdpa", "nsa_playground") if line["attention"] == "dense" else ("nsa_playground",)
        for mode in modes:
            if mode == "sdpa" and not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
                results.append({**base, "mode": mode, "skipped": f"torch {torch.__version__} has no scaled_dot_product_attention (2.0+)"})
                continue
            try:
                r = time_model(torch, line, mode, args.steps, device, args.slow_budget if mode == "nsa_playground" else None)
                if "tokens_per_s" in r and line["tokens_per_s"] is not None:
                    r["ours_over_torch"] = line["tokens_per_s"] / r["tokens_per_s"]
            except RuntimeError as e:  # out of memory and the like: say so, go on, exit 1 at the end
                r = {"error": str(e).splitlines()[0]}
            row = {**base, "mode": mode, **r}
            results.append(row)
            print(json.dumps(row), flush=True)
            # Written after every row: a run cut by its time limit keeps what it measured.
            write(args.out, {"environment": env, "results": results, "complete": False})
            if device == "cuda":
                torch.cuda.empty_cache()
    write(args.out, {"environment": env, "results": results, "complete": True})
    errors = [r for r in results if "error" in r]
    for r in errors:
        print(f"torch_bench: {r['preset']} {r['mode']} failed: {r['error']}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
