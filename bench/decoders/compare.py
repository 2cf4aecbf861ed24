#!/usr/bin/python3
"""Decoder embedders: the engine (fp32 and int8) against ONNX Runtime (fp32 and int8).

  /usr/bin/python3 bench/decoders/compare.py --model DIR [--model DIR2 ...]

Each DIR is a make_models.py output (config.json + model.safetensors for the
engine; onnx/model.onnx with the same weights and onnx/model.int8.onnx, its
dynamic int8 quantization, for ORT). Per model:
  1. prints the ops ORT's optimizer turns each export into;
  2. checks that the sides compute the same thing, on 8 sequences of 1..600
     tokens (ORT padded with an attention mask, the engine packed; past
     gemma3_text's 256-token half window) and on each workload's own
     sequences: the pooled vectors (qwen3: the last token, as Qwen3-Embedding
     pools; gemma3_text: the mean over tokens, EmbeddingGemma's) of engine
     fp32 and ORT fp32 must have cosine >= --min-cosine-fp32 (0.999), those
     of engine int8 and engine fp32 >= --min-cosine-int8 (0.99). Also printed,
     not gated: max |engine fp32 - ORT fp32| over all hidden states, the
     per-token cosines, and ORT int8 against ORT fp32. An fp32 mismatch
     skips the model (or that workload: not the same computation); an int8
     miss is reported and int8 timed anyway; either makes the exit status 1;
  3. per workload (default 8x128: throughput, 1x32: latency; the ids that
     `encoder-cli bench --seed` draws), --rounds rounds of one run per side
     (engine fp32, engine int8, ORT fp32, ORT int8; the order rotated every
     round), each a fresh process: its median batch time, its load time
     (engine: Encoder::Load as `encoder-cli bench` reports it, int8
     quantization included; ORT: InferenceSession.create), its peak
     resident set (GNU time's %M) and the CPU the machine's other processes
     took meanwhile (/proc/stat's busy time less the run's own user + system
     time, in cores). Markdown tables of the medians over all runs, and over
     the quiet runs only (other processes under --quiet cores).

The runner pieces (commands, input generation, peak RSS through GNU time,
the int8 quantization) are bench/peer/compare.py's.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(os.path.dirname(HERE), "peer")
sys.path.insert(0, PEER)  # first, so that "compare" is bench/peer's, not this file
import compare as peer  # noqa: E402

MB = 2 ** 20
SIDES = ["engine-fp32", "engine-int8", "ort-fp32", "ort-int8"]
POOLING = {"qwen3": "last token", "gemma3_text": "mean"}
# The last layer's rows the engine computes for that pooling, as the server
# asks for them (server/core/batching/kept_rows.h): last-token pooling needs one row a
# sequence from the last layer; ONNX Runtime's graph computes every row.
ENGINE_ROWS = {"qwen3": "last", "gemma3_text": "all"}


def decoder_flops(config, lengths):
    """Multiply-adds x 2 of the projections (GQA: K and V are kv_heads wide),
    the GLU (three H x I matrices) and attention's two L x L products; only to
    pick a default iteration count."""
    h, inter, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    q = config["num_attention_heads"] * config["head_dim"]
    kv = config["num_key_value_heads"] * config["head_dim"]
    per_token = 2 * h * q + 2 * h * kv + 3 * h * inter
    return layers * (2.0 * per_token * sum(lengths) + 4.0 * q * sum(n * n for n in lengths))


def pooled(states, model_type):
    return states[-1] if model_type == "qwen3" else states.mean(axis=0)


def cosine(a, b):
    return float(np.dot(a, b) / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-30))


def cpu_busy_seconds():
    """All CPUs' busy time since boot (/proc/stat: user, nice, system, irq,
    softirq, steal), in seconds."""
    user, nice, system, _, _, irq, softirq, steal = (
        int(x) for x in open("/proc/stat").readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def run_measured(cmd, what):
    """peer.run_with_rss, also what the rest of the machine took meanwhile:
    (busy CPU seconds - the run's own user + system seconds) / wall seconds,
    in cores; about 0.01 on an idle machine (this script, kernel threads)."""
    if not os.access("/usr/bin/time", os.X_OK):
        peer.fail("peak memory needs GNU time: apt-get install time")
    with tempfile.NamedTemporaryFile("r") as report:
        before = cpu_busy_seconds()
        out = peer.run(["/usr/bin/time", "-f", "%M %e %U %S", "-o", report.name] + cmd, what=what)
        busy = cpu_busy_seconds() - before
        rss_kb, wall, user, system = report.read().split()[-4:]
    return out, int(rss_kb) * 1024, max(0.0, busy - float(user) - float(system)) / max(float(wall), 1e-3)


def compare_outputs(test, reference, model_type):
    """Pooled cosine per sequence (min), per-token cosine (mean, min), max |diff|."""
    pooled_cos, token_cos, worst = [], [], 0.0
    for i, (a, b) in enumerate(zip(test, reference)):
        if a.shape != b.shape:
            peer.fail(f"sequence {i}: shapes {a.shape} and {b.shape}")
        if not np.all(np.isfinite(a)):
            peer.fail(f"sequence {i}: non-finite outputs")
        pooled_cos.append(cosine(pooled(a, model_type), pooled(b, model_type)))
        norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
        token_cos.append(np.sum(a * b, axis=1) / np.maximum(norms, 1e-30))
        worst = max(worst, float(np.max(np.abs(a - b))))
    every = np.concatenate(token_cos)
    return {"pooled_min": min(pooled_cos), "token_mean": float(np.mean(every)),
            "token_min": float(np.min(every)), "max_abs": worst,
            "max_ref": max(float(np.max(np.abs(b))) for b in reference)}


def check(encoders, model, inputs, args, label, results):
    """All four sides on `inputs`; the pooled cosines of engine fp32 ~ ORT fp32
    (a failure stops the model or workload: not the same computation) and of
    engine int8 ~ engine fp32 (a failure is reported in the tables and the exit
    status, and int8 is timed anyway: its speed is a figure of its own).
    Appends the figures to results."""
    out = {side: encoders[side](inputs) for side in SIDES}
    for side, o in out.items():
        if len(o) != len(inputs):
            peer.fail(f"{label}: {len(inputs)} inputs, {side} gave {len(o)} outputs")
    tokens = sum(len(x["ids"]) for x in inputs)
    pairs = [("engine-fp32", "ort-fp32", args.min_cosine_fp32),
             ("engine-int8", "engine-fp32", args.min_cosine_int8),
             ("engine-int8", "ort-fp32", None),
             ("ort-int8", "ort-fp32", None)]
    failed = []
    for test, ref, gate in pairs:
        c = compare_outputs(out[test], out[ref], model["type"])
        ok = gate is None or c["pooled_min"] >= gate
        verdict = "" if gate is None else f" (>= {gate:g}) " + (
            "ok" if ok else "MISMATCH" if ref == "ort-fp32" else "BELOW (timed anyway, reported)")
        print(f"  check {label}: {len(inputs)} sequences, {tokens} tokens, {test} vs {ref}: "
              f"pooled ({POOLING[model['type']]}) cosine min {c['pooled_min']:.6f}{verdict}; "
              f"per token mean {c['token_mean']:.6f}, min {c['token_min']:.6f}; "
              f"max |diff| {c['max_abs']:.3g} (max |{ref}| {c['max_ref']:.3g})", flush=True)
        results.append({"model": model["label"], "inputs": label, "tokens": tokens,
                        "pair": f"{test} vs {ref}", "gate": gate, "ok": ok, **c})
        if not ok and ref == "ort-fp32":  # engine fp32 vs ORT fp32: not the same computation
            failed.append(f"{test} vs {ref} pooled cosine {c['pooled_min']:.6f} < {gate:g}")
    if failed:
        peer.fail(f"{model['label']} {label}: " + "; ".join(failed)
                  + "; the comparison would not be fair")


# --- the four sides ------------------------------------------------------------


class Runner:
    def __init__(self, args):
        self.args = args
        self.sides = {p: peer.Sides(argparse.Namespace(**{**vars(args), "precision": p}))
                      for p in ("fp32", "int8")}

    def encoders(self, model):
        fp32, int8 = self.sides["fp32"], self.sides["int8"]
        return {"engine-fp32": lambda x: fp32.engine_encode(model["dir"], x),
                "engine-int8": lambda x: int8.engine_encode(model["dir"], x),
                "ort-fp32": lambda x: fp32.ort_encode(model["onnx"]["fp32"], x),
                "ort-int8": lambda x: fp32.ort_encode(model["onnx"]["int8"], x)}

    def bench(self, side, model, wl, iters):
        """One run: (median batch seconds, load seconds, peak RSS bytes, other
        processes' CPU in cores)."""
        kind, precision = side.split("-")
        a = self.args
        if kind == "engine":
            cmd = [a.engine, "bench", "--model", model["dir"], "--batch", str(wl["batch"]),
                   "--seq", str(wl["seq"]), "--iters", str(iters), "--threads", str(a.threads),
                   "--seed", str(a.seed), "--precision", precision,
                   "--rows", ENGINE_ROWS[model["type"]]]
        else:
            cmd = [a.node, os.path.join(PEER, "run_peer.mjs"), "bench", "--model",
                   model["onnx"][precision], "--input", wl["input"], "--iters", str(iters),
                   "--threads", str(a.threads)]
        text, rss, others = run_measured(cmd, f"{side} bench")
        result = peer.last_json(text)
        if result.get("tokens") != wl["tokens"]:
            peer.fail(f"{side} encoded {result.get('tokens')} tokens, the workload has "
                      f"{wl['tokens']}: the replicated input generator no longer matches "
                      f"engine/cli/bench_command.cc")
        if "load_seconds" not in result:
            peer.fail(f"{side}: no load_seconds in its output (bench/peer/run_peer.mjs too old?)")
        return result["median_seconds"], result["load_seconds"], rss, others


def time_rounds(runner, model, wl, iters, rounds):
    """One run per side per round, the order rotated every round (each side
    takes each position); a fresh process each."""
    runs = {side: [] for side in runner.args.sides}
    sides = list(runner.args.sides)
    for r in range(rounds):
        order = sides[r % len(sides):] + sides[:r % len(sides)]
        for side in order:
            runs[side].append(runner.bench(side, model, wl, iters))
        print(f"  {wl['name']}: round {r + 1}/{rounds}: " + ", ".join(
            f"{side} {runs[side][-1][0] * 1e3:.1f} ms (load {runs[side][-1][1]:.2f} s, "
            f"{runs[side][-1][2] / MB:.0f} MB, others {runs[side][-1][3]:.2f} cores)"
            for side in sides), flush=True)
    return runs


# --- per model -------------------------------------------------------------------


def optimized_ops(runner, path):
    """ORT's optimized graph's op counts; a failure to save it (printed) only
    loses this line."""
    try:
        fused = peer.fused_ops(runner.sides["fp32"], path)
    except SystemExit:
        return "not saved (see FAIL above; the benchmark goes on)"
    return ", ".join(f"{k} x{v}" for k, v in sorted(fused.items()))


def bench_model(runner, model_dir, args, checks):
    label = os.path.basename(model_dir.rstrip("/"))
    config = json.load(open(os.path.join(model_dir, "config.json")))
    model = {"label": label, "dir": model_dir, "type": config["model_type"], "config": config,
             "onnx": {p: os.path.join(model_dir, "onnx", n)
                      for p, n in (("fp32", "model.onnx"), ("int8", "model.int8.onnx"))}}
    work = os.path.join(args.work, label)
    os.makedirs(work, exist_ok=True)
    print(f"\n== {label} (model_type {model['type']}, {config['num_hidden_layers']} layers, hidden "
          f"{config['hidden_size']}, heads {config['num_attention_heads']} / "
          f"{config['num_key_value_heads']} K/V x {config['head_dim']}, intermediate "
          f"{config['intermediate_size']}, vocab {config['vocab_size']}): {model_dir}", flush=True)
    if model["type"] not in POOLING:
        peer.fail(f"{label}: model_type {model['type']!r}: one of {', '.join(POOLING)}")
    encoders = runner.encoders(model)
    try:
        for p, path in model["onnx"].items():
            if not os.path.exists(path):
                peer.fail(f"{path} missing: make the model with bench/decoders/make_models.py")
            print(f"  ORT optimized graph ({p}): {optimized_ops(runner, path)}", flush=True)
        mixed = peer.bench_sequences(config["vocab_size"], 8, None, args.seed, (1, args.check_length))
        check(encoders, model, [{"ids": ids} for ids in mixed], args,
              f"8 sequences of 1..{args.check_length} tokens", checks)
    except SystemExit:
        return [{"model": label, "workload": "all", "failed": True}]
    rows = []
    for b, s in args.workloads:
        name = f"{b}x{s}"
        wl = {"name": f"{b} x {s}", "batch": b, "seq": s,
              "sequences": peer.bench_sequences(config["vocab_size"], b, s, args.seed),
              "tokens": b * s, "input": os.path.join(work, f"input-{name}.json")}
        with open(wl["input"], "w") as f:
            json.dump({"sequences": wl["sequences"]}, f)
        try:
            check(encoders, model, [{"ids": ids} for ids in wl["sequences"]], args, wl["name"], checks)
            if args.check_only:
                continue
            flops = decoder_flops(config, [s] * b)
            iters = args.iters or int(min(200, max(args.min_iters, round(args.seconds / (flops / 150e9)))))
            runs = time_rounds(runner, model, wl, iters, args.rounds)
        except SystemExit:
            rows.append({"model": label, "workload": wl["name"], "failed": True})
            continue
        row = {"model": label, "workload": wl["name"], "tokens": wl["tokens"], "iters": iters,
               "runs": runs}
        for side, rs in runs.items():
            quiet = [r[0] for r in rs if r[3] < args.quiet]
            row[side] = {"seconds": statistics.median(r[0] for r in rs),
                         "load": statistics.median(r[1] for r in rs),
                         "rss": statistics.median(r[2] for r in rs),
                         "quiet": statistics.median(quiet) if quiet else None, "n_quiet": len(quiet)}
        rows.append(row)
    return rows


# --- output ------------------------------------------------------------------------


def ratio(row, slower, faster, key="seconds"):
    if slower in row and faster in row and row[slower][key] and row[faster][key]:
        return f"{row[slower][key] / row[faster][key]:.2f}x"
    return "-"


def print_tables(rows, checks, args, node_rss, load_before):
    timed = any(not r.get("failed") for r in rows)
    if timed:
        print_speed(rows, args)
    print_checks(checks)
    if timed:
        print_notes(rows, args, node_rss, load_before)


def print_speed_table(rows, sides, key):
    def ms(r, s):
        t = r[s][key]
        return "-" if t is None else f"{t * 1e3:,.1f}" + (f" ({r[s]['n_quiet']})" if key == "quiet" else "")

    print("| model | workload | " + " | ".join(f"{s} ms" for s in sides) + " | "
          + " | ".join(f"{s} tokens/s" for s in sides)
          + " | ORT fp32 / engine fp32 | engine fp32 / engine int8 | ORT int8 / engine int8 |")
    print("|---|---|" + "---:|" * (2 * len(sides) + 3))
    for r in rows:
        if r.get("failed"):
            print(f"| {r['model']} | {r['workload']} | failed |" + " |" * (2 * len(sides) + 2))
            continue
        print(f"| {r['model']} | {r['workload']} | " + " | ".join(ms(r, s) for s in sides) + " | "
              + " | ".join("-" if r[s][key] is None else f"{r['tokens'] / r[s][key]:,.0f}" for s in sides)
              + f" | {ratio(r, 'ort-fp32', 'engine-fp32', key)} | "
              + f"{ratio(r, 'engine-fp32', 'engine-int8', key)} | {ratio(r, 'ort-int8', 'engine-int8', key)} |")


def print_speed(rows, args):
    sides = args.sides
    print("\n### Speed: medians over all runs\n")
    print_speed_table(rows, sides, "seconds")
    print(f"\n### Speed: medians over the quiet runs (other processes under {args.quiet:g} cores; "
          "their count in parentheses)\n")
    print_speed_table(rows, sides, "quiet")
    print("\nRatios: the first side's median time over the second's (above 1: the second "
          "is faster).")

    print("\n### Load time and peak memory\n")
    workloads = list(dict.fromkeys(r["workload"] for r in rows if not r.get("failed")))
    print("| model | side | load s (median over all runs) | "
          + " | ".join(f"peak RSS MB {w}" for w in workloads) + " |")
    print("|---|---|---:|" + "---:|" * len(workloads))
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = {r["workload"]: r for r in rows if r["model"] == model and not r.get("failed")}
        if not mine:
            continue
        for side in sides:
            loads = [run[1] for r in mine.values() for run in r["runs"][side]]
            print(f"| {model} | {side} | {statistics.median(loads):.2f} | " + " | ".join(
                f"{mine[w][side]['rss'] / MB:,.0f}" if w in mine else "-" for w in workloads) + " |")


def print_checks(checks):
    print("\n### Checks\n")
    print("| model | inputs | pair | pooled cosine min | per-token cosine mean | per-token cosine min "
          "| max abs diff | gate |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for c in checks:
        gate = "-" if c["gate"] is None else (f">= {c['gate']:g} " + ("ok" if c["ok"] else "FAILED"))
        print(f"| {c['model']} | {c['inputs']} ({c['tokens']} tokens) | {c['pair']} | "
              f"{c['pooled_min']:.6f} | {c['token_mean']:.6f} | {c['token_min']:.6f} | "
              f"{c['max_abs']:.3g} | {gate} |")


def print_notes(rows, args, node_rss, load_before):
    print(f"\nMedians over {args.rounds} rounds, one fresh process per side and round (order "
          f"rotated each round), 2 warm-up batches, then the median of the run's timed batches; "
          f"{args.threads} threads each. Load: engine Encoder::Load (int8: quantization "
          f"included), ORT InferenceSession.create. Peak RSS: GNU time's %M of the whole run; "
          f"ORT's includes Node.js itself ({node_rss / MB:.0f} MB for an empty `node -e ''`). "
          f"Per run (min..max):")
    for r in rows:
        if r.get("failed"):
            print(f"- {r['model']} {r['workload']}: failed, not timed (see FAIL above)")
            continue
        print(f"- {r['model']} {r['workload']}: {r['iters']} batches per run; " + "; ".join(
            f"{s} {min(x[0] for x in r['runs'][s]) * 1e3:.1f}..{max(x[0] for x in r['runs'][s]) * 1e3:.1f} ms, "
            f"load {min(x[1] for x in r['runs'][s]):.2f}..{max(x[1] for x in r['runs'][s]):.2f} s, "
            f"{min(x[2] for x in r['runs'][s]) / MB:.0f}..{max(x[2] for x in r['runs'][s]) / MB:.0f} MB, "
            f"others {min(x[3] for x in r['runs'][s]):.2f}..{max(x[3] for x in r['runs'][s]):.2f} cores"
            for s in args.sides))
    print(f"- load average (1, 5, 15 min): {load_before} at start, {peer.load_average()} at end "
          f"on {os.cpu_count()} cores.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", required=True,
                        help="a make_models.py output directory (repeatable)")
    parser.add_argument("--engine", help="encoder-cli (default: build/ then build-lead/)")
    parser.add_argument("--node", default="node")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="rounds per workload (one run per side each)")
    parser.add_argument("--iters", type=int, default=0,
                        help="timed batches per run (default: about --seconds of work, "
                             "at least --min-iters, at most 200)")
    parser.add_argument("--min-iters", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--workloads", default="8x128,1x32", help="comma list of BxS")
    parser.add_argument("--sides", default=",".join(SIDES),
                        help=f"comma list of the timed sides, some of {', '.join(SIDES)} "
                             "(all four are checked)")
    parser.add_argument("--check-length", type=int, default=600,
                        help="the mixed check batch: 8 sequences of 1..N tokens")
    parser.add_argument("--min-cosine-fp32", type=float, default=0.999,
                        help="pooled cosine, engine fp32 vs ORT fp32, every sequence at least this")
    parser.add_argument("--min-cosine-int8", type=float, default=0.99,
                        help="pooled cosine, engine int8 vs engine fp32, every sequence at least this")
    parser.add_argument("--quiet", type=float, default=0.1,
                        help="a run is quiet when the other processes took under this many cores")
    parser.add_argument("--work", default="/tmp/encoder-decoders", help="input files")
    parser.add_argument("--check-only", action="store_true")
    args = parser.parse_args()
    try:
        args.workloads = [tuple(int(x) for x in w.lower().split("x")) for w in args.workloads.split(",")]
    except ValueError:
        args.workloads = [()]
    if any(len(w) != 2 or min(w) <= 0 for w in args.workloads):
        parser.error("--workloads: a comma list of BxS, e.g. 8x128,1x32")
    args.sides = args.sides.split(",")
    if not args.sides or any(s not in SIDES for s in args.sides):
        parser.error(f"--sides: some of {', '.join(SIDES)}")

    args.engine = args.engine or peer.default_engine()
    ort_version = peer.installed_ort_version()
    runner = Runner(args)
    load_before = peer.load_average()
    node_rss = peer.run_with_rss([args.node, "-e", ""], what="node")[1]
    print(f"engine: {args.engine} (fp32 and int8 weights)\n"
          f"ORT: onnxruntime-node {ort_version} (CPU EP, graph optimization 'all'), the fp32 "
          f"export and its dynamic int8 quantization (bench/peer/quantize_onnx.py)\n"
          f"threads: {args.threads} each; CPU: {peer.cpu_model()}, {os.cpu_count()} logical cores; "
          f"load average at start: {load_before}", flush=True)

    rows, checks = [], []
    for model_dir in args.model:
        rows += bench_model(runner, os.path.abspath(model_dir), args, checks)
    if args.check_only:
        rows = [r for r in rows if r.get("failed")]
    print_tables(rows, checks, args, node_rss, load_before)
    failed = [f"{r['model']} {r['workload']}" for r in rows if r.get("failed")]
    failed += [f"{c['model']} {c['inputs']}: {c['pair']} pooled cosine {c['pooled_min']:.6f} < {c['gate']:g}"
               for c in checks if not c["ok"]]
    if failed:
        print(f"\nFAILED: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
