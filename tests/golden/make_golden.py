#!/usr/bin/python3
"""Generates the golden fixtures in tests/golden/ (see README.md there).

Run with Debian's interpreter, which sees python3-torch (1.13) and numpy:

    /usr/bin/python3 tests/golden/make_golden.py

For each fixture it builds a small BERT from torch.nn modules with random
weights (nn.Embedding x3 + nn.LayerNorm, N x nn.TransformerEncoderLayer,
a final nn.LayerNorm for pre-LN, an optional nn.Linear + tanh pooler), writes
the weights with Hugging Face BertModel tensor names as safetensors (its own
writer: the safetensors package is not installed) plus config.json, and
writes reference.json computed in float64 with all sequences padded into one
batch and src_key_padding_mask marking the padding.

Self-checks, each of which fails the run:
  (a) padded batch == each sequence run alone (torch, float64, < 1e-10);
  (b) an independent numpy implementation of the DESIGN.md formulas, fed
      from the safetensors files read back by this script's own reader,
      agrees with the torch reference (< 1e-9);
  (c) where torch's fused "fast path" (torch._transformer_encoder_layer_fwd)
      applies, it agrees with the reference (< 1e-9);
  (d) sensitivity: deliberately broken variants of the numpy implementation
      (wrong attention scale, padding leaking into attention, the other GELU,
      unbiased variance, eps misplaced, missing biases, swapped K/V, head
      split transposed, positions off by one, token types ignored, ...) each
      miss the reference by more than 10x the parity test's tolerance
      (tests/engine/parity_test.cc: 1e-4 abs or 1e-5 relative per vector),
      so a fixture cannot pass a broken engine;
  (e) every tensor read back equals the tensor written, bit for bit, and
      torch's bf16 bit patterns equal an independent numpy
      round-to-nearest-even;
  (f) float32 torch with the same weights stays 10x inside that tolerance,
      so a float32 engine can pass.

Pass -v to print every broken model's effect.
"""

import json
import math
import os
import shutil
import struct
import sys
from dataclasses import dataclass
from typing import Dict, List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))

BATCH_TOLERANCE = 1e-10      # check (a)
NUMPY_TOLERANCE = 1e-9       # check (b)
FASTPATH_TOLERANCE = 1e-9    # check (c)
# tests/engine/parity_test.cc fails a vector (token state, cls, mean, pooler)
# when max |out - ref| > 1e-4 or ||out - ref|| / ||ref|| > 1e-5.
PARITY_MAX_ABS = 1e-4
PARITY_MAX_REL = 1e-5
MARGIN = 10.0                # check (d): broken models exceed a tolerance
                             # 10x over; check (f): float32 torch stays 10x
                             # inside both

# Initialisation (see README.md). Embeddings as BERT (std 0.02; LayerNorm
# follows). Biases and LayerNorm parameters large enough that a dropped bias
# or a LayerNorm bug moves the outputs far beyond the test tolerance.
# Linear weights: std = gain / sqrt(fan_in), not BERT's 0.02: with 0.02 the
# attention is nearly uniform and the FFN nearly linear, so a wrong attention
# scale (1/d for 1/sqrt(d)) or the tanh GELU for the erf GELU moved the
# outputs by less than the parity test's tolerance. Check (d) enforces this.
STD_EMBEDDING = 0.02
GAIN_QUERY_KEY = 1.5       # scores of std ~2.5: peaked, not one-hot
GAIN_VALUE_OUTPUT = 1.0    # value, attention output dense, FFN output, pooler
GAIN_INTERMEDIATE = 2.5    # FFN pre-activations of std ~2.5, where the
                           # erf and tanh GELU differ most (|x| ~ 2.7)
STD_BIAS = 0.5
STD_GAMMA = 0.2            # gamma ~ N(1, 0.2)
STD_BETA = 0.2             # beta ~ N(0, 0.2)


@dataclass
class Spec:
    name: str
    seed: int
    layers: int
    hidden: int
    heads: int
    intermediate: int
    vocab: int
    max_positions: int
    type_vocab: int
    hidden_act: str
    eps: float
    dtype: str                      # "F32" | "F16" | "BF16"
    placement: str                  # "post" | "pre"
    pooler: bool
    name_prefix: str = ""           # "bert." for the variants fixture
    gamma_beta: bool = False        # LayerNorm tensors named gamma/beta
    shards: int = 1


FIXTURES = [
    Spec("post_ln", seed=1001, layers=2, hidden=64, heads=4, intermediate=256,
         vocab=211, max_positions=64, type_vocab=2, hidden_act="gelu",
         eps=1e-12, dtype="F32", placement="post", pooler=True),
    Spec("pre_ln", seed=1002, layers=2, hidden=48, heads=4, intermediate=96,
         vocab=157, max_positions=40, type_vocab=2, hidden_act="gelu_new",
         eps=1e-5, dtype="F32", placement="pre", pooler=False),
    Spec("variants", seed=1003, layers=3, hidden=40, heads=5, intermediate=72,
         vocab=101, max_positions=48, type_vocab=3, hidden_act="relu",
         eps=1e-6, dtype="F16", placement="post", pooler=True,
         name_prefix="bert.", gamma_beta=True, shards=2),
    Spec("bf16", seed=1004, layers=1, hidden=32, heads=2, intermediate=64,
         vocab=97, max_positions=32, type_vocab=2,
         hidden_act="gelu_pytorch_tanh", eps=1e-12, dtype="BF16",
         placement="post", pooler=True),
]

TORCH_DTYPE = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
ITEMSIZE = {"F32": 4, "F16": 2, "BF16": 2, "I64": 8}


class CheckFailed(Exception):
    pass


def check(ok: bool, what: str) -> None:
    if not ok:
        raise CheckFailed(what)


# ---------------------------------------------------------------------------
# safetensors: writer and an independent reader
# ---------------------------------------------------------------------------

def bf16_bits_numpy(a: np.ndarray) -> np.ndarray:
    """Upper 16 bits of float32 after round-to-nearest-even (no NaNs here)."""
    u = np.ascontiguousarray(a, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype("<u2")


def tensor_bytes(t: torch.Tensor, dtype: str) -> bytes:
    if dtype == "I64":  # integer buffers (position_ids) some checkpoints carry
        return t.detach().to(torch.int64).contiguous().cpu().numpy().astype("<i8").tobytes()
    t = t.detach().to(torch.float32).contiguous().cpu()
    if dtype == "F32":
        return t.numpy().astype("<f4").tobytes()
    if dtype == "F16":
        return t.to(torch.float16).numpy().astype("<f2").tobytes()
    if dtype == "BF16":
        bits = t.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
        check(np.array_equal(bits, bf16_bits_numpy(t.numpy()).reshape(bits.shape)),
              "torch bf16 rounding differs from numpy round-to-nearest-even")
        return bits.astype("<u2").tobytes()
    raise ValueError(dtype)


def write_safetensors(path: str, tensors: Dict[str, torch.Tensor], default_dtype: str) -> int:
    """Writes tensors in the given order; returns the size of the data section.
    A value may be a (tensor, dtype) pair to give that tensor its own dtype."""
    header = {"__metadata__": {"format": "pt"}}
    payload = []
    offset = 0
    for name, value in tensors.items():
        t, dtype = value if isinstance(value, tuple) else (value, default_dtype)
        data = tensor_bytes(t, dtype)
        check(len(data) == t.numel() * ITEMSIZE[dtype], f"{name}: byte count")
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        payload.append(data)
        offset += len(data)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for data in payload:
            f.write(data)
    return offset


def read_safetensors(path: str) -> Dict[str, np.ndarray]:
    """Strict reader returning float64 arrays; validates the layout."""
    with open(path, "rb") as f:
        raw = f.read()
    check(len(raw) >= 8, f"{path}: too short")
    (n,) = struct.unpack("<Q", raw[:8])
    check(n % 8 == 0 and 8 + n <= len(raw), f"{path}: bad header length {n}")
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    check(header.get("__metadata__") == {"format": "pt"}, f"{path}: metadata")
    spans = []
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype, shape = info["dtype"], info["shape"]
        begin, end = info["data_offsets"]
        count = int(np.prod(shape)) if shape else 1
        check(end - begin == count * ITEMSIZE[dtype], f"{path}:{name}: size mismatch")
        check(0 <= begin <= end <= len(data), f"{path}:{name}: out of bounds")
        spans.append((begin, end))
        buf = data[begin:end]
        if dtype == "F32":
            a = np.frombuffer(buf, dtype="<f4").astype(np.float64)
        elif dtype == "F16":
            a = np.frombuffer(buf, dtype="<f2").astype(np.float64)
        elif dtype == "BF16":
            bits = np.frombuffer(buf, dtype="<u2").astype("<u4") << 16
            a = bits.view("<f4").astype(np.float64)
        else:
            raise CheckFailed(f"{path}:{name}: unknown dtype {dtype}")
        out[name] = a.reshape(shape)
    spans.sort()
    pos = 0
    for begin, end in spans:
        check(begin == pos, f"{path}: gap or overlap in data section at {pos}")
        pos = end
    check(pos == len(data), f"{path}: trailing bytes in data section")
    return out


def read_checkpoint(model_dir: str) -> Dict[str, np.ndarray]:
    """Reads model.safetensors or a sharded checkpoint via its index."""
    index_path = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index_path):
        with open(index_path) as f:
            index = json.load(f)
        tensors = {}
        total = 0
        for shard in sorted(set(index["weight_map"].values())):
            path = os.path.join(model_dir, shard)
            part = read_safetensors(path)
            with open(path, "rb") as f:
                (n,) = struct.unpack("<Q", f.read(8))
            total += os.path.getsize(path) - 8 - n
            for name, a in part.items():
                check(index["weight_map"].get(name) == shard,
                      f"{name}: in {shard} but index says {index['weight_map'].get(name)}")
                check(name not in tensors, f"{name}: in two shards")
                tensors[name] = a
        check(set(tensors) == set(index["weight_map"]), "index and shards disagree")
        check(index["metadata"]["total_size"] == total, "index total_size")
        return tensors
    return read_safetensors(os.path.join(model_dir, "model.safetensors"))


# ---------------------------------------------------------------------------
# The torch model: a BERT assembled from torch.nn modules
# ---------------------------------------------------------------------------

def make_activation(hidden_act: str):
    if hidden_act == "gelu":
        return "gelu"   # F.gelu, erf form
    if hidden_act in ("gelu_new", "gelu_pytorch_tanh"):
        return lambda x: F.gelu(x, approximate="tanh")
    if hidden_act == "relu":
        return "relu"
    raise ValueError(hidden_act)


class TorchBert(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        H = s.hidden
        self.spec = s
        self.word_embeddings = nn.Embedding(s.vocab, H)
        self.position_embeddings = nn.Embedding(s.max_positions, H)
        self.token_type_embeddings = nn.Embedding(s.type_vocab, H)
        self.embeddings_norm = nn.LayerNorm(H, eps=s.eps)
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(
                d_model=H, nhead=s.heads, dim_feedforward=s.intermediate,
                dropout=0.0, activation=make_activation(s.hidden_act),
                layer_norm_eps=s.eps, batch_first=True,
                norm_first=(s.placement == "pre"))
            for _ in range(s.layers)])
        self.final_norm = nn.LayerNorm(H, eps=s.eps) if s.placement == "pre" else None
        self.pooler = nn.Linear(H, H) if s.pooler else None

    def forward(self, ids, types, key_padding_mask, fast_path=False):
        B, L = ids.shape
        positions = torch.arange(L).unsqueeze(0).expand(B, L)
        x = (self.word_embeddings(ids) + self.position_embeddings(positions)
             + self.token_type_embeddings(types))
        x = self.embeddings_norm(x)
        for layer in self.layers:
            if fast_path:
                # eval + no_grad: TransformerEncoderLayer takes its fused path
                # when it supports the configuration.
                with torch.no_grad():
                    x = layer(x, src_key_padding_mask=key_padding_mask)
            else:
                # Grad enabled with parameters requiring grad keeps torch 1.13
                # on the documented composition (MultiheadAttention, Linear,
                # LayerNorm) instead of torch._transformer_encoder_layer_fwd.
                with torch.enable_grad():
                    x = layer(x, src_key_padding_mask=key_padding_mask).detach()
        if self.final_norm is not None:
            x = self.final_norm(x)
        pooled = torch.tanh(self.pooler(x[:, 0])) if self.pooler is not None else None
        return x, pooled


def fast_path_applies(model: TorchBert) -> bool:
    layer = model.layers[0]
    return bool(layer.activation_relu_or_gelu) and layer.self_attn.num_heads % 2 == 0


def init_weights(model: TorchBert, gen: torch.Generator, dtype: str) -> None:
    """Deterministic init, then rounding to the checkpoint dtype."""
    def normal_(p, mean, std):
        with torch.no_grad():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float32) * std + mean)

    def linear_(weight, bias, gain):
        normal_(weight, 0.0, gain / math.sqrt(weight.shape[1]))
        normal_(bias, 0.0, STD_BIAS)

    H = model.spec.hidden
    for module in (model.word_embeddings, model.position_embeddings,
                   model.token_type_embeddings):
        normal_(module.weight, 0.0, STD_EMBEDDING)
    norms = [model.embeddings_norm]
    for layer in model.layers:
        attn = layer.self_attn
        w, b = attn.in_proj_weight, attn.in_proj_bias
        linear_(w[:H], b[:H], GAIN_QUERY_KEY)                  # query
        linear_(w[H:2 * H], b[H:2 * H], GAIN_QUERY_KEY)        # key
        linear_(w[2 * H:], b[2 * H:], GAIN_VALUE_OUTPUT)       # value
        linear_(attn.out_proj.weight, attn.out_proj.bias, GAIN_VALUE_OUTPUT)
        linear_(layer.linear1.weight, layer.linear1.bias, GAIN_INTERMEDIATE)
        linear_(layer.linear2.weight, layer.linear2.bias, GAIN_VALUE_OUTPUT)
        norms += [layer.norm1, layer.norm2]
    if model.final_norm is not None:
        norms.append(model.final_norm)
    if model.pooler is not None:
        linear_(model.pooler.weight, model.pooler.bias, GAIN_VALUE_OUTPUT)
    for norm in norms:
        normal_(norm.weight, 1.0, STD_GAMMA)
        normal_(norm.bias, 0.0, STD_BETA)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(TORCH_DTYPE[dtype]).to(torch.float32))


def hf_tensors(model: TorchBert) -> Dict[str, torch.Tensor]:
    """Hugging Face BertModel names (canonical: no prefix, weight/bias)."""
    s = model.spec
    H = s.hidden
    t = {
        "embeddings.word_embeddings.weight": model.word_embeddings.weight,
        "embeddings.position_embeddings.weight": model.position_embeddings.weight,
        "embeddings.token_type_embeddings.weight": model.token_type_embeddings.weight,
        "embeddings.LayerNorm.weight": model.embeddings_norm.weight,
        "embeddings.LayerNorm.bias": model.embeddings_norm.bias,
    }
    for i, layer in enumerate(model.layers):
        p = f"encoder.layer.{i}."
        w, b = layer.self_attn.in_proj_weight, layer.self_attn.in_proj_bias
        for j, part in enumerate(("query", "key", "value")):
            t[p + f"attention.self.{part}.weight"] = w[j * H:(j + 1) * H]
            t[p + f"attention.self.{part}.bias"] = b[j * H:(j + 1) * H]
        t[p + "attention.output.dense.weight"] = layer.self_attn.out_proj.weight
        t[p + "attention.output.dense.bias"] = layer.self_attn.out_proj.bias
        t[p + "attention.output.LayerNorm.weight"] = layer.norm1.weight
        t[p + "attention.output.LayerNorm.bias"] = layer.norm1.bias
        t[p + "intermediate.dense.weight"] = layer.linear1.weight
        t[p + "intermediate.dense.bias"] = layer.linear1.bias
        t[p + "output.dense.weight"] = layer.linear2.weight
        t[p + "output.dense.bias"] = layer.linear2.bias
        t[p + "output.LayerNorm.weight"] = layer.norm2.weight
        t[p + "output.LayerNorm.bias"] = layer.norm2.bias
    if model.final_norm is not None:
        t["encoder.LayerNorm.weight"] = model.final_norm.weight
        t["encoder.LayerNorm.bias"] = model.final_norm.bias
    if model.pooler is not None:
        t["pooler.dense.weight"] = model.pooler.weight
        t["pooler.dense.bias"] = model.pooler.bias
    return {k: v.detach().clone().contiguous() for k, v in t.items()}


def file_name(s: Spec, canonical: str) -> str:
    name = canonical
    if s.gamma_beta and ".LayerNorm." in name:
        name = name.replace(".LayerNorm.weight", ".LayerNorm.gamma")
        name = name.replace(".LayerNorm.bias", ".LayerNorm.beta")
    return s.name_prefix + name


def config_json(s: Spec) -> dict:
    c = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": s.vocab,
        "hidden_size": s.hidden,
        "num_hidden_layers": s.layers,
        "num_attention_heads": s.heads,
        "intermediate_size": s.intermediate,
        "hidden_act": s.hidden_act,
        "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0,
        "max_position_embeddings": s.max_positions,
        "type_vocab_size": s.type_vocab,
        "initializer_range": STD_EMBEDDING,
        "layer_norm_eps": s.eps,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "torch_dtype": {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[s.dtype],
    }
    if s.placement == "pre":
        c["layer_norm_placement"] = "pre"
    return c


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

def make_inputs(s: Spec, rng: np.random.RandomState) -> List[dict]:
    P = s.max_positions
    lengths = [1, 7, 19, 33 if 33 < P else P - 1, P]
    # Token types per sequence: zeros, split, absent, zeros, split (a three-way
    # split when type_vocab_size is 3, so every row of the table is used).
    kinds = ["zeros", "split", "absent", "zeros", "split"]
    inputs = []
    for n, kind in zip(lengths, kinds):
        ids = rng.randint(0, s.vocab, size=n).tolist()
        ids[0] = 2   # pretend [CLS]
        item = {"ids": ids}
        if kind == "zeros":
            item["token_type_ids"] = [0] * n
        elif kind == "split":
            parts = min(s.type_vocab, n)
            bounds = [round(n * k / parts) for k in range(parts + 1)]
            types = []
            for k in range(parts):
                types += [k] * (bounds[k + 1] - bounds[k])
            item["token_type_ids"] = types
        inputs.append(item)
    # Use both ends of the vocabulary (catches an off-by-one table size).
    longest = inputs[-1]["ids"]
    longest[-1] = s.vocab - 1
    longest[len(longest) // 2] = 0
    return inputs


def token_types_of(item: dict) -> List[int]:
    return item.get("token_type_ids", [0] * len(item["ids"]))


# ---------------------------------------------------------------------------
# Reference in torch (float64)
# ---------------------------------------------------------------------------

def run_torch(model: TorchBert, inputs: List[dict], dtype, fast_path=False):
    """One padded batch; returns (states of real tokens, pooler outputs or
    None, mean poolings), all float64 numpy."""
    L = max(len(x["ids"]) for x in inputs)
    B = len(inputs)
    ids = torch.zeros(B, L, dtype=torch.long)            # pad id 0
    types = torch.zeros(B, L, dtype=torch.long)
    mask = torch.ones(B, L, dtype=torch.bool)            # True = padding
    for b, item in enumerate(inputs):
        n = len(item["ids"])
        ids[b, :n] = torch.tensor(item["ids"])
        types[b, :n] = torch.tensor(token_types_of(item))
        mask[b, :n] = False
    model = model.to(dtype)
    with torch.no_grad():
        states, pooled = model(ids, types, mask, fast_path=fast_path)
    out = [states[b, :len(item["ids"])].to(torch.float64).numpy()
           for b, item in enumerate(inputs)]
    pool = None if pooled is None else list(pooled.to(torch.float64).numpy())
    return out, pool, [st.mean(0) for st in out]


# ---------------------------------------------------------------------------
# Independent numpy implementation of DESIGN.md's formulas
# ---------------------------------------------------------------------------

_erf = np.vectorize(math.erf)


def canonical_weights(raw: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    out = {}
    for name, a in raw.items():
        n = name[len("bert."):] if name.startswith("bert.") else name
        if n.endswith(".gamma"):
            n = n[:-len(".gamma")] + ".weight"
        elif n.endswith(".beta"):
            n = n[:-len(".beta")] + ".bias"
        check(n not in out, f"{name}: duplicate after canonicalisation")
        out[n] = a
    return out


def np_forward(cfg: dict, W: Dict[str, np.ndarray], ids, types, mutation=None):
    """Unbatched forward of one sequence, float64. `mutation` breaks one thing
    on purpose (check (d)); None is the correct model."""
    H = cfg["hidden_size"]
    A = cfg["num_attention_heads"]
    d = H // A
    eps = cfg["layer_norm_eps"]
    act_name = cfg["hidden_act"]
    pre = cfg.get("layer_norm_placement", "post") == "pre"
    ids = np.asarray(ids)
    types = np.asarray(types)
    L = len(ids)

    def ln(x, prefix):
        mu = x.mean(-1, keepdims=True)
        ddof = 1 if mutation == "unbiased_variance" else 0
        var = ((x - mu) ** 2).sum(-1, keepdims=True) / (H - ddof)
        g, b = W[prefix + ".weight"], W[prefix + ".bias"]
        if mutation == "layernorm_no_beta":
            b = 0 * b
        if mutation == "layernorm_no_gamma":
            g = 0 * g + 1
        if mutation == "eps_outside_sqrt":
            return g * (x - mu) / (np.sqrt(var) + eps) + b
        if mutation == "eps_ignored":
            return g * (x - mu) / np.sqrt(var) + b
        return g * (x - mu) / np.sqrt(var + eps) + b

    def linear(x, prefix, drop_bias=False):
        y = x @ W[prefix + ".weight"].T
        return y if drop_bias else y + W[prefix + ".bias"]

    def act(x):
        name = act_name
        if mutation == "other_gelu" and name != "relu":
            name = "gelu_new" if name == "gelu" else "gelu"
        if mutation == "gelu_for_relu" and name == "relu":
            name = "gelu"
        if name == "gelu":
            return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))
        if name in ("gelu_new", "gelu_pytorch_tanh"):
            return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
        if name == "relu":
            return np.maximum(x, 0.0)
        raise ValueError(name)

    def heads(x):  # [L, H] -> [A, L, d]
        if mutation == "head_split_transposed":
            return x.reshape(L, d, A).transpose(2, 0, 1)
        return x.reshape(L, A, d).transpose(1, 0, 2)

    def attention(x, p):
        q = linear(x, p + "attention.self.query")
        k = linear(x, p + "attention.self.key")
        v = linear(x, p + "attention.self.value")
        if mutation == "swap_key_value":
            k, v = v, k
        q, k, v = heads(q), heads(k), heads(v)
        scale = 1.0 / d if mutation == "scale_1_over_d" else 1.0 / math.sqrt(d)
        if mutation == "no_scale":
            scale = 1.0
        scores = q @ k.transpose(0, 2, 1) * scale            # [A, L, L]
        scores = scores - scores.max(-1, keepdims=True)
        probs = np.exp(scores)
        probs = probs / probs.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(L, H)
        return linear(ctx, p + "attention.output.dense",
                      drop_bias=(mutation == "no_attention_output_bias"))

    def ffn(x, p):
        h = act(linear(x, p + "intermediate.dense",
                       drop_bias=(mutation == "no_intermediate_bias")))
        return linear(h, p + "output.dense", drop_bias=(mutation == "no_output_bias"))

    pos = np.arange(L) + (1 if mutation == "positions_from_1" else 0)
    if mutation == "positions_from_1":
        pos = np.minimum(pos, cfg["max_position_embeddings"] - 1)
    tt = np.zeros_like(types) if mutation == "ignore_token_types" else types
    x = (W["embeddings.word_embeddings.weight"][ids]
         + W["embeddings.position_embeddings.weight"][pos]
         + W["embeddings.token_type_embeddings.weight"][tt])
    if mutation != "no_embedding_layernorm":
        x = ln(x, "embeddings.LayerNorm")
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        as_pre = pre != (mutation == "wrong_placement")
        if as_pre:
            x = x + attention(ln(x, p + "attention.output.LayerNorm"), p)
            x = x + ffn(ln(x, p + "output.LayerNorm"), p)
        else:
            x = ln(x + attention(x, p), p + "attention.output.LayerNorm")
            x = ln(x + ffn(x, p), p + "output.LayerNorm")
    if pre and mutation != "no_final_layernorm":
        x = ln(x, "encoder.LayerNorm")
    pooled = None
    if "pooler.dense.weight" in W:
        z = linear(x[0], "pooler.dense")
        pooled = z if mutation == "pooler_no_tanh" else np.tanh(z)
    return x, pooled


MUTATIONS = [
    "no_scale", "scale_1_over_d", "pad_leak", "swap_key_value",
    "head_split_transposed", "other_gelu", "gelu_for_relu",
    "unbiased_variance", "layernorm_no_beta", "layernorm_no_gamma",
    "no_embedding_layernorm", "no_attention_output_bias",
    "no_intermediate_bias", "no_output_bias", "positions_from_1",
    "ignore_token_types", "wrong_placement", "no_final_layernorm",
    "pooler_no_tanh", "eps_outside_sqrt", "eps_ignored", "mean_counts_padding",
]


def mutation_applies(m: str, cfg: dict, W: dict) -> bool:
    relu = cfg["hidden_act"] == "relu"
    if m == "other_gelu":
        return not relu
    if m == "gelu_for_relu":
        return relu
    if m == "no_final_layernorm":
        return cfg.get("layer_norm_placement") == "pre"
    if m == "pooler_no_tanh":
        return "pooler.dense.weight" in W
    if m in ("eps_outside_sqrt", "eps_ignored"):
        # With eps 1e-12 no float32 computation can tell where eps goes.
        return cfg["layer_norm_eps"] >= 1e-6
    return True


def np_run_all(cfg, W, inputs, mutation=None):
    """Returns (states of real tokens, pooler outputs, mean poolings)."""
    states, pools, means = [], [], []
    L_max = max(len(x["ids"]) for x in inputs)
    for item in inputs:
        ids, types = item["ids"], token_types_of(item)
        n = len(ids)
        if mutation == "pad_leak":
            # The batch's padding (id 0, type 0) attended to as if real.
            ids = ids + [0] * (L_max - n)
            types = types + [0] * (L_max - n)
        x, pooled = np_forward(cfg, W, ids, types,
                               None if mutation == "pad_leak" else mutation)
        states.append(x[:n])
        pools.append(pooled)
        means.append(x[:n].sum(0) / (L_max if mutation == "mean_counts_padding" else n))
    return states, (pools if pools[0] is not None else None), means


def output_vectors(outputs) -> List[np.ndarray]:
    """Every vector the parity test compares: token states (cls among them),
    mean poolings, pooler outputs."""
    states, pools, means = outputs
    vecs = [t for st in states for t in st] + list(means)
    if pools is not None:
        vecs += [np.asarray(p) for p in pools]
    return vecs


def parity_errors(ref, outputs):
    """(max abs error, max per-vector relative error) as the parity test has them."""
    max_abs = max_rel = 0.0
    ref_vecs, out_vecs = output_vectors(ref), output_vectors(outputs)
    check(len(ref_vecs) == len(out_vecs), "output count")
    for r, o in zip(ref_vecs, out_vecs):
        d = o - r
        max_abs = max(max_abs, float(np.max(np.abs(d))))
        max_rel = max(max_rel, float(np.sqrt(np.sum(d * d) / max(np.sum(r * r), 1e-30))))
    return max_abs, max_rel


def max_abs_diff(ref, outputs) -> float:
    return parity_errors(ref, outputs)[0]


# ---------------------------------------------------------------------------
# One fixture
# ---------------------------------------------------------------------------

def dir_size(path: str) -> int:
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


def generate(s: Spec) -> dict:
    out_dir = os.path.join(HERE, s.name)
    model_dir = os.path.join(out_dir, "model")
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(model_dir)

    torch.manual_seed(s.seed)
    gen = torch.Generator().manual_seed(s.seed)
    model = TorchBert(s)
    init_weights(model, gen, s.dtype)
    model.eval()

    # -- weights and config ------------------------------------------------
    canonical = hf_tensors(model)
    named = {file_name(s, k): v for k, v in canonical.items()}
    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(config_json(s), f, indent=2)
        f.write("\n")
    if s.shards == 1:
        write_safetensors(os.path.join(model_dir, "model.safetensors"), named, s.dtype)
    else:
        # Embeddings and layer 0 in the first shard, the rest in the second.
        names = list(named)
        split = next(i for i, n in enumerate(names) if ".layer.1." in n)
        groups = [names[:split], names[split:]]
        weight_map, total = {}, 0
        for k, group in enumerate(groups):
            fname = f"model-{k + 1:05d}-of-{len(groups):05d}.safetensors"
            total += write_safetensors(os.path.join(model_dir, fname),
                                       {n: named[n] for n in group}, s.dtype)
            weight_map.update({n: fname for n in group})
        with open(os.path.join(model_dir, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map},
                      f, indent=2)
            f.write("\n")

    # -- reference: float64, one padded batch --------------------------------
    rng = np.random.RandomState(s.seed)
    inputs = make_inputs(s, rng)
    ref = run_torch(model, inputs, torch.float64)
    ref_states, ref_pool, ref_mean = ref

    # (a) padding does not leak: each sequence alone == padded batch.
    alone = [run_torch(model, [item], torch.float64) for item in inputs]
    alone = ([a[0][0] for a in alone],
             None if ref_pool is None else [a[1][0] for a in alone],
             [a[2][0] for a in alone])
    diff_a = max_abs_diff(ref, alone)
    check(diff_a < BATCH_TOLERANCE, f"{s.name}: batch vs alone differs by {diff_a:.3e}")

    # (c) torch's fused fast path, where it applies.
    diff_c = None
    if fast_path_applies(model):
        diff_c = max_abs_diff(ref, run_torch(model, inputs, torch.float64, fast_path=True))
        check(diff_c < FASTPATH_TOLERANCE, f"{s.name}: fast path differs by {diff_c:.3e}")

    # (f) float32 torch (same rounded weights) passes the parity tolerances
    # with a margin: a float32 engine can match this reference.
    f32_abs, f32_rel = parity_errors(ref, run_torch(model, inputs, torch.float32))
    check(f32_abs * MARGIN < PARITY_MAX_ABS and f32_rel * MARGIN < PARITY_MAX_REL,
          f"{s.name}: float32 torch is {f32_abs:.2e} abs / {f32_rel:.2e} rel from the "
          "reference, too close to the parity tolerance")
    model.to(torch.float64)

    # -- (b) numpy from the files as written ---------------------------------
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    raw = read_checkpoint(model_dir)
    check(set(raw) == set(named), f"{s.name}: names read back differ from names written")
    for n, t in named.items():   # (e) payload round trip, exact
        check(np.array_equal(raw[n], t.to(torch.float64).numpy()), f"{s.name}:{n}: round trip")
    check(all(n.startswith(s.name_prefix) for n in raw), "prefix")
    check(any(n.endswith(".gamma") for n in raw) == s.gamma_beta, "gamma/beta naming")
    W = canonical_weights(raw)
    diff_b = max_abs_diff(ref, np_run_all(cfg, W, inputs))
    check(diff_b < NUMPY_TOLERANCE, f"{s.name}: numpy vs torch differs by {diff_b:.3e}")

    # -- (d) sensitivity -----------------------------------------------------
    # Effect = how many times over the parity tolerance a mutation lands
    # (the larger of the abs and the relative criterion).
    effects = {}
    for m in MUTATIONS:
        if not mutation_applies(m, cfg, W):
            continue
        m_abs, m_rel = parity_errors(ref, np_run_all(cfg, W, inputs, m))
        effects[m] = max(m_abs / PARITY_MAX_ABS, m_rel / PARITY_MAX_REL)
    weak = {m: round(e, 2) for m, e in effects.items() if not e > MARGIN}
    check(not weak, f"{s.name}: broken models within {MARGIN:g}x of the parity "
          f"tolerance (x tolerance): {weak}")

    # -- reference.json ------------------------------------------------------
    reference = {
        "inputs": inputs,
        "hidden_states": [st.tolist() for st in ref_states],
        "cls": [st[0].tolist() for st in ref_states],
        "mean": [m.tolist() for m in ref_mean],
    }
    if ref_pool is not None:
        reference["pooler"] = [p.tolist() for p in ref_pool]
    reference["layer_norm_placement"] = s.placement
    with open(os.path.join(out_dir, "reference.json"), "w") as f:
        json.dump(reference, f, separators=(",", ":"))
        f.write("\n")

    return {
        "name": s.name, "size": dir_size(out_dir),
        "lengths": [len(x["ids"]) for x in inputs],
        "diff_a": diff_a, "diff_b": diff_b, "diff_c": diff_c,
        "f32_abs": f32_abs, "f32_rel": f32_rel,
        "weakest": min(effects.items(), key=lambda kv: kv[1]), "effects": effects,
    }


def main(argv) -> int:
    verbose = "-v" in argv
    torch.set_num_threads(1)
    results = []
    try:
        for s in FIXTURES:
            results.append(generate(s))
    except CheckFailed as e:
        print(f"SELF-CHECK FAILED: {e}", file=sys.stderr)
        return 1
    print("(a) max|batch - alone|  (b) max|numpy - torch|  (c) max|fast path - reference|")
    print("(f) float32 torch vs reference, max abs / max rel  "
          "(d) weakest broken model, x parity tolerance")
    print(f"{'fixture':9} {'bytes':>7}  {'lengths':19} {'(a)':>7} {'(b)':>7} {'(c)':>7}"
          f"  {'(f) abs / rel':17}  (d)")
    for r in results:
        c = "n/a" if r["diff_c"] is None else f"{r['diff_c']:.0e}"
        m, e = r["weakest"]
        print(f"{r['name']:9} {r['size']:7d}  {str(r['lengths']):19} "
              f"{r['diff_a']:7.0e} {r['diff_b']:7.0e} {c:>7}  "
              f"{r['f32_abs']:.1e} / {r['f32_rel']:.1e}  {m} {e:.0f}x")
        if verbose:
            for m, e in sorted(r["effects"].items(), key=lambda kv: kv[1]):
                print(f"    {m:26} {e:12.1f}x")
    print(f"all self-checks passed: (a) < {BATCH_TOLERANCE:g}, (b) < {NUMPY_TOLERANCE:g}, "
          f"(c) < {FASTPATH_TOLERANCE:g}, (d) every broken model > {MARGIN:g}x and "
          f"(f) float32 < 1/{MARGIN:g} of the parity tolerance "
          f"({PARITY_MAX_ABS:g} abs, {PARITY_MAX_REL:g} rel), (e) exact round trip")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
