#!/usr/bin/python3
"""Generates the window mode fixture tests/golden/long_inputs/reference.json.

Run with Debian's interpreter (python3-torch 1.13):

    /usr/bin/python3 tests/golden/make_long_inputs.py

It reuses make_late_chunking.py's model (tests/golden/late_chunking/model: a
small BERT of max length 32, Pooling mean, Dense 32 -> 24 tanh, Normalize)
and its whole-word tokenizer and texts: the same seed rebuilds the same
weights, and the script checks that they are byte for byte the committed
model.safetensors before using them. No new weights.

Window mode, as the server documents it (server/core/requests/long_inputs.h): a text
of T > W = 32 - 2 tokens runs as windows of W tokens starting at k * (W - O)
(O = W // 4 = 7 by default), the last ending at T, each [CLS] ... [SEP]. A
window's vector is the model's pipeline before normalization: the mean of
ALL its token states ([CLS] and [SEP] included, as sentence-transformers'
Pooling mean over the attention mask), then tanh(Dense). Weights: the text
tokens the window owns (of the O tokens two windows share, the first
ceil(O / 2) belong to the earlier window), summing to T. The embedding: the
weighted mean, then the first `dimensions` values, then L2 normalization
(when asked; the model's default is on).

Self-checks that fail the run:
  (a) float32 torch stays 10x inside the C++ test's 1e-4;
  (b) the definition matters: equal weights, window-length weights and
      truncation each move the 3-window answers by more than 10x 1e-4;
      normalizing each window before pooling by more than 3x 1e-4 (the
      windows' norms are alike; 10x when the answer is not normalized);
  (c) a text that fits is exactly its one pass.
"""

import json
import os
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "long_inputs")
sys.path.insert(0, HERE)
import make_late_chunking as lc  # noqa: E402
from make_golden import TorchBert, check, hf_tensors, init_weights, write_safetensors  # noqa: E402

PARITY_MAX_ABS = 1e-4
MARGIN = 10.0


def load_model():
    """make_late_chunking's model and Dense, rebuilt from its seed, checked
    against the committed weights."""
    gen = torch.Generator().manual_seed(lc.SEED)
    model = TorchBert(lc.SPEC)
    init_weights(model, gen, "F32")
    model.eval()
    dense = torch.nn.Linear(lc.SPEC.hidden, lc.DENSE_OUT)
    with torch.no_grad():
        dense.weight.copy_(torch.randn(dense.weight.shape, generator=gen) * 2.0 /
                           np.sqrt(dense.weight.shape[1]))
        dense.bias.copy_(torch.randn(dense.bias.shape, generator=gen) * 0.5)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.safetensors")
        write_safetensors(path, hf_tensors(model), "F32")
        with open(path, "rb") as mine, \
                open(os.path.join(lc.OUT, "model", "model.safetensors"), "rb") as committed:
            check(mine.read() == committed.read(),
                  "the rebuilt weights differ from tests/golden/late_chunking/model")
    return model, dense


def window_vector(model, dense, ids, dtype):
    """The pipeline's vector of one sequence [CLS] ids [SEP], unnormalized."""
    x = torch.tensor([[lc.CLS] + ids + [lc.SEP]], dtype=torch.long)
    with torch.no_grad():
        states, _ = model.to(dtype)(x, torch.zeros_like(x), torch.zeros_like(x, dtype=torch.bool))
        v = states[0].mean(dim=0, keepdim=True)
        v = torch.tanh(dense.to(dtype)(v))
    return v[0].to(torch.float64)


def embed(model, dense, ids, dtype, normalize=True, dims=0, rule="owned"):
    windows, owned = lc.plan_windows(len(ids), None)
    vectors = [window_vector(model, dense, ids[b:e], dtype) for b, e in windows]
    if rule == "owned":
        weights = [oe - ob for ob, oe in owned]
    elif rule == "equal":
        weights = [1] * len(windows)
    elif rule == "length":
        weights = [e - b for b, e in windows]
    elif rule == "normalize_first":
        weights = [oe - ob for ob, oe in owned]
        vectors = [F.normalize(v, dim=0) for v in vectors]
    elif rule == "truncate":
        vectors, weights = [window_vector(model, dense, ids[:lc.MAX_LENGTH - 2], dtype)], [1]
    # One window: its own vector (as the server, no weighting round-off).
    v = vectors[0] if len(vectors) == 1 else \
        sum(w * x for w, x in zip(weights, vectors)) / sum(weights)
    if dims:
        v = v[:dims]
    if normalize:
        v = F.normalize(v, dim=0)
    return v, windows, weights


def main():
    torch.set_num_threads(1)
    model, dense = load_model()
    rng = np.random.RandomState(lc.SEED)
    short = lc.make_text(rng, 22)   # as make_late_chunking.py: 22 tokens, one window
    long = lc.make_text(rng, 70)    # 70 tokens: 3 windows [0, 30), [23, 53), [46, 70)
    cases = [
        ("three_windows", long, {}),
        ("three_windows_dimensions_unnormalized", long, {"normalize": False, "dimensions": 12}),
        ("one_window", short, {}),
    ]
    out = []
    for name, text, request in cases:
        ids, _ = lc.tokenize(text)
        normalize = request.get("normalize", True)
        dims = request.get("dimensions", 0)
        expected, windows, weights = embed(model, dense, ids, torch.float64, normalize, dims)
        f32, _, _ = embed(model, dense, ids, torch.float32, normalize, dims)
        err = float((expected - f32).abs().max())
        check(err * MARGIN < PARITY_MAX_ABS, f"{name}: float32 {err:.2e}")  # (a)
        if len(windows) > 1:  # (b)
            for rule in ("equal", "length", "normalize_first", "truncate"):
                other, _, _ = embed(model, dense, ids, torch.float64, normalize, dims, rule)
                d = float((expected - other).abs().max())
                # Normalizing each window first moves a normalized answer less
                # (the windows' norms are alike): 3x the bound, not 10x.
                margin = 3.0 if rule == "normalize_first" and normalize else MARGIN
                check(d > margin * PARITY_MAX_ABS, f"{name}: rule {rule} differs by only {d:.2e}")
                print(f"  {name}: rule {rule} moves it by {d:.1e}")
        else:  # (c)
            one = window_vector(model, dense, ids, torch.float64)
            one = F.normalize(one, dim=0) if normalize else one
            check(torch.equal(one, expected), f"{name}: one window")
        out.append({"name": name, "text": text, "ids": ids, "request": request,
                    "windows": windows, "weights": weights, "expected": expected.tolist()})
        print(f"{name}: {len(ids)} tokens, windows {windows}, weights {weights}, "
              f"float32 {err:.1e}")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump({"model": "late_chunking/model", "max_length": lc.MAX_LENGTH, "cases": out},
                  f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
