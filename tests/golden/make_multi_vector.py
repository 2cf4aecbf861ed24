#!/usr/bin/python3
"""Generates the multi-output fixtures in tests/golden/multi_vector/ (see README.md).

Run with Debian's interpreter, which sees python3-torch (1.13) and numpy:

    /usr/bin/python3 tests/golden/make_multi_vector.py

bge_m3: a small random XLM-RoBERTa (make_families.py's modules; saved bare,
as BAAI/bge-m3's model.safetensors is XLMRobertaModel's state_dict) with
BAAI/bge-m3's two extra heads written by torch.save exactly as FlagEmbedding
saves them (`torch.save(self.colbert_linear.state_dict(), ...)`):
sparse_linear.pt (Linear(H, 1)) and colbert_linear.pt (Linear(H, D)). The
three outputs are computed as FlagEmbedding's BGEM3 model defines them
(FlagEmbedding/inference/embedder/encoder_only/m3.py):

  dense    last_hidden_state[:, 0], L2-normalized
  sparse   relu(sparse_linear(last_hidden_state)) per token; per token id the
           maximum; the tokenizer's cls, eos, pad and unk ids left out, and
           weights of 0 (FlagEmbedding's _process_token_weights)
  colbert  colbert_linear(last_hidden_state[:, 1:]) * mask[:, 1:], each
           vector L2-normalized; tokens_num - 1 vectors per input
           (_process_colbert_vecs)

The directory also holds what the server reads: a tiny tokenizer.json
(WordLevel over "<s>" 0, "<pad>" 1, "</s>" 2, "<unk>" 3, w4 ... and "<mask>"
last; whitespace split; "<s> $A </s>" as XLM-R's post-processor), and the
sentence-transformers files of BAAI/bge-m3 (Transformer, Pooling cls,
Normalize).

reference.json: inputs (ids with <s> ... </s>, one with a repeated id, one
with </s> and <unk> inside), and per input the dense vector, the sparse
[id, weight] pairs by descending weight, and the ColBERT vectors, in
float64 rounded to 8 digits.

Self-checks, each of which fails the run:
  (a) padded batch == each input run alone (float64, < 1e-10);
  (b) sensitivity: a wrong rule (sparse summed per id instead of the maximum;
      special tokens kept; ColBERT vectors not normalized; ColBERT on the
      first token too) moves some output by more than 10x the test's 1e-4;
  (c) float32 torch stays 10x inside 1e-4.
"""

import json
import os
import shutil
import sys
from typing import Dict, List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "multi_vector")
sys.path.insert(0, HERE)
import make_families as fam  # noqa: E402  (the encoder families' modules)
from make_golden import check, write_safetensors  # noqa: E402

PARITY_MAX_ABS = 1e-4  # multi_vector_test.cc: fp32 outputs
MARGIN = 10.0
BATCH_TOLERANCE = 1e-10
COLBERT_DIM = 24
VOCAB = 90
SPECIALS = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
MASK_ID = VOCAB - 1
UNUSED = [0, 1, 2, 3]  # FlagEmbedding: cls, eos, pad, unk

SPEC = fam.Spec("bge_m3", "bert", "xlm-roberta", seed=2701, layers=2, hidden=48, heads=4,
                intermediate=96, vocab=VOCAB, max_positions=40, type_vocab=1, pad=1, eps=1e-5,
                hidden_act="gelu", dtype="F32", prefix="", positions_after_pad=True,
                pooler=True)


def make_inputs(rng: np.random.RandomState) -> List[dict]:
    lengths = [1, 4, 9, 17, 26, SPEC.max_length - 2]
    inputs = []
    for n in lengths:
        words = rng.randint(4, MASK_ID, size=n).tolist()
        inputs.append({"ids": [0] + words + [2]})
    for b in (3, 5):                             # repeated ids: their maximum counts
        for first in (2, 3, 4):
            for t in range(first + 4, len(inputs[b]["ids"]) - 1, 6):
                inputs[b]["ids"][t] = inputs[b]["ids"][first]
    inputs[4]["ids"][7] = 2                      # </s> and <unk> inside: left out of sparse
    inputs[4]["ids"][11] = 3
    return inputs


def outputs(model, heads: Dict[str, nn.Linear], inputs, dtype, mutation=None):
    ids, types, mask = fam.padded_batch(inputs, SPEC.pad)
    model = model.to(dtype)
    sparse_linear = heads["sparse"].to(dtype)
    colbert_linear = heads["colbert"].to(dtype)
    with torch.no_grad():
        states, _ = model(ids, types, mask)
        dense = F.normalize(states[:, 0], dim=-1)
        token_weights = torch.relu(sparse_linear(states)).squeeze(-1)
        first = 0 if mutation == "colbert_first_token" else 1
        colbert = colbert_linear(states[:, first:]) * mask[:, first:, None].to(dtype)
        if mutation != "colbert_not_normalized":
            colbert = F.normalize(colbert, dim=-1)
    out = []
    for b, item in enumerate(inputs):
        n = len(item["ids"])
        weights: Dict[int, float] = {}
        for t in range(n):
            i, w = item["ids"][t], float(token_weights[b, t])
            if (i in UNUSED and mutation != "specials_kept") or w <= 0:
                continue
            weights[i] = weights.get(i, 0.0) + w if mutation == "sparse_sum" \
                else max(weights.get(i, 0.0), w)
        out.append({"dense": dense[b].double().numpy(), "sparse": weights,
                    "colbert": colbert[b, :n - first].double().numpy()})
    return out


def distance(a, b) -> float:
    d = 0.0
    for x, y in zip(a, b):
        d = max(d, float(np.max(np.abs(x["dense"] - y["dense"]))))
        if set(x["sparse"]) != set(y["sparse"]) or x["colbert"].shape != y["colbert"].shape:
            return float("inf")
        d = max(d, max((abs(x["sparse"][k] - y["sparse"][k]) for k in x["sparse"]), default=0.0))
        d = max(d, float(np.max(np.abs(x["colbert"] - y["colbert"]), initial=0.0)))
    return d


def tokenizer_json() -> dict:
    vocab = {f"w{i}": i for i in range(VOCAB)}
    vocab = {("<mask>" if i == MASK_ID else f"w{i}"): i for i in range(VOCAB)}
    for token, i in SPECIALS.items():
        del vocab[f"w{i}"]
        vocab[token] = i
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True}
             for t, i in sorted(list(SPECIALS.items()) + [("<mask>", MASK_ID)],
                                key=lambda kv: kv[1])]
    piece = lambda t: {"SpecialToken": {"id": t, "type_id": 0}}  # noqa: E731
    seq = lambda s: {"Sequence": {"id": s, "type_id": 0}}  # noqa: E731
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": None, "pre_tokenizer": {"type": "WhitespaceSplit"},
            "post_processor": {
                "type": "TemplateProcessing",
                "single": [piece("<s>"), seq("A"), piece("</s>")],
                "pair": [piece("<s>"), seq("A"), piece("</s>"), piece("</s>"), seq("B"),
                         piece("</s>")],
                "special_tokens": {t: {"id": t, "ids": [i], "tokens": [t]}
                                   for t, i in [("<s>", 0), ("</s>", 2)]}},
            "decoder": None,
            "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"}}


def write_json(path: str, value) -> None:
    with open(path, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")


def generate() -> None:
    s = SPEC
    torch.manual_seed(s.seed)
    gen = torch.Generator().manual_seed(s.seed)
    model = fam.Model(s)
    fam.init_weights(model, gen)
    model.eval()
    heads = {"sparse": nn.Linear(s.hidden, 1), "colbert": nn.Linear(s.hidden, COLBERT_DIM)}
    with torch.no_grad():
        for linear in heads.values():
            linear.weight.copy_(torch.randn(linear.weight.shape, generator=gen)
                                * (2.0 / s.hidden ** 0.5))
            linear.bias.copy_(torch.randn(linear.bias.shape, generator=gen) * 0.5)
        # Most tokens' weights above zero (real bge-m3 weighs most words), some at zero.
        heads["sparse"].bias.fill_(1.0)
    inputs = make_inputs(np.random.RandomState(s.seed))

    ref = outputs(model, heads, inputs, torch.float64)
    check(any(len(r["sparse"]) < len(set(x["ids"])) - 2 for r, x in zip(ref, inputs)),
          "some token's weight is 0 (relu), as real inputs have")
    d32 = fam.self_check(
        s.name, lambda xs, dtype, m=None: outputs(model, heads, xs, dtype, m), inputs, ref,
        alone_diff=lambda alone, i: distance(alone, [ref[i]]), batch_tolerance=BATCH_TOLERANCE,
        mutations=["sparse_sum", "specials_kept", "colbert_not_normalized",
                   "colbert_first_token"],
        distance=lambda out: distance(out, ref),
        mutation_floor=lambda m: MARGIN * PARITY_MAX_ABS,
        float32_ceiling=PARITY_MAX_ABS / MARGIN)

    target = os.path.join(OUT, s.name)
    shutil.rmtree(target, ignore_errors=True)
    model_dir = os.path.join(target, "model")
    os.makedirs(os.path.join(model_dir, "1_Pooling"))
    config = fam.config_json(s)
    write_json(os.path.join(model_dir, "config.json"), config)
    fam.write_checkpoint(os.path.join(model_dir, "model.safetensors"), s,
                         model.to(torch.float32), gen)
    for name, linear in heads.items():
        torch.save(linear.to(torch.float32).state_dict(),
                   os.path.join(model_dir, f"{name}_linear.pt"))
    with open(os.path.join(model_dir, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(), f, separators=(",", ":"))
    write_json(os.path.join(model_dir, "modules.json"), [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling",
         "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize",
         "type": "sentence_transformers.models.Normalize"}])
    write_json(os.path.join(model_dir, "1_Pooling", "config.json"), {
        "word_embedding_dimension": s.hidden, "pooling_mode_cls_token": True,
        "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False})

    def rounded(a):
        return [float(f"{v:.8g}") for v in a]

    reference = {
        "generator": "tests/golden/make_multi_vector.py",
        "inputs": inputs,
        "colbert_dim": COLBERT_DIM,
        "dense": [rounded(r["dense"]) for r in ref],
        "sparse": [[[i, float(f"{w:.8g}")] for i, w in
                    sorted(r["sparse"].items(), key=lambda kv: (-kv[1], kv[0]))] for r in ref],
        "colbert": [[rounded(row) for row in r["colbert"]] for r in ref],
    }
    with open(os.path.join(target, "reference.json"), "w") as f:
        json.dump(reference, f, separators=(",", ":"))
        f.write("\n")
    print(f"{s.name}: float32 torch within {d32:.2g}; written to {target}")


# ---------------------------------------------------------------------------
# colbert: PyLate's ColBERT layout
# ---------------------------------------------------------------------------

COLBERT_WORDS = ["the", "river", "city", "bridge", "runs", "north", "of", "a", "old", "town",
                 "where", "is", "boat", "water", "light", "night", "green", "hill", "stone",
                 "road", "small", "house", "near", "under", "over", "at"]
COLBERT_PUNCT = [".", ",", "!", "?", ";"]
COLBERT_SPECIALS = ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
COLBERT_VOCAB = COLBERT_SPECIALS + COLBERT_WORDS + COLBERT_PUNCT
COLBERT_SKIPLIST = [".", ",", "!", "?"]  # ";" stays: a skiplist is the model's choice
QUERY_LENGTH = 12
DOCUMENT_LENGTH = 20
PYLATE_DIM = 16
COLBERT_SPEC = fam.Spec("colbert", "bert", "bert", seed=2702, layers=2, hidden=32, heads=4,
                        intermediate=64, vocab=len(COLBERT_VOCAB), max_positions=64,
                        type_vocab=2, pad=0, eps=1e-12, hidden_act="gelu", dtype="F32",
                        prefix="", positions_after_pad=False, pooler=False)
QUERIES = ["where is the old bridge?", "green hill road",
           "the river runs north of the old town where the stone bridge is"]
DOCUMENTS = ["The river runs north of the old town.",
             "A small house, near the green hill!",
             "Where is the boat? Under the bridge, over the water; at night the light is green.",
             "stone road"]


def colbert_word_ids(text: str) -> List[int]:
    """BERT's basic tokenization of these texts (lower case, punctuation
    split off, every word in the vocabulary: WordPiece keeps each whole)."""
    out = []
    for word in text.lower().split():
        while word and word[-1] in COLBERT_PUNCT:
            out.append(word[:-1]) if word[:-1] else None
            out.append(word[-1])
            word = ""
        if word:
            out.append(word)
    ids = []
    for token in out:
        check(token in COLBERT_VOCAB, f"{token!r} is not in the colbert vocabulary")
        ids.append(COLBERT_VOCAB.index(token))
    return ids


def colbert_ids(text: str, query: bool, mutation=None):
    """PyLate's ColBERT.tokenize: [CLS] text [SEP] cut to length - 1, the
    prefix token inserted after [CLS]; a query padded with [MASK] to
    query_length, the padding masked from attention (attend_to_expansion_tokens
    false). Returns ids and the attention mask."""
    v = COLBERT_VOCAB.index
    length = QUERY_LENGTH if query else DOCUMENT_LENGTH
    words = colbert_word_ids(text)[:length - 3]
    ids = [v("[CLS]")] + words + [v("[SEP]")]
    if mutation != "no_prefix":
        ids.insert(1, v("[unused0]") if query else v("[unused1]"))
    mask = [1] * len(ids)
    if query:
        pad = QUERY_LENGTH - len(ids)
        ids += [v("[MASK]")] * pad
        mask += [1 if mutation == "expansion_attended" else 0] * pad
    return ids, mask


def colbert_vectors(model, dense: nn.Linear, texts, query: bool, dtype, mutation=None,
                    skiplist=COLBERT_SKIPLIST):
    inputs = []
    for text in texts:
        ids, mask = colbert_ids(text, query, mutation)
        inputs.append((ids, mask))
    L = max(len(ids) for ids, _ in inputs)
    B = len(inputs)
    ids_t = torch.zeros(B, L, dtype=torch.long)
    mask_t = torch.zeros(B, L, dtype=torch.long)
    for b, (ids, mask) in enumerate(inputs):
        ids_t[b, :len(ids)] = torch.tensor(ids)
        mask_t[b, :len(mask)] = torch.tensor(mask)
    model = model.to(dtype)
    dense = dense.to(dtype)
    skip = [COLBERT_VOCAB.index(w) for w in skiplist if w in COLBERT_VOCAB]
    with torch.no_grad():
        states, _ = model(ids_t, torch.zeros_like(ids_t), mask_t)
        projected = dense(states)
    out = []
    for b, (ids, mask) in enumerate(inputs):
        rows = []
        for t in range(len(ids)):
            keep = True if query else (mask[t] == 1 and (ids[t] not in skip
                                                         or mutation == "skiplist_ignored"))
            if keep:
                rows.append(projected[b, t])
        vectors = torch.stack(rows)
        if mutation != "not_normalized":
            vectors = F.normalize(vectors, dim=-1)
        out.append({"ids": ids, "visible": sum(mask), "vectors": vectors.double().numpy()})
    return out


def maxsim(q: np.ndarray, d: np.ndarray) -> float:
    return float((q @ d.T).max(axis=1).sum())


def colbert_outputs(model, dense, dtype, mutation=None, skiplist=COLBERT_SKIPLIST):
    queries = colbert_vectors(model, dense, QUERIES, True, dtype, mutation, skiplist)
    documents = colbert_vectors(model, dense, DOCUMENTS, False, dtype, mutation, skiplist)
    scores = [[maxsim(q["vectors"], d["vectors"]) for d in documents] for q in queries]
    return {"queries": queries, "documents": documents, "scores": scores}


def colbert_distance(a, b) -> float:
    d = 0.0
    for kind in ("queries", "documents"):
        for x, y in zip(a[kind], b[kind]):
            if x["vectors"].shape != y["vectors"].shape:
                return float("inf")
            d = max(d, float(np.max(np.abs(x["vectors"] - y["vectors"]))))
    return max(d, float(np.max(np.abs(np.array(a["scores"]) - np.array(b["scores"])))))


def generate_colbert() -> None:
    s = COLBERT_SPEC
    torch.manual_seed(s.seed)
    gen = torch.Generator().manual_seed(s.seed)
    model = fam.Model(s)
    fam.init_weights(model, gen)
    model.eval()
    dense = nn.Linear(s.hidden, PYLATE_DIM, bias=False)
    with torch.no_grad():
        dense.weight.copy_(torch.randn(dense.weight.shape, generator=gen) * (2.0 / s.hidden ** 0.5))
    ref = colbert_outputs(model, dense, torch.float64)
    check(any(q["visible"] < QUERY_LENGTH for q in ref["queries"]), "a query is expanded")
    for m in ("expansion_attended", "skiplist_ignored", "no_prefix", "not_normalized"):
        d = colbert_distance(colbert_outputs(model, dense, torch.float64, m), ref)
        print(f"  colbert: mutation {m} moves outputs by {d:.3g}")
        check(d > MARGIN * PARITY_MAX_ABS, f"colbert: mutation {m} only moves {d}")
    d32 = colbert_distance(colbert_outputs(model, dense, torch.float32), ref)
    check(d32 < PARITY_MAX_ABS / MARGIN, f"colbert: float32 torch off by {d32}")

    target = os.path.join(OUT, "colbert")
    shutil.rmtree(target, ignore_errors=True)
    model_dir = os.path.join(target, "model")
    os.makedirs(os.path.join(model_dir, "1_Dense"))
    write_json(os.path.join(model_dir, "config.json"), {
        "architectures": ["BertModel"], "model_type": "bert", "hidden_act": s.hidden_act,
        "hidden_size": s.hidden, "intermediate_size": s.intermediate,
        "layer_norm_eps": s.eps, "max_position_embeddings": s.max_positions,
        "num_attention_heads": s.heads, "num_hidden_layers": s.layers, "pad_token_id": s.pad,
        "type_vocab_size": s.type_vocab, "vocab_size": s.vocab,
        "position_embedding_type": "absolute", "torch_dtype": "float32"})
    fam.write_checkpoint(os.path.join(model_dir, "model.safetensors"), s,
                         model.to(torch.float32), gen)
    write_safetensors(os.path.join(model_dir, "1_Dense", "model.safetensors"),
                      {"linear.weight": dense.weight.detach().to(torch.float32).contiguous()},
                      "F32")
    write_json(os.path.join(model_dir, "1_Dense", "config.json"), {
        "in_features": s.hidden, "out_features": PYLATE_DIM, "bias": False,
        "activation_function": "torch.nn.modules.linear.Identity"})
    write_json(os.path.join(model_dir, "modules.json"), [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Dense", "type": "pylate.models.Dense.Dense"}])
    write_json(os.path.join(model_dir, "config_sentence_transformers.json"), {
        "query_prefix": "[unused0]", "document_prefix": "[unused1]",
        "query_length": QUERY_LENGTH, "document_length": DOCUMENT_LENGTH,
        "attend_to_expansion_tokens": False, "skiplist_words": COLBERT_SKIPLIST,
        "do_query_expansion": True, "similarity_fn_name": "MaxSim",
        "prompts": {}, "default_prompt_name": None})
    with open(os.path.join(model_dir, "vocab.txt"), "w") as f:
        f.write("\n".join(COLBERT_VOCAB) + "\n")
    write_json(os.path.join(model_dir, "tokenizer_config.json"), {
        "do_lower_case": True, "tokenizer_class": "BertTokenizer", "model_max_length": 64})

    def rows(a):
        return [[float(f"{v:.8g}") for v in row] for row in a]

    reference = {
        "generator": "tests/golden/make_multi_vector.py",
        "query_length": QUERY_LENGTH, "document_length": DOCUMENT_LENGTH, "dim": PYLATE_DIM,
        "queries": [{"text": t, "ids": q["ids"], "visible_keys": q["visible"],
                     "vectors": rows(q["vectors"])} for t, q in zip(QUERIES, ref["queries"])],
        "documents": [{"text": t, "ids": d["ids"], "vectors": rows(d["vectors"])}
                      for t, d in zip(DOCUMENTS, ref["documents"])],
        "scores": [[float(f"{v:.8g}") for v in row] for row in ref["scores"]],
    }
    with open(os.path.join(target, "reference.json"), "w") as f:
        json.dump(reference, f, separators=(",", ":"))
        f.write("\n")
    print(f"colbert: float32 torch within {d32:.2g}; written to {target}")

    # colbert-ir's layout of the same weights (colbert-ir/colbertv2.0): an
    # HF_ColBERT checkpoint ("bert." + the encoder, "linear.weight"), its
    # ColBERTConfig in artifact.metadata; mask_punctuation skips every
    # string.punctuation token (";" too, unlike the PyLate fixture's list).
    punctuation = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    ref2 = colbert_outputs(model, dense, torch.float64, skiplist=punctuation)
    check(colbert_distance(ref2, ref) == float("inf"), "colbertv2: ';' is skipped there")
    target2 = os.path.join(OUT, "colbertv2")
    shutil.rmtree(target2, ignore_errors=True)
    model_dir2 = os.path.join(target2, "model")
    os.makedirs(model_dir2)
    config = json.load(open(os.path.join(model_dir, "config.json")))
    config["architectures"] = ["HF_ColBERT"]
    write_json(os.path.join(model_dir2, "config.json"), config)
    tensors = {"bert." + n: p.detach().to(torch.float32).contiguous()
               for n, p in model.state_dict().items()}
    tensors["linear.weight"] = dense.weight.detach().to(torch.float32).contiguous()
    write_safetensors(os.path.join(model_dir2, "model.safetensors"), tensors, "F32")
    write_json(os.path.join(model_dir2, "artifact.metadata"), {
        "query_token_id": "[unused0]", "doc_token_id": "[unused1]", "query_token": "[Q]",
        "doc_token": "[D]", "query_maxlen": QUERY_LENGTH, "doc_maxlen": DOCUMENT_LENGTH,
        "mask_punctuation": True, "attend_to_mask_tokens": False, "dim": PYLATE_DIM,
        "similarity": "cosine", "checkpoint": "colbert-ir/colbertv2.0 (random weights)"})
    for name in ("vocab.txt", "tokenizer_config.json"):
        shutil.copy(os.path.join(model_dir, name), os.path.join(model_dir2, name))
    reference2 = dict(reference)
    reference2.update({
        "queries": [{"text": t, "ids": q["ids"], "visible_keys": q["visible"],
                     "vectors": rows(q["vectors"])} for t, q in zip(QUERIES, ref2["queries"])],
        "documents": [{"text": t, "ids": d["ids"], "vectors": rows(d["vectors"])}
                      for t, d in zip(DOCUMENTS, ref2["documents"])],
        "scores": [[float(f"{v:.8g}") for v in row] for row in ref2["scores"]]})
    with open(os.path.join(target2, "reference.json"), "w") as f:
        json.dump(reference2, f, separators=(",", ":"))
        f.write("\n")
    print(f"colbertv2: written to {target2}")


def main(argv) -> int:
    names = argv[1:] or ["bge_m3", "colbert"]
    if "bge_m3" in names:
        generate()
    if "colbert" in names:
        generate_colbert()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
