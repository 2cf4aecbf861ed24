#!/usr/bin/python3
"""Random-weight models of the two decoder embedder families, for compare.py.

  /usr/bin/python3 bench/decoders/make_models.py --out /work/decoder-models [--small] [family ...]

Families: qwen3 (Qwen3-Embedding-0.6B's shape), gemma3_text (EmbeddingGemma-
300m's); both by default. Each is tests/golden/make_decoders.py's PyTorch model
(build_model(real_spec(arch)), the spec's seed, the fixtures' gains) in float32,
written to OUT/<family>/ as

  config.json, model.safetensors,  the hub layout the engine loads
  modules.json, 1_Pooling, ...     (write_model_dir: F32, tensor names without
                                   a prefix, the sentence-transformers files;
                                   no tokenizer: the benchmark feeds token ids)
  onnx/model.onnx                  the same torch module, same weights, exported
                                   for ONNX Runtime (export_onnx: opset 14,
                                   dynamic batch and sequence axes, inputs
                                   input_ids + attention_mask, output
                                   last_hidden_state; the causal mask of qwen3
                                   and the windows of gemma3_text are in the
                                   graph, built by the reference's forward).
                                   Over 2 GB (qwen3: 2.4 GB) the weights go to
                                   onnx/model.onnx.data, one external data file.
  onnx/model.int8.onnx             ONNX Runtime's dynamic int8 model of that
                                   export: bench/peer/quantize_onnx.py, which
                                   mirrors quantize_dynamic's defaults
                                   (DynamicQuantizeLinear + MatMulInteger, s8
                                   weights per tensor, the embedding table u8).

The hub's Qwen3-Embedding checkpoint is BF16; here both are F32 (dtype
overridden), the precision the fp32 comparison runs in.

--small keeps each family's rules (GQA, q/k norms, head_dim != hidden / heads,
Gemma's sliding layers) but shrinks it to hidden 64, 4 heads (2 K/V heads),
head_dim 32, intermediate 128, 2 layers (gemma3_text: 3, sliding, sliding,
full, window 16), to validate the harness in seconds. A family whose files are
newer than this script, make_decoders.py and quantize_onnx.py is kept as it is.
"""
import argparse
import json
import os
import shutil
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GOLDEN = os.path.join(REPO, "tests", "golden")
PEER = os.path.join(os.path.dirname(HERE), "peer")
sys.path.insert(0, GOLDEN)
import make_decoders as md  # noqa: E402  (the reference models, reused as they are)

sys.path.insert(0, PEER)
import compare as peer  # noqa: E402  (quantize_model: quantize_onnx.py, cached)

FAMILIES = ["qwen3", "gemma3_text"]
SMALL = {"qwen3": dict(layers=2, hidden=64, heads=4, kv_heads=2, head_dim=32, intermediate=128),
         "gemma3_text": dict(layers=3, hidden=64, heads=4, kv_heads=2, head_dim=32,
                             intermediate=128, layer_types=(md.SLIDING, md.SLIDING, md.FULL),
                             sliding_window=16, query_pre_attn_scalar=32, dense_features=256)}
PROTOBUF_LIMIT = 2 ** 31 - 1  # an .onnx file's own size limit; bigger weights go outside


def files_of(out_dir):
    return [os.path.join(out_dir, f) for f in ("config.json", "model.safetensors",
                                                os.path.join("onnx", "model.onnx"),
                                                os.path.join("onnx", "model.int8.onnx"))]


def up_to_date(out_dir, config):
    """Same config (so same size), files newer than the scripts that make them."""
    files = files_of(out_dir)
    sources = [os.path.abspath(__file__), os.path.join(GOLDEN, "make_decoders.py"),
               os.path.join(PEER, "quantize_onnx.py")]
    if not all(os.path.exists(f) for f in files):
        return False
    with open(files[0]) as f:
        same = json.load(f) == json.loads(json.dumps(config))
    return same and min(os.path.getmtime(f) for f in files) >= max(os.path.getmtime(s) for s in sources)


def spec_for(arch, small):
    return md.real_spec(arch, dtype="F32", **(SMALL[arch] if small else {}))


def export(model, onnx_path, weight_bytes):
    """export_onnx, with the rotary tables computed in float64 inside the graph
    (as the engine builds them). torch writes a model over 2 GB as one file
    per tensor next to it; those are gathered into one model.onnx.data."""
    if weight_bytes < PROTOBUF_LIMIT:
        md.export_onnx(model, onnx_path, table_dtype=torch.float64)
        return
    import onnx  # python3-onnx
    staging = os.path.join(os.path.dirname(onnx_path), "staging")
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    md.export_onnx(model, os.path.join(staging, "model.onnx"), table_dtype=torch.float64)
    graph = onnx.load(os.path.join(staging, "model.onnx"))
    data = os.path.basename(onnx_path) + ".data"
    if os.path.exists(onnx_path + ".data"):
        os.remove(onnx_path + ".data")
    onnx.save_model(graph, onnx_path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data, size_threshold=1024)
    shutil.rmtree(staging)


def make(spec, out_dir):
    started = time.time()
    torch.set_grad_enabled(False)
    model = md.build_model(spec)  # float32, eval mode, fixture gains
    dense = md.build_dense(spec)  # EmbeddingGemma's two Dense layers (not timed: pooling)
    shutil.rmtree(out_dir, ignore_errors=True)
    md.write_model_dir(spec, out_dir, model, dense)
    count = sum(p.numel() for p in model.parameters())
    onnx_dir = os.path.join(out_dir, "onnx")
    os.makedirs(onnx_dir)
    onnx_path = os.path.join(onnx_dir, "model.onnx")
    export(model, onnx_path, 4 * count)
    del model
    print(f"{spec.arch}: {count / 1e6:.1f}M parameters, hidden {spec.hidden}, layers {spec.layers}, "
          f"heads {spec.heads} / {spec.kv_heads} K/V x {spec.head_dim} -> {out_dir} "
          f"(safetensors + ONNX in {time.time() - started:.0f} s)", flush=True)
    peer.quantize_model(onnx_path, os.path.join(onnx_dir, "model.int8.onnx"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="one subdirectory per family")
    parser.add_argument("--small", action="store_true", help="hidden 64, 2-3 layers: harness checks")
    parser.add_argument("families", nargs="*", help=f"some of {', '.join(FAMILIES)} (default: both)")
    args = parser.parse_args()
    torch.set_num_threads(2)
    for arch in args.families or FAMILIES:
        if arch not in FAMILIES:
            parser.error(f"unknown family {arch!r}: one of {', '.join(FAMILIES)}")
        spec, out_dir = spec_for(arch, args.small), os.path.join(args.out, arch)
        if up_to_date(out_dir, md.config_json(spec)):
            print(f"{arch}: {out_dir} (up to date)")
            continue
        make(spec, out_dir)


if __name__ == "__main__":
    main()
