#!/usr/bin/env python3
"""The e2e oracle of quantized embeddings (tests/server/e2e_quantized.sh),
written from sentence-transformers' quantize_embeddings definition with the
standard library alone (no numpy in CI), independent of server/core/model/quantize.cc:

  quantized_expect.py TYPE FLOATS.json QUANTIZED.json [RANGES.json]

FLOATS.json and QUANTIZED.json are lists of vectors (floats, and the server's
integers); exits 1 naming the first difference. float32 arithmetic is
emulated by rounding each IEEE double operation on float32 operands back to
float32 (exact for +, -, /: double has more than 2 x 24 + 2 bits), as numpy
computes for float32 arrays. Values outside the calibration range are
clamped, as the server documents (numpy's cast leaves them undefined).
"""
import json
import math
import struct
import sys


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def trunc_clamp(v, low, high):
    if math.isnan(v) or v < low:
        return low
    if v >= high:
        return high
    return int(v)  # toward zero, as astype


def quantize(vector, kind, ranges):
    vector = [f32(v) for v in vector]
    if kind in ("binary", "ubinary"):
        bits = [1 if v > 0 else 0 for v in vector]
        bits += [0] * (-len(bits) % 8)
        packed = [int("".join(map(str, bits[i:i + 8])), 2) for i in range(0, len(bits), 8)]
        return [p - 128 for p in packed] if kind == "binary" else packed
    out = []
    for i, v in enumerate(vector):
        start = f32(ranges[0][i])
        step = f32(f32(f32(ranges[1][i]) - start) / 255.0)
        scaled = f32(f32(v - start) / step) if step != 0 else (
            math.nan if v == start else math.copysign(math.inf, v - start))
        if kind == "int8":
            out.append(trunc_clamp(f32(scaled - 128.0), -128, 127))
        else:
            out.append(trunc_clamp(scaled, 0, 255))
    return out


def main():
    kind, floats_path, quantized_path = sys.argv[1:4]
    ranges = None
    if len(sys.argv) > 4:
        ranges = json.load(open(sys.argv[4]))["ranges"]
    floats = json.load(open(floats_path))
    got = json.load(open(quantized_path))
    if len(floats) != len(got):
        sys.exit("%s: %d float vectors, %d quantized" % (kind, len(floats), len(got)))
    for i, (vector, answer) in enumerate(zip(floats, got)):
        want = quantize(vector, kind, ranges)
        if want != answer:
            sys.exit("%s vector %d: want %s, got %s" % (kind, i, want, answer))
    print("%s: %d vectors equal" % (kind, len(floats)))


main()
