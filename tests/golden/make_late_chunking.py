#!/usr/bin/python3
"""Generates the late chunking fixture in tests/golden/late_chunking/.

Run with Debian's interpreter (python3-torch 1.13):

    /usr/bin/python3 tests/golden/make_late_chunking.py

The model: a small random post-LN BERT (make_golden.py's TorchBert, imported)
whose maximum length is 32 (max_position_embeddings), saved as a
sentence-transformers model directory: modules.json (Transformer, Pooling
mean, Dense 32 -> 24 tanh, Normalize), and a BERT vocab.txt.

Tokenization: the vocabulary holds every word of the texts as one WordPiece
(lower-cased, accents stripped), and the texts hold no punctuation, digits,
CJK or control characters, so BERT's BasicTokenizer + WordPiece (lower_case,
strip_accents) reduce to: split on whitespace, lower-case, strip accents
(NFD, drop combining marks), look the word up. That is what this script does
to get the ids and each token's span in code points (Python's str indices),
independently of the server's tokenizer; the C++ test checks that the
server's tokenizer gives the same ids and offsets. Some words carry accents
(multi-byte UTF-8), so byte and code point offsets differ.

Late chunking, as the server documents it (server/core/requests/late_chunking.h):
the text's T tokens (no special tokens) fit one sequence [CLS] t... [SEP]
when T <= W = 32 - 2; else windows of W tokens starting at k * (W - O), the
last ending at T, each [CLS] ... [SEP]; O = window_overlap, default W // 4.
In the O tokens two consecutive windows share, the first ceil(O / 2) take
their states from the earlier window, the rest from the later one. A token
belongs to the explicit chunk [start, end) holding its first character;
chunk_tokens N makes chunks of N consecutive tokens spanning first start to
last end. A chunk's vector: mean of its tokens' states, tanh(Dense), the
first `dimensions` values, L2 normalization (default: on, the model has a
Normalize module).

reference.json: per case the text, the ids and token spans the tokenizer
must give, the request, the windows, and the expected response (float64).
Self-checks that fail the run:
  (a) float32 torch stays 10x inside the parity test's 1e-4;
  (b) in the multi-window cases, the stitching rule matters: taking every
      shared token from the later window instead, or encoding each chunk
      alone (naive chunking), moves some chunk by more than 10x 1e-4;
  (c) one window == the windows path with one window (same code path here,
      but the whole text's single pass is also computed directly).
"""

import json
import os
import re
import shutil
import sys
import unicodedata

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "late_chunking")
sys.path.insert(0, HERE)
from make_golden import Spec, TorchBert, check, config_json, hf_tensors, init_weights, write_safetensors  # noqa: E402
from make_pipelines import write_pooling_dense_normalize  # noqa: E402

PARITY_MAX_ABS = 1e-4
MARGIN = 10.0
SEED = 1411
MAX_LENGTH = 32
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CLS, SEP = 2, 3
DENSE_OUT = 24

WORDS = ("the a of and to in is was for on with as by at from that this it be are "
         "river mountain city forest valley bridge harbor village castle garden tower "
         "market library station island desert lake meadow storm winter summer morning "
         "evening ancient quiet golden narrow bright distant hidden broken silver green "
         "walks builds carries watches remembers follows opens crosses guards reaches "
         "cafe naive uber resume deja").split()
# Words the texts spell with accents; the vocabulary holds them stripped.
ACCENTED = {"cafe": "café", "naive": "naïve", "uber": "über", "resume": "résumé",
            "deja": "déjà"}
VOCAB = SPECIALS + WORDS
SPEC = Spec("late_chunking", seed=SEED, layers=2, hidden=32, heads=4, intermediate=64,
            vocab=len(VOCAB), max_positions=MAX_LENGTH, type_vocab=2, hidden_act="gelu",
            eps=1e-12, dtype="F32", placement="post", pooler=False)


def make_text(rng, words):
    """`words` random words, accented where the vocabulary has the accent,
    joined by single spaces with some double spaces and a newline."""
    out = []
    for i in range(words):
        w = WORDS[rng.randint(0, len(WORDS))]
        w = ACCENTED.get(w, w) if rng.rand() < 0.7 else w
        if rng.rand() < 0.15:
            w = w.capitalize()
        out.append(w)
        if i + 1 < words:
            out.append(["  ", "\n", " "][min(2, rng.randint(0, 8))])
    return "".join(out)


def strip_accents(word):
    return "".join(c for c in unicodedata.normalize("NFD", word)
                   if unicodedata.category(c) != "Mn")


def tokenize(text):
    """ids and [start, end) code point spans, as BERT's tokenizer would give them here."""
    ids, spans = [], []
    for m in re.finditer(r"\S+", text):
        word = strip_accents(m.group().lower())
        check(word in VOCAB, f"{word!r} is not one WordPiece of the vocabulary")
        ids.append(VOCAB.index(word))
        spans.append([m.start(), m.end()])
    return ids, spans


def plan_windows(tokens, overlap):
    W = MAX_LENGTH - 2
    O = W // 4 if overlap is None else overlap
    check(0 <= O < W, "overlap")
    windows = []
    begin = 0
    while True:
        end = min(begin + W, tokens)
        windows.append([begin, end])
        if end >= tokens:
            break
        begin += W - O
    owned = []
    for k, (b, e) in enumerate(windows):
        own_begin = 0 if k == 0 else b + (O + 1) // 2
        owned.append([own_begin, None])
        if k > 0:
            owned[k - 1][1] = own_begin
    owned[-1][1] = tokens
    return windows, owned


def encode(model, ids, dtype):
    """Token states of one sequence [CLS] ids [SEP] (no padding), float64 out."""
    x = torch.tensor([[CLS] + ids + [SEP]], dtype=torch.long)
    types = torch.zeros_like(x)
    pad = torch.zeros_like(x, dtype=torch.bool)
    with torch.no_grad():
        states, _ = model.to(dtype)(x, types, pad)
    return states[0, 1:-1].to(torch.float64)


def stitched_states(model, ids, windows, owned, dtype):
    out = torch.zeros(len(ids), SPEC.hidden, dtype=torch.float64)
    for (b, e), (ob, oe) in zip(windows, owned):
        states = encode(model, ids[b:e], dtype)
        out[ob:oe] = states[ob - b:oe - b]
    return out


def chunk_vector(states, dense, dtype, normalize, dims):
    v = states.mean(dim=0, keepdim=True).to(dtype)
    with torch.no_grad():
        v = torch.tanh(dense.to(dtype)(v))
    if dims:
        v = v[:, :dims]
    if normalize:
        v = F.normalize(v, p=2, dim=1)
    return v[0].to(torch.float64)


def chunk_ranges(request, spans):
    if "chunk_tokens" in request:
        n = request["chunk_tokens"]
        ranges = [[b, min(b + n, len(spans))] for b in range(0, len(spans), n)]
        return ranges, [[spans[b][0], spans[e - 1][1]] for b, e in ranges]
    ranges = []
    for start, end in request["chunks"]:
        members = [t for t, (s, _) in enumerate(spans) if start <= s < end]
        check(members and members == list(range(members[0], members[-1] + 1)), "chunk tokens")
        ranges.append([members[0], members[-1] + 1])
    return ranges, [list(c) for c in request["chunks"]]


def answer(model, dense, ids, spans, request, dtype, rule="half"):
    windows, owned = plan_windows(len(ids), request.get("window_overlap"))
    if rule == "later":   # every shared token from the later window (self-check b)
        owned = [[b if k else 0, windows[k + 1][0] if k + 1 < len(windows) else len(ids)]
                 for k, (b, _) in enumerate(windows)]
    states = stitched_states(model, ids, windows, owned, dtype)
    ranges, chunk_spans = chunk_ranges(request, spans)
    normalize = request.get("normalize", True)
    dims = request.get("dimensions", 0)
    chunks = []
    for (b, e), (s, end) in zip(ranges, chunk_spans):
        if rule == "alone":   # naive chunking (self-check b)
            chunk_states = encode(model, ids[b:e], dtype)
        else:
            chunk_states = states[b:e]
        chunks.append({"start": s, "end": end, "tokens": e - b,
                       "embedding": chunk_vector(chunk_states, dense, dtype, normalize,
                                                 dims).tolist()})
    return {"chunks": chunks, "windows": len(windows), "tokens": len(ids)}, windows


def word_starts(text):
    return [m.start() for m in re.finditer(r"\S+", text)], [m.end() for m in re.finditer(r"\S+", text)]


def max_diff(a, b):
    return max(np.abs(np.array(x["embedding"]) - np.array(y["embedding"])).max()
               for x, y in zip(a["chunks"], b["chunks"]))


def main():
    torch.set_num_threads(1)
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    model_dir = os.path.join(OUT, "model")
    os.makedirs(model_dir)
    gen = torch.Generator().manual_seed(SEED)
    model = TorchBert(SPEC)
    init_weights(model, gen, "F32")
    model.eval()
    dense = torch.nn.Linear(SPEC.hidden, DENSE_OUT)
    with torch.no_grad():
        dense.weight.copy_(torch.randn(dense.weight.shape, generator=gen) * 2.0 /
                           np.sqrt(dense.weight.shape[1]))
        dense.bias.copy_(torch.randn(dense.bias.shape, generator=gen) * 0.5)

    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(config_json(SPEC), f, indent=2)
    write_safetensors(os.path.join(model_dir, "model.safetensors"), hf_tensors(model), "F32")
    with open(os.path.join(model_dir, "vocab.txt"), "w") as f:
        f.write("\n".join(VOCAB) + "\n")
    write_pooling_dense_normalize(model_dir, SPEC.hidden, dense, DENSE_OUT, mean=True,
                                  max_=False, include_prompt=True)

    rng = np.random.RandomState(SEED)
    short = make_text(rng, 22)    # 22 tokens: one window
    long = make_text(rng, 70)     # 70 tokens: 3 windows of 30 (overlap 7 or 10)
    s_starts, s_ends = word_starts(short)
    l_starts, l_ends = word_starts(long)
    cases = [
        # Explicit spans in one window: a span with its trailing whitespace,
        # one ending mid-gap, a gap between chunks (words 12, 13 in none).
        ("spans_one_window", short,
         {"chunks": [[0, s_starts[5]], [s_starts[5], s_ends[11] + 1], [s_starts[14], len(short)]]}),
        ("chunk_tokens_one_window", short, {"chunk_tokens": 6}),
        # 3 windows, default overlap 7 (odd: 4 shared tokens from the earlier window).
        ("chunk_tokens_three_windows", long, {"chunk_tokens": 16}),
        # 3 windows with overlap 10; spans across the windows' seams; no
        # normalization, Matryoshka 12.
        ("spans_three_windows", long,
         {"chunks": [[0, l_ends[19]], [l_starts[20], l_ends[27]], [l_starts[28], l_ends[51]],
                     [l_starts[52], len(long)]],
          "window_overlap": 10, "normalize": False, "dimensions": 12}),
    ]
    out_cases = []
    for name, text, request in cases:
        ids, spans = tokenize(text)
        expected, windows = answer(model, dense, ids, spans, request, torch.float64)
        f32, _ = answer(model, dense, ids, spans, request, torch.float32)
        err = max_diff(expected, f32)
        check(err * MARGIN < PARITY_MAX_ABS, f"{name}: float32 torch {err:.2e} from float64")  # (a)
        if len(windows) > 1:   # (b)
            later, _ = answer(model, dense, ids, spans, request, torch.float64, rule="later")
            alone, _ = answer(model, dense, ids, spans, request, torch.float64, rule="alone")
            for what, other in (("the later window's states", later), ("chunks alone", alone)):
                d = max_diff(expected, other)
                check(d > MARGIN * PARITY_MAX_ABS, f"{name}: {what} differ by only {d:.2e}")
        else:   # (c)
            whole = encode(model, ids, torch.float64)
            check(torch.equal(whole, stitched_states(model, ids, *plan_windows(len(ids), None),
                                                     torch.float64)), f"{name}: one window")
        out_cases.append({"name": name, "text": text, "ids": ids, "token_spans": spans,
                          "request": request, "windows": windows, "expected": expected})
        print(f"{name}: {len(ids)} tokens, {len(windows)} windows, "
              f"{len(expected['chunks'])} chunks, float32 {err:.1e}")
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump({"max_length": MAX_LENGTH, "cases": out_cases}, f, ensure_ascii=False,
                  separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
