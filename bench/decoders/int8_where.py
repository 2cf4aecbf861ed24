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
127 (VNNI CPUs); activations u8 per row, asymmetric over the row's range
widened to include 0; everything else float32. Prints, per group (all seven
projections, then q/k/v, o, gate/up, down alone), the cosine of the pooled
vectors (qwen3: last token, gemma3_text: mean) and the per-token cosines
against float32. Nothing of the engine runs here: it says which matmul inputs
the scheme handles worst, not what the engine computes.

Slow on this machine's torch (generic BLAS, about 7 GFLOP/s): 5 minutes for
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
GROUPS = {"all": ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
          "q/k/v": ("q_proj", "k_proj", "v_proj"), "o": ("o_proj",),
          "gate/up": ("gate_proj", "up_proj"), "down": ("down_proj",)}


def quantize_rows(x):
    """u8 per row over [min(x, 0), max(x, 0)], back to float."""
    lo = torch.clamp(x.amin(-1, keepdim=True), max=0.0)
    hi = torch.clamp(x.amax(-1, keepdim=True), min=0.0)
    scale = (hi - lo) / 255.0
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    zero = torch.round(-lo / scale)
    return (torch.clamp(torch.round(x / scale) + zero, 0, 255) - zero) * scale


def quantize_weight(w):
    """s8 per output channel (a row of Linear's [out, in] weight), symmetric, back to float."""
    scale = w.abs().amax(1, keepdim=True) / 127.0
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    return torch.clamp(torch.round(w / scale), -127, 127) * scale


class Simulated:
    """Switches the int8 arithmetic on for some kinds of Linear."""

    def __init__(self, model):
        self.model = model
        self.linears = {n: m for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
        self.weights = {n: m.weight.detach().clone() for n, m in self.linears.items()}
        self.hooks = []

    def set(self, kinds):
        for h in self.hooks:
            h.remove()
        self.hooks.clear()
        with torch.no_grad():
            for n, m in self.linears.items():
                on = n.split(".")[-1] in kinds
                m.weight.copy_(quantize_weight(self.weights[n]) if on else self.weights[n])
                if on:
                    self.hooks.append(m.register_forward_pre_hook(
                        lambda module, args: (quantize_rows(args[0]),)))


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

    sim = Simulated(model)
    reference = run()
    print(f"{args.family}{' (small)' if args.small else ''}: int8 simulated against float32, "
          f"{len(sequences)} sequences of {', '.join(str(len(s)) for s in sequences)} tokens")
    for name, kinds in GROUPS.items():
        sim.set(kinds)
        pooled, mean, worst = cosines(run(), reference, args.family)
        print(f"  int8 on {name:8s} pooled cosine min {pooled:.6f}, per token mean {mean:.6f}, "
              f"min {worst:.6f}", flush=True)


if __name__ == "__main__":
    main()
