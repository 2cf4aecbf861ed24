#!/usr/bin/python3
"""Long inputs: the engine against ONNX Runtime, latency and peak memory.

  /usr/bin/python3 bench/long_context/compare.py --model DIR [--model DIR2 ...]

Each DIR is a make_models.py output (config.json + model.safetensors for the
engine, onnx/model.onnx with the same weights for ORT). Per model:
  1. prints the ops ORT's optimizer turns the export into;
  2. checks that both compute the same thing: 8 sequences of 1..700 tokens
     (ORT padded, the engine packed; token types 0/1 on every other one where
     the family has them), then, before each workload is timed, that
     workload's own sequences. fp32: max |engine - ORT| over the last hidden
     states within --tolerance (2e-3) up to 512 tokens, and --tolerance x
     longest / 512 beyond (see README.md); int8: cosine per token as
     bench/peer/compare.py. A failed check or run (a mismatch, a side that
     exits, e.g. killed for memory) skips that workload, or the family if the
     first check fails; the rest goes on, and the script exits 1 at the end;
  3. per workload (default 1x512, 1x2048, 1x8192, 8x512; the ids that
     `encoder-cli bench --seed` draws), --rounds alternating engine / ORT runs,
     each a fresh process whose peak resident set (GNU time's %M) is that
     side's memory for that workload; one markdown table of the medians.

The runner pieces (both sides' commands, input generation, the checks, the
alternating rounds) are bench/peer/compare.py's.
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(os.path.dirname(HERE), "peer")
sys.path.insert(0, PEER)  # first, so that "compare" is bench/peer's, not this file
import compare as peer  # noqa: E402

MB = 2 ** 20


def shape(config):
    """hidden, layers, FFN width from any of the four families' configs (nomic
    uses GPT-2 names); only to pick a default iteration count."""
    hidden = config.get("hidden_size") or config["n_embd"]
    layers = config.get("num_hidden_layers") or config["n_layer"]
    inner = config.get("intermediate_size") or config["n_inner"]
    # Gated FFNs have three H x I matrices, the peer formula counts two.
    return {"hidden_size": hidden, "num_hidden_layers": layers, "intermediate_size": inner * 3 // 2}


def tolerance_for(args, longest):
    """float32 rounding grows with the length: every token's attention output
    is a sum over L keys, normalized by a sum of L exponentials. --tolerance up
    to 512 tokens, scaled by L / 512 beyond (measured: about L^0.8)."""
    return args.tolerance * max(1.0, longest / 512)


def check(sides, model_dir, onnx_path, inputs, args, label):
    longest = max(len(x["ids"]) for x in inputs)
    return peer.check(sides, model_dir, onnx_path, inputs,
                      argparse.Namespace(**{**vars(args), "tolerance": tolerance_for(args, longest)}),
                      label)


def peak_rss_of_empty_node(node):
    """What Node.js alone takes, included in ORT's column."""
    return peer.run_with_rss([node, "-e", ""], what="node")[1]


def mixed_inputs(config, seed):
    """8 sequences of 1..700 tokens (packed by the engine, padded by ORT), past
    ModernBERT's 128-token window; token types 0/1 on every other one where the
    family has them."""
    inputs = []
    for i, ids in enumerate(peer.bench_sequences(config["vocab_size"], 8, None, seed, (1, 700))):
        x = {"ids": ids}
        if config.get("type_vocab_size", 0) > 1 and i % 2:
            x["token_type_ids"] = [0] * (len(ids) // 2) + [1] * (len(ids) - len(ids) // 2)
        inputs.append(x)
    return inputs


def bench_workload(sides, model_dir, onnx_path, config, b, s, work, args):
    """Checks one workload's inputs, then times it; a table row (None with --check-only)."""
    name = f"{b}x{s}"
    wl = {"name": f"{b} x {s}", "batch": b, "seq": s,
          "sequences": peer.bench_sequences(config["vocab_size"], b, s, args.seed),
          "tokens": b * s, "input": os.path.join(work, f"input-{name}.json")}
    with open(wl["input"], "w") as f:
        json.dump({"sequences": wl["sequences"]}, f)
    check(sides, model_dir, onnx_path, [{"ids": ids} for ids in wl["sequences"]], args, wl["name"])
    if args.check_only:
        return None
    flops = peer.encoder_flops(shape(config), [s] * b)
    iters = args.iters or int(min(200, max(args.min_iters, round(args.seconds / (flops / 150e9)))))
    times, rss = peer.time_rounds(sides, model_dir, onnx_path, wl, iters, args.rounds, args.seed)
    return {"workload": wl["name"], "iters": iters, "times": times, "rss": rss,
            "engine": statistics.median(times["engine"]), "ort": statistics.median(times["ort"]),
            # ORT's peak moves by tens of percent from run to run: the median, range below.
            "engine_rss": statistics.median(rss["engine"]), "ort_rss": statistics.median(rss["ort"])}


def bench_family(sides, model_dir, args):
    """The family's rows: a failed check or run (peer.fail: already printed)
    fails that workload, or the whole family if the first check fails."""
    label = os.path.basename(model_dir.rstrip("/"))
    config = json.load(open(os.path.join(model_dir, "config.json")))
    onnx_path = os.path.join(model_dir, "onnx", "model.onnx")
    work = os.path.join(args.work, label)
    os.makedirs(work, exist_ok=True)
    print(f"\n== {label} (model_type {config['model_type']}): {model_dir}")
    try:
        if not os.path.exists(onnx_path):
            peer.fail(f"{onnx_path} missing: make the model with bench/long_context/make_models.py")
        fused = peer.fused_ops(sides, onnx_path)
        print("  ORT optimized graph: " + ", ".join(f"{k} x{v}" for k, v in sorted(fused.items())))
        check(sides, model_dir, onnx_path, mixed_inputs(config, args.seed), args,
              "8 sequences of 1..700 tokens")
    except SystemExit:
        return [{"family": label, "workload": "all", "failed": True}]
    rows = []
    for b, s in args.workloads:
        try:
            row = bench_workload(sides, model_dir, onnx_path, config, b, s, work, args)
        except SystemExit:
            row = {"workload": f"{b} x {s}", "failed": True}
        if row:
            rows.append({"family": label, **row})
    return rows


def print_table(rows, args, node_rss, load_before):
    print(f"\n| family | workload | engine {args.precision} ms | ORT fp32 ms | ratio (ORT / engine) | "
          f"engine peak RSS MB | ORT peak RSS MB | RSS ratio (ORT / engine) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if r.get("failed"):
            print(f"| {r['family']} | {r['workload']} | failed | | | | | |")
            continue
        print(f"| {r['family']} | {r['workload']} | {r['engine'] * 1e3:,.1f} | {r['ort'] * 1e3:,.1f} | "
              f"{r['ort'] / r['engine']:.2f}x | {r['engine_rss'] / MB:,.0f} | "
              f"{r['ort_rss'] / MB:,.0f} | {r['ort_rss'] / r['engine_rss']:.2f}x |")
    print(f"\nMedians over {args.rounds} alternating rounds (fresh process per run, 2 warm-up "
          f"batches, then the median of the run's timed batches); {args.threads} threads each; "
          f"engine {args.precision}, ORT fp32. Peak RSS: the median of the runs' peaks, loading "
          f"included; ORT's includes Node.js itself ({node_rss / MB:.0f} MB for an empty "
          f"`node -e ''`). Per run (min..max):")
    for r in rows:
        if r.get("failed"):
            print(f"- {r['family']} {r['workload']}: failed, not timed (see FAIL above)")
            continue
        t, m = r["times"], r["rss"]
        print(f"- {r['family']} {r['workload']}: {r['iters']} batches per run; "
              f"engine {min(t['engine']) * 1e3:.1f}..{max(t['engine']) * 1e3:.1f} ms, "
              f"{min(m['engine']) / MB:.0f}..{max(m['engine']) / MB:.0f} MB; "
              f"ORT {min(t['ort']) * 1e3:.1f}..{max(t['ort']) * 1e3:.1f} ms, "
              f"{min(m['ort']) / MB:.0f}..{max(m['ort']) / MB:.0f} MB")
    print(f"- load average (1, 5, 15 min): {load_before} at start, {peer.load_average()} at end "
          f"on {os.cpu_count()} cores.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", required=True,
                        help="a make_models.py output directory (repeatable)")
    parser.add_argument("--engine", help="encoder-cli (default: build/ then build-lead/)")
    parser.add_argument("--node", default="node")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per workload")
    parser.add_argument("--iters", type=int, default=0,
                        help="timed batches per run (default: about --seconds of work, "
                             "at least --min-iters, at most 200)")
    parser.add_argument("--min-iters", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--workloads", default="1x512,1x2048,1x8192,8x512",
                        help="comma list of BxS")
    parser.add_argument("--precision", choices=("fp32", "int8"), default="fp32",
                        help="the engine's weights (ORT runs the fp32 export either way)")
    parser.add_argument("--tolerance", type=float, default=2e-3,
                        help="fp32: max abs difference of last hidden states up to 512 tokens "
                             "(x L / 512 for longer inputs)")
    parser.add_argument("--min-mean-cosine", type=float, default=0.995,
                        help="int8: mean per-token cosine similarity to ORT fp32 at least this")
    parser.add_argument("--min-cosine", type=float, default=0.99,
                        help="int8: every token's cosine similarity to ORT fp32 at least this")
    parser.add_argument("--work", default="/tmp/encoder-long-context", help="input files")
    parser.add_argument("--check-only", action="store_true")
    args = parser.parse_args()
    try:
        args.workloads = [tuple(int(x) for x in w.lower().split("x")) for w in args.workloads.split(",")]
    except ValueError:
        args.workloads = [()]
    if any(len(w) != 2 or min(w) <= 0 for w in args.workloads):
        parser.error("--workloads: a comma list of BxS, e.g. 1x512,8x512")

    args.engine = args.engine or peer.default_engine()
    ort_version = peer.installed_ort_version()
    sides = peer.Sides(args)
    load_before = peer.load_average()
    node_rss = peak_rss_of_empty_node(args.node)
    print(f"engine: {args.engine} ({args.precision})\n"
          f"ORT: onnxruntime-node {ort_version} (CPU EP, graph optimization 'all'), fp32 model\n"
          f"threads: {args.threads} each; CPU: {peer.cpu_model()}, {os.cpu_count()} logical cores; "
          f"load average at start: {load_before}")

    rows = []
    for model_dir in args.model:
        rows += bench_family(sides, os.path.abspath(model_dir), args)
    if not args.check_only:
        print_table(rows, args, node_rss, load_before)
    failed = [f"{r['family']} {r['workload']}" for r in rows if r.get("failed")]
    if failed:
        print(f"\nFAILED: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
