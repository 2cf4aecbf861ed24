#!/usr/bin/python3
"""Generates the decoder-based embedder fixtures in tests/golden/families/ and
tests/golden/heads/ (see README.md).

Run with Debian's interpreter, which sees python3-torch (1.13) and numpy:

    /usr/bin/python3 tests/golden/make_decoders.py [name ...]
    /usr/bin/python3 tests/golden/make_decoders.py --check-onnx  # ONNX export, opset 14
    /usr/bin/python3 tests/golden/make_decoders.py --check-real  # hub-shape models

Two decoder families used as embedders, each a small model built from torch.nn
modules whose tree mirrors transformers' classes, so that state_dict() gives
the hub's tensor names:

  qwen3        Qwen3-Embedding (transformers' modeling_qwen3.py, Qwen3Model;
               saved without a prefix): embed_tokens; pre-RMSNorm layers
               (w * x * rsqrt(mean(x^2) + eps)) with q/k/v/o_proj without
               bias, q_norm / k_norm over head_dim per head before rotary
               (rotate_half, rope_theta), grouped-query attention (query head
               h reads kv head h // (heads / kv_heads), repeat_kv), CAUSAL,
               scaling head_dim^-0.5, head_dim from the config (not hidden /
               heads); SwiGLU down_proj(silu(gate_proj(x)) * up_proj(x));
               final `norm`. sentence-transformers: last-token pooling,
               Normalize.
  gemma3_text  EmbeddingGemma (modeling_gemma3.py, Gemma3TextModel with
               use_bidirectional_attention): embed_tokens * sqrt(hidden);
               Gemma RMSNorm x * rsqrt(mean(x^2) + eps) * (1 + w); per layer
               input_layernorm, attention (q_norm / k_norm, GQA, scaling
               query_pre_attn_scalar^-0.5, BIDIRECTIONAL), post_attention_
               layernorm on the attention output before the residual add,
               pre_feedforward_layernorm, GeGLU down(gelu_tanh(gate) * up),
               post_feedforward_layernorm before the residual add; final
               `norm`. Layers per `layer_types`: "sliding_attention" layers
               see keys with |i - j| <= sliding_window // 2 and rotate with
               rope_local_base_freq, "full_attention" layers see every key and
               rotate with rope_theta. sentence-transformers: mean pooling,
               Dense H -> 4H, Dense 4H -> H (no bias, Identity), Normalize.

And Qwen3-Reranker (Qwen3ForCausalLM: the qwen3 model under "model." plus
lm_head [vocab, hidden], tied to embed_tokens or not) in heads/: the logits
of "yes" and "no" at the last position and score = softmax([no, yes])[1].

The models are usable outside the fixtures: build_model(spec) builds either
family at any size (real_spec("qwen3" | "gemma3_text") gives
Qwen3-Embedding-0.6B and EmbeddingGemma-300m shapes), forward(input_ids,
attention_mask) returns the last hidden states (after the final norm) and
exports with torch.onnx.export (export_onnx, opset 14), and
write_model_dir(spec, path, model) writes a hub-style directory (config.json,
model.safetensors, the sentence-transformers files, a tokenizer.json for the
rerankers). reference.json is computed in float64 with all inputs
right-padded into one batch and an attention mask.

Self-checks (make_families.self_check), each of which fails the run:
  (a) padded batch == each input alone (float64, < 1e-10); for the causal
      models also a prefix of an input == the input's first positions;
  (b) each distinguishing rule, broken one at a time (causal off / on, GQA
      mapping h % kv, q/k norm off, rotary off or with the wrong base, w for
      (1 + w) and back, no embedding scale, no post-sublayer norms, window
      ignored / off by one / not halved, local theta = global theta,
      query_pre_attn_scalar -> head_dim, GLU halves swapped, the erf GELU for
      the tanh one ...), moves some output by more than 10x the parity test's
      1e-4 (5x for the GELU form, make_families.MUTATION_MARGIN's rule);
  (c) float32 torch with the same weights stays 10x inside that tolerance;
  (d) the written directory, read back and run in numpy after transformers'
      code (np_forward), equals the torch reference (< 1e-9).
"""

import json
import math
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILIES = os.path.join(HERE, "families")
HEADS = os.path.join(HERE, "heads")
sys.path.insert(0, HERE)
import make_families as fam  # noqa: E402  (self_check, padded_batch, round_to_dtype, gains)
import make_long_context as lc  # noqa: E402  (LongModel: rotary tables and rotation, GLU)
# One safetensors writer, and make_golden's strict reader for check (d).
from make_golden import check, read_checkpoint, write_safetensors  # noqa: E402
from make_pipelines import st_pool  # noqa: E402  (sentence-transformers Pooling, padded path)

GENERATOR = "tests/golden/make_decoders.py"
QWEN3_LENGTHS = [1, 5, 17, 33, 64, 100, 130]
# EmbeddingGemma's window in the fixture is |i - j| <= 8: 9 tokens see every
# key, 10 do not; 40 tokens cross it several times.
GEMMA_LENGTHS = [1, 5, 9, 10, 17, 33, 40]
RERANKER_LENGTHS = [1, 2, 7, 19, 38, 60]
PREFIX_LENGTHS = [1, 2, 31, 77, 129]   # causality: prefixes of the longest input

# Initialisation: RMSNorm weights around their identity (Qwen3: 1 + 0.1 N;
# Gemma, whose norm multiplies by 1 + w: 0.1 N), so that a norm applied the
# wrong way is seen; make_long_context's linear gains (std gain / sqrt(fan_in):
# 1.5 for q/k, 1 for v/o, the GLU's activated half 2.5, its linear half 1, its
# output 1.5). Embeddings: N(0, 0.5) as the other fixtures; Gemma's are scaled
# by sqrt(hidden) = 8 in the forward, so theirs are N(0, 0.1) (0.8 scaled):
# with N(0, 0.5) the residual stream drowns the sublayers' normed outputs and
# the erf GELU for the tanh one moved the outputs by 2.4e-4 only (7.4e-4 now).
STD_NORM = 0.1
STD_EMBEDDING = {"qwen3": fam.STD_EMBEDDING, "gemma3_text": 0.1}
GAIN_HEAD = 2.0           # Qwen3-Reranker's own lm_head
GAIN_DENSE = 1.0          # EmbeddingGemma's two Dense layers

LOGITS_MAX_ABS = 1e-4     # the heads' tolerance (heads_test.cc): logits and scores

SLIDING, FULL = "sliding_attention", "full_attention"


@dataclass
class Spec:
    name: str                  # fixture directory
    arch: str                  # "qwen3" | "gemma3_text"
    seed: int
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int              # config head_dim (the fixtures': != hidden / heads)
    intermediate: int
    vocab: int
    max_positions: int
    eps: float
    rope_theta: float          # Qwen3 rope_theta; Gemma's full_attention layers
    local_rope_theta: float = 10000.0   # Gemma rope_local_base_freq (sliding layers)
    layer_types: Tuple[str, ...] = ()   # Gemma layer_types
    sliding_window: int = 0             # Gemma config sliding_window (the whole window)
    query_pre_attn_scalar: float = 0.0  # Gemma
    tie_word_embeddings: bool = True
    head: str = "embedding"    # "embedding" (sentence-transformers) | "reranker" (CausalLM)
    dense_features: int = 0    # Gemma: 2_Dense out_features (3_Dense maps back)
    dtype: str = "F32"
    pad: int = 0               # the id the padded batch is filled with (masked out)
    bos: int = 0
    eos: int = 0
    # Qwen's special tokens (tokenizer.json) and the reranker's answer tokens.
    specials: Dict[str, int] = field(default_factory=dict)
    yes_id: int = 0
    no_id: int = 0
    rope_interleaved: bool = False      # for LongModel.interleaved(): rotate_half

    @property
    def rotary_dim(self) -> int:
        return self.head_dim

    @property
    def act(self) -> str:
        return "silu" if self.arch == "qwen3" else "gelu_pytorch_tanh"

    @property
    def max_length(self) -> int:
        return self.max_positions

    @property
    def reranker(self) -> bool:
        return self.head == "reranker"

    def layer_type(self, i: int) -> str:
        return self.layer_types[i] if self.layer_types else FULL


def qwen_specials(vocab: int) -> Dict[str, int]:
    """The fixtures' Qwen special tokens at the end of the vocabulary, in the
    hub's order (<think> and </think> after them there; here before)."""
    return {"<think>": vocab - 5, "</think>": vocab - 4, "<|endoftext|>": vocab - 3,
            "<|im_start|>": vocab - 2, "<|im_end|>": vocab - 1}


QWEN3_VOCAB = 300
QWEN3_SPECIALS = qwen_specials(QWEN3_VOCAB)
QWEN3_EOT = QWEN3_SPECIALS["<|endoftext|>"]

QWEN3 = Spec("qwen3", "qwen3", seed=4001, layers=2, hidden=64, heads=4, kv_heads=2, head_dim=32,
             intermediate=96, vocab=QWEN3_VOCAB, max_positions=512, eps=1e-6, rope_theta=1e6,
             dtype="BF16", pad=QWEN3_EOT, bos=QWEN3_EOT, eos=QWEN3_EOT, specials=QWEN3_SPECIALS)
GEMMA3 = Spec("gemma3_text", "gemma3_text", seed=4002, layers=3, hidden=64, heads=2, kv_heads=1,
              head_dim=48, intermediate=96, vocab=300, max_positions=512, eps=1e-6,
              rope_theta=1e6, local_rope_theta=1e4, layer_types=(SLIDING, SLIDING, FULL),
              sliding_window=16, query_pre_attn_scalar=40, dense_features=256, dtype="F32",
              pad=0, bos=2, eos=1)
# Qwen3-Reranker-8B (untied, lm_head.weight in the file) and -0.6B / -4B (tied):
# eos <|im_end|> as their config.json; "yes" and "no" inside the vocabulary.
QWEN3_RERANKER = replace(QWEN3, name="qwen3_reranker", seed=4003, head="reranker",
                         tie_word_embeddings=False, eos=QWEN3_SPECIALS["<|im_end|>"],
                         yes_id=211, no_id=52)
QWEN3_RERANKER_TIED = replace(QWEN3_RERANKER, name="qwen3_reranker_tied", seed=4004,
                              tie_word_embeddings=True)
FIXTURES = [QWEN3, GEMMA3, QWEN3_RERANKER, QWEN3_RERANKER_TIED]

# The hub checkpoints' shapes (random weights), for benchmarks: real_spec(arch).
REAL_SHAPES = {
    # Qwen3-Embedding-0.6B: 595,776,512 parameters (tied, no lm_head).
    "qwen3": dict(layers=28, hidden=1024, heads=16, kv_heads=8, head_dim=128,
                  intermediate=3072, vocab=151669, max_positions=32768, eps=1e-6,
                  rope_theta=1e6, pad=151643, bos=151643, eos=151643,
                  specials={"<|endoftext|>": 151643, "<|im_start|>": 151644,
                            "<|im_end|>": 151645, "<think>": 151667, "</think>": 151668}),
    # EmbeddingGemma-300m: 302,863,104 + Dense 2 x 768 x 3072 = 307,581,696.
    "gemma3_text": dict(layers=24, hidden=768, heads=3, kv_heads=1, head_dim=256,
                        intermediate=1152, vocab=262144, max_positions=2048, eps=1e-6,
                        rope_theta=1e6, local_rope_theta=1e4,
                        layer_types=tuple(([SLIDING] * 5 + [FULL]) * 4), sliding_window=512,
                        query_pre_attn_scalar=256, dense_features=3072),
}
REAL_PARAMETERS = {"qwen3": 595_776_512, "gemma3_text": 302_863_104}   # without ST Dense
REAL_DENSE_PARAMETERS = {"qwen3": 0, "gemma3_text": 4_718_592}


def real_spec(arch: str, **overrides) -> Spec:
    """The family's fixture rules at the hub checkpoint's shape."""
    base = {"qwen3": QWEN3, "gemma3_text": GEMMA3}[arch]
    return replace(base, name=arch + "_real", **{**REAL_SHAPES[arch], **overrides})


# ---------------------------------------------------------------------------
# Modules (names as in transformers' modeling_qwen3.py / modeling_gemma3.py)
# ---------------------------------------------------------------------------

class RMSNorm(nn.Module):
    """Qwen3RMSNorm (weight ones, w * x_hat) / Gemma3RMSNorm (weight zeros,
    x_hat * (1 + w)); the forward is DecoderModel.rms."""

    def __init__(self, n: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps


class Attention(nn.Module):
    """Qwen3Attention / Gemma3Attention (attention_bias false)."""

    def __init__(self, s: Spec):
        super().__init__()
        self.q_proj = nn.Linear(s.hidden, s.heads * s.head_dim, bias=False)
        self.k_proj = nn.Linear(s.hidden, s.kv_heads * s.head_dim, bias=False)
        self.v_proj = nn.Linear(s.hidden, s.kv_heads * s.head_dim, bias=False)
        self.o_proj = nn.Linear(s.heads * s.head_dim, s.hidden, bias=False)
        self.q_norm = RMSNorm(s.head_dim, s.eps)
        self.k_norm = RMSNorm(s.head_dim, s.eps)


class MLP(nn.Module):
    """Qwen3MLP / Gemma3MLP: down_proj(act(gate_proj(x)) * up_proj(x))."""

    def __init__(self, s: Spec):
        super().__init__()
        self.gate_proj = nn.Linear(s.hidden, s.intermediate, bias=False)
        self.up_proj = nn.Linear(s.hidden, s.intermediate, bias=False)
        self.down_proj = nn.Linear(s.intermediate, s.hidden, bias=False)


class Qwen3DecoderLayer(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.self_attn = Attention(s)
        self.mlp = MLP(s)
        self.input_layernorm = RMSNorm(s.hidden, s.eps)
        self.post_attention_layernorm = RMSNorm(s.hidden, s.eps)


class Gemma3DecoderLayer(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.self_attn = Attention(s)
        self.mlp = MLP(s)
        self.input_layernorm = RMSNorm(s.hidden, s.eps)
        self.post_attention_layernorm = RMSNorm(s.hidden, s.eps)
        self.pre_feedforward_layernorm = RMSNorm(s.hidden, s.eps)
        self.post_feedforward_layernorm = RMSNorm(s.hidden, s.eps)


class DecoderModel(lc.LongModel):
    """The shared math: RMSNorm of either kind, GQA attention under a boolean
    mask, the GLU MLP. LongModel gives the rotary tables (float64 angles, cast)
    and rotation (half-split = transformers' rotate_half), the GLU and its
    mutations."""

    def rms(self, module: RMSNorm, x: torch.Tensor) -> torch.Tensor:
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + module.eps)
        one_plus = self.spec.arch == "gemma3_text"
        if self.mutation == "norm_one_plus_flipped":
            one_plus = not one_plus
        return y * (1.0 + module.weight) if one_plus else module.weight * y

    def final_norm(self, x: torch.Tensor) -> torch.Tensor:
        # The module `norm` (transformers' name) is shadowed by LongModel.norm.
        return self.rms(self._modules["norm"], x)

    def activation(self, x: torch.Tensor) -> torch.Tensor:
        m = self.mutation
        if self.spec.act == "silu":     # Qwen3 hidden_act "silu"
            return F.gelu(x) if m == "gelu_for_silu" else F.silu(x)
        # Gemma hidden_activation "gelu_pytorch_tanh"
        return F.gelu(x) if m == "erf_gelu" else F.gelu(x, approximate="tanh")

    def mlp(self, mlp: MLP, x: torch.Tensor) -> torch.Tensor:
        return mlp.down_proj(self.glu(mlp.gate_proj(x), mlp.up_proj(x)))

    def scaling(self) -> float:
        s, m = self.spec, self.mutation
        if m == "scale_from_hidden":            # hidden / heads for the config head_dim
            return (s.hidden // s.heads) ** -0.5
        if s.arch == "gemma3_text" and m != "scalar_head_dim":
            return s.query_pre_attn_scalar ** -0.5   # Gemma3Attention.scaling
        return s.head_dim ** -0.5                    # Qwen3Attention.scaling

    def attention(self, x, attn: Attention, allowed, rope):
        """x [B, L, H] (normed); allowed [B, 1, L, L] bool (query, key)."""
        s, m = self.spec, self.mutation
        B, L, _ = x.shape
        q = attn.q_proj(x).view(B, L, -1, s.head_dim)
        k = attn.k_proj(x).view(B, L, -1, s.head_dim)
        v = attn.v_proj(x).view(B, L, -1, s.head_dim).transpose(1, 2)
        if m != "qk_norm_off":   # per head, over head_dim, before the rotation
            q, k = self.rms(attn.q_norm, q), self.rms(attn.k_norm, k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        if rope is not None:
            cos, sin = rope
            q = lc.apply_rotary(q, cos, sin, self.interleaved())
            k = lc.apply_rotary(k, cos, sin, self.interleaved())
        # repeat_kv: query head h reads kv head h // (heads / kv_heads).
        group = s.heads // s.kv_heads
        kv_of = (torch.arange(s.heads) % s.kv_heads if m == "gqa_modulo"
                 else torch.arange(s.heads) // group)
        k, v = k[:, kv_of], v[:, kv_of]
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scaling()
        scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        return attn.o_proj(ctx.transpose(1, 2).reshape(B, L, s.heads * s.head_dim))


def positions(L: int):
    """Query index i down, key index j across: (i, j) grids [L, L]."""
    p = torch.arange(L)
    return p[:, None], p[None, :]


class Qwen3Model(DecoderModel):
    def __init__(self, s: Spec):
        super().__init__(s)
        self.embed_tokens = nn.Embedding(s.vocab, s.hidden)
        self.layers = nn.ModuleList([Qwen3DecoderLayer(s) for _ in range(s.layers)])
        self.norm = RMSNorm(s.hidden, s.eps)

    def forward(self, input_ids, attention_mask):
        s, m = self.spec, self.mutation
        x = self.embed_tokens(input_ids)
        L = input_ids.shape[1]
        i, j = positions(L)
        allowed = attention_mask[:, None, None, :].bool()      # the keys that are tokens
        if m != "causal_off":                                  # Qwen3Attention.is_causal
            allowed = allowed & (j <= i)[None, None]
        rope = self.rope(L, x.dtype, s.rope_theta)
        for layer in self.layers:
            x = x + self.attention(self.rms(layer.input_layernorm, x), layer.self_attn,
                                   allowed, rope)
            x = x + self.mlp(layer.mlp, self.rms(layer.post_attention_layernorm, x))
        return x if m == "no_final_norm" else self.final_norm(x)


class Gemma3TextModel(DecoderModel):
    def __init__(self, s: Spec):
        super().__init__(s)
        # Gemma3TextScaledWordEmbedding(vocab, hidden, pad_token_id, hidden ** 0.5)
        self.embed_tokens = nn.Embedding(s.vocab, s.hidden)
        self.layers = nn.ModuleList([Gemma3DecoderLayer(s) for _ in range(s.layers)])
        self.norm = RMSNorm(s.hidden, s.eps)

    def window(self, i, j):
        """The keys a sliding layer sees. transformers' Gemma3TextConfig, for
        use_bidirectional_attention, sets
            self.sliding_window = (self.sliding_window // 2) + 1  # due to fa we set exclusive bounds
        and the sliding mask is causal-with-window (kv_idx > q_idx - sliding_window)
        OR'ed with _bidirectional_window_overlay: abs(q_idx - kv_idx) < sliding_window,
        so q - sw < kv < q + sw with sw = W // 2 + 1: |i - j| <= W // 2 for the
        config's W (transformers PR #40700, "Fix SWA": a window of (W // 2, W // 2))."""
        s, m = self.spec, self.mutation
        distance = (i - j).abs()
        half = s.sliding_window // 2
        if m == "window_off_by_one":
            return distance < half
        if m == "window_not_halved":
            return distance <= s.sliding_window
        return distance <= half

    def forward(self, input_ids, attention_mask):
        s, m = self.spec, self.mutation
        x = self.embed_tokens(input_ids)
        if m != "embedding_scale_off":
            # Gemma3TextScaledWordEmbedding: embed_scale = torch.tensor(hidden ** 0.5),
            # a float32 tensor, cast to the weights' dtype: float32(sqrt(768)) =
            # 27.712812 for EmbeddingGemma's F32 (a BF16 checkpoint would round it
            # again, "sqrt(3072)=55.4256 to become 55.5"); 8 exactly at hidden 64.
            x = x * float(np.float32(s.hidden ** 0.5))
        L = input_ids.shape[1]
        i, j = positions(L)
        full = attention_mask[:, None, None, :].bool()
        if m == "causal_on":      # use_bidirectional_attention ignored
            full = full & (j <= i)[None, None]
        sliding = full if m == "window_off" else full & self.window(i, j)[None, None]
        global_theta = s.local_rope_theta if m == "global_theta_local" else s.rope_theta
        local_theta = s.rope_theta if m == "local_theta_global" else s.local_rope_theta
        global_rope = self.rope(L, x.dtype, global_theta)
        local_rope = self.rope(L, x.dtype, local_theta)
        post_attention = m not in ("post_norms_off", "post_attention_norm_off")
        post_feedforward = m not in ("post_norms_off", "post_feedforward_norm_off")
        for n, layer in enumerate(self.layers):
            local = s.layer_type(n) == SLIDING
            h = self.attention(self.rms(layer.input_layernorm, x), layer.self_attn,
                               sliding if local else full, local_rope if local else global_rope)
            if post_attention:
                h = self.rms(layer.post_attention_layernorm, h)
            x = x + h
            h = self.mlp(layer.mlp, self.rms(layer.pre_feedforward_layernorm, x))
            if post_feedforward:
                h = self.rms(layer.post_feedforward_layernorm, h)
            x = x + h
        return self.final_norm(x)


class Qwen3ForCausalLM(nn.Module):
    """Qwen3-Reranker: "model." + Qwen3Model and, untied, its own lm_head
    (tied: the head is model.embed_tokens, no lm_head.weight). forward is the
    model's (last hidden states); head_weight() is the lm_head's matrix."""

    def __init__(self, s: Spec):
        super().__init__()
        self.spec = s
        self.model = Qwen3Model(s)
        if not s.tie_word_embeddings:
            self.lm_head = nn.Linear(s.hidden, s.vocab, bias=False)

    @property
    def mutation(self):
        return self.model.mutation

    @mutation.setter
    def mutation(self, value):
        self.model.mutation = value

    @property
    def table_dtype(self):
        return self.model.table_dtype

    @table_dtype.setter
    def table_dtype(self, value):
        self.model.table_dtype = value

    def head_weight(self) -> torch.Tensor:
        tied = self.spec.tie_word_embeddings != (self.mutation == "head_tie_flipped")
        if tied:
            return self.model.embed_tokens.weight
        if self.spec.tie_word_embeddings:   # the flip of a tied head: any other matrix
            return torch.roll(self.model.embed_tokens.weight, 1, dims=0)
        return self.lm_head.weight

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids, attention_mask)


class SentenceDense(nn.Module):
    """sentence_transformers.models.Dense: activation(linear(x)); Identity, no bias."""

    def __init__(self, n_in: int, n_out: int):
        super().__init__()
        self.linear = nn.Linear(n_in, n_out, bias=False)

    def forward(self, x):
        return self.linear(x)


def dense_layers(s: Spec) -> List[SentenceDense]:
    if not s.dense_features:
        return []
    return [SentenceDense(s.hidden, s.dense_features), SentenceDense(s.dense_features, s.hidden)]


# ---------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------

LINEAR_GAINS = {"q_proj": fam.GAIN_QUERY_KEY, "k_proj": fam.GAIN_QUERY_KEY,
                "v_proj": fam.GAIN_VALUE_OUTPUT, "o_proj": fam.GAIN_VALUE_OUTPUT,
                "gate_proj": lc.GAIN_GLU_ACTIVATED, "up_proj": lc.GAIN_GLU_LINEAR,
                "down_proj": lc.GAIN_GLU_OUTPUT, "lm_head": GAIN_HEAD, "linear": GAIN_DENSE}


def init_weights(module: nn.Module, s: Spec, gen: torch.Generator) -> None:
    with torch.no_grad():
        for name, p in module.named_parameters():
            kind = name.split(".")[-2]
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            if "norm" in kind:
                p.copy_(STD_NORM * noise + (0.0 if s.arch == "gemma3_text" else 1.0))
            elif kind == "embed_tokens":
                p.copy_(STD_EMBEDDING[s.arch] * noise)
            else:
                p.copy_(noise * LINEAR_GAINS[kind] / math.sqrt(p.shape[1]))


MODELS = {"qwen3": Qwen3Model, "gemma3_text": Gemma3TextModel}


def build_model(s: Spec, seed: Optional[int] = None) -> nn.Module:
    """The family's torch model at s's size, random weights (fixture gains),
    in eval mode, rounded to s.dtype. forward(input_ids, attention_mask) ->
    last hidden states [B, L, H] after the final norm. Rerankers:
    Qwen3ForCausalLM (head_weight() for the logits)."""
    model = Qwen3ForCausalLM(s) if s.reranker else MODELS[s.arch](s)
    init_weights(model, s, torch.Generator().manual_seed(s.seed if seed is None else seed))
    fam.round_to_dtype(model, s.dtype)
    return model.eval()


def build_dense(s: Spec, seed: Optional[int] = None) -> List[SentenceDense]:
    """The sentence-transformers Dense layers (EmbeddingGemma), F32 as the hub's."""
    layers = dense_layers(s)
    gen = torch.Generator().manual_seed((s.seed if seed is None else seed) + 100)
    for d in layers:
        init_weights(d, s, gen)
        d.eval()
    return layers


def export_onnx(model: nn.Module, path: str, opset: int = 14, batch: int = 2,
                length: int = 9, table_dtype=torch.float32) -> None:
    """torch.onnx.export with dynamic batch and sequence axes, as
    make_long_context.export_onnx but with the decoders' two inputs: int64
    input_ids, attention_mask [B, L]; output last_hidden_state [B, L, H].
    Needs no onnxruntime. The rotary tables are computed in the graph in
    table_dtype (float32 by default, as transformers does)."""
    s = model.spec
    model.table_dtype = table_dtype
    ids = torch.randint(0, s.vocab, (batch, length), generator=torch.Generator().manual_seed(0))
    mask = torch.ones(batch, length, dtype=torch.long)
    mask[1:, length // 2:] = 0
    axes = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask), path, opset_version=opset,
                          input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": axes, "attention_mask": axes,
                                        "last_hidden_state": axes})
    model.table_dtype = torch.float64


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

def hub_number(x: float):
    return int(x) if float(x).is_integer() else x


TORCH_DTYPE = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def config_json(s: Spec) -> dict:
    if s.arch == "qwen3":
        return {
            "architectures": ["Qwen3ForCausalLM"], "attention_bias": False,
            "attention_dropout": 0.0, "bos_token_id": s.bos, "eos_token_id": s.eos,
            "head_dim": s.head_dim, "hidden_act": s.act, "hidden_size": s.hidden,
            "initializer_range": 0.02, "intermediate_size": s.intermediate,
            "max_position_embeddings": s.max_positions, "max_window_layers": s.layers,
            "model_type": "qwen3", "num_attention_heads": s.heads,
            "num_hidden_layers": s.layers, "num_key_value_heads": s.kv_heads,
            "rms_norm_eps": s.eps, "rope_scaling": None, "rope_theta": hub_number(s.rope_theta),
            "sliding_window": None, "tie_word_embeddings": s.tie_word_embeddings,
            "torch_dtype": TORCH_DTYPE[s.dtype], "use_cache": True, "use_sliding_window": False,
            "vocab_size": s.vocab,
        }
    # EmbeddingGemma's config.json: sliding_window is the whole window as the
    # hub writes it (transformers halves it on load, see Gemma3TextModel.window).
    return {
        "architectures": ["Gemma3TextModel"], "attention_bias": False, "attention_dropout": 0.0,
        "attn_logit_softcapping": None, "bos_token_id": s.bos, "eos_token_id": s.eos,
        "final_logit_softcapping": None, "head_dim": s.head_dim,
        "hidden_activation": s.act, "hidden_size": s.hidden, "initializer_range": 0.02,
        "intermediate_size": s.intermediate, "layer_types": list(s.layer_types),
        "max_position_embeddings": s.max_positions, "model_type": "gemma3_text",
        "num_attention_heads": s.heads, "num_hidden_layers": s.layers,
        "num_key_value_heads": s.kv_heads, "pad_token_id": s.pad,
        "query_pre_attn_scalar": hub_number(s.query_pre_attn_scalar),
        "rms_norm_eps": s.eps, "rope_local_base_freq": float(s.local_rope_theta),
        "rope_scaling": None, "rope_theta": float(s.rope_theta),
        "sliding_window": s.sliding_window, "torch_dtype": TORCH_DTYPE[s.dtype],
        "use_bidirectional_attention": True, "use_cache": True, "vocab_size": s.vocab,
    }


QWEN3_QUERY_PROMPT = ("Instruct: Given a web search query, retrieve relevant passages that "
                      "answer the query\nQuery:")
# EmbeddingGemma's config_sentence_transformers.json prompts, in its order.
GEMMA_PROMPTS = {
    "query": "task: search result | query: ",
    "document": "title: none | text: ",
    "BitextMining": "task: search result | query: ",
    "Clustering": "task: clustering | query: ",
    "Classification": "task: classification | query: ",
    "InstructionRetrieval": "task: code retrieval | query: ",
    "MultilabelClassification": "task: classification | query: ",
    "PairClassification": "task: sentence similarity | query: ",
    "Reranking": "task: search result | query: ",
    "Retrieval": "task: search result | query: ",
    "Retrieval-query": "task: search result | query: ",
    "Retrieval-document": "title: none | text: ",
    "STS": "task: sentence similarity | query: ",
    "Summarization": "task: summarization | query: ",
}
POOLING_KEYS = ["cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens",
                "weightedmean_tokens", "lasttoken"]


def pooling_mode(s: Spec) -> str:
    return "lasttoken" if s.arch == "qwen3" else "mean"


def write_json(path: str, value, indent=2) -> None:
    with open(path, "w") as f:
        json.dump(value, f, indent=indent)
        f.write("\n")


def write_sentence_transformers(path: str, s: Spec, dense: List[SentenceDense]) -> None:
    """modules.json, 1_Pooling, the Dense folders and config_sentence_transformers.json
    of Qwen3-Embedding (lasttoken, Normalize) or EmbeddingGemma (mean, Dense,
    Dense, Normalize), include_prompt true as both."""
    modules = [{"idx": 0, "name": "0", "path": "",
                "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling"}]
    for d in dense:
        idx = len(modules)
        modules.append({"idx": idx, "name": str(idx), "path": f"{idx}_Dense",
                        "type": "sentence_transformers.models.Dense"})
    idx = len(modules)
    modules.append({"idx": idx, "name": str(idx), "path": f"{idx}_Normalize",
                    "type": "sentence_transformers.models.Normalize"})
    write_json(os.path.join(path, "modules.json"), modules)
    os.makedirs(os.path.join(path, "1_Pooling"))
    mode = {"lasttoken": "lasttoken", "mean": "mean_tokens"}[pooling_mode(s)]
    pooling = {"word_embedding_dimension": s.hidden}
    pooling.update({"pooling_mode_" + k: k == mode for k in POOLING_KEYS})
    pooling["include_prompt"] = True
    write_json(os.path.join(path, "1_Pooling", "config.json"), pooling)
    for n, d in enumerate(dense):
        folder = os.path.join(path, f"{n + 2}_Dense")
        os.makedirs(folder)
        write_json(os.path.join(folder, "config.json"),
                   {"in_features": d.linear.in_features, "out_features": d.linear.out_features,
                    "bias": False, "activation_function": "torch.nn.modules.linear.Identity"})
        write_safetensors(os.path.join(folder, "model.safetensors"),
                          {"linear.weight": d.linear.weight.detach().to(torch.float32).clone()},
                          "F32")
    # No Normalize folder: Normalize has no files (git keeps no empty folder).
    if s.arch == "qwen3":
        prompts = {"query": QWEN3_QUERY_PROMPT, "document": ""}
    else:
        prompts = dict(GEMMA_PROMPTS)
    write_json(os.path.join(path, "config_sentence_transformers.json"),
               {"prompts": prompts, "default_prompt_name": None, "similarity_fn_name": "cosine"})


# Qwen3-Reranker's prompt (its model card's format_instruction with the
# default instruction), whose words the fixtures' tokenizer.json holds, so that
# it tokenizes without <unk> (WhitespaceSplit once the added tokens are cut out).
RERANKER_PREFIX = ("<|im_start|>system\nJudge whether the Document meets the requirements "
                   "based on the Query and the Instruct provided. Note that the answer can "
                   "only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n")
RERANKER_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
RERANKER_INSTRUCTION = ("Given a web search query, retrieve relevant passages that answer "
                        "the query")


def reranker_prompt(query: str, document: str) -> str:
    return (RERANKER_PREFIX + f"<Instruct>: {RERANKER_INSTRUCTION}\n<Query>: {query}\n"
            f"<Document>: {document}" + RERANKER_SUFFIX)


def template_words() -> List[str]:
    specials = list(qwen_specials(0))
    text = reranker_prompt("", "")
    for c in specials:
        text = text.replace(c, " ")
    return list(dict.fromkeys(text.split()))


TEMPLATE_WORDS = template_words()
TEMPLATE_FIRST_ID = 100


def tokenizer_json(s: Spec) -> dict:
    """A tiny tokenizer.json over the fixture's vocabulary: WordLevel
    (unknown words -> "<unk>", id 0), WhitespaceSplit, no post-processor;
    "no" and "yes" at s.no_id / s.yes_id, the reranker template's words from
    id 100, w<i> elsewhere, Qwen's special tokens as added tokens (<think>,
    </think> not special, as the hub's)."""
    tokens = [f"w{i}" for i in range(s.vocab)]
    tokens[0] = "<unk>"
    for n, word in enumerate(TEMPLATE_WORDS):
        tokens[TEMPLATE_FIRST_ID + n] = word
    tokens[s.no_id], tokens[s.yes_id] = "no", "yes"
    for content, i in s.specials.items():
        tokens[i] = content
    check(len(set(tokens)) == s.vocab, f"{s.name}: tokenizer vocabulary has duplicates")
    check(s.yes_id not in (0, 1) and s.no_id not in (0, 1)
          and TEMPLATE_FIRST_ID + len(TEMPLATE_WORDS) <= min(s.yes_id, *s.specials.values())
          and s.no_id < TEMPLATE_FIRST_ID, f"{s.name}: token ids overlap")
    added = [{"id": i, "content": content, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": not content.endswith("think>")}
             for content, i in sorted(s.specials.items(), key=lambda kv: kv[1])]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": None, "pre_tokenizer": {"type": "WhitespaceSplit"},
            "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": {t: i for i, t in enumerate(tokens)},
                      "unk_token": "<unk>"}}


def encode_words(tok: dict, text: str) -> List[int]:
    """What tokenizers does with this tokenizer.json (no normalizer): cut out
    the added tokens, split the rest on whitespace, look each word up."""
    specials = sorted(((t["content"], t["id"]) for t in tok["added_tokens"]),
                      key=lambda kv: -len(kv[0]))
    vocab, unk = tok["model"]["vocab"], tok["model"]["vocab"][tok["model"]["unk_token"]]
    ids, rest = [], text
    while rest:
        cut = min(((rest.find(c), c, i) for c, i in specials if c in rest), default=None)
        head = rest if cut is None else rest[:cut[0]]
        ids.extend(vocab.get(w, unk) for w in head.split())
        if cut is None:
            break
        ids.append(cut[2])
        rest = rest[cut[0] + len(cut[1]):]
    return ids


def checkpoint_tensors(model: nn.Module) -> Dict[str, torch.Tensor]:
    """state_dict() is the checkpoint: Qwen3-Embedding's and EmbeddingGemma's
    names bare, Qwen3ForCausalLM's "model." + lm_head (untied only)."""
    return {name: t.detach().to(torch.float32).contiguous()
            for name, t in model.state_dict().items()}


def write_model_dir(s: Spec, path: str, model: nn.Module,
                    dense: Optional[List[SentenceDense]] = None) -> None:
    """A hub-style model directory for any spec: config.json, model.safetensors
    (s.dtype), and the sentence-transformers files (embedders) or a
    tokenizer.json (rerankers)."""
    os.makedirs(path, exist_ok=True)
    write_json(os.path.join(path, "config.json"), config_json(s))
    write_safetensors(os.path.join(path, "model.safetensors"), checkpoint_tensors(model),
                      s.dtype)
    if s.reranker:
        with open(os.path.join(path, "tokenizer.json"), "w") as f:
            json.dump(tokenizer_json(s), f, ensure_ascii=False, separators=(",", ":"))
            f.write("\n")
    else:
        write_sentence_transformers(path, s, dense if dense is not None else build_dense(s))


# ---------------------------------------------------------------------------
# Inputs and reference
# ---------------------------------------------------------------------------

def make_inputs(s: Spec, rng: np.random.RandomState) -> List[dict]:
    """Random ids of ordinary tokens. Qwen3-Embedding inputs end with
    <|endoftext|> (its tokenizer's TemplateProcessing appends it: the token
    last-token pooling reads); EmbeddingGemma's are <bos> ... <eos> with the
    pad id 0 inside the longest (an ordinary token there); the rerankers' end
    with </think>, as the template's assistant turn."""
    lengths = {"qwen3": QWEN3_LENGTHS, "gemma3_text": GEMMA_LENGTHS}[s.arch]
    if s.reranker:
        lengths = RERANKER_LENGTHS
    ordinary = min([s.vocab] + list(s.specials.values()))
    inputs = []
    for n in lengths:
        ids = rng.randint(3, ordinary, size=n).tolist()
        if s.reranker:
            ids[-1] = s.specials["</think>"]
            if n > 2:
                ids[0] = s.specials["<|im_start|>"]
        elif s.arch == "qwen3":
            if n > 1:
                ids[-1] = s.specials["<|endoftext|>"]
        elif n > 1:
            ids[0], ids[-1] = s.bos, s.eos
        inputs.append({"ids": ids})
    if s.arch == "gemma3_text":
        longest = inputs[-1]["ids"]
        longest[len(longest) // 2] = s.pad
    return inputs


def run(model: nn.Module, dense: List[SentenceDense], inputs: List[dict], dtype,
        mutation: Optional[str] = None) -> List[dict]:
    s = model.spec
    ids, _, mask = fam.padded_batch(inputs, s.pad)
    model = model.to(dtype)
    dense = [d.to(dtype) for d in dense]
    model.mutation = mutation
    try:
        with torch.no_grad():
            states = model(ids, mask)
            out = [{"states": states[b, :len(x["ids"])].double().numpy()}
                   for b, x in enumerate(inputs)]
            if s.reranker:
                w = model.head_weight()
                last = torch.tensor([len(x["ids"]) - 1 for x in inputs])
                if mutation == "first_position":
                    last = torch.zeros_like(last)
                h = states[torch.arange(len(inputs)), last]          # [B, H]
                yes, no = h @ w[s.yes_id], h @ w[s.no_id]
                if mutation == "yes_no_swapped":
                    yes, no = no, yes
                # Qwen3-Reranker: log_softmax(stack([no, yes]))[:, 1].exp()
                score = torch.softmax(torch.stack([no, yes], dim=1), dim=1)[:, 1]
                for b, o in enumerate(out):
                    o["head"] = np.array([float(yes[b]), float(no[b]), float(score[b])])
            else:
                v = st_pool(states, mask, [pooling_mode(s)])
                for d in dense:
                    v = d(v)
                v = F.normalize(v, p=2, dim=1)
                for b, o in enumerate(out):
                    o["lasttoken"] = o["states"][-1]
                    o["mean"] = o["states"].mean(axis=0)
                    o["embedding"] = v[b].double().numpy()
    finally:
        model.mutation = None
    return out


def max_diff(a: List[dict], b: List[dict], keys=None) -> float:
    return max(float(np.max(np.abs(x[k] - y[k])))
               for x, y in zip(a, b) for k in (keys or x.keys()))


def max_rel(a: List[dict], b: List[dict], keys) -> float:
    """max over vectors of max |a - b| / max |b|."""
    return max(float(np.max(np.abs(x[k] - y[k])) / np.max(np.abs(y[k])))
               for x, y in zip(a, b) for k in keys)


# ---------------------------------------------------------------------------
# Check (d): the written directory, read back and run in numpy
# ---------------------------------------------------------------------------

def np_forward(model_dir: str, ids: List[int]) -> dict:
    """One sequence, from the files alone (config.json, model.safetensors
    through make_golden's strict reader, modules.json and the module folders,
    tokenizer.json), written again after transformers' code rather than from
    the torch modules above: masks as masking_utils' index functions
    (causal kv <= q; Gemma's sliding layers (kv <= q and kv > q - sw) or
    |q - kv| < sw with sw = sliding_window // 2 + 1, its full layers all
    keys), inv_freq = 1 / base^(arange(0, d, 2) / d) with cos/sin of
    cat(freqs, freqs) and rotate_half, repeat_kv by np.repeat, softmax over
    -inf, the sentence-transformers modules in modules.json's order."""
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    W = read_checkpoint(model_dir)
    gemma = cfg["model_type"] == "gemma3_text"
    p = "model." if "model.embed_tokens.weight" in W else ""
    nh, nkv, d = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    eps = cfg["rms_norm_eps"]
    L = len(ids)

    def norm(x, w):
        y = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
        return y * (1.0 + w) if gemma else w * y

    def rotate_half(t):
        return np.concatenate([-t[..., d // 2:], t[..., :d // 2]], axis=-1)

    def rope(theta):
        inv_freq = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
        freqs = np.arange(L, dtype=np.float64)[:, None] * inv_freq[None, :]
        emb = np.concatenate([freqs, freqs], axis=-1)
        return np.cos(emb), np.sin(emb)

    q_idx, kv_idx = np.arange(L)[:, None], np.arange(L)[None, :]
    causal = kv_idx <= q_idx
    if gemma:
        sw = cfg["sliding_window"] // 2 + 1
        masks = {"full_attention": causal | True,
                 "sliding_attention": (causal & (kv_idx > q_idx - sw))
                 | (np.abs(q_idx - kv_idx) < sw)}
        thetas = {"full_attention": cfg["rope_theta"],
                  "sliding_attention": cfg["rope_local_base_freq"]}
        types = cfg["layer_types"]
        scaling = cfg["query_pre_attn_scalar"] ** -0.5
        x = W["embed_tokens.weight"][ids] * float(np.float32(cfg["hidden_size"] ** 0.5))
    else:
        masks, thetas = {"causal": causal}, {"causal": cfg["rope_theta"]}
        types = ["causal"] * cfg["num_hidden_layers"]
        scaling = d ** -0.5
        x = W[p + "embed_tokens.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        def w(name):
            return W[f"{p}layers.{i}.{name}.weight"]

        def heads(t, n):
            return t.reshape(L, n, d).transpose(1, 0, 2)

        h = norm(x, w("input_layernorm"))
        q = norm(heads(h @ w("self_attn.q_proj").T, nh), w("self_attn.q_norm"))
        k = norm(heads(h @ w("self_attn.k_proj").T, nkv), w("self_attn.k_norm"))
        v = heads(h @ w("self_attn.v_proj").T, nkv)
        cos, sin = rope(thetas[types[i]])
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = np.repeat(k, nh // nkv, axis=0), np.repeat(v, nh // nkv, axis=0)
        scores = np.where(masks[types[i]], q @ k.transpose(0, 2, 1) * scaling, -np.inf)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        a = (probs @ v).transpose(1, 0, 2).reshape(L, nh * d) @ w("self_attn.o_proj").T
        if gemma:
            a = norm(a, w("post_attention_layernorm"))
        x = x + a
        h = norm(x, w("pre_feedforward_layernorm" if gemma else "post_attention_layernorm"))
        g, u = h @ w("mlp.gate_proj").T, h @ w("mlp.up_proj").T
        if gemma:   # gelu_pytorch_tanh
            act = 0.5 * g * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (g + 0.044715 * g ** 3)))
        else:       # silu
            act = g / (1.0 + np.exp(-g))
        m = (act * u) @ w("mlp.down_proj").T
        if gemma:
            m = norm(m, w("post_feedforward_layernorm"))
        x = x + m
    x = norm(x, W[p + "norm.weight"])
    out = {"states": x}

    tokenizer_path = os.path.join(model_dir, "tokenizer.json")
    if cfg["architectures"] == ["Qwen3ForCausalLM"] and p == "model.":
        with open(tokenizer_path) as f:
            vocab = json.load(f)["model"]["vocab"]
        check(("lm_head.weight" in W) != cfg["tie_word_embeddings"],
              "lm_head.weight present iff tie_word_embeddings is false")
        head = W["lm_head.weight"] if "lm_head.weight" in W else W["model.embed_tokens.weight"]
        yes, no = head[vocab["yes"]] @ x[-1], head[vocab["no"]] @ x[-1]
        out["head"] = np.array([yes, no, 1.0 / (1.0 + math.exp(no - yes))])
        return out
    with open(os.path.join(model_dir, "modules.json")) as f:
        modules = json.load(f)
    v = None
    for module in modules:
        kind, folder = module["type"].rsplit(".", 1)[1], os.path.join(model_dir, module["path"])
        if kind == "Transformer":
            continue
        if kind == "Pooling":
            with open(os.path.join(folder, "config.json")) as f:
                pooling = json.load(f)
            modes = [k for k, on in pooling.items() if k.startswith("pooling_mode_") and on]
            check(modes in (["pooling_mode_mean_tokens"], ["pooling_mode_lasttoken"]), str(modes))
            v = x.mean(axis=0) if modes == ["pooling_mode_mean_tokens"] else x[-1]
        elif kind == "Dense":
            with open(os.path.join(folder, "config.json")) as f:
                dense = json.load(f)
            check(dense["activation_function"] == "torch.nn.modules.linear.Identity"
                  and not dense["bias"], "Dense: Identity, no bias")
            v = read_checkpoint(folder)["linear.weight"] @ v
        elif kind == "Normalize":
            v = v / np.linalg.norm(v)
    out["lasttoken"], out["mean"], out["embedding"] = x[-1], x.mean(axis=0), v
    return out


def check_files(s: Spec, model_dir: str, inputs: List[dict], ref: List[dict]) -> float:
    """(d): np_forward on the written directory == the torch reference (< 1e-9)."""
    d = max_diff([np_forward(model_dir, x["ids"]) for x in inputs], ref)
    check(d < 1e-9, f"{s.name}: the files read back in numpy differ by {d}")
    return d


MUTATIONS = {
    # Qwen3
    "causal_off": lambda s: s.arch == "qwen3",
    "gqa_modulo": lambda s: s.kv_heads > 1 and s.heads > s.kv_heads,
    "rotary_base_10000": lambda s: s.arch == "qwen3",
    "gelu_for_silu": lambda s: s.act == "silu",
    "no_final_norm": lambda s: s.arch == "qwen3",
    # both
    "qk_norm_off": lambda s: True,
    "rotary_off": lambda s: True,
    "rotary_interleaved": lambda s: True,
    "norm_one_plus_flipped": lambda s: True,
    "scale_from_hidden": lambda s: s.hidden // s.heads != s.head_dim,
    "glu_swapped": lambda s: True,
    # Gemma3
    "causal_on": lambda s: s.arch == "gemma3_text",
    "embedding_scale_off": lambda s: s.arch == "gemma3_text",
    "post_norms_off": lambda s: s.arch == "gemma3_text",
    "post_attention_norm_off": lambda s: s.arch == "gemma3_text",
    "post_feedforward_norm_off": lambda s: s.arch == "gemma3_text",
    "window_off": lambda s: SLIDING in s.layer_types,
    "window_off_by_one": lambda s: SLIDING in s.layer_types,
    "window_not_halved": lambda s: SLIDING in s.layer_types,
    "local_theta_global": lambda s: SLIDING in s.layer_types,
    "global_theta_local": lambda s: FULL in s.layer_types and s.arch == "gemma3_text",
    "scalar_head_dim": lambda s: s.arch == "gemma3_text",
    "erf_gelu": lambda s: s.act == "gelu_pytorch_tanh",
}
# The reranker fixtures' own: the head's rules (and two encoder ones, to
# show the head's outputs see the encoder).
RERANKER_MUTATIONS = ["head_tie_flipped", "first_position", "yes_no_swapped", "no_final_norm",
                      "causal_off", "qk_norm_off"]
# The erf and tanh GELUs differ by at most ~5e-4 per unit (make_families).
MUTATION_MARGIN = {"erf_gelu": 5.0}


def rounded(a, digits=8):
    return [float(f"{v:.{digits}g}") for v in a]


def check_prefixes(s: Spec, model, dense, inputs, ref) -> float:
    """Causality: prefixes of the longest input, run as one padded batch, give
    the input's states at their positions."""
    longest = max(range(len(inputs)), key=lambda b: len(inputs[b]["ids"]))
    ids = inputs[longest]["ids"]
    cuts = [k for k in PREFIX_LENGTHS if k < len(ids)]
    out = run(model, dense, [{"ids": ids[:k]} for k in cuts], torch.float64)
    d = max(float(np.max(np.abs(o["states"] - ref[longest]["states"][:k])))
            for o, k in zip(out, cuts))
    check(d < fam.BATCH_TOLERANCE, f"{s.name}: a prefix's states differ by {d}")
    return d


def generate(s: Spec) -> dict:
    torch.manual_seed(s.seed)
    model = build_model(s)
    dense = build_dense(s)
    inputs = make_inputs(s, np.random.RandomState(s.seed))
    ref = run(model, dense, inputs, torch.float64)
    moves = {}

    if s.reranker:
        keys = ["head"]
        mutations = [m for m in RERANKER_MUTATIONS]
    else:
        keys = ["states", "lasttoken", "mean", "embedding"]
        mutations = [m for m, applies in MUTATIONS.items() if applies(s)]

    def distance(out):
        return max_diff(out, ref, keys)

    def run_on(xs, dtype, m=None):
        out = run(model, dense, xs, dtype, m)
        if m is not None and dtype == torch.float64:
            moves[m] = distance(out)
        return out

    tolerance = LOGITS_MAX_ABS if s.reranker else fam.PARITY_MAX_ABS
    d32 = fam.self_check(
        s.name, run_on, inputs, ref,
        alone_diff=lambda alone, i: max_diff(alone, [ref[i]]),
        batch_tolerance=fam.BATCH_TOLERANCE, mutations=mutations, distance=distance,
        mutation_floor=lambda m: MUTATION_MARGIN.get(m, fam.MARGIN) * tolerance,
        float32_ceiling=tolerance / fam.MARGIN)
    out32 = run(model, dense, inputs, torch.float32)
    pooled = ["head"] if s.reranker else ["lasttoken", "mean", "embedding"]
    errors = {"float32_abs": d32, "float32_pooled_abs": max_diff(out32, ref, pooled),
              "float32_rel": max_rel(out32, ref, keys),
              "float32_states_abs": max_diff(out32, ref, ["states"]),
              "states_max_abs": max(float(np.max(np.abs(r["states"]))) for r in ref)}
    check(errors["float32_states_abs"] < fam.PARITY_MAX_ABS / fam.MARGIN,
          f"{s.name}: float32 torch's states off by {errors['float32_states_abs']}")
    prefix = check_prefixes(s, model, dense, inputs, ref) if s.arch == "qwen3" else None
    model = model.to(torch.float32)
    dense = [d.to(torch.float32) for d in dense]

    target = os.path.join(HEADS if s.reranker else FAMILIES, s.name)
    shutil.rmtree(target, ignore_errors=True)
    write_model_dir(s, os.path.join(target, "model"), model, dense)
    files = check_files(s, os.path.join(target, "model"), inputs, ref)
    if s.reranker:
        tok = tokenizer_json(s)
        check(encode_words(tok, "yes no") == [s.yes_id, s.no_id], f"{s.name}: yes/no ids")
        prompt = encode_words(tok, reranker_prompt("w5 w6", "w7"))
        check(0 not in prompt and prompt[-2:] == [s.specials["<think>"], s.specials["</think>"]]
              and encode_words(tok, "<|im_start|>user\n<Query>: w7 zebra<|im_end|>") ==
              [s.specials["<|im_start|>"], tok["model"]["vocab"]["user"],
               tok["model"]["vocab"]["<Query>:"], 7, 0, s.specials["<|im_end|>"]],
              f"{s.name}: tokenizer")
        reference = {
            "family": "qwen3",
            "generator": GENERATOR,
            "head": "yes_no",
            "inputs": inputs,
            "yes_id": s.yes_id,
            "no_id": s.no_id,
            "yes_logits": [float(f"{r['head'][0]:.10g}") for r in ref],
            "no_logits": [float(f"{r['head'][1]:.10g}") for r in ref],
            "scores": [float(f"{r['head'][2]:.10g}") for r in ref],
            "hidden_states": [[rounded(row) for row in r["states"]] for r in ref],
        }
    else:
        reference = {
            "family": s.arch,
            "architecture": s.arch,
            "generator": GENERATOR,
            "max_length": s.max_length,
            "inputs": inputs,
            "hidden_states": [[rounded(row) for row in r["states"]] for r in ref],
            "cls": [rounded(r["states"][0]) for r in ref],
            "mean": [rounded(r["mean"]) for r in ref],
            "lasttoken": [rounded(r["lasttoken"]) for r in ref],
            "embedding": [rounded(r["embedding"]) for r in ref],
            "layer_norm_placement": "pre",
        }
    with open(os.path.join(target, "reference.json"), "w") as f:
        json.dump(reference, f, separators=(",", ":"))
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(target) for n in ns)
    weakest = min(moves, key=lambda m: moves[m] / MUTATION_MARGIN.get(m, fam.MARGIN))
    print(f"{s.name}: float32 torch within {d32:.2g} (states {errors['float32_states_abs']:.2g}, "
          f"pooled {errors['float32_pooled_abs']:.2g}, "
          f"relative {errors['float32_rel']:.2g}, |states| <= {errors['states_max_abs']:.3g})"
          + ("" if prefix is None else f", prefixes within {prefix:.2g}")
          + f", files in numpy within {files:.2g}"
          + f"; weakest mutation {weakest} {moves[weakest]:.3g}; {size / 1024:.0f} KiB in {target}")
    return {"errors": errors, "mutations": moves}


def check_onnx(names) -> None:
    """Exports each fixture's model (float32) with opset 14 and validates the
    graph with onnx.checker if the onnx package is there; onnxruntime is not
    needed."""
    try:
        import onnx
    except ImportError:
        onnx = None
    with tempfile.TemporaryDirectory() as tmp:
        for s in FIXTURES:
            if s.name not in names:
                continue
            model = build_model(s).to(torch.float32)
            path = os.path.join(tmp, s.name + ".onnx")
            export_onnx(model, path)
            if onnx is None:
                print(f"{s.name}: exported ({os.path.getsize(path)} bytes); no onnx package")
                continue
            graph = onnx.load(path)
            onnx.checker.check_model(graph)
            ops = sorted({n.op_type for n in graph.graph.node})
            print(f"{s.name}: ONNX opset {graph.opset_import[0].version}, "
                  f"{os.path.getsize(path)} bytes, ops {' '.join(ops)}")


def check_real(names) -> None:
    for arch in REAL_SHAPES:
        if arch not in names:
            continue
        s = real_spec(arch)
        model = build_model(s)
        count = sum(p.numel() for p in model.parameters())
        dense = sum(p.numel() for d in build_dense(s) for p in d.parameters())
        with torch.no_grad():
            ids = torch.randint(0, 1000, (1, 16))
            out = model(ids, torch.ones_like(ids))
        print(f"{arch} at hub shape: {count:,} parameters + {dense:,} in Dense, "
              f"output {tuple(out.shape)}")
        check(count == REAL_PARAMETERS[arch] and dense == REAL_DENSE_PARAMETERS[arch],
              f"{arch}: parameter count differs from the hub checkpoint's")
        del model


def main(argv) -> int:
    torch.set_num_threads(1)
    flags = [a for a in argv[1:] if a.startswith("--")]
    names = [a for a in argv[1:] if not a.startswith("--")]
    if "--check-onnx" in flags:
        check_onnx(names or [s.name for s in FIXTURES])
    if "--check-real" in flags:
        check_real(names or list(REAL_SHAPES))
    if flags:
        return 0
    for s in FIXTURES:
        if not names or s.name in names:
            generate(s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
