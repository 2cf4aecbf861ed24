#!/usr/bin/python3
"""Generates the task-head fixtures in tests/golden/heads/ (see README.md).

Run with Debian's interpreter, which sees python3-torch (1.13) and numpy:

    /usr/bin/python3 tests/golden/make_heads.py [fixture ...]

Each fixture is a small random encoder of one family (the module tree and
forward pass of make_families.py, or for ModernBERT of make_long_context.py,
imported from them) with a task head on top, written after transformers'
modeling_<family>.py, with the hub's tensor names (at the checkpoint's top
level: "classifier.weight", "lm_head.bias", ...) and config keys:

  sequence classification
    BERT        pooler.dense, tanh (on the first token), classifier
    RoBERTa/XLM-R/CamemBERT, MPNet
                classifier.dense, tanh, classifier.out_proj
    DistilBERT  pre_classifier, ReLU, classifier
    ELECTRA     classifier.dense, GELU (erf), classifier.out_proj
    ModernBERT  the first token's state or (classifier_pooling "mean") the
                mean of the sequence's, then head.dense (bias per
                classifier_bias), classifier_activation, head.norm (bias per
                norm_bias), classifier
  masked LM (SPLADE)
    BERT        cls.predictions.transform.{dense, LayerNorm} (act: hidden_act),
                cls.predictions.decoder, cls.predictions.bias
    RoBERTa family, MPNet
                lm_head.{dense, layer_norm}, GELU, lm_head.decoder, lm_head.bias
    DistilBERT  vocab_transform, act, vocab_layer_norm, vocab_projector
    ELECTRA     generator_predictions.{dense (H -> E), LayerNorm}, GELU,
                generator_lm_head
    ModernBERT  head.{dense, norm} (as above), decoder (tied), decoder.bias
                (per decoder_bias)
  The decoder weight is tied to the word embeddings and left out of the
  file as real checkpoints do, except in bert_mlm, whose decoder is its own
  (an untied checkpoint).

The ModernBERT fixtures' inputs (up to 40 tokens) stay within half the
sliding window (local_attention 128), so their sliding-window layers see
every key: the heads are tested apart from the window.

reference.json holds, in float64: the logits per input, and the SPLADE
weights (log1p(relu(logit)), max and sum over the sequence's tokens) as
[id, weight] pairs above zero by descending weight.

Self-checks, each of which fails the run:
  (a) padded batch == each sequence run alone (float64, < 1e-10), heads included;
  (b) sensitivity: a broken head rule (no tanh / no activation, the wrong
      activation, no LayerNorm in the transform, an untied decoder, the
      pooler skipped, ModernBERT's first token for the mean, its head norm
      skipped or its head biases ignored) moves the logits or the SPLADE
      weights by more than 10x the test's tolerance;
  (c) float32 torch with the same weights stays 10x inside the tolerance.
"""

import json
import math
import os
import shutil
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "heads")
sys.path.insert(0, HERE)
import make_families as fam  # noqa: E402  (the encoder families' modules)
import make_long_context as lc  # noqa: E402  (ModernBERT's modules)
from make_golden import check, write_safetensors  # noqa: E402

LOGITS_MAX_ABS = 1e-4     # heads_test.cc: fp32 logits
SPARSE_MAX_REL = 1e-3     # heads_test.cc: SPLADE weights, relative
MARGIN = 10.0
BATCH_TOLERANCE = 1e-10
GAIN_HEAD = 2.0
STD_BIAS = 0.5


@dataclass
class HeadSpec:
    name: str
    encoder: Union[fam.Spec, lc.Spec]
    head: str                        # "classifier" or "masked_lm"
    num_labels: int = 0
    config: Dict = field(default_factory=dict)   # extra config.json keys
    untied_decoder: bool = False     # masked_lm: the decoder weight is its own, in the file
    pairs: bool = False              # inputs with token types 0/1
    inputs: int = 8


def encoder_spec(name, model_type, seed, **kw) -> fam.Spec:
    family = {"distilbert": "distilbert", "mpnet": "mpnet"}.get(model_type, "bert")
    after_pad = model_type in ("roberta", "xlm-roberta", "camembert", "mpnet")
    args = dict(name=name, family=family, model_type=model_type, seed=seed, layers=1,
                hidden=32, heads=4, intermediate=64, vocab=90, max_positions=40,
                type_vocab=0 if family in ("distilbert", "mpnet") else (1 if after_pad else 2),
                pad=1 if after_pad else 0, eps=1e-5 if after_pad else 1e-12,
                hidden_act="gelu", dtype="F32",
                prefix={"bert": "bert.", "roberta": "roberta.", "xlm-roberta": "roberta.",
                        "camembert": "roberta.", "distilbert": "distilbert.",
                        "mpnet": "mpnet.", "electra": "electra."}[model_type],
                positions_after_pad=after_pad, pooler=model_type == "bert",
                buckets=32 if family == "mpnet" else 0)
    args.update(kw)
    return fam.Spec(**args)


def modernbert_spec(name, seed, **kw) -> lc.Spec:
    """Two layers, global then sliding-window (its own rope theta), and a
    window of 128: the inputs' 40 tokens at most never reach past it."""
    args = dict(name=name, arch="modernbert", seed=seed, layers=2, hidden=32, heads=4,
                intermediate=48, vocab=90, max_positions=40, eps=1e-5, pad=3,
                rope_theta=160000.0, local_rope_theta=10000.0, global_every=2, local_window=128,
                qkv_bias=False, mlp_in_bias=False, mlp_out_bias=False, norm_bias=False)
    args.update(kw)
    return lc.Spec(**args)


def is_modernbert(s) -> bool:
    return isinstance(s, lc.Spec)


def model_type(s) -> str:
    return "modernbert" if is_modernbert(s) else s.model_type


FIXTURES = [
    # A cross-encoder reranker: one label, the CrossEncoder's Sigmoid, pairs.
    HeadSpec("bert_reranker", encoder_spec("bert_reranker", "bert", 3001), "classifier",
             num_labels=1, pairs=True, inputs=16,
             config={"sentence_transformers": {
                 "activation_fn": "torch.nn.modules.activation.Sigmoid", "version": "4.1.0"}}),
    HeadSpec("xlm_roberta_classifier", encoder_spec("xlm_roberta_classifier", "xlm-roberta", 3002),
             "classifier", num_labels=3,
             config={"id2label": {"0": "negative", "1": "neutral", "2": "positive"},
                     "label2id": {"negative": 0, "neutral": 1, "positive": 2}}),
    HeadSpec("distilbert_classifier", encoder_spec("distilbert_classifier", "distilbert", 3003),
             "classifier", num_labels=4,
             config={"id2label": {str(i): l for i, l in enumerate(["toxic", "insult", "threat",
                                                                   "obscene"])},
                     "problem_type": "multi_label_classification"}),
    # The older CrossEncoder key, Identity: raw logits are the scores.
    HeadSpec("mpnet_reranker", encoder_spec("mpnet_reranker", "mpnet", 3004), "classifier",
             num_labels=1, inputs=16,
             config={"sbert_ce_default_activation_function": "torch.nn.modules.linear.Identity"}),
    # No id2label: two labels from the weight's shape, LABEL_0 and LABEL_1.
    HeadSpec("electra_classifier", encoder_spec("electra_classifier", "electra", 3005,
                                                embedding_size=16),
             "classifier", num_labels=2, pairs=True),
    HeadSpec("bert_mlm", encoder_spec("bert_mlm", "bert", 3011, pooler=False), "masked_lm",
             untied_decoder=True, pairs=True),
    HeadSpec("roberta_mlm", encoder_spec("roberta_mlm", "roberta", 3012), "masked_lm"),
    HeadSpec("distilbert_mlm", encoder_spec("distilbert_mlm", "distilbert", 3013), "masked_lm"),
    HeadSpec("mpnet_mlm", encoder_spec("mpnet_mlm", "mpnet", 3014), "masked_lm"),
    HeadSpec("electra_mlm", encoder_spec("electra_mlm", "electra", 3015, embedding_size=16),
             "masked_lm"),
    # gte-reranker-modernbert-base's head: the mean of the tokens, no head
    # biases (classifier_bias, norm_bias false), a CrossEncoder's config.
    HeadSpec("modernbert_reranker", modernbert_spec("modernbert_reranker", 3006), "classifier",
             num_labels=1, inputs=16,
             config={"classifier_pooling": "mean", "classifier_bias": False,
                     "classifier_activation": "gelu", "norm_bias": False,
                     "id2label": {"0": "LABEL_0"}, "label2id": {"LABEL_0": 0},
                     "sentence_transformers": {
                         "activation_fn": "torch.nn.modules.activation.Sigmoid",
                         "version": "4.1.0"}}),
    # ModernBertForMaskedLM with the biases config.json may switch on: the
    # head's dense (classifier_bias), every LayerNorm's (norm_bias), the
    # decoder's (decoder_bias, the default).
    HeadSpec("modernbert_mlm", modernbert_spec("modernbert_mlm", 3016, norm_bias=True),
             "masked_lm",
             config={"classifier_bias": True, "norm_bias": True, "decoder_bias": True,
                     "classifier_activation": "gelu"}),
]


# ModernBertConfig's defaults of the head's keys.
MODERNBERT_HEAD_DEFAULTS = {"classifier_pooling": "cls", "classifier_bias": False,
                            "classifier_activation": "gelu", "norm_bias": False,
                            "decoder_bias": True}


def modernbert_head_config(h) -> Dict:
    """The head's keys as config.json says them (the defaults where it does not)."""
    c = config_json(h)
    return {k: c.get(k, v) for k, v in MODERNBERT_HEAD_DEFAULTS.items()}


# ---------------------------------------------------------------------------
# Head tensors (hub names) and math
# ---------------------------------------------------------------------------

def classifier_names(model_type: str):
    """(dense, activation, out) as in each family's modeling file."""
    if model_type == "bert":
        return "bert.pooler.dense", "tanh", "classifier"
    if model_type == "distilbert":
        return "pre_classifier", "relu", "classifier"
    if model_type == "electra":
        return "classifier.dense", "gelu", "classifier.out_proj"
    return "classifier.dense", "tanh", "classifier.out_proj"


def masked_lm_names(model_type: str):
    """(transform, activation, norm, decoder, bias)."""
    if model_type == "bert":
        return ("cls.predictions.transform.dense", "hidden_act",
                "cls.predictions.transform.LayerNorm", "cls.predictions.decoder",
                "cls.predictions.bias")
    if model_type == "distilbert":
        return "vocab_transform", "hidden_act", "vocab_layer_norm", "vocab_projector", \
            "vocab_projector.bias"
    if model_type == "electra":
        return ("generator_predictions.dense", "gelu", "generator_predictions.LayerNorm",
                "generator_lm_head", "generator_lm_head.bias")
    return "lm_head.dense", "gelu", "lm_head.layer_norm", "lm_head.decoder", "lm_head.bias"


def make_head_tensors(h: HeadSpec, model: fam.Model, gen: torch.Generator) -> Dict:
    s = h.encoder

    def linear(name, n_in, n_out, gain=GAIN_HEAD):
        return {name + ".weight": torch.randn(n_out, n_in, generator=gen) * gain / math.sqrt(n_in),
                name + ".bias": torch.randn(n_out, generator=gen) * STD_BIAS}

    t = {}
    if is_modernbert(s):
        # ModernBertPredictionHead `head`, then the classifier or the decoder's bias.
        c = modernbert_head_config(h)
        dense = linear("head.dense", s.hidden, s.hidden)
        if not c["classifier_bias"]:
            del dense["head.dense.bias"]
        t.update(dense)
        t["head.norm.weight"] = 1.0 + 0.2 * torch.randn(s.hidden, generator=gen)
        beta = 0.2 * torch.randn(s.hidden, generator=gen)
        if c["norm_bias"]:
            t["head.norm.bias"] = beta
        if h.head == "classifier":
            t.update(linear("classifier", s.hidden, h.num_labels))
        elif c["decoder_bias"]:
            t["decoder.bias"] = torch.randn(s.vocab, generator=gen) * STD_BIAS
        return t
    if h.head == "classifier":
        dense, _, out = classifier_names(s.model_type)
        if s.model_type != "bert":  # BERT's dense is the encoder's pooler
            t.update(linear(dense, s.hidden, s.hidden))
        t.update(linear(out, s.hidden, h.num_labels))
    else:
        transform, _, norm, decoder, bias = masked_lm_names(s.model_type)
        t.update(linear(transform, s.hidden, s.emb))
        t[norm + ".weight"] = 1.0 + 0.2 * torch.randn(s.emb, generator=gen)
        t[norm + ".bias"] = 0.2 * torch.randn(s.emb, generator=gen)
        t[bias] = torch.randn(s.vocab, generator=gen) * STD_BIAS
        if h.untied_decoder:
            t[decoder + ".weight"] = torch.randn(s.vocab, s.emb, generator=gen) * 0.5
    return t


def act_fn(name: str, s: fam.Spec):
    if name == "hidden_act":
        name = s.hidden_act
    return {"tanh": torch.tanh, "relu": F.relu, "gelu": F.gelu, "identity": lambda x: x,
            "gelu_new": lambda x: F.gelu(x, approximate="tanh")}[name]


def apply_heads(h: HeadSpec, model: fam.Model, t: Dict, states, pooled, mask,
                mutation: Optional[str] = None):
    """states [B, L, H] (padded), mask [B, L] -> logits [B, labels] or
    (max, sum) SPLADE weights [B, V]."""
    s = h.encoder
    dt = states.dtype

    def lin(name, x):
        return F.linear(x, t[name + ".weight"].to(dt), t[name + ".bias"].to(dt))

    if is_modernbert(s):
        return apply_modernbert_heads(h, model, t, states, mask, mutation)
    if h.head == "classifier":
        dense, act, out = classifier_names(s.model_type)
        if mutation == "wrong_activation":
            act = {"tanh": "gelu", "relu": "gelu", "gelu": "tanh"}[act]
        if mutation == "no_activation":
            act = "identity"
        x = states[:, 0]
        if s.model_type == "bert":
            x = model.pooler.dense(x)  # the encoder's pooler, bert.pooler.dense
            if mutation == "no_pooler":
                return lin(out, states[:, 0])
        else:
            x = lin(dense, x)
        return lin(out, act_fn(act, s)(x))
    transform, act, norm, decoder, bias = masked_lm_names(s.model_type)
    if mutation == "no_activation":
        act = "identity"
    x = act_fn(act, s)(lin(transform, states))
    if mutation != "no_layer_norm":
        x = F.layer_norm(x, (s.emb,), t[norm + ".weight"].to(dt), t[norm + ".bias"].to(dt),
                         eps=s.eps)
    if h.untied_decoder and mutation != "tied_decoder":
        w = t[decoder + ".weight"].to(dt)
    elif mutation == "untied_decoder":
        w = torch.roll(model.embeddings.word_embeddings.weight.to(dt), 1, dims=0)
    else:
        w = model.embeddings.word_embeddings.weight.to(dt)
    logits = F.linear(x, w, t[bias].to(dt))                 # [B, L, V]
    weights = torch.log1p(F.relu(logits)) * mask[:, :, None].to(dt)
    return weights.max(dim=1).values, weights.sum(dim=1)


def apply_modernbert_heads(h: HeadSpec, model, t: Dict, states, mask, mutation: Optional[str]):
    """ModernBertForSequenceClassification / ModernBertForMaskedLM on the
    encoder's states (transformers' modeling_modernbert.py)."""
    s = h.encoder
    dt = states.dtype
    c = modernbert_head_config(h)
    drop_biases = mutation == "head_biases_ignored"

    def tensor(name):
        v = t.get(name)
        return None if v is None or (drop_biases and name.endswith(".bias")) else v.to(dt)

    act = c["classifier_activation"]
    if mutation == "wrong_activation":
        act = {"gelu": "tanh"}[act]
    elif mutation == "no_activation":
        act = "identity"

    def prediction_head(x):  # ModernBertPredictionHead: norm(act(dense(x)))
        x = act_fn(act, s)(F.linear(x, tensor("head.dense.weight"), tensor("head.dense.bias")))
        if mutation in ("no_layer_norm", "no_head_norm"):
            return x
        return F.layer_norm(x, (s.hidden,), tensor("head.norm.weight"), tensor("head.norm.bias"),
                            eps=s.eps)

    m = mask.to(dt)
    if h.head == "classifier":
        mean = c["classifier_pooling"] == "mean" and mutation != "first_token_for_mean"
        if mean:
            pooled = (states * m[:, :, None]).sum(dim=1) / m.sum(dim=1, keepdim=True)
        else:
            pooled = states[:, 0]
        x = prediction_head(pooled)
        return F.linear(x, tensor("classifier.weight"), tensor("classifier.bias"))
    x = prediction_head(states)
    w = model.model.embeddings.tok_embeddings.weight.to(dt)   # decoder.weight, tied
    if mutation == "untied_decoder":
        w = torch.roll(w, 1, dims=0)
    logits = F.linear(x, w, tensor("decoder.bias"))             # [B, L, V]
    weights = torch.log1p(F.relu(logits)) * m[:, :, None]
    return weights.max(dim=1).values, weights.sum(dim=1)


def run(h: HeadSpec, model: fam.Model, t: Dict, inputs, dtype, mutation=None):
    s = h.encoder
    ids, types, mask = fam.padded_batch(inputs, s.pad)
    model = model.to(dtype)
    with torch.no_grad():
        if is_modernbert(s):
            states, pooled = model(ids, types, mask), None
        else:
            states, pooled = model(ids, types, mask)
        out = apply_heads(h, model, t, states, pooled, mask, mutation)
    if h.head == "classifier":
        return {"logits": out.double().numpy()}
    return {"max": out[0].double().numpy(), "sum": out[1].double().numpy()}


def make_inputs(h: HeadSpec, rng: np.random.RandomState) -> List[dict]:
    s = h.encoder
    lengths = [1, 3, 6, 9, 14, 20, 27, s.max_length] + list(rng.randint(2, 30, size=h.inputs))
    inputs = []
    for n in lengths[:h.inputs]:
        ids = rng.randint(0, s.vocab, size=n).tolist()
        if getattr(s, "positions_after_pad", False):
            ids = [i if i != s.pad else s.pad + 1 for i in ids]
        item = {"ids": ids}
        if h.pairs and n > 1:
            first = max(1, int(rng.randint(1, n)))
            item["token_type_ids"] = [0] * first + [1] * (n - first)
        inputs.append(item)
    return inputs


def sparse_entries(weights: np.ndarray) -> List[list]:
    ids = [i for i in range(len(weights)) if weights[i] > 0]
    ids.sort(key=lambda i: (-weights[i], i))
    return [[i, float(f"{weights[i]:.8g}")] for i in ids]


def max_rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1.0)))


def distance(h: HeadSpec, a: Dict, b: Dict) -> float:
    """In units of the test's tolerance."""
    if h.head == "classifier":
        return float(np.max(np.abs(a["logits"] - b["logits"]))) / LOGITS_MAX_ABS
    return max(max_rel(a[k], b[k]) for k in ("max", "sum")) / SPARSE_MAX_REL


MUTATIONS = {
    "classifier": ["wrong_activation", "no_activation"],
    "masked_lm": ["no_activation", "no_layer_norm", "untied_decoder"],
}


def config_json(h: HeadSpec) -> dict:
    s = h.encoder
    arch = {"classifier": "ForSequenceClassification", "masked_lm": "ForMaskedLM"}[h.head]
    if is_modernbert(s):
        c = lc.config_json(s)
        c["architectures"] = ["ModernBert" + arch]
        c.update(h.config)
        return c
    c = fam.config_json(s) if s.model_type != "bert" else {
        "model_type": "bert", "attention_probs_dropout_prob": 0.1, "hidden_act": s.hidden_act,
        "hidden_dropout_prob": 0.1, "hidden_size": s.hidden, "initializer_range": 0.02,
        "intermediate_size": s.intermediate, "layer_norm_eps": s.eps,
        "max_position_embeddings": s.max_positions, "num_attention_heads": s.heads,
        "num_hidden_layers": s.layers, "pad_token_id": s.pad, "torch_dtype": "float32",
        "type_vocab_size": s.type_vocab, "position_embedding_type": "absolute",
        "vocab_size": s.vocab}
    for key in ("id2label", "label2id"):
        c.pop(key, None)
    prefix = {"xlm-roberta": "XLMRoberta", "distilbert": "DistilBert", "mpnet": "MPNet",
              "electra": "Electra", "bert": "Bert", "roberta": "Roberta",
              "camembert": "Camembert"}[s.model_type]
    c["architectures"] = [prefix + arch]
    c.update(h.config)
    return c


def generate(h: HeadSpec) -> None:
    s = h.encoder
    torch.manual_seed(s.seed)
    gen = torch.Generator().manual_seed(s.seed)
    if is_modernbert(s):
        # make_long_context's ModernBertForMaskedLM: its own head and decoder
        # bias are left out of the file for this fixture's (make_head_tensors).
        model = lc.MODELS[s.arch](s)
        lc.init_weights(model, s, gen)
    else:
        model = fam.Model(s)
        fam.init_weights(model, gen)
        fam.round_to_dtype(model, s.dtype)
    model.eval()
    t = make_head_tensors(h, model, gen)
    inputs = make_inputs(h, np.random.RandomState(s.seed))

    ref = run(h, model, t, inputs, torch.float64)
    mutations = list(MUTATIONS[h.head])
    if model_type(s) == "bert" and h.head == "classifier":
        mutations.append("no_pooler")
    if is_modernbert(s):
        c = modernbert_head_config(h)
        if h.head == "classifier":
            mutations.append("no_head_norm")
            if c["classifier_pooling"] == "mean":
                mutations.append("first_token_for_mean")
        if c["classifier_bias"] or c["norm_bias"] or h.head == "classifier":
            mutations.append("head_biases_ignored")
    if h.untied_decoder:
        mutations[mutations.index("untied_decoder")] = "tied_decoder"
    d32 = fam.self_check(
        h.name, lambda xs, dtype, m=None: run(h, model, t, xs, dtype, m), inputs, ref,
        alone_diff=lambda alone, i: max(float(np.max(np.abs(alone[k][0] - ref[k][i]))) for k in ref),
        batch_tolerance=BATCH_TOLERANCE, mutations=mutations,
        distance=lambda out: distance(h, out, ref), mutation_floor=lambda m: MARGIN,
        float32_ceiling=1.0 / MARGIN, unit=" tolerances")
    model = model.to(torch.float32)

    target = os.path.join(OUT, h.name)
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(os.path.join(target, "model"))
    with open(os.path.join(target, "model", "config.json"), "w") as f:
        json.dump(config_json(h), f, indent=2)
        f.write("\n")
    if is_modernbert(s):  # names already "model.*"; the head is the fixture's own
        tensors = {n: p.detach().contiguous() for n, p in model.state_dict().items()
                   if n.startswith("model.")}
    else:
        tensors = {s.prefix + n: p.detach().contiguous() for n, p in model.state_dict().items()}
    tensors.update({n: v.contiguous() for n, v in t.items()})
    write_safetensors(os.path.join(target, "model", "model.safetensors"), tensors, s.dtype)

    reference = {
        "family": model_type(s),
        "generator": "tests/golden/make_heads.py",
        "head": h.head,
        "inputs": inputs,
    }
    if h.head == "classifier":
        reference["num_labels"] = h.num_labels
        reference["logits"] = [[float(f"{v:.10g}") for v in row] for row in ref["logits"]]
    else:
        reference["sparse_max"] = [sparse_entries(w) for w in ref["max"]]
        reference["sparse_sum"] = [sparse_entries(w) for w in ref["sum"]]
    with open(os.path.join(target, "reference.json"), "w") as f:
        json.dump(reference, f, separators=(",", ":"))
        f.write("\n")
    print(f"{h.name}: float32 torch within {d32:.2g} tolerances; written to {target}")


def main(argv) -> int:
    names = argv[1:] or [h.name for h in FIXTURES]
    for h in FIXTURES:
        if h.name in names:
            generate(h)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
