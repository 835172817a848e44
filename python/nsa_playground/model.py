"""A Llama-style causal language model with dense, NSA, window, MoBA or DSA attention (docs/nsa-spec.md sections 3,
15; docs/dsa-spec.md).

Pre-norm blocks: x + Attn(RMSNorm(x)), then x + MLP(RMSNorm(x)) with a SwiGLU MLP
(down(silu(gate(x)) · up(x))); a final RMSNorm; logits through the tied token embedding. RoPE rotates
the pairs (e, e + dk/2) by pos · θ^(−2e/dk), pos counted from 0 in every sequence, on q and on every
branch's keys (the compressed branch's before compression); values never. Parameter names follow
Hugging Face Llama (model.layers.{i}.self_attn.q_proj, ...) with nn.Linear's [out, in] weights.

DSA (docs/dsa-spec.md sections 5, 6, 11): each layer's lightning indexer (self_attn.indexer.wq, wk,
weights_proj) reads the layer's normed input, detached; the model runs in a phase (`dsa_phase`): the
dense warm-up (main attention over every s ≤ t, only the indexer learns) or sparse (main attention over
the indexer's top-k). Every forward leaves Σ over layers of the indexer's KL loss L_I in `index_loss()`;
its target is detached, so L_I reaches the indexers' parameters only, and the cross-entropy never
reaches them (the selection is discrete). `objective(ce, index_loss)` is what a training step's
backward takes in the phase.
"""

from __future__ import annotations

import contextlib
import os

import torch
import torch.nn.functional as F
import torch.utils.checkpoint

from .config import ModelConfig
from .dsa import dsa_attention, index_scores, indexer_kl, select_tokens, selection_mask
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


DSA_PHASES = ("warmup", "sparse")


def dsa_phase_at(step: int, dsa: dict) -> str:
    """The phase of optimizer step `step` (0-based): the first warmupSteps steps are the warm-up
    (src/definitions/dsa-params.ts dsaPhaseAt)."""
    return "warmup" if step < int(dsa["warmupSteps"]) else "sparse"


def is_indexer_param(name: str) -> bool:
    """Whether a parameter is a DSA indexer's (the only ones the warm-up updates)."""
    return ".self_attn.indexer." in name


class Indexer(torch.nn.Module):
    """DSA's lightning indexer (docs/dsa-spec.md section 6): qI = RoPE(x·WqI) [B,T,H_I,d_I],
    kI = RoPE(x·WkI) [B,T,d_I] (one key per token, shared by the heads), wI = x·WwI [B,T,H_I]."""

    def __init__(self, c: ModelConfig):
        super().__init__()
        d = c.dsa
        assert d is not None
        self.heads, self.dim = int(d["indexHeads"]), int(d["indexDim"])
        self.wq = torch.nn.Linear(c.hidden_size, self.heads * self.dim, bias=False)
        self.wk = torch.nn.Linear(c.hidden_size, self.dim, bias=False)
        self.weights_proj = torch.nn.Linear(c.hidden_size, self.heads, bias=False)

    def forward(self, x: torch.Tensor, rotate) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        B, T, _ = x.shape
        q = rotate(self.wq(x).view(B, T, self.heads, self.dim))
        k = rotate(self.wk(x).view(B, T, 1, self.dim))[:, :, 0]
        return q, k, self.weights_proj(x)


class Attention(torch.nn.Module):
    """Dense causal GQA attention, NSA with its three branches, gates and compression, the window or MoBA
    mechanism (docs/nsa-spec.md section 15) or DSA (docs/dsa-spec.md) on one K/V pair."""

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
        if c.attention == "dsa":
            self.indexer = Indexer(c)
        self.last: dict[str, torch.Tensor] | None = None
        # DSA: the phase the next forward runs in, and the last forward's indexer loss L_I.
        self.dsa_phase = "sparse"
        self.index_loss: torch.Tensor | None = None

    def dsa(self, x, q, k, v, rotate, keep: bool, selection: torch.Tensor | None) -> torch.Tensor:
        """One layer's DSA attention (docs/dsa-spec.md sections 2–5) in `self.dsa_phase`; sets
        self.index_loss to L_I = λ/(B·T)·Σ_t KL_t over U(t) ([0, t] in the warm-up, S(t) in the sparse phase)."""
        c = self.c
        d = c.dsa
        assert d is not None
        B, T = x.shape[:2]
        # The indexer, its selection and L_I in the residual stream's precision (the trainer's --bf16
        # autocasts the rest: L_I is a KL divergence of ~1e-5 early on, below bfloat16's resolution).
        # The indexer reads the layer input detached: L_I reaches no earlier parameter.
        with torch.autocast(x.device.type, enabled=False) if x.device.type in ("cpu", "cuda") else contextlib.nullcontext():
            q_index, k_index, w_index = self.indexer(x.detach(), rotate)
            scores = index_scores(q_index, k_index, w_index)
            sel = selection[:, :, 0].long() if selection is not None else select_tokens(scores, int(d["topK"]))
            if self.dsa_phase == "warmup":
                allowed = torch.ones(T, T, dtype=torch.bool, device=x.device).tril().expand(B, T, T)
            else:
                allowed = selection_mask(sel, T)
            self.index_loss, _ = indexer_kl(q.to(x.dtype), k.to(x.dtype), scores, allowed, float(d["lossWeight"]))
        o, _ = dsa_attention(q, k, v, allowed)
        if keep:
            G = c.num_key_value_heads
            self.last = {"selection": sel[:, :, None, :].expand(B, T, G, sel.shape[-1]).detach(), "scores": scores.detach()}
        else:
            self.last = None
        return o

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
        elif c.attention == "dsa":
            k, v = kv("")
            o = self.dsa(x, q, k, v, rotate, keep, selection)
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


def _layer_and_index_loss(layer: DecoderLayer, x: torch.Tensor, keep: bool, sel: torch.Tensor | None):
    out = layer(x, keep, sel)
    return out, layer.self_attn.index_loss


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
        self._index_losses: list[torch.Tensor] = []
        # DSA: a fresh model runs as its first optimizer step will (docs/dsa-spec.md section 11).
        if config.dsa is not None:
            self.set_dsa_steps_done(0)

    @property
    def dsa_phase(self) -> str | None:
        """DSA: the phase ('warmup' or 'sparse') every layer runs in; None for other attentions."""
        return self.model.layers[0].self_attn.dsa_phase if self.config.dsa is not None else None

    @dsa_phase.setter
    def dsa_phase(self, phase: str) -> None:
        if phase not in DSA_PHASES:
            raise ValueError(f"dsa_phase must be one of {DSA_PHASES} (got {phase!r})")
        for layer in self.model.layers:
            layer.self_attn.dsa_phase = phase

    def set_dsa_step(self, step: int) -> str | None:
        """DSA: run as optimizer step `step` (0-based) trains; returns the phase (None for other attentions)."""
        if self.config.dsa is None:
            return None
        self.dsa_phase = dsa_phase_at(step, self.config.dsa)
        return self.dsa_phase

    def set_dsa_steps_done(self, steps_done: int) -> str | None:
        """DSA: run as the model after `steps_done` optimizer steps (the phase of its last step; step 1's
        before any), as the WebGPU trainer's evaluation and logits do."""
        return self.set_dsa_step(max(1, steps_done) - 1)

    def forward(self, tokens: torch.Tensor, keep: bool = False, selections: list[torch.Tensor] | None = None) -> torch.Tensor:
        """tokens int64 [B, T] → logits [B, T, V]. keep: each NSA, MoBA or DSA layer keeps its selection
        (and scores, gates) in `self_attn.last`. selections: per layer, use these instead of computing them.
        DSA: index_loss() is then the forward's Σ over layers of L_I."""
        x = self.model.embed_tokens(tokens)
        self._index_losses = []
        for i, layer in enumerate(self.model.layers):
            sel = None if selections is None else selections[i]
            if getattr(self, "grad_checkpoint", False) and torch.is_grad_enabled() and x.requires_grad:
                # The trainer's --grad-checkpoint: each layer's activations are recomputed in the backward.
                if self.config.dsa is not None:
                    # L_I leaves the checkpointed layer as an output, so that its backward reaches the indexer.
                    x, index_loss = torch.utils.checkpoint.checkpoint(_layer_and_index_loss, layer, x, keep, sel, use_reentrant=True)
                    self._index_losses.append(index_loss)
                    continue
                x = torch.utils.checkpoint.checkpoint(layer, x, keep, sel, use_reentrant=True)
            else:
                x = layer(x, keep, sel)
            if self.config.dsa is not None:
                self._index_losses.append(layer.self_attn.index_loss)
        return F.linear(self.model.norm(x), self.model.embed_tokens.weight)

    def index_loss(self) -> torch.Tensor | None:
        """DSA: Σ over layers of the last forward's indexer loss L_I (a scalar reaching only the
        indexers' parameters); None for other attentions."""
        if self.config.dsa is None:
            return None
        total = self._index_losses[0]
        for t in self._index_losses[1:]:
            total = total + t
        return total

    def objective(self, ce: torch.Tensor, index_loss: torch.Tensor | None, every_param: bool = False) -> torch.Tensor:
        """What a training step's backward takes: the cross-entropy; DSA: in the warm-up L_I alone (the
        main model is frozen), in the sparse phase ce + L_I (disjoint parameters: each gets its own loss's
        gradient). every_param (DistributedDataParallel, which waits for every parameter's gradient):
        the warm-up adds 0·ce, so the frozen parameters get zeros (optimizer_step leaves them untouched)."""
        if index_loss is None:
            return ce
        if self.dsa_phase == "warmup":
            return index_loss + 0.0 * ce if every_param else index_loss
        return ce + index_loss

    def loss(self, tokens: torch.Tensor, targets: torch.Tensor, **kw) -> torch.Tensor:
        """Mean cross-entropy over the scored targets (a target of −1 is not scored)."""
        logits = self.forward(tokens, **kw)
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-1)

    def losses(self, tokens: torch.Tensor, targets: torch.Tensor, **kw) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(mean cross-entropy over the scored targets, DSA's Σ L_I or None)."""
        ce = self.loss(tokens, targets, **kw)
        return ce, self.index_loss()

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
