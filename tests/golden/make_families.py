#!/usr/bin/python3
"""Generates the encoder-family fixtures in tests/golden/families/ (see README.md).

Run with Debian's interpreter, which sees python3-torch (1.13) and numpy:

    /usr/bin/python3 tests/golden/make_families.py

For each family (roberta, xlm-roberta, camembert, distilbert, mpnet, electra)
it builds a small model from torch.nn modules, written after reading
transformers' modeling_<family>.py: the module tree mirrors the Hugging Face
classes, so state_dict() yields the hub's tensor names (with the task prefix
a checkpoint of that kind carries: "roberta.", "distilbert.", "electra.", or
none as sentence-transformers saves them). Random weights, config.json with
the real keys, safetensors in the given dtype, unused tensors a real
checkpoint carries (classification and masked-LM heads, the legacy int64
embeddings.position_ids buffer), and reference.json computed in float64 with
all sequences right-padded into one batch and an attention mask, exactly as
transformers runs them.

Self-checks, each of which fails the run:
  (a) padded batch == each sequence run alone (float64, < 1e-10);
  (b) sensitivity: each family's distinguishing rule, broken (positions from
      0 instead of pad_token_id + 1, no relative-position bias, buckets off by
      one, the tanh GELU for the erf one, no embedding projection bias ...),
      moves some output by more than 10x the parity test's 1e-4 tolerance
      (5x for the GELU variant, see MUTATION_MARGIN);
  (c) float32 torch with the same weights stays 10x inside that tolerance.
"""

import json
import math
import os
import shutil
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "families")
sys.path.insert(0, HERE)
from make_golden import check, write_safetensors  # noqa: E402  (one safetensors writer)

PARITY_MAX_ABS = 1e-4
MARGIN = 10.0
# The erf and tanh GELUs differ by at most ~5e-4 per unit; through these
# small FFNs that is a 7e-4 move: 7x the tolerance and over 100x the
# engine's float32 error (~2e-6), so the bar for that one mutation is 5x.
MUTATION_MARGIN = {"tanh_gelu": 5.0}
BATCH_TOLERANCE = 1e-10

# Initialisation as in make_golden.py (README.md there explains the gains):
# linear weights std gain/sqrt(fan_in), large biases and LayerNorm
# parameters, so that a wrong rule moves outputs far beyond the tolerance.
STD_EMBEDDING = 0.5
GAIN_QUERY_KEY = 1.5
GAIN_VALUE_OUTPUT = 1.0
GAIN_INTERMEDIATE = 2.5
GAIN_FFN_OUTPUT = 2.5    # the FFN's share of the residual large enough that
                         # the tanh GELU for the erf one is seen (check b)
STD_BIAS = 0.5
STD_GAMMA = 0.2
STD_BETA = 0.2
STD_RELATIVE_BIAS = 1.0


@dataclass
class Spec:
    name: str            # fixture directory
    family: str          # "bert" (BERT-like tree), "distilbert", "mpnet"
    model_type: str
    seed: int
    layers: int
    hidden: int
    heads: int
    intermediate: int
    vocab: int
    max_positions: int
    type_vocab: int      # 0: no token types
    pad: int
    eps: float
    hidden_act: str
    dtype: str
    prefix: str          # task prefix of the tensor names
    positions_after_pad: bool   # RoBERTa rule: pad_token_id + 1 + count of real tokens
    pooler: bool
    embedding_size: int = 0     # ELECTRA: != hidden adds embeddings_project
    buckets: int = 0            # MPNet relative_attention_num_buckets
    extra_tensors: Dict[str, List[int]] = field(default_factory=dict)  # unused heads
    position_ids_buffer: bool = False

    @property
    def emb(self) -> int:
        return self.embedding_size or self.hidden

    @property
    def max_length(self) -> int:
        return self.max_positions - (self.pad + 1 if self.positions_after_pad else 0)


FIXTURES = [
    Spec("roberta", "bert", "roberta", seed=2001, layers=2, hidden=64, heads=4,
         intermediate=128, vocab=120, max_positions=130, type_vocab=1, pad=1, eps=1e-5,
         hidden_act="gelu", dtype="F32", prefix="roberta.", positions_after_pad=True,
         pooler=False, position_ids_buffer=True,
         extra_tensors={"classifier.dense.weight": [64, 64], "classifier.dense.bias": [64],
                        "classifier.out_proj.weight": [3, 64], "classifier.out_proj.bias": [3]}),
    Spec("xlm_roberta", "bert", "xlm-roberta", seed=2002, layers=2, hidden=48, heads=4,
         intermediate=96, vocab=250, max_positions=130, type_vocab=1, pad=1, eps=1e-5,
         hidden_act="gelu", dtype="BF16", prefix="", positions_after_pad=True, pooler=True),
    Spec("camembert", "bert", "camembert", seed=2003, layers=2, hidden=64, heads=8,
         intermediate=128, vocab=140, max_positions=130, type_vocab=1, pad=1, eps=1e-5,
         hidden_act="gelu", dtype="F16", prefix="roberta.", positions_after_pad=True,
         pooler=True,
         extra_tensors={"lm_head.dense.weight": [64, 64], "lm_head.dense.bias": [64],
                        "lm_head.layer_norm.weight": [64], "lm_head.layer_norm.bias": [64],
                        "lm_head.bias": [140]}),
    Spec("distilbert", "distilbert", "distilbert", seed=2004, layers=3, hidden=64, heads=4,
         intermediate=128, vocab=130, max_positions=128, type_vocab=0, pad=0, eps=1e-12,
         hidden_act="gelu", dtype="F32", prefix="distilbert.", positions_after_pad=False,
         pooler=False,
         extra_tensors={"vocab_transform.weight": [64, 64], "vocab_transform.bias": [64],
                        "vocab_layer_norm.weight": [64], "vocab_layer_norm.bias": [64],
                        "vocab_projector.bias": [130]}),
    Spec("mpnet", "mpnet", "mpnet", seed=2005, layers=2, hidden=64, heads=4,
         intermediate=128, vocab=110, max_positions=130, type_vocab=0, pad=1, eps=1e-5,
         hidden_act="gelu", dtype="F32", prefix="", positions_after_pad=True, pooler=True,
         buckets=32),
    Spec("electra", "bert", "electra", seed=2006, layers=2, hidden=64, heads=4,
         intermediate=128, vocab=100, max_positions=128, type_vocab=2, pad=0, eps=1e-12,
         hidden_act="gelu", dtype="F32", prefix="electra.", positions_after_pad=False,
         pooler=False, embedding_size=32, position_ids_buffer=True,
         extra_tensors={"discriminator_predictions.dense.weight": [64, 64],
                        "discriminator_predictions.dense.bias": [64],
                        "discriminator_predictions.dense_prediction.weight": [1, 64],
                        "discriminator_predictions.dense_prediction.bias": [1]}),
]

# ---------------------------------------------------------------------------
# Modules (names as in transformers' modeling_<family>.py)
# ---------------------------------------------------------------------------


def activation(name: str, mutation: Optional[str]):
    if mutation == "tanh_gelu" or name in ("gelu_new", "gelu_pytorch_tanh"):
        return lambda x: F.gelu(x, approximate="tanh")
    if name == "gelu":
        return F.gelu
    if name == "relu":
        return F.relu
    raise ValueError(name)


def relative_position_bucket(relative_position, num_buckets=32, max_distance=128):
    """MPNetEncoder.relative_position_bucket, as transformers writes it."""
    ret = 0
    n = -relative_position
    num_buckets //= 2
    ret += (n < 0).to(torch.long) * num_buckets
    n = torch.abs(n)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)).to(torch.long)
    val_if_large = torch.min(val_if_large, torch.full_like(val_if_large, num_buckets - 1))
    ret += torch.where(is_small, n, val_if_large)
    return ret


def position_ids(spec: Spec, ids: torch.Tensor, mutation: Optional[str]) -> torch.Tensor:
    B, L = ids.shape
    if spec.positions_after_pad and mutation != "positions_from_zero":
        # create_position_ids_from_input_ids: real tokens count from pad + 1;
        # a pad id (also inside a sequence) takes position pad.
        mask = ids.ne(spec.pad).long()
        return torch.cumsum(mask, dim=1) * mask + spec.pad
    return torch.arange(L).unsqueeze(0).expand(B, L)


class Embeddings(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.word_embeddings = nn.Embedding(s.vocab, s.emb)
        self.position_embeddings = nn.Embedding(s.max_positions, s.emb)
        if s.type_vocab:
            self.token_type_embeddings = nn.Embedding(s.type_vocab, s.emb)
        self.LayerNorm = nn.LayerNorm(s.emb, eps=s.eps)


class SelfAttention(nn.Module):  # BertSelfAttention
    def __init__(self, s: Spec):
        super().__init__()
        self.query = nn.Linear(s.hidden, s.hidden)
        self.key = nn.Linear(s.hidden, s.hidden)
        self.value = nn.Linear(s.hidden, s.hidden)


class DenseNorm(nn.Module):  # BertSelfOutput / BertOutput
    def __init__(self, s: Spec, n_in: int):
        super().__init__()
        self.dense = nn.Linear(n_in, s.hidden)
        self.LayerNorm = nn.LayerNorm(s.hidden, eps=s.eps)


class Attention(nn.Module):  # BertAttention
    def __init__(self, s: Spec):
        super().__init__()
        self.self = SelfAttention(s)
        self.output = DenseNorm(s, s.hidden)


class Intermediate(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.dense = nn.Linear(s.hidden, s.intermediate)


class BertLayer(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.attention = Attention(s)
        self.intermediate = Intermediate(s)
        self.output = DenseNorm(s, s.intermediate)


class MPNetSelfAttention(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.q = nn.Linear(s.hidden, s.hidden)
        self.k = nn.Linear(s.hidden, s.hidden)
        self.v = nn.Linear(s.hidden, s.hidden)
        self.o = nn.Linear(s.hidden, s.hidden)


class MPNetAttention(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.attn = MPNetSelfAttention(s)
        self.LayerNorm = nn.LayerNorm(s.hidden, eps=s.eps)


class MPNetLayer(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.attention = MPNetAttention(s)
        self.intermediate = Intermediate(s)
        self.output = DenseNorm(s, s.intermediate)


class DistilAttention(nn.Module):  # MultiHeadSelfAttention
    def __init__(self, s: Spec):
        super().__init__()
        self.q_lin = nn.Linear(s.hidden, s.hidden)
        self.k_lin = nn.Linear(s.hidden, s.hidden)
        self.v_lin = nn.Linear(s.hidden, s.hidden)
        self.out_lin = nn.Linear(s.hidden, s.hidden)


class DistilFFN(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.lin1 = nn.Linear(s.hidden, s.intermediate)
        self.lin2 = nn.Linear(s.intermediate, s.hidden)


class DistilBlock(nn.Module):  # TransformerBlock
    def __init__(self, s: Spec):
        super().__init__()
        self.attention = DistilAttention(s)
        self.sa_layer_norm = nn.LayerNorm(s.hidden, eps=s.eps)
        self.ffn = DistilFFN(s)
        self.output_layer_norm = nn.LayerNorm(s.hidden, eps=s.eps)


class LayerList(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layer = nn.ModuleList(layers)


class MPNetEncoder(LayerList):
    def __init__(self, s: Spec):
        super().__init__([MPNetLayer(s) for _ in range(s.layers)])
        self.relative_attention_bias = nn.Embedding(s.buckets, s.heads)


class Pooler(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.dense = nn.Linear(s.hidden, s.hidden)


class Model(nn.Module):
    """The base model (RobertaModel, DistilBertModel, MPNetModel, ElectraModel)."""

    def __init__(self, s: Spec):
        super().__init__()
        self.spec = s
        self.embeddings = Embeddings(s)
        if s.embedding_size and s.embedding_size != s.hidden:
            self.embeddings_project = nn.Linear(s.embedding_size, s.hidden)
        if s.family == "distilbert":
            self.transformer = LayerList([DistilBlock(s) for _ in range(s.layers)])
        elif s.family == "mpnet":
            self.encoder = MPNetEncoder(s)
        else:
            self.encoder = LayerList([BertLayer(s) for _ in range(s.layers)])
        if s.pooler:
            self.pooler = Pooler(s)

    def attention(self, x, q_lin, k_lin, v_lin, mask_bias, position_bias):
        s = self.spec
        B, L, H = x.shape
        d = H // s.heads

        def heads(t):
            return t.view(B, L, s.heads, d).permute(0, 2, 1, 3)

        q, k, v = heads(q_lin(x)), heads(k_lin(x)), heads(v_lin(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)
        if position_bias is not None:
            scores = scores + position_bias
        scores = scores + mask_bias
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(B, L, H)

    def position_bias(self, L, mutation):
        s = self.spec
        if s.family != "mpnet" or mutation == "no_relative_bias":
            return None
        context = torch.arange(L)[:, None]
        memory = torch.arange(L)[None, :]
        buckets = relative_position_bucket(memory - context, num_buckets=s.buckets)
        if mutation == "buckets_off_by_one":
            buckets = torch.clamp(buckets + 1, max=s.buckets - 1)
        if mutation == "relative_sign":
            buckets = relative_position_bucket(context - memory, num_buckets=s.buckets)
        values = self.encoder.relative_attention_bias(buckets)  # [L, L, heads]
        return values.permute(2, 0, 1).unsqueeze(0)

    def forward(self, ids, types, attention_mask, mutation=None):
        s = self.spec
        e = self.embeddings
        x = e.word_embeddings(ids) + e.position_embeddings(position_ids(s, ids, mutation))
        if s.type_vocab and mutation != "no_token_types":
            x = x + e.token_type_embeddings(types)
        x = e.LayerNorm(x)
        if hasattr(self, "embeddings_project"):
            p = self.embeddings_project
            x = F.linear(x, p.weight, None if mutation == "no_projection_bias" else p.bias)
        act = activation(s.hidden_act, mutation)
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        bias = self.position_bias(ids.shape[1], mutation)
        if s.family == "distilbert":
            for blk in self.transformer.layer:
                a = blk.attention
                c = a.out_lin(self.attention(x, a.q_lin, a.k_lin, a.v_lin, mask_bias, None))
                x = blk.sa_layer_norm(c + x)
                x = blk.output_layer_norm(blk.ffn.lin2(act(blk.ffn.lin1(x))) + x)
        elif s.family == "mpnet":
            for layer in self.encoder.layer:
                a = layer.attention
                c = a.attn.o(self.attention(x, a.attn.q, a.attn.k, a.attn.v, mask_bias, bias))
                x = a.LayerNorm(c + x)
                o = layer.output
                x = o.LayerNorm(o.dense(act(layer.intermediate.dense(x))) + x)
        else:
            for layer in self.encoder.layer:
                a = layer.attention
                c = self.attention(x, a.self.query, a.self.key, a.self.value, mask_bias, None)
                x = a.output.LayerNorm(a.output.dense(c) + x)
                o = layer.output
                x = o.LayerNorm(o.dense(act(layer.intermediate.dense(x))) + x)
        pooled = torch.tanh(self.pooler.dense(x[:, 0])) if s.pooler else None
        return x, pooled


def init_weights(model: Model, gen: torch.Generator) -> None:
    def normal_(p, mean, std):
        with torch.no_grad():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float32) * std + mean)

    for name, p in model.named_parameters():
        if "LayerNorm" in name or "layer_norm" in name:
            normal_(p, 1.0 if name.endswith("weight") else 0.0,
                    STD_GAMMA if name.endswith("weight") else STD_BETA)
        elif "embeddings." in name and "project" not in name:
            normal_(p, 0.0, STD_EMBEDDING)
        elif "relative_attention_bias" in name:
            normal_(p, 0.0, STD_RELATIVE_BIAS)
        elif name.endswith(".bias"):
            normal_(p, 0.0, STD_BIAS)
        else:
            last = name.split(".")[-2]
            gain = (GAIN_QUERY_KEY if last in ("query", "key", "q", "k", "q_lin", "k_lin")
                    else GAIN_INTERMEDIATE if last in ("lin1",) or "intermediate" in name
                    else GAIN_FFN_OUTPUT if last == "lin2" or ".output.dense" in name
                    and "attention" not in name
                    else GAIN_VALUE_OUTPUT)
            normal_(p, 0.0, gain / math.sqrt(p.shape[1]))


def round_to_dtype(model: Model, dtype: str) -> None:
    """The reference runs on exactly the weights the checkpoint holds."""
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to({"F32": torch.float32, "F16": torch.float16,
                          "BF16": torch.bfloat16}[dtype]).to(torch.float32))


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

def write_checkpoint(path: str, s: Spec, model: Model, gen: torch.Generator) -> None:
    tensors = {s.prefix + name: p.detach().contiguous() for name, p in model.state_dict().items()}
    for name, shape in s.extra_tensors.items():
        tensors[name] = torch.randn(shape, generator=gen)
    if s.position_ids_buffer:
        # Older checkpoints store the integer buffer; the engine ignores it.
        tensors[s.prefix + "embeddings.position_ids"] = (
            torch.arange(s.max_positions).unsqueeze(0), "I64")
    write_safetensors(path, tensors, s.dtype)


def config_json(s: Spec) -> dict:
    torch_dtype = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[s.dtype]
    if s.family == "distilbert":
        return {
            "architectures": ["DistilBertForMaskedLM"], "model_type": "distilbert",
            "activation": s.hidden_act, "attention_dropout": 0.1, "dim": s.hidden,
            "dropout": 0.1, "hidden_dim": s.intermediate, "initializer_range": 0.02,
            "max_position_embeddings": s.max_positions, "n_heads": s.heads,
            "n_layers": s.layers, "pad_token_id": s.pad, "qa_dropout": 0.1,
            "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": False, "tie_weights_": True,
            "torch_dtype": torch_dtype, "vocab_size": s.vocab,
        }
    arch = {"roberta": "RobertaForSequenceClassification", "xlm-roberta": "XLMRobertaModel",
            "camembert": "CamembertForMaskedLM", "mpnet": "MPNetModel",
            "electra": "ElectraForPreTraining"}[s.model_type]
    c = {
        "architectures": [arch], "model_type": s.model_type,
        "attention_probs_dropout_prob": 0.1, "hidden_act": s.hidden_act,
        "hidden_dropout_prob": 0.1, "hidden_size": s.hidden, "initializer_range": 0.02,
        "intermediate_size": s.intermediate, "layer_norm_eps": s.eps,
        "max_position_embeddings": s.max_positions, "num_attention_heads": s.heads,
        "num_hidden_layers": s.layers, "pad_token_id": s.pad, "torch_dtype": torch_dtype,
        "vocab_size": s.vocab,
    }
    if s.positions_after_pad:
        c.update({"bos_token_id": 0, "eos_token_id": 2})
    if s.family == "mpnet":
        c["relative_attention_num_buckets"] = s.buckets
    else:
        c.update({"type_vocab_size": s.type_vocab, "position_embedding_type": "absolute"})
    if s.embedding_size:
        c["embedding_size"] = s.embedding_size
    if s.model_type == "roberta":
        c.update({"id2label": {"0": "negative", "1": "neutral", "2": "positive"},
                  "label2id": {"negative": 0, "neutral": 1, "positive": 2}})
    return c


def make_inputs(s: Spec, rng: np.random.RandomState) -> List[dict]:
    lengths = [1, 5, 17, 64, 100, s.max_length]
    inputs = []
    for n in lengths:
        ids = rng.randint(0, s.vocab, size=n).tolist()
        if s.positions_after_pad:
            ids = [i if i != s.pad else s.pad + 1 for i in ids]
        item = {"ids": ids}
        if s.type_vocab > 1 and n > 1:
            item["token_type_ids"] = [0] * (n // 2) + [1] * (n - n // 2)
        inputs.append(item)
    if s.positions_after_pad:
        # A pad id inside a sequence takes position pad and does not count.
        inputs[3]["ids"][10] = s.pad
    longest = inputs[-1]["ids"]
    longest[-1] = s.vocab - 1
    longest[len(longest) // 2] = 0 if s.pad != 0 else 3
    return inputs


def padded_batch(inputs: List[dict], pad: int):
    """ids, token types and the attention mask of `inputs` right-padded with
    `pad` into one batch, as transformers runs them."""
    L = max(len(x["ids"]) for x in inputs)
    B = len(inputs)
    ids = torch.full((B, L), pad, dtype=torch.long)
    types = torch.zeros(B, L, dtype=torch.long)
    mask = torch.zeros(B, L, dtype=torch.long)
    for b, item in enumerate(inputs):
        n = len(item["ids"])
        ids[b, :n] = torch.tensor(item["ids"])
        if "token_type_ids" in item:
            types[b, :n] = torch.tensor(item["token_type_ids"])
        mask[b, :n] = 1
    return ids, types, mask


def run(model: Model, inputs: List[dict], dtype, mutation=None):
    s = model.spec
    ids, types, mask = padded_batch(inputs, s.pad)
    model = model.to(dtype)
    with torch.no_grad():
        states, pooled = model(ids, types, mask, mutation)
    out = []
    for b, item in enumerate(inputs):
        n = len(item["ids"])
        out.append({"states": states[b, :n].double().numpy(),
                    "pooled": None if pooled is None else pooled[b].double().numpy()})
    return out


def max_diff(a, b) -> float:
    return max(float(np.max(np.abs(x["states"] - y["states"]))) for x, y in zip(a, b))


MUTATIONS = {
    "positions_from_zero": lambda s: s.positions_after_pad,
    "no_relative_bias": lambda s: s.family == "mpnet",
    "buckets_off_by_one": lambda s: s.family == "mpnet",
    "relative_sign": lambda s: s.family == "mpnet",
    "tanh_gelu": lambda s: s.hidden_act == "gelu",
    "no_projection_bias": lambda s: bool(s.embedding_size),
    "no_token_types": lambda s: s.type_vocab > 1,
}


def self_check(name, run_on, inputs, ref, *, alone_diff, batch_tolerance, mutations, distance,
               mutation_floor, float32_ceiling, unit=""):
    """The checks every generator makes of its float64 reference `ref`, before
    writing it: (a) each input run alone gives what it gives in the batch;
    (b) each mutation of the model (a plausible implementation mistake)
    moves the outputs by more than mutation_floor(m), so the fixture can tell
    it apart; (c) float32 torch stays within float32_ceiling. run_on(inputs,
    dtype, mutation=None) runs the model; alone_diff(alone, i) and
    distance(outputs) measure against ref. Returns (c)'s distance."""
    for i, item in enumerate(inputs):  # (a)
        d = alone_diff(run_on([item], torch.float64), i)
        check(d < batch_tolerance, f"{name}: batch != alone ({i}: {d})")
    for m in mutations:  # (b)
        d = distance(run_on(inputs, torch.float64, m))
        print(f"  {name}: mutation {m} moves outputs by {d:.3g}{unit}")
        check(d > mutation_floor(m), f"{name}: mutation {m} only moves {d}{unit}")
    d32 = distance(run_on(inputs, torch.float32))  # (c)
    check(d32 < float32_ceiling, f"{name}: float32 torch off by {d32}{unit}")
    return d32


def generate(s: Spec) -> None:
    torch.manual_seed(s.seed)
    gen = torch.Generator().manual_seed(s.seed)
    model = Model(s)
    init_weights(model, gen)
    round_to_dtype(model, s.dtype)
    model.eval()
    inputs = make_inputs(s, np.random.RandomState(s.seed))

    ref = run(model, inputs, torch.float64)
    d32 = self_check(
        s.name, lambda xs, dtype, m=None: run(model, xs, dtype, m), inputs, ref,
        alone_diff=lambda alone, i: max_diff(alone, [ref[i]]), batch_tolerance=BATCH_TOLERANCE,
        mutations=[m for m, applies in MUTATIONS.items() if applies(s)],
        distance=lambda out: max_diff(out, ref),
        mutation_floor=lambda m: MUTATION_MARGIN.get(m, MARGIN) * PARITY_MAX_ABS,
        float32_ceiling=PARITY_MAX_ABS / MARGIN)
    model = model.to(torch.float64)

    target = os.path.join(OUT, s.name)
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(os.path.join(target, "model"))
    with open(os.path.join(target, "model", "config.json"), "w") as f:
        json.dump(config_json(s), f, indent=2)
        f.write("\n")
    write_checkpoint(os.path.join(target, "model", "model.safetensors"), s,
                     model.to(torch.float32), gen)

    def rounded(a):
        return [float(f"{v:.8g}") for v in a]

    reference = {
        "family": s.model_type,
        "generator": "tests/golden/make_families.py",
        "max_length": s.max_length,
        "inputs": inputs,
        "hidden_states": [[rounded(row) for row in r["states"]] for r in ref],
        "cls": [rounded(r["states"][0]) for r in ref],
        "mean": [rounded(r["states"].mean(axis=0)) for r in ref],
        "layer_norm_placement": "post",
    }
    if s.pooler:
        reference["pooler"] = [rounded(r["pooled"]) for r in ref]
    if s.family == "mpnet":
        rel = torch.arange(-600, 601)
        reference["relative_buckets"] = {
            "distances": [-600, 600],
            "buckets": relative_position_bucket(rel, num_buckets=s.buckets).tolist()}
    with open(os.path.join(target, "reference.json"), "w") as f:
        json.dump(reference, f, separators=(",", ":"))
        f.write("\n")
    print(f"{s.name}: float32 torch within {d32:.2g}; written to {target}")


def main(argv) -> int:
    names = argv[1:] or [s.name for s in FIXTURES]
    for s in FIXTURES:
        if s.name in names:
            generate(s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
