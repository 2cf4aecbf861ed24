#!/usr/bin/python3
"""Quantized embeddings as sentence-transformers' quantize_embeddings
(sentence_transformers/quantization.py) computes them, with numpy alone:
tests/golden/quantized/quantized.json, the oracle of
tests/server/quantize_test.cc (server/core/model/quantize.h).

Run with /usr/bin/python3 (Debian's numpy). Deterministic: the same file
byte for byte on every run.

Case "st" (6 x 24): sentence-transformers' own expressions, verbatim:
  binary  (np.packbits(e > 0).reshape(n, -1) - 128).astype(np.int8)
  ubinary np.packbits(e > 0).reshape(n, -1)
  int8    ((e - starts) / steps - 128).astype(np.int8)
  uint8   ((e - starts) / steps).astype(np.uint8)
with starts = ranges[0], steps = (ranges[1] - ranges[0]) / 255, all float32.
The embeddings hold exact zeros (bit 0: "> 0"), values equal to each
dimension's minimum and maximum, and values in between; every value lies in
its range, where numpy's float -> int cast is defined (truncation).
Case "padded" (3 x 20): a length that is not a multiple of 8: packbits per
row (axis=-1), each row padded with zero bits; sentence-transformers packs
the flattened array, which differs there (documented in quantize.h).
"""
import json
import os

import numpy as np

rng = np.random.default_rng(20261127)


def quantize(emb, ranges, precision, per_row=False):
    if precision == "binary":
        if per_row:
            return (np.packbits(emb > 0, axis=-1) - 128).astype(np.int8)
        return (np.packbits(emb > 0).reshape(emb.shape[0], -1) - 128).astype(np.int8)
    if precision == "ubinary":
        if per_row:
            return np.packbits(emb > 0, axis=-1)
        return np.packbits(emb > 0).reshape(emb.shape[0], -1)
    starts = ranges[0, :]
    steps = (ranges[1, :] - ranges[0, :]) / 255
    assert steps.dtype == np.float32
    if precision == "uint8":
        return ((emb - starts) / steps).astype(np.uint8)
    return ((emb - starts) / steps - 128).astype(np.int8)


def case(n, dim, per_row):
    calibration = rng.normal(0.0, 0.3, size=(64, dim)).astype(np.float32)
    ranges = np.vstack((calibration.min(axis=0), calibration.max(axis=0))).astype(np.float32)
    emb = rng.uniform(ranges[0], ranges[1], size=(n, dim)).astype(np.float32)
    emb[0, :] = 0.0                 # exact zeros: no bit set
    emb[1, :] = ranges[0]           # each dimension's minimum
    emb[2, :] = ranges[1]           # each dimension's maximum
    if n > 3:
        emb[3, ::3] = 0.0
    if n > 4:
        emb[4, :] = np.where(np.arange(dim) % 2 == 0, ranges[0], ranges[1])
    for lo, hi, e in zip(ranges[0], ranges[1], emb.T):
        assert (e >= lo).all() and (e <= hi).all()
    out = {
        "embeddings": [[float(v) for v in row] for row in emb],
        "ranges": [[float(v) for v in row] for row in ranges],
    }
    for precision in ("int8", "uint8", "binary", "ubinary"):
        q = quantize(emb, ranges, precision, per_row)
        out[precision] = [[int(v) for v in row] for row in q]
    return out


fixture = {
    "generator": "tests/golden/make_quantized.py (numpy %s)" % np.__version__,
    "cases": {"st": case(6, 24, False), "padded": case(3, 20, True)},
}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quantized", "quantized.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    json.dump(fixture, f, indent=1)
    f.write("\n")
print("wrote", path)
