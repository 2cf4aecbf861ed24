#!/usr/bin/python3
"""Where int8 loses precision on make_models.py's random models: the engine's
int8 scheme simulated in torch, on one kind of projection at a time.

  /usr/bin/python3 bench/decoders/int8_where.py [--small] [qwen3 | gemma3_text]

The model is make_models.py's (make_decoders.build_model of the same spec and
seed, so the same weights), run in float32 on two inputs: the 1 x 32 workload's
sequence and the first of the 8 x 128 workload's (the ids `encoder-cli bench
--seed 42` draws). Then the same with the engine's int8 arithmetic (docs/
engine.md, engine/src/kernels/kernels.h) applied to the inputs and weights of
some of the Linear layers: weights s8 per output channel, symmetric, max|w| /
127 (VNNI CPUs; --weight-max 63: the 7-bit weights of the levels without
VNNI); activations u8 per row, asymmetric over the row's range widened to
include 0; everything else float32. Prints, per group (all seven
projections, then q/k/v, o, gate/up, down alone), the cosine of the pooled
vectors (qwen3: last token, gemma3_text: mean) and the per-token cosines
against float32. Nothing of the engine runs here: it says which matmul inputs
the scheme handles worst, not what the engine computes.

Then the candidates for a more precise down projection, the other six
projections int8 as above:
  all+down-x2    two-level activations: u8 per row as above, then the residual
                 x - dequant(q) quantized again per row (scale about the
                 first's / 255); two int8 products on the same s8 weights,
                 summed (down-x2: down_proj alone so)
  all+down-bf16  down_proj's weights and input rounded to bf16, fp32 sums
  all+down-fp32  down_proj left in float32

Slow on this machine's torch (generic BLAS, about 7 GFLOP/s): 8 minutes for
the hub-shaped qwen3.
"""
import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE) + "/peer")
import compare as peer  # noqa: E402  (bench_sequences: encoder-cli bench's ids)

sys.path.insert(0, HERE)
import make_models  # noqa: E402  (spec_for, and through it make_decoders)

md = make_models.md
ALL = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
ALL_BUT_DOWN = {kind: "int8" for kind in ALL[:-1]}
# Group name -> {kind of Linear: how it is computed}; kinds not named stay float32.
GROUPS = {"all": {kind: "int8" for kind in ALL},
          "q/k/v": {"q_proj": "int8", "k_proj": "int8", "v_proj": "int8"},
          "o": {"o_proj": "int8"}, "gate/up": {"gate_proj": "int8", "up_proj": "int8"},
          "down": {"down_proj": "int8"},
          "down-x2": {"down_proj": "int8x2"},
          "all+down-x2": {**ALL_BUT_DOWN, "down_proj": "int8x2"},
          "all+down-bf16": {**ALL_BUT_DOWN, "down_proj": "bf16"},
          "all+down-fp32": ALL_BUT_DOWN}


def quantize_rows(x):
    """u8 per row over [min(x, 0), max(x, 0)], back to float."""
    lo = torch.clamp(x.amin(-1, keepdim=True), max=0.0)
    hi = torch.clamp(x.amax(-1, keepdim=True), min=0.0)
    scale = (hi - lo) / 255.0
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    zero = torch.round(-lo / scale)
    return (torch.clamp(torch.round(x / scale) + zero, 0, 255) - zero) * scale


def quantize_rows_twice(x):
    """Two-level: q as quantize_rows, plus its residual quantized the same way."""
    hi = quantize_rows(x)
    return hi + quantize_rows(x - hi)


def to_bf16(x):
    return x.to(torch.bfloat16).float()


def quantize_weight(w, weight_max):
    """s8 per output channel (a row of Linear's [out, in] weight), symmetric, back to float."""
    scale = w.abs().amax(1, keepdim=True) / weight_max
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    return torch.clamp(torch.round(w / scale), -weight_max, weight_max) * scale


# mode -> (weight transform, input transform)
MODES = {"int8": (quantize_weight, quantize_rows),
         "int8x2": (quantize_weight, quantize_rows_twice),
         "bf16": (lambda w, weight_max: to_bf16(w), to_bf16)}


class Simulated:
    """Switches the int8 arithmetic on for some kinds of Linear."""

    def __init__(self, model, weight_max):
        self.model = model
        self.weight_max = weight_max
        self.linears = {n: m for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
        self.weights = {n: m.weight.detach().clone() for n, m in self.linears.items()}
        self.hooks = []

    def set(self, modes):
        for h in self.hooks:
            h.remove()
        self.hooks.clear()
        with torch.no_grad():
            for n, m in self.linears.items():
                mode = modes.get(n.split(".")[-1])
                if mode is None:
                    m.weight.copy_(self.weights[n])
                    continue
                weight, activation = MODES[mode]
                m.weight.copy_(weight(self.weights[n], self.weight_max))
                self.hooks.append(m.register_forward_pre_hook(
                    lambda module, args, activation=activation: (activation(args[0]),)))


def cosines(a, b, arch):
    pool = (lambda s: s[-1]) if arch == "qwen3" else (lambda s: s.mean(0))
    pooled = [float(pool(x) @ pool(y) / np.linalg.norm(pool(x)) / np.linalg.norm(pool(y)))
              for x, y in zip(a, b)]
    tokens = np.concatenate([np.sum(x * y, 1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)
                             for x, y in zip(a, b)])
    return min(pooled), float(tokens.mean()), float(tokens.min())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("family", nargs="?", default="qwen3", choices=make_models.FAMILIES)
    parser.add_argument("--small", action="store_true", help="make_models.py --small's shape")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--weight-max", type=int, default=127, choices=(127, 63),
                        help="the s8 weights' range: 127 (VNNI levels) or 63 (the others)")
    parser.add_argument("--groups", default=",".join(GROUPS),
                        help=f"which groups, comma-separated (default all: {', '.join(GROUPS)})")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_grad_enabled(False)
    spec = make_models.spec_for(args.family, args.small)
    model = md.build_model(spec)
    sequences = (peer.bench_sequences(spec.vocab, 1, 32, 42)
                 + peer.bench_sequences(spec.vocab, 8, 128, 42)[:1])

    def run():
        out = []
        for ids in sequences:
            t = torch.tensor([ids])
            out.append(model(t, torch.ones_like(t))[0].double().numpy())
        return out

    groups = args.groups.split(",")
    for name in groups:
        if name not in GROUPS:
            parser.error(f"unknown group {name!r}: one of {', '.join(GROUPS)}")
    sim = Simulated(model, args.weight_max)
    reference = run()
    print(f"{args.family}{' (small)' if args.small else ''}: int8 simulated against float32, "
          f"weights s8 up to {args.weight_max}, "
          f"{len(sequences)} sequences of {', '.join(str(len(s)) for s in sequences)} tokens")
    for name in groups:
        sim.set(GROUPS[name])
        pooled, mean, worst = cosines(run(), reference, args.family)
        print(f"  int8 on {name:14s} pooled cosine min {pooled:.6f}, per token mean {mean:.6f}, "
              f"min {worst:.6f}", flush=True)


if __name__ == "__main__":
    main()
