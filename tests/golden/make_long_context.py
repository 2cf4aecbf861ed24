#!/usr/bin/python3
"""Generates the long-context encoder fixtures in tests/golden/families/ (see README.md).

Run with Debian's interpreter, which sees python3-torch (1.13) and numpy:

    /usr/bin/python3 tests/golden/make_long_context.py [name ...]
    /usr/bin/python3 tests/golden/make_long_context.py --check-onnx  # ONNX export, opset 14
    /usr/bin/python3 tests/golden/make_long_context.py --check-real  # hub-shape models

Four families that load from Hugging Face hub directories with remote code
(or, for ModernBERT, transformers' own modeling_modernbert.py), each a small
model built from torch.nn modules whose tree mirrors the reference classes,
so that state_dict() gives the hub's tensor names:

  nomic_bert  nomic-embed-text-v1/v1.5 (nomic-ai/contrastors,
              modeling_hf_nomic_bert.py): word + token-type embeddings,
              emb_ln, post-LN blocks with a packed Wqkv, rotary on Q and K,
              SwiGLU  fc2(fc11(x) * silu(fc12(x))).
  new         GTE v1.5 / mGTE (Alibaba-NLP/new-impl modeling.py): word
              (+ token-type) embeddings, LayerNorm, post-LN layers with a
              packed qkv_proj, rotary with NTK-scaled inverse frequencies,
              GeGLU  down_proj(gelu(gate) * up), [up, gate] = up_gate_proj(x).
  modernbert  transformers' modeling_modernbert.py: pre-LN, LayerNorms
              without bias, no attn_norm on layer 0, a final_norm, GeGLU
              Wo(gelu(input) * gate), [input, gate] = Wi(x), alternating
              global layers (global_rope_theta) and sliding-window layers
              (|i - j| <= local_attention // 2, local_rope_theta).
  jina_bert   jina-embeddings-v2 (jinaai/jina-bert-implementation, model_type
              "bert"): BERT embeddings without positions, BERT attention,
              symmetric ALiBi  -slope_h * |i - j|  added to the scaled scores,
              GeGLU  wo(gelu(gated) * non_gated), [gated, non_gated] =
              gated_layers(x), post-LN.

The torch models are usable outside the fixtures: build_model(spec) builds a
family at any size (real_spec(arch) gives the hub checkpoints' shapes), and
each model's forward(input_ids, token_type_ids, attention_mask) returns the
last hidden states and exports with torch.onnx.export (opset 14; see
export_onnx). reference.json is computed in float64 with all inputs
right-padded into one batch and an attention mask, as the reference code
runs them.

Self-checks (make_families.self_check), each of which fails the run:
  (a) padded batch == each input alone (float64, < 1e-10);
  (b) each family's distinguishing rules, broken one at a time (rotary off,
      wrong base, interleaved for half-split, NTK ignored, GLU halves swapped,
      the tanh GELU for the erf one, window ignored, local theta = global
      theta, ALiBi off or with the next power of two's slopes, LayerNorm
      biases ignored ...), move some output by more than 10x the parity
      test's 1e-4 (5x for the tanh GELU, see make_families.MUTATION_MARGIN);
  (c) float32 torch with the same weights stays 10x inside that tolerance.
"""

import json
import math
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from typing import List, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "families")
sys.path.insert(0, HERE)
import make_families as fam  # noqa: E402  (self_check, max_diff, BERT attention modules, gains)
from make_golden import write_safetensors  # noqa: E402  (one safetensors writer)

GENERATOR = "tests/golden/make_long_context.py"
LENGTHS = [1, 5, 17, 64, 100, 128, 300]   # 300: past ModernBERT's window and every table's start

# Initialisation: make_families' gains (embeddings N(0, 0.5), biases N(0, 0.5),
# LayerNorm N(1, 0.2) / N(0, 0.2), linear std gain / sqrt(fan_in), 1.5 for Q
# and K), plus the GLU's: its activated half gets the gain at which the erf
# and tanh GELUs differ most, the other half 1, the output projection 1.5.
GAIN_GLU_ACTIVATED = fam.GAIN_INTERMEDIATE
GAIN_GLU_LINEAR = 1.0
GAIN_GLU_OUTPUT = 1.5


@dataclass
class Spec:
    name: str                  # fixture directory
    arch: str                  # "nomic_bert" | "new" | "modernbert" | "jina_bert"
    seed: int
    layers: int
    hidden: int
    heads: int
    intermediate: int
    vocab: int
    max_positions: int
    eps: float
    type_vocab: int = 0        # 0: no token-type embeddings
    pad: int = 0
    act: str = "gelu"          # of the GLU's activated half: "gelu" (erf) or "silu"
    rope_theta: float = 10000.0        # nomic rotary_emb_base, GTE rope_theta, ModernBERT global
    rope_fraction: float = 1.0         # nomic rotary_emb_fraction
    rope_interleaved: bool = False     # nomic rotary_emb_interleaved
    ntk_factor: Optional[float] = None  # GTE rope_scaling {"type": "ntk", "factor": f}
    local_rope_theta: float = 10000.0  # ModernBERT
    global_every: int = 1              # ModernBERT global_attn_every_n_layers
    local_window: int = -1             # ModernBERT local_attention (the whole window)
    qkv_bias: bool = True      # nomic qkv_proj_bias (Wqkv and out_proj); ModernBERT attention_bias
    mlp_in_bias: bool = False  # nomic mlp_fc1_bias; ModernBERT mlp_bias (Wi and Wo)
    mlp_out_bias: bool = True  # nomic mlp_fc2_bias
    norm_bias: bool = True     # ModernBERT norm_bias
    dtype: str = "F32"

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def rotary_dim(self) -> int:
        return int(self.head_dim * self.rope_fraction)

    @property
    def max_length(self) -> int:
        return self.max_positions


FIXTURES = [
    # nomic-embed-text-v1.5: rotary_emb_base 1000, fraction 1.0, half-split,
    # no linear biases, type_vocab_size 2, eps 1e-12, vocab a multiple of 64.
    Spec("nomic_bert", "nomic_bert", seed=3001, layers=2, hidden=64, heads=4, intermediate=128,
         vocab=128, max_positions=512, eps=1e-12, type_vocab=2, act="silu", rope_theta=1000.0,
         qkv_bias=False, mlp_in_bias=False, mlp_out_bias=False),
    # gte-base-en-v1.5: rope_theta 500000, NTK factor 2.0, type_vocab_size 0.
    Spec("new", "new", seed=3002, layers=2, hidden=64, heads=4, intermediate=128, vocab=120,
         max_positions=512, eps=1e-12, type_vocab=0, rope_theta=500000.0, ntk_factor=2.0),
    # modernbert-base's rules with 4 layers (global, local, local, global) and a
    # 64-token window, so that the 300-token input crosses it.
    Spec("modernbert", "modernbert", seed=3003, layers=4, hidden=64, heads=4, intermediate=96,
         vocab=120, max_positions=512, eps=1e-5, pad=3, rope_theta=160000.0,
         local_rope_theta=10000.0, global_every=3, local_window=64, qkv_bias=False,
         mlp_in_bias=False, mlp_out_bias=False, norm_bias=False),
    # jina-embeddings-v2 with 6 heads (not a power of two) of 16.
    Spec("jina_bert", "jina_bert", seed=3004, layers=2, hidden=96, heads=6, intermediate=192,
         vocab=120, max_positions=512, eps=1e-12, type_vocab=2),
]

# The hub checkpoints' shapes (random weights), for benchmarks: real_spec(arch).
REAL_SHAPES = {
    "nomic_bert": dict(layers=12, hidden=768, heads=12, intermediate=3072, vocab=30528,
                       max_positions=8192),                    # nomic-embed-text-v1.5
    "new": dict(layers=12, hidden=768, heads=12, intermediate=3072, vocab=30528,
                max_positions=8192),                           # gte-base-en-v1.5
    "modernbert": dict(layers=22, hidden=768, heads=12, intermediate=1152, vocab=50368,
                       max_positions=8192, local_window=128, pad=50283),  # modernbert-base
    "jina_bert": dict(layers=12, hidden=768, heads=12, intermediate=3072, vocab=30528,
                      max_positions=8192),                     # jina-embeddings-v2-base-en
}


def real_spec(arch: str, **overrides) -> Spec:
    """The family's fixture rules at the hub checkpoint's shape."""
    base = next(s for s in FIXTURES if s.arch == arch)
    return replace(base, name=arch + "_real", **{**REAL_SHAPES[arch], **overrides})


# ---------------------------------------------------------------------------
# Shared pieces of the forward passes
# ---------------------------------------------------------------------------

class LayerNormNoBias(nn.Module):
    """nn.LayerNorm(bias=False) (torch >= 2.1), as ModernBERT's norms."""

    def __init__(self, n: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps


def inverse_frequencies(dim: int, theta: float, dtype, ntk_factor: Optional[float] = None,
                        mutation: Optional[str] = None) -> torch.Tensor:
    """1 / theta^(2i/dim), i < dim/2. NTK (new-impl NTKScalingRotaryEmbedding
    with mixed_b None, TEI gte.rs): base theta * factor, then divided by
    factor^(2/dim)."""
    exponents = torch.arange(0, dim, 2, dtype=dtype) / dim
    if ntk_factor is None or mutation == "ntk_ignored":
        return 1.0 / (theta ** exponents)
    inv = 1.0 / ((theta * ntk_factor) ** exponents)
    if mutation == "ntk_base_only":
        return inv
    return inv / ntk_factor ** (2.0 / dim)


def rotary_tables(length: int, inv_freq: torch.Tensor):
    """cos, sin of position * inv_freq: [L, rotary_dim / 2], positions 0..L-1."""
    angles = torch.arange(length, dtype=inv_freq.dtype)[:, None] * inv_freq[None, :]
    return torch.cos(angles), torch.sin(angles)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, interleaved: bool):
    """x: [B, heads, L, d]. The first 2 * cos.shape[-1] dims rotate, the rest
    pass through. Half-split (GPT-NeoX, rotate_half): dim i pairs with
    i + r/2; interleaved (GPT-J): 2i with 2i + 1; pair i turns by pos * inv_freq[i]."""
    r = cos.shape[-1] * 2
    rot, rest = x[..., :r], x[..., r:]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
        out = torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)
    else:
        x1, x2 = rot[..., : r // 2], rot[..., r // 2:]
        out = torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
    return torch.cat((out, rest), dim=-1)


def padding_bias(attention_mask: torch.Tensor, dtype) -> torch.Tensor:
    """get_extended_attention_mask: [B, 1, 1, L], 0 for real keys, dtype's min for padding."""
    return (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min


def alibi_slopes(heads: int) -> List[float]:
    """_get_alibi_head_slopes of jina-bert-implementation (TEI alibi.rs): for
    n a power of two, start^(i+1) with start = 2^(-8/n); otherwise those of
    the largest power of two p < n, then every other slope of 2p."""
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]

    if math.log2(heads).is_integer():
        return power_of_2(heads)
    p = 2 ** math.floor(math.log2(heads))
    return power_of_2(p) + alibi_slopes(2 * p)[0::2][: heads - p]


class LongModel(nn.Module):
    """Common helpers; subclasses define the tree and forward(ids, types, mask)."""

    def __init__(self, s: Spec):
        super().__init__()
        self.spec = s
        self.mutation: Optional[str] = None   # a broken rule, for check (b)
        # Rotary angles are computed in float64 and then cast, as an engine
        # builds its tables once; float32 angles (the reference code's) are
        # off by up to ~2e-5 in the outputs at position 300 already.
        self.table_dtype = torch.float64

    def norm(self, module: nn.Module, x: torch.Tensor) -> torch.Tensor:
        bias = getattr(module, "bias", None)
        if self.mutation == "no_norm_bias":
            bias = None
        return F.layer_norm(x, (self.spec.hidden,), module.weight, bias, module.eps)

    def activation(self, x: torch.Tensor) -> torch.Tensor:
        s, m = self.spec, self.mutation
        if s.act == "silu":
            return F.gelu(x) if m == "gelu_for_silu" else F.silu(x)
        return F.gelu(x, approximate="tanh") if m == "tanh_gelu" else F.gelu(x)

    def glu(self, activated: torch.Tensor, linear: torch.Tensor) -> torch.Tensor:
        if self.mutation == "glu_swapped":
            activated, linear = linear, activated
        return self.activation(activated) * linear

    def rope(self, length: int, dtype, theta: float, ntk_factor: Optional[float] = None):
        s, m = self.spec, self.mutation
        if m == "rotary_off":
            return None
        dim = s.head_dim // 2 if m == "rotary_half_dims" else s.rotary_dim
        if m == "rotary_base_10000":
            theta = 10000.0
        inv = inverse_frequencies(dim, theta, self.table_dtype, ntk_factor, m)
        return tuple(t.to(dtype) for t in rotary_tables(length, inv))

    def interleaved(self) -> bool:
        return self.spec.rope_interleaved != (self.mutation == "rotary_interleaved")

    def attend(self, q, k, v, bias, scores_bias=None):
        """q, k, v: [B, heads, L, d]; softmax(q k^T / sqrt(d) + bias) v as [B, L, H]."""
        B, h, L, d = q.shape
        scale = math.sqrt(self.spec.head_dim)
        scores = torch.matmul(q, k.transpose(-1, -2))
        if scores_bias is not None and self.mutation == "alibi_before_scale":
            scores = scores + scores_bias
            scores_bias = None
        scores = scores / scale
        if scores_bias is not None:
            scores = scores + scores_bias
        probs = torch.softmax(scores + bias, dim=-1)
        return torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(B, L, h * d)

    def packed_attention(self, x, wqkv: nn.Linear, wo: nn.Linear, bias, rope):
        """Wqkv rows: [Q | K | V], each head-major (nomic "(three h d)", GTE
        split(all_head_size), ModernBERT view(bs, -1, 3, heads, d))."""
        s = self.spec
        B, L, H = x.shape
        qkv = wqkv(x).reshape(B, L, 3, s.heads, s.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        if rope is not None:
            cos, sin = rope
            q = apply_rotary(q, cos, sin, self.interleaved())
            k = apply_rotary(k, cos, sin, self.interleaved())
        return wo(self.attend(q, k, v, bias))


# ---------------------------------------------------------------------------
# nomic_bert (modeling_hf_nomic_bert.py)
# ---------------------------------------------------------------------------

class NomicBertEmbeddings(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.word_embeddings = nn.Embedding(s.vocab, s.hidden)
        if s.type_vocab:
            self.token_type_embeddings = nn.Embedding(s.type_vocab, s.hidden)


class NomicBertAttention(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.Wqkv = nn.Linear(s.hidden, 3 * s.hidden, bias=s.qkv_bias)
        self.out_proj = nn.Linear(s.hidden, s.hidden, bias=s.qkv_bias)


class NomicBertGatedMLP(nn.Module):  # "NomciBertGatedMLP" upstream
    def __init__(self, s: Spec):
        super().__init__()
        self.fc11 = nn.Linear(s.hidden, s.intermediate, bias=s.mlp_in_bias)
        self.fc12 = nn.Linear(s.hidden, s.intermediate, bias=s.mlp_in_bias)
        self.fc2 = nn.Linear(s.intermediate, s.hidden, bias=s.mlp_out_bias)


class NomicBertBlock(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.attn = NomicBertAttention(s)
        self.mlp = NomicBertGatedMLP(s)
        self.norm1 = nn.LayerNorm(s.hidden, eps=s.eps)
        self.norm2 = nn.LayerNorm(s.hidden, eps=s.eps)


class NomicBertEncoder(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.layers = nn.ModuleList([NomicBertBlock(s) for _ in range(s.layers)])


class NomicBertModel(LongModel):
    def __init__(self, s: Spec):
        super().__init__(s)
        self.embeddings = NomicBertEmbeddings(s)
        self.emb_ln = nn.LayerNorm(s.hidden, eps=s.eps)
        self.encoder = NomicBertEncoder(s)

    def forward(self, input_ids, token_type_ids, attention_mask):
        s, e = self.spec, self.embeddings
        x = e.word_embeddings(input_ids)
        if s.type_vocab and self.mutation != "no_token_types":
            x = x + e.token_type_embeddings(token_type_ids)
        x = self.norm(self.emb_ln, x)
        bias = padding_bias(attention_mask, x.dtype)
        rope = self.rope(input_ids.shape[1], x.dtype, s.rope_theta)
        for block in self.encoder.layers:                   # prenorm false
            a = self.packed_attention(x, block.attn.Wqkv, block.attn.out_proj, bias, rope)
            x = self.norm(block.norm1, a + x)
            mlp = block.mlp                                 # y = fc11(x) * act(fc12(x))
            x = self.norm(block.norm2, mlp.fc2(self.glu(mlp.fc12(x), mlp.fc11(x))) + x)
        return x


# ---------------------------------------------------------------------------
# new (GTE; Alibaba-NLP/new-impl modeling.py)
# ---------------------------------------------------------------------------

class NewEmbeddings(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.word_embeddings = nn.Embedding(s.vocab, s.hidden)
        if s.type_vocab:
            self.token_type_embeddings = nn.Embedding(s.type_vocab, s.hidden)
        self.LayerNorm = nn.LayerNorm(s.hidden, eps=s.eps)


class NewAttention(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.qkv_proj = nn.Linear(s.hidden, 3 * s.hidden, bias=True)   # pack_qkv
        self.o_proj = nn.Linear(s.hidden, s.hidden, bias=True)


class NewGatedMLP(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.up_gate_proj = nn.Linear(s.hidden, 2 * s.intermediate, bias=False)
        self.down_proj = nn.Linear(s.intermediate, s.hidden, bias=True)


class NewLayer(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.attention = NewAttention(s)
        self.mlp = NewGatedMLP(s)
        self.attn_ln = nn.LayerNorm(s.hidden, eps=s.eps)
        self.mlp_ln = nn.LayerNorm(s.hidden, eps=s.eps)


class NewModel(LongModel):
    def __init__(self, s: Spec):
        super().__init__(s)
        self.embeddings = NewEmbeddings(s)
        self.encoder = fam.LayerList([NewLayer(s) for _ in range(s.layers)])

    def forward(self, input_ids, token_type_ids, attention_mask):
        s, e = self.spec, self.embeddings
        x = e.word_embeddings(input_ids)
        if s.type_vocab and self.mutation != "no_token_types":
            x = x + e.token_type_embeddings(token_type_ids)
        x = self.norm(e.LayerNorm, x)
        bias = padding_bias(attention_mask, x.dtype)
        rope = self.rope(input_ids.shape[1], x.dtype, s.rope_theta, s.ntk_factor)
        for layer in self.encoder.layer:
            at = layer.attention
            x = self.norm(layer.attn_ln, x + self.packed_attention(x, at.qkv_proj, at.o_proj,
                                                                   bias, rope))
            up, gate = torch.split(layer.mlp.up_gate_proj(x), s.intermediate, dim=-1)
            x = self.norm(layer.mlp_ln, x + layer.mlp.down_proj(self.glu(gate, up)))
        return x


# ---------------------------------------------------------------------------
# modernbert (transformers' modeling_modernbert.py)
# ---------------------------------------------------------------------------

def modernbert_norm(s: Spec) -> nn.Module:
    return nn.LayerNorm(s.hidden, eps=s.eps) if s.norm_bias else LayerNormNoBias(s.hidden, s.eps)


class ModernBertEmbeddings(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.tok_embeddings = nn.Embedding(s.vocab, s.hidden)
        self.norm = modernbert_norm(s)


class ModernBertAttention(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.Wqkv = nn.Linear(s.hidden, 3 * s.hidden, bias=s.qkv_bias)
        self.Wo = nn.Linear(s.hidden, s.hidden, bias=s.qkv_bias)


class ModernBertMLP(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.Wi = nn.Linear(s.hidden, 2 * s.intermediate, bias=s.mlp_in_bias)
        self.Wo = nn.Linear(s.intermediate, s.hidden, bias=s.mlp_in_bias)


class ModernBertEncoderLayer(nn.Module):
    def __init__(self, s: Spec, layer_id: int):
        super().__init__()
        self.attn_norm = nn.Identity() if layer_id == 0 else modernbert_norm(s)
        self.attn = ModernBertAttention(s)
        self.mlp_norm = modernbert_norm(s)
        self.mlp = ModernBertMLP(s)


class ModernBertModel(LongModel):
    def __init__(self, s: Spec):
        super().__init__(s)
        self.embeddings = ModernBertEmbeddings(s)
        self.layers = nn.ModuleList([ModernBertEncoderLayer(s, i) for i in range(s.layers)])
        self.final_norm = modernbert_norm(s)

    def is_local(self, layer_id: int) -> bool:
        n = self.spec.global_every
        if self.mutation == "global_layers_shifted":
            return (layer_id + 1) % n != 0
        return layer_id % n != 0

    def forward(self, input_ids, token_type_ids, attention_mask):
        s, m = self.spec, self.mutation
        x = self.norm(self.embeddings.norm, self.embeddings.tok_embeddings(input_ids))
        L = input_ids.shape[1]
        global_bias = padding_bias(attention_mask, x.dtype)
        positions = torch.arange(L)
        distance = (positions[None, :] - positions[:, None]).abs()
        half = s.local_window // 2
        window = (distance < half if m == "window_exclusive"
                  else distance <= s.local_window if m == "window_not_halved"
                  else distance <= half)
        if m != "window_ignored":
            local_bias = global_bias.masked_fill(~window[None, None], torch.finfo(x.dtype).min)
        else:
            local_bias = global_bias
        local_theta = s.rope_theta if m == "local_theta_global" else s.local_rope_theta
        global_rope = self.rope(L, x.dtype, s.rope_theta)
        local_rope = self.rope(L, x.dtype, local_theta)
        for i, layer in enumerate(self.layers):
            local = self.is_local(i)
            if i == 0:   # attn_norm is nn.Identity()
                h = F.layer_norm(x, (s.hidden,), eps=s.eps) if m == "layer0_attn_norm" else x
            else:
                h = self.norm(layer.attn_norm, x)
            x = x + self.packed_attention(h, layer.attn.Wqkv, layer.attn.Wo,
                                          local_bias if local else global_bias,
                                          local_rope if local else global_rope)
            inp, gate = layer.mlp.Wi(self.norm(layer.mlp_norm, x)).chunk(2, dim=-1)
            x = x + layer.mlp.Wo(self.glu(inp, gate))
        return x if m == "no_final_norm" else self.norm(self.final_norm, x)


class ModernBertPredictionHead(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.dense = nn.Linear(s.hidden, s.hidden, bias=False)      # classifier_bias false
        self.norm = modernbert_norm(s)


class DecoderBias(nn.Module):
    """ModernBertForMaskedLM.decoder: the weight is tied to tok_embeddings and
    not saved; decoder_bias true saves its bias."""

    def __init__(self, s: Spec):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(s.vocab))


class ModernBertForMaskedLM(nn.Module):
    """Checkpoint layout "model." + head + decoder.bias; forward is the encoder's."""

    def __init__(self, s: Spec):
        super().__init__()
        self.spec = s
        self.model = ModernBertModel(s)
        self.head = ModernBertPredictionHead(s)
        self.decoder = DecoderBias(s)

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

    def forward(self, input_ids, token_type_ids, attention_mask):
        return self.model(input_ids, token_type_ids, attention_mask)


# ---------------------------------------------------------------------------
# jina_bert (jina-bert-implementation modeling_bert.py)
# ---------------------------------------------------------------------------

class JinaBertEmbeddings(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.word_embeddings = nn.Embedding(s.vocab, s.hidden)
        self.token_type_embeddings = nn.Embedding(s.type_vocab, s.hidden)
        self.LayerNorm = nn.LayerNorm(s.hidden, eps=s.eps)


class JinaBertGLUMLP(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.gated_layers = nn.Linear(s.hidden, 2 * s.intermediate, bias=False)
        self.wo = nn.Linear(s.intermediate, s.hidden)
        self.layernorm = nn.LayerNorm(s.hidden, eps=s.eps)


class JinaBertLayer(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        # BertAttention: self.{query, key, value}, output.{dense, LayerNorm}
        self.attention = fam.Attention(s)
        self.mlp = JinaBertGLUMLP(s)


class JinaBertModel(LongModel):
    def __init__(self, s: Spec):
        super().__init__(s)
        self.embeddings = JinaBertEmbeddings(s)
        self.encoder = fam.LayerList([JinaBertLayer(s) for _ in range(s.layers)])

    def alibi(self, length: int, dtype):
        """[heads, L, L]: -slope_h * |i - j| (symmetric, bidirectional)."""
        m = self.mutation
        if m == "alibi_off":
            return None
        heads = self.spec.heads
        slopes = (alibi_slopes(2 ** math.ceil(math.log2(heads)))[:heads]
                  if m == "alibi_next_pow2" else alibi_slopes(heads))
        slopes = torch.tensor(slopes, dtype=dtype) * (-1.0 if m == "alibi_sign" else 1.0)
        positions = torch.arange(length)
        distance = (positions[None, :] - positions[:, None]).abs().to(dtype)
        return -slopes[:, None, None] * distance[None]

    def forward(self, input_ids, token_type_ids, attention_mask):
        s, e = self.spec, self.embeddings
        x = e.word_embeddings(input_ids)
        if self.mutation != "no_token_types":
            x = x + e.token_type_embeddings(token_type_ids)
        x = self.norm(e.LayerNorm, x)
        B, L, H = x.shape
        bias = padding_bias(attention_mask, x.dtype)
        alibi = self.alibi(L, x.dtype)

        def heads(t):
            return t.reshape(B, L, s.heads, s.head_dim).permute(0, 2, 1, 3)

        for layer in self.encoder.layer:
            a = layer.attention
            q, k, v = heads(a.self.query(x)), heads(a.self.key(x)), heads(a.self.value(x))
            ctx = self.attend(q, k, v, bias, None if alibi is None else alibi[None])
            x = self.norm(a.output.LayerNorm, a.output.dense(ctx) + x)
            gated, non_gated = torch.split(layer.mlp.gated_layers(x), s.intermediate, dim=-1)
            x = self.norm(layer.mlp.layernorm, layer.mlp.wo(self.glu(gated, non_gated)) + x)
        return x


MODELS = {"nomic_bert": NomicBertModel, "new": NewModel, "modernbert": ModernBertForMaskedLM,
          "jina_bert": JinaBertModel}


# ---------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------

def row_gains(name: str, s: Spec, rows: int) -> torch.Tensor:
    """The gain of each output row of a linear weight (see GAIN_* above)."""
    module = name.split(".")[-2]
    H, I = s.hidden, s.intermediate
    qk, v = fam.GAIN_QUERY_KEY, fam.GAIN_VALUE_OUTPUT
    act, lin = GAIN_GLU_ACTIVATED, GAIN_GLU_LINEAR
    if module in ("Wqkv", "qkv_proj"):
        return torch.tensor([qk] * (2 * H) + [v] * H)
    if module in ("query", "key"):
        return torch.full((rows,), qk)
    if module == "fc12":            # nomic: silu(fc12) * fc11
        return torch.full((rows,), act)
    if module == "fc11":
        return torch.full((rows,), lin)
    if module == "up_gate_proj":    # GTE: [up | gate]
        return torch.tensor([lin] * I + [act] * I)
    if module in ("Wi", "gated_layers"):   # ModernBERT, Jina: [activated | linear]
        return torch.tensor([act] * I + [lin] * I)
    if module in ("fc2", "down_proj", "wo") or name.endswith("mlp.Wo.weight"):
        return torch.full((rows,), GAIN_GLU_OUTPUT)
    return torch.full((rows,), v)   # value, attention outputs, prediction head


def init_weights(model: nn.Module, s: Spec, gen: torch.Generator) -> None:
    with torch.no_grad():
        for name, p in model.named_parameters():
            module = name.split(".")[-2]
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            is_norm = "norm" in module.lower() or module.endswith("_ln")
            if is_norm:
                if name.endswith("weight"):
                    p.copy_(1.0 + fam.STD_GAMMA * noise)
                else:
                    p.copy_(fam.STD_BETA * noise)
            elif module.endswith("embeddings"):
                p.copy_(fam.STD_EMBEDDING * noise)
            elif name.endswith("bias"):
                p.copy_(fam.STD_BIAS * noise)
            else:
                std = row_gains(name, s, p.shape[0]) / math.sqrt(p.shape[1])
                p.copy_(noise * std[:, None])


def build_model(s: Spec, seed: Optional[int] = None) -> nn.Module:
    """The family's torch model at s's size, random weights (fixture gains),
    in eval mode. forward(input_ids, token_type_ids, attention_mask) ->
    last hidden states [B, L, H]; token_type_ids is ignored by families
    without token types."""
    model = MODELS[s.arch](s)
    init_weights(model, s, torch.Generator().manual_seed(s.seed if seed is None else seed))
    return model.eval()


def export_onnx(model: nn.Module, path: str, opset: int = 14, batch: int = 2,
                length: int = 9, table_dtype=torch.float32) -> None:
    """torch.onnx.export with dynamic batch and sequence axes. Inputs int64
    input_ids, token_type_ids, attention_mask [B, L]; output
    last_hidden_state [B, L, H]. Needs no onnxruntime. The rotary tables are
    computed in the graph in table_dtype (float32 by default, as the reference
    code does and every runtime supports)."""
    s = model.spec
    model.table_dtype = table_dtype
    ids = torch.randint(0, s.vocab, (batch, length), generator=torch.Generator().manual_seed(0))
    types = torch.zeros(batch, length, dtype=torch.long)
    mask = torch.ones(batch, length, dtype=torch.long)
    mask[1:, length // 2:] = 0
    axes = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(model, (ids, types, mask), path, opset_version=opset,
                          input_names=["input_ids", "token_type_ids", "attention_mask"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": axes, "token_type_ids": axes,
                                        "attention_mask": axes, "last_hidden_state": axes})
    model.table_dtype = torch.float64


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

def hub_number(x: float):
    """Integral values as the hub's nomic and GTE configs write them (1000, 500000)."""
    return int(x) if float(x).is_integer() else x


def config_json(s: Spec) -> dict:
    torch_dtype = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[s.dtype]
    if s.arch == "nomic_bert":
        impl = "nomic-ai/nomic-bert-2048--"
        return {
            "activation_function": "swiglu",
            "architectures": ["NomicBertModel"],
            "attn_pdrop": 0.0,
            "auto_map": {
                "AutoConfig": impl + "configuration_hf_nomic_bert.NomicBertConfig",
                "AutoModel": impl + "modeling_hf_nomic_bert.NomicBertModel",
                "AutoModelForMaskedLM": impl + "modeling_hf_nomic_bert.NomicBertForPreTraining",
            },
            "bos_token_id": None, "causal": False, "dense_seq_output": True, "embd_pdrop": 0.0,
            "eos_token_id": None, "fused_bias_fc": True, "fused_dropout_add_ln": True,
            "initializer_range": 0.02, "layer_norm_epsilon": s.eps,
            "max_trained_positions": 2048, "mlp_fc1_bias": s.mlp_in_bias,
            "mlp_fc2_bias": s.mlp_out_bias, "model_type": "nomic_bert", "n_embd": s.hidden,
            "n_head": s.heads, "n_inner": s.intermediate, "n_layer": s.layers,
            "n_positions": s.max_positions, "pad_vocab_size_multiple": 64, "prenorm": False,
            "qkv_proj_bias": s.qkv_bias, "resid_pdrop": 0.0,
            "rotary_emb_base": hub_number(s.rope_theta),
            "rotary_emb_fraction": s.rope_fraction, "rotary_emb_interleaved": s.rope_interleaved,
            "rotary_emb_scale_base": None, "rotary_scaling_factor": None,
            "torch_dtype": torch_dtype, "type_vocab_size": s.type_vocab, "use_cache": True,
            "use_flash_attn": True, "use_rms_norm": False, "use_xentropy": True,
            "vocab_size": s.vocab,
        }
    if s.arch == "new":
        impl = "Alibaba-NLP/new-impl--"
        return {
            "architectures": ["NewModel"],
            "attention_probs_dropout_prob": 0.0,
            "auto_map": {"AutoConfig": impl + "configuration.NewConfig",
                         "AutoModel": impl + "modeling.NewModel",
                         "AutoModelForMaskedLM": impl + "modeling.NewForMaskedLM",
                         "AutoModelForSequenceClassification":
                             impl + "modeling.NewForSequenceClassification"},
            "classifier_dropout": None, "hidden_act": s.act, "hidden_dropout_prob": 0.1,
            "hidden_size": s.hidden, "initializer_range": 0.02,
            "intermediate_size": s.intermediate, "layer_norm_eps": s.eps,
            "layer_norm_type": "layer_norm", "logn_attention_clip1": False,
            "logn_attention_scale": False, "max_position_embeddings": s.max_positions,
            "model_type": "new", "num_attention_heads": s.heads,
            "num_hidden_layers": s.layers, "pack_qkv": True, "pad_token_id": s.pad,
            "position_embedding_type": "rope",
            "rope_scaling": {"factor": s.ntk_factor, "type": "ntk"},
            "rope_theta": hub_number(s.rope_theta),
            "torch_dtype": torch_dtype, "type_vocab_size": s.type_vocab, "unpad_inputs": False,
            "use_memory_efficient_attention": False, "vocab_size": s.vocab,
        }
    if s.arch == "modernbert":
        return {
            "architectures": ["ModernBertForMaskedLM"], "attention_bias": s.qkv_bias,
            "attention_dropout": 0.0, "bos_token_id": 1, "classifier_activation": "gelu",
            "classifier_bias": False, "classifier_dropout": 0.0, "classifier_pooling": "mean",
            "cls_token_id": 1, "decoder_bias": True, "deterministic_flash_attn": False,
            "embedding_dropout": 0.0, "eos_token_id": 2,
            "global_attn_every_n_layers": s.global_every, "global_rope_theta": s.rope_theta,
            "gradient_checkpointing": False, "hidden_activation": s.act,
            "hidden_size": s.hidden, "initializer_cutoff_factor": 2.0,
            "initializer_range": 0.02, "intermediate_size": s.intermediate,
            "layer_norm_eps": s.eps, "local_attention": s.local_window,
            "local_rope_theta": s.local_rope_theta, "max_position_embeddings": s.max_positions,
            "mlp_bias": s.mlp_in_bias, "mlp_dropout": 0.0, "model_type": "modernbert",
            "norm_bias": s.norm_bias, "norm_eps": s.eps, "num_attention_heads": s.heads,
            "num_hidden_layers": s.layers, "pad_token_id": s.pad,
            "position_embedding_type": "absolute", "sep_token_id": 2,
            "sparse_pred_ignore_index": -100, "sparse_prediction": False,
            "torch_dtype": torch_dtype, "vocab_size": s.vocab,
        }
    impl = "jinaai/jina-bert-implementation--"
    return {
        "_name_or_path": "jinaai/jina-bert-implementation",
        "architectures": ["JinaBertForMaskedLM"], "attention_probs_dropout_prob": 0.0,
        "attn_implementation": "torch",
        "auto_map": {"AutoConfig": impl + "configuration_bert.JinaBertConfig",
                     "AutoModel": impl + "modeling_bert.JinaBertModel",
                     "AutoModelForMaskedLM": impl + "modeling_bert.JinaBertForMaskedLM",
                     "AutoModelForSequenceClassification":
                         impl + "modeling_bert.JinaBertForSequenceClassification"},
        "classifier_dropout": None, "emb_pooler": "mean", "feed_forward_type": "geglu",
        "gradient_checkpointing": False, "hidden_act": s.act, "hidden_dropout_prob": 0.1,
        "hidden_size": s.hidden, "initializer_range": 0.02, "intermediate_size": s.intermediate,
        "layer_norm_eps": s.eps, "max_position_embeddings": s.max_positions,
        "model_max_length": s.max_positions, "model_type": "bert",
        "num_attention_heads": s.heads, "num_hidden_layers": s.layers, "pad_token_id": s.pad,
        "position_embedding_type": "alibi", "torch_dtype": torch_dtype,
        "type_vocab_size": s.type_vocab, "use_cache": True, "vocab_size": s.vocab,
    }


def make_inputs(s: Spec, rng: np.random.RandomState) -> List[dict]:
    inputs = []
    for i, n in enumerate(LENGTHS):
        item = {"ids": rng.randint(0, s.vocab, size=n).tolist()}
        if s.type_vocab > 1 and n > 1 and i % 2 == 0:   # 17, 100 and 300 tokens
            item["token_type_ids"] = [0] * (n // 2) + [1] * (n - n // 2)
        inputs.append(item)
    longest = inputs[-1]["ids"]
    longest[-1] = s.vocab - 1
    longest[len(longest) // 2] = s.pad   # the pad id inside a sequence is a token like any
    return inputs


def run(model: nn.Module, inputs: List[dict], dtype, mutation=None):
    s = model.spec
    ids, types, mask = fam.padded_batch(inputs, s.pad)
    model = model.to(dtype)
    model.mutation = mutation
    try:
        with torch.no_grad():
            states = model(ids, types, mask)
    finally:
        model.mutation = None
    return [{"states": states[b, :len(item["ids"])].double().numpy()}
            for b, item in enumerate(inputs)]


MUTATIONS = {
    "rotary_off": lambda s: s.arch in ("nomic_bert", "new", "modernbert"),
    "rotary_interleaved": lambda s: s.arch in ("nomic_bert", "new", "modernbert"),
    "rotary_base_10000": lambda s: s.arch == "nomic_bert",
    "rotary_half_dims": lambda s: s.arch == "nomic_bert",   # a fraction of 0.5 for 1.0
    "ntk_ignored": lambda s: s.ntk_factor is not None,
    "ntk_base_only": lambda s: s.ntk_factor is not None,
    "glu_swapped": lambda s: True,
    "tanh_gelu": lambda s: s.act == "gelu",
    "gelu_for_silu": lambda s: s.act == "silu",
    "no_token_types": lambda s: s.type_vocab > 1,
    "no_norm_bias": lambda s: s.norm_bias,
    "window_ignored": lambda s: s.arch == "modernbert",
    "window_exclusive": lambda s: s.arch == "modernbert",
    "window_not_halved": lambda s: s.arch == "modernbert",
    "local_theta_global": lambda s: s.arch == "modernbert",
    "global_layers_shifted": lambda s: s.arch == "modernbert",
    "layer0_attn_norm": lambda s: s.arch == "modernbert",
    "no_final_norm": lambda s: s.arch == "modernbert",
    "alibi_off": lambda s: s.arch == "jina_bert",
    "alibi_next_pow2": lambda s: s.arch == "jina_bert",
    "alibi_sign": lambda s: s.arch == "jina_bert",
    "alibi_before_scale": lambda s: s.arch == "jina_bert",
}


def write_checkpoint(path: str, model: nn.Module, s: Spec) -> None:
    tensors = {name: t.detach().to(torch.float32).contiguous()
               for name, t in model.state_dict().items()}
    write_safetensors(path, tensors, s.dtype)


def generate(s: Spec) -> dict:
    torch.manual_seed(s.seed)
    model = build_model(s)
    inputs = make_inputs(s, np.random.RandomState(s.seed))

    ref = run(model, inputs, torch.float64)
    mutations = [m for m, applies in MUTATIONS.items() if applies(s)]
    moves = {}

    def distance(out):
        return fam.max_diff(out, ref)

    def run_on(xs, dtype, m=None):
        out = run(model, xs, dtype, m)
        if m is not None and dtype == torch.float64:
            moves[m] = distance(out)
        return out

    d32 = fam.self_check(
        s.name, run_on, inputs, ref,
        alone_diff=lambda alone, i: fam.max_diff(alone, [ref[i]]),
        batch_tolerance=fam.BATCH_TOLERANCE, mutations=mutations, distance=distance,
        mutation_floor=lambda m: fam.MUTATION_MARGIN.get(m, fam.MARGIN) * fam.PARITY_MAX_ABS,
        float32_ceiling=fam.PARITY_MAX_ABS / fam.MARGIN)
    model = model.to(torch.float32)

    target = os.path.join(OUT, s.name)
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(os.path.join(target, "model"))
    config = config_json(s)
    with open(os.path.join(target, "model", "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    write_checkpoint(os.path.join(target, "model", "model.safetensors"), model, s)

    def rounded(a):
        return [float(f"{v:.8g}") for v in a]

    reference = {
        "family": config["model_type"],
        # The engine registry's family name (GTE's model_type is "new").
        "architecture": {"new": "gte"}.get(s.name, s.name),
        "generator": GENERATOR,
        "max_length": s.max_length,
        "inputs": inputs,
        "hidden_states": [[rounded(row) for row in r["states"]] for r in ref],
        "cls": [rounded(r["states"][0]) for r in ref],
        "mean": [rounded(r["states"].mean(axis=0)) for r in ref],
        "layer_norm_placement": "pre" if s.arch == "modernbert" else "post",
    }
    with open(os.path.join(target, "reference.json"), "w") as f:
        json.dump(reference, f, separators=(",", ":"))
        f.write("\n")
    print(f"{s.name}: float32 torch within {d32:.2g}; written to {target}")
    return {"float32": d32, "mutations": moves}


def check_onnx(names) -> None:
    """Exports each family (small, float32) with opset 14 and validates the
    graph with onnx.checker; onnxruntime is not needed."""
    import onnx
    with tempfile.TemporaryDirectory() as tmp:
        for s in FIXTURES:
            if s.name not in names:
                continue
            model = build_model(s).to(torch.float32)
            path = os.path.join(tmp, s.name + ".onnx")
            export_onnx(model, path)
            graph = onnx.load(path)
            onnx.checker.check_model(graph)
            ops = sorted({n.op_type for n in graph.graph.node})
            print(f"{s.name}: ONNX opset {graph.opset_import[0].version}, "
                  f"{os.path.getsize(path)} bytes, ops {' '.join(ops)}")


def check_real(names) -> None:
    for arch in REAL_SHAPES:
        if arch not in names:
            continue
        model = build_model(real_spec(arch))
        count = sum(p.numel() for p in model.parameters())
        with torch.no_grad():
            ids = torch.randint(0, 1000, (1, 16))
            out = model(ids, torch.zeros_like(ids), torch.ones_like(ids))
        print(f"{arch} at hub shape: {count / 1e6:.1f}M parameters, output {tuple(out.shape)}")
        del model


def main(argv) -> int:
    flags = [a for a in argv[1:] if a.startswith("--")]
    names = [a for a in argv[1:] if not a.startswith("--")] or [s.name for s in FIXTURES]
    if "--check-onnx" in flags:
        check_onnx(names)
    if "--check-real" in flags:
        check_real(names)
    if flags:
        return 0
    for s in FIXTURES:
        if s.name in names:
            generate(s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
