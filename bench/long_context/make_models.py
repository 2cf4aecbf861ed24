#!/usr/bin/python3
"""Random-weight models of the four long-context families, for compare.py.

  /usr/bin/python3 bench/long_context/make_models.py --out /tmp/long-models [--small] [family ...]

Families: nomic_bert, new (GTE), modernbert, jina_bert (all four by default).
Each is tests/golden/make_long_context.py's PyTorch model (build_model) at the
hub checkpoint's shape (real_spec: nomic-embed-text-v1.5, gte-base-en-v1.5,
modernbert-base, jina-embeddings-v2-base-en, max positions 8192), written to
OUT/<family>/ as

  config.json, model.safetensors   the hub layout the engine loads (no
                                   tokenizer: the benchmark feeds token ids)
  onnx/model.onnx                  the same torch module, same weights, exported
                                   for ONNX Runtime (export_onnx: opset 14,
                                   dynamic batch and sequence axes)

--small keeps each family's rules but shrinks it to hidden 64, 4 heads,
intermediate 128, 2 layers (ModernBERT 4: global, local, local, global), to
validate the harness in seconds. A family whose files are newer than this
script and make_long_context.py is kept as it is.
"""
import argparse
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GOLDEN = os.path.join(REPO, "tests", "golden")
sys.path.insert(0, GOLDEN)
import make_long_context as mlc  # noqa: E402  (the reference models, reused as they are)

FAMILIES = ["nomic_bert", "new", "modernbert", "jina_bert"]
SMALL = dict(hidden=64, heads=4, intermediate=128, layers=2)
# ModernBERT needs a local layer between two global ones (global_attn_every_n_layers 3).
SMALL_LAYERS = {"modernbert": 4}


def up_to_date(out_dir, config):
    """Same config (so same size), files newer than the scripts that make them."""
    files = [os.path.join(out_dir, f) for f in ("config.json", "model.safetensors",
                                                 os.path.join("onnx", "model.onnx"))]
    sources = [os.path.abspath(__file__), os.path.join(GOLDEN, "make_long_context.py")]
    if not all(os.path.exists(f) for f in files):
        return False
    with open(files[0]) as f:
        same = json.load(f) == json.loads(json.dumps(config))
    return same and min(os.path.getmtime(f) for f in files) >= max(os.path.getmtime(s) for s in sources)


def spec_for(arch, small):
    overrides = {**SMALL, "layers": SMALL_LAYERS.get(arch, SMALL["layers"])} if small else {}
    return mlc.real_spec(arch, **overrides)


def make(spec, out_dir):
    started = time.time()
    torch.set_grad_enabled(False)
    model = mlc.build_model(spec)  # float32, eval mode, fixture gains (random biases and norms)
    os.makedirs(os.path.join(out_dir, "onnx"), exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(mlc.config_json(spec), f, indent=2)
        f.write("\n")
    mlc.write_checkpoint(os.path.join(out_dir, "model.safetensors"), model, spec)
    # Rotary tables in float64 inside the graph, as the engine builds them:
    # float32 angles alone miss float64 by ~2e-5 at position 300 and more
    # further out, which would blur the parity check at 8,192 tokens.
    mlc.export_onnx(model, os.path.join(out_dir, "onnx", "model.onnx"), table_dtype=torch.float64)
    count = sum(p.numel() for p in model.parameters())
    print(f"{spec.arch}: {count / 1e6:.1f}M parameters, hidden {spec.hidden}, layers {spec.layers}, "
          f"max positions {spec.max_positions} -> {out_dir} ({time.time() - started:.0f} s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="one subdirectory per family")
    parser.add_argument("--small", action="store_true", help="hidden 64, 2 layers: harness checks")
    parser.add_argument("families", nargs="*", help=f"some of {', '.join(FAMILIES)} (default: all)")
    args = parser.parse_args()
    for arch in args.families or FAMILIES:
        if arch not in FAMILIES:
            parser.error(f"unknown family {arch!r}: one of {', '.join(FAMILIES)}")
        spec, out_dir = spec_for(arch, args.small), os.path.join(args.out, arch)
        if up_to_date(out_dir, mlc.config_json(spec)):
            print(f"{arch}: {out_dir} (up to date)")
            continue
        make(spec, out_dir)


if __name__ == "__main__":
    main()
