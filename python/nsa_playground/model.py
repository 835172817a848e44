"""A Llama-style causal language model with dense, NSA, window or MoBA attention (docs/nsa-spec.md sections 3, 15).

Pre-norm blocks: x + Attn(RMSNorm(x)), then x + MLP(RMSNorm(x)) with a SwiGLU MLP
(down(silu(gate(x)) · up(x))); a final RMSNorm; logits through the tied token embedding. RoPE rotates
the pairs (e, e + dk/2) by pos · θ^(−2e/dk), pos counted from 0 in every sequence, on q and on every
branch's keys (the compressed branch's before compression); values never. Parameter names follow
Hugging Face Llama (model.layers.{i}.self_attn.q_proj, ...) with nn.Linear's [out, in] weights.
"""

from __future__ import annotations

import os

import torch
import torch.nn.functional as F
import torch.utils.checkpoint

from .config import ModelConfig
from .nsa import CompressionMlp, attend, attend_sdpa, moba_attention, nsa_attention, window_only


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x: torch.Tensor, theta: float) -> torch.Tensor:
    """x [B, T, heads, D]: pair (e, e + D/2) rotated by the angle t · θ^(−2e/D)."""
    T, D = x.shape[1], x.shape[-1]
    half = D // 2
    e = torch.arange(half, dtype=torch.float64, device=x.device)
    angle = torch.arange(T, dtype=torch.float64, device=x.device)[:, None] * theta ** (-2.0 * e / D)
    cos = torch.cos(angle).to(x.dtype)[None, :, None, :]
    sin = torch.sin(angle).to(x.dtype)[None, :, None, :]
    x0, x1 = x[..., :half], x[..., half:]
    return torch.cat([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1)


class ShortConv(torch.nn.Module):
    """Causal depthwise convolution over time (docs/nsa-spec.md 3.1): out[t, c] = Σ_j w[c, j] · x[t − (k − 1) + j, c],
    x before the sequence's start taken as 0; weight [C, 1, k] as torch's depthwise Conv1d (tap k − 1 = the current token)."""

    def __init__(self, channels: int, width: int):
        super().__init__()
        self.width = width
        self.weight = torch.nn.Parameter(torch.zeros(channels, 1, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, T, C] → [B, T, C]: one shifted multiply-add per tap (torch's CPU depthwise conv1d is
        several times slower at these sizes), in ascending tap order as the WGSL kernel sums."""
        T, K = x.shape[1], self.width
        padded = F.pad(x, (0, 0, K - 1, 0))
        w = self.weight[:, 0, :]  # [C, K]
        y = padded[:, 0:T] * w[:, 0]
        for j in range(1, K):
            y = y + padded[:, j : j + T] * w[:, j]
        return y


class Attention(torch.nn.Module):
    """Dense causal GQA attention, NSA with its three branches, gates and compression, or the window or MoBA
    mechanism (docs/nsa-spec.md section 15) on one K/V pair."""

    def __init__(self, c: ModelConfig):
        super().__init__()
        self.c = c
        C, H, G = c.hidden_size, c.num_attention_heads, c.num_key_value_heads
        lin = lambda i, o, bias=False: torch.nn.Linear(i, o, bias=bias)  # noqa: E731
        self.q_proj = lin(C, H * c.head_dim)
        self.o_proj = lin(H * c.v_head_dim, C)
        nsa = c.nsa if c.attention == "nsa" else None
        self.branches: list[str] = [] if nsa is None or nsa.sharedKV else ["cmp", "sel", "win"]
        if not self.branches:
            self.k_proj = lin(C, G * c.head_dim)
            self.v_proj = lin(C, G * c.v_head_dim)
        for b in self.branches:
            setattr(self, f"k_{b}_proj", lin(C, G * c.head_dim))
            setattr(self, f"v_{b}_proj", lin(C, G * c.v_head_dim))
        if c.short_conv > 0:
            for b in self.branches or [""]:
                setattr(self, f"k{'_' + b if b else ''}_conv1d", ShortConv(G * c.head_dim, c.short_conv))
        if nsa is not None:
            # Column 3i + c: head i, branch c (cmp, sel, win).
            self.branch_gate = lin(C, 3 * H, bias=True)
            if nsa.phi == "mlp":
                self.compress_k = CompressionMlp(nsa.l, c.head_dim, 2 * c.head_dim)
                self.compress_v = CompressionMlp(nsa.l, c.v_head_dim, 2 * c.v_head_dim)
        self.last: dict[str, torch.Tensor] | None = None

    def forward(self, x: torch.Tensor, keep: bool = False, selection: torch.Tensor | None = None) -> torch.Tensor:
        c = self.c
        B, T, _ = x.shape
        H, G = c.num_attention_heads, c.num_key_value_heads
        h = H // G
        rotate = (lambda t: rope(t, c.rope_theta)) if c.position_encoding == "rope" else (lambda t: t)
        q = rotate(self.q_proj(x).view(B, T, H, c.head_dim))

        def kv(name: str):
            k = getattr(self, f"k{name}_proj")(x)
            if c.short_conv > 0:
                k = getattr(self, f"k{name}_conv1d")(k)
            v = getattr(self, f"v{name}_proj")(x).view(B, T, G, c.v_head_dim)
            return rotate(k.view(B, T, G, c.head_dim)), v

        if c.attention == "dense":
            k, v = kv("")
            if getattr(self, "sdpa", False):  # set by the trainer's --sdpa: torch's fused attention (torch >= 2.0)
                o = attend_sdpa(q, k, v, h)
            else:
                causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
                o = attend(q, k, v, causal, h)
        elif c.attention == "window":
            k, v = kv("")
            assert c.window is not None
            o = window_only(q, k, v, c.window["w"])["o"]
        elif c.attention == "moba":
            k, v = kv("")
            assert c.moba is not None
            out = moba_attention(q, k, v, c.moba["blockSize"], c.moba["topK"], selection)
            self.last = {k: v.detach() for k, v in out.items()} if keep else None
            o = out["o"]
        else:
            nsa = c.nsa
            assert nsa is not None
            pairs = {b: kv(f"_{b}") for b in self.branches} if self.branches else dict.fromkeys(("cmp", "sel", "win"), kv(""))
            tensors = {f"{kind}_{b}": pairs[b][i] for b in ("cmp", "sel", "win") for i, kind in enumerate(("k", "v"))}
            gates = torch.sigmoid(self.branch_gate(x)).view(B, T, H, 3)
            fixed = nsa.gates.constants()
            if fixed is not None:
                # An ablation replaces the computed gates by constants: the gate weights get a zero
                # gradient (they stay in the graph, so AdamW still decays them as the WebGPU trainer
                # does, and DDP sees every parameter used).
                gates = gates * 0 + torch.tensor(fixed, dtype=x.dtype, device=x.device)
            out = nsa_attention(q, tensors, gates, nsa, getattr(self, "compress_k", None), getattr(self, "compress_v", None), selection)
            out["gates"] = gates
            self.last = {k: v.detach() for k, v in out.items()} if keep else None
            o = out["o"]
        return self.o_proj(o.reshape(B, T, H * c.v_head_dim))


class Mlp(torch.nn.Module):
    def __init__(self, c: ModelConfig):
        super().__init__()
        self.gate_proj = torch.nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.up_proj = torch.nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.down_proj = torch.nn.Linear(c.intermediate_size, c.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(torch.nn.Module):
    def __init__(self, c: ModelConfig):
        super().__init__()
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.self_attn = Attention(c)
        # intermediate_size 0: an attention-only layer (no MLP and no norm before it).
        self.has_mlp = c.intermediate_size > 0
        if self.has_mlp:
            self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
            self.mlp = Mlp(c)

    def forward(self, x: torch.Tensor, keep: bool = False, selection: torch.Tensor | None = None) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), keep, selection)
        return x + self.mlp(self.post_attention_layernorm(x)) if self.has_mlp else x


class Backbone(torch.nn.Module):
    def __init__(self, c: ModelConfig):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(c.vocab_size, c.hidden_size)
        self.layers = torch.nn.ModuleList(DecoderLayer(c) for _ in range(c.num_hidden_layers))
        self.norm = RMSNorm(c.hidden_size, c.rms_norm_eps)


class NsaLlamaForCausalLM(torch.nn.Module):
    """model.* holds the weights; the output projection is the token embedding (tied)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self.model = Backbone(config)

    def forward(self, tokens: torch.Tensor, keep: bool = False, selections: list[torch.Tensor] | None = None) -> torch.Tensor:
        """tokens int64 [B, T] → logits [B, T, V]. keep: each NSA layer keeps its selection, scores and
        gates in `self_attn.last`. selections: per layer, use these instead of computing them."""
        x = self.model.embed_tokens(tokens)
        for i, layer in enumerate(self.model.layers):
            sel = None if selections is None else selections[i]
            if getattr(self, "grad_checkpoint", False) and torch.is_grad_enabled() and x.requires_grad:
                # The trainer's --grad-checkpoint: each layer's activations are recomputed in the backward.
                x = torch.utils.checkpoint.checkpoint(layer, x, keep, sel, use_reentrant=True)
            else:
                x = layer(x, keep, sel)
        return F.linear(self.model.norm(x), self.model.embed_tokens.weight)

    def loss(self, tokens: torch.Tensor, targets: torch.Tensor, **kw) -> torch.Tensor:
        """Mean cross-entropy over the scored targets (a target of −1 is not scored)."""
        logits = self.forward(tokens, **kw)
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-1)

    def selections(self) -> list[dict[str, torch.Tensor] | None]:
        """What each layer kept in the last forward(keep=True) (None for dense layers)."""
        return [layer.self_attn.last for layer in self.model.layers]

    def init_weights(self, seed: int) -> None:
        """A fresh model (as the WebGPU trainer initialises: normal(initializer_range), norms 1,
        biases 0, projections into the residual stream scaled by 1/sqrt(2·layers))."""
        g = torch.Generator().manual_seed(seed)
        c = self.config
        residual = c.initializer_range / (2 * c.num_hidden_layers) ** 0.5
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("layernorm.weight") or name == "model.norm.weight":
                    p.fill_(1.0)
                elif name.endswith(".bias"):
                    p.zero_()
                elif name.endswith("_conv1d.weight"):
                    # The identity: the convolution starts by passing each key through unchanged.
                    p.zero_()
                    p[..., -1] = 1.0
                elif name.endswith(("o_proj.weight", "down_proj.weight")):
                    p.copy_(torch.randn(p.shape, generator=g) * residual)
                elif ".compress_" in name and name.endswith(("fc1.weight", "fc2.weight")):
                    p.copy_(torch.randn(p.shape, generator=g) / p.shape[1] ** 0.5)
                else:
                    p.copy_(torch.randn(p.shape, generator=g) * c.initializer_range)

    @classmethod
    def from_pretrained(cls, directory: str, dtype: torch.dtype = torch.float32, device: str = "cpu") -> NsaLlamaForCausalLM:
        """The model an exported directory holds (config.json + model.safetensors)."""
        from .export_dir import load_model

        return load_model(directory, dtype=dtype, device=device)

    def save_pretrained(self, directory: str, **kw) -> None:
        from .export_dir import save_directory

        os.makedirs(directory, exist_ok=True)
        save_directory(directory, self, **kw)
