#!/usr/bin/python3
"""Side-by-side of the engine (encoder-cli) and ONNX Runtime on the same model.

  /usr/bin/python3 bench/peer/compare.py --model DIR [--model DIR2 ...]

For each model directory (Hugging Face layout, F32 safetensors):
  1. exports DIR to ONNX (export_onnx.py; cached in --work) and prints the ops
     ONNX Runtime's optimizer fused it into;
  2. checks correctness: the engine (`encoder-cli encode --pooling none`, packed)
     and ORT (run_peer.mjs encode, padded to the longest with attention_mask)
     must give the same last hidden states on the variable-length workload's
     inputs, max |diff| <= --tolerance over real tokens; then the same on a copy
     of the model with random biases and LayerNorm parameters and a second
     segment of token types (the generated models have zero biases, unit
     gammas). Any failure stops the script with exit status 1;
  3. times the workloads, alternating engine and ORT runs (fresh process each,
     the order flipped every round), each run reporting the median of --iters
     timed batches after 2 warm-up batches, and prints one markdown table of the
     medians over rounds.

--precision int8 (or bf16) runs the engine with int8 (bf16) weights
(`encoder-cli --precision int8`): the correctness check against ORT fp32 then
compares each token's hidden state by cosine similarity (mean >=
--min-mean-cosine, every token >= --min-cosine) instead of the max abs
difference, which int8 and bf16 cannot meet; the timing is the same.

--peer-precision int8 has ONNX Runtime run the dynamically quantized model
instead (quantize_onnx.py: what onnxruntime.quantization.quantize_dynamic makes
with its defaults; quantized once, cached in --work next to the fp32 export).
The engine is still checked against ORT fp32, and ORT int8 is checked against
ORT fp32 the same way (cosine per token, mean and min, and the first token's,
the CLS pooling input); the timing runs the int8 model.

Workloads:  8x128 and 1x128 (no padding), and var: 32 sequences with
lengths uniform in 8..128. The engine packs the real tokens (`encoder-cli bench
--lengths 8:128 --seed S`); ORT gets the same sequences padded to the longest.
Tokens/s counts real tokens only, for both. The sequences are drawn exactly as
encoder-cli bench draws them (std::mt19937 + libstdc++'s uniform_int_distribution,
replicated below), and the engine's reported token count is checked against them.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from safetensors_io import read_checkpoint, write_safetensors  # noqa: E402


def fail(message):
    print(f"\nFAIL: {message}", file=sys.stderr)
    sys.exit(1)


# --- encoder-cli bench's inputs, replicated ------------------------------------


class MT19937:
    """std::mt19937 (32-bit Mersenne Twister, seeded like the C++ constructor)."""

    def __init__(self, seed):
        self.mt = [0] * 624
        self.mt[0] = seed & 0xFFFFFFFF
        for i in range(1, 624):
            prev = self.mt[i - 1]
            self.mt[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF
        self.index = 624

    def _twist(self):
        mt = self.mt
        for i in range(624):
            y = (mt[i] & 0x80000000) | (mt[(i + 1) % 624] & 0x7FFFFFFF)
            mt[i] = mt[(i + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
        self.index = 0

    def __call__(self):
        if self.index >= 624:
            self._twist()
        y = self.mt[self.index]
        self.index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        return y ^ (y >> 18)


def uniform_int(rng, a, b):
    """libstdc++ (GCC 11+) std::uniform_int_distribution<int>(a, b) with a 32-bit
    engine: Lemire's nearly divisionless downscaling."""
    erange = b - a + 1
    product = rng() * erange
    low = product & 0xFFFFFFFF
    if low < erange:
        threshold = (0x100000000 - erange) % erange
        while low < threshold:
            product = rng() * erange
            low = product & 0xFFFFFFFF
    return a + (product >> 32)


def bench_sequences(vocab_size, batch, seq, seed, lengths=None):
    """The token ids `encoder-cli bench` encodes (engine/cli/bench_command.cc)."""
    rng = MT19937(seed)
    out = []
    for _ in range(batch):
        n = uniform_int(rng, lengths[0], lengths[1]) if lengths else seq
        out.append([uniform_int(rng, 5, vocab_size - 1) for _ in range(n)])
    return out


# --- running the two sides --------------------------------------------------


def run(cmd, stdin=None, what=None):
    result = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"{what or cmd[0]} exited {result.returncode}:\n  {' '.join(cmd)}\n{result.stderr.strip()}")
    return result.stdout


def run_with_rss(cmd, stdin=None, what=None):
    """run(), also returning cmd's peak resident set in bytes, as GNU time's %M
    (the child's ru_maxrss). Not wait4 on our own child: a process forked from
    this script starts with the script's high-water mark (Linux keeps it across
    exec), hundreds of MB once the checks have parsed long outputs; GNU time is
    small, so what its child inherits is negligible."""
    if not os.access("/usr/bin/time", os.X_OK):
        fail("peak memory needs GNU time: apt-get install time")
    with tempfile.NamedTemporaryFile("r") as report:
        out = run(["/usr/bin/time", "-f", "%M", "-o", report.name] + cmd, stdin, what or cmd[0])
        return out, int(report.read().split()[-1]) * 1024  # kilobytes


def last_json(text):
    lines = [line for line in text.splitlines() if line.strip().startswith("{")]
    return json.loads(lines[-1])


class Sides:
    def __init__(self, args):
        self.engine = args.engine
        self.threads = args.threads
        self.precision = args.precision
        self.node = args.node
        self.runner = os.path.join(HERE, "run_peer.mjs")

    def engine_encode(self, model_dir, inputs):
        text = "".join(json.dumps(x) + "\n" for x in inputs)
        out = run([self.engine, "encode", "--model", model_dir, "--pooling", "none",
                   "--threads", str(self.threads), "--precision", self.precision], text,
                  "encoder-cli encode")
        return [np.array(json.loads(line)["hidden_states"], dtype=np.float64)
                for line in out.splitlines() if line.strip()]

    def ort_encode(self, onnx_path, inputs):
        text = "".join(json.dumps(x) + "\n" for x in inputs)
        out = run([self.node, self.runner, "encode", "--model", onnx_path,
                   "--threads", str(self.threads)], text, "run_peer.mjs encode")
        return [np.array(json.loads(line)["hidden_states"], dtype=np.float64)
                for line in out.splitlines() if line.strip()]

    def engine_bench(self, model_dir, workload, iters, seed):
        cmd = [self.engine, "bench", "--model", model_dir, "--batch", str(workload["batch"]),
               "--iters", str(iters), "--threads", str(self.threads), "--seed", str(seed),
               "--precision", self.precision]
        if workload.get("lengths"):
            cmd += ["--lengths", "%d:%d" % tuple(workload["lengths"])]
        else:
            cmd += ["--seq", str(workload["seq"])]
        text, rss = run_with_rss(cmd, what="encoder-cli bench")
        result = last_json(text)
        if result.get("tokens") != workload["tokens"]:
            fail(f"encoder-cli bench encoded {result.get('tokens')} tokens, the ORT side "
                 f"{workload['tokens']}: the replicated input generator no longer matches "
                 f"engine/cli/bench_command.cc")
        return result["median_seconds"], rss

    def ort_bench(self, onnx_path, input_path, iters):
        text, rss = run_with_rss([self.node, self.runner, "bench", "--model", onnx_path,
                                  "--input", input_path, "--iters", str(iters),
                                  "--threads", str(self.threads)], what="run_peer.mjs bench")
        return last_json(text)["median_seconds"], rss


# --- model preparation ------------------------------------------------------


def newer(path, *sources):
    return os.path.exists(path) and all(os.path.getmtime(path) >= os.path.getmtime(s)
                                        for s in sources if os.path.exists(s))


def quantize_model(onnx_path, int8_path):
    """The ORT side's int8 model: quantize_onnx.py on the fp32 export, cached."""
    script = os.path.join(HERE, "quantize_onnx.py")
    if newer(int8_path, onnx_path, script):
        print(f"  onnx int8: {int8_path} (cached)")
        return
    started = time.time()
    run([sys.executable, script, "--model", onnx_path, "--out", int8_path], what="quantize_onnx.py")
    print(f"  onnx int8: {int8_path} (quantized in {time.time() - started:.1f} s)")


def export(model_dir, onnx_path):
    sources = [os.path.join(model_dir, f) for f in ("config.json", "model.safetensors",
                                                     "model.safetensors.index.json")]
    sources += [os.path.join(HERE, "export_onnx.py"), os.path.join(HERE, "safetensors_io.py")]
    if newer(onnx_path, *sources):
        print(f"  onnx: {onnx_path} (cached)")
        return
    os.makedirs(os.path.dirname(onnx_path), exist_ok=True)
    started = time.time()
    run([sys.executable, os.path.join(HERE, "export_onnx.py"), "--model", model_dir,
         "--out", onnx_path], what="export_onnx.py")
    print(f"  onnx: {onnx_path} (exported in {time.time() - started:.1f} s)")


def fused_ops(sides, onnx_path):
    import onnx  # python3-onnx
    optimized = onnx_path + ".ort-optimized.onnx"
    run([sides.node, sides.runner, "fusions", "--model", onnx_path, "--save", optimized,
         "--threads", str(sides.threads)], what="run_peer.mjs fusions")
    counts = {}
    for node in onnx.load(optimized, load_external_data=False).graph.node:
        name = node.op_type if not node.domain else f"{node.op_type} ({node.domain})"
        counts[name] = counts.get(name, 0) + 1
    os.remove(optimized)
    return counts


def perturbed_copy(model_dir, out_dir, seed):
    """The model with random biases and LayerNorm parameters (same matrices)."""
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    for name in os.listdir(model_dir):  # config, vocabulary, tokenizer files
        if os.path.isfile(os.path.join(model_dir, name)) and not name.endswith(
                (".safetensors", ".safetensors.index.json", ".onnx")):
            shutil.copy(os.path.join(model_dir, name), out_dir)
    tensors = read_checkpoint(model_dir)
    rng = np.random.default_rng(seed)
    for name, value in tensors.items():
        if name.endswith(".bias"):
            tensors[name] = rng.normal(0.0, 0.1, value.shape).astype(np.float32)
        elif name.endswith("LayerNorm.weight"):
            tensors[name] = (1.0 + rng.normal(0.0, 0.1, value.shape)).astype(np.float32)
    write_safetensors(os.path.join(out_dir, "model.safetensors"), tensors)


def check(sides, model_dir, onnx_path, inputs, args, label, int8_path=None):
    engine = sides.engine_encode(model_dir, inputs)
    ort = sides.ort_encode(onnx_path, inputs)
    if len(engine) != len(inputs) or len(ort) != len(inputs):
        fail(f"{label}: {len(inputs)} inputs, engine gave {len(engine)} outputs, ORT {len(ort)}")
    if int8_path:  # the quantized model ORT will be timed on, against ORT fp32
        ort_int8 = sides.ort_encode(int8_path, inputs)
        if len(ort_int8) != len(inputs):
            fail(f"{label}: {len(inputs)} inputs, ORT int8 gave {len(ort_int8)} outputs")
        check_cosine(ort_int8, ort, inputs, args.min_mean_cosine, args.min_cosine, label,
                     "ORT int8 vs ORT fp32")
    if args.precision != "fp32":
        return check_cosine(engine, ort, inputs, args.min_mean_cosine, args.min_cosine, label,
                            f"{args.precision} engine vs ORT fp32")
    tolerance = args.tolerance
    worst, worst_at = 0.0, None
    for i, (a, b) in enumerate(zip(engine, ort)):
        if a.shape != b.shape:
            fail(f"{label}: sequence {i}: engine shape {a.shape}, ORT shape {b.shape}")
        diff = float(np.max(np.abs(a - b)))
        if not np.isfinite(diff):
            fail(f"{label}: sequence {i}: non-finite outputs")
        if diff > worst:
            worst, worst_at = diff, i
    tokens = sum(len(x["ids"]) for x in inputs)
    verdict = "ok" if worst <= tolerance else "MISMATCH"
    print(f"  check {label}: {len(inputs)} sequences, {tokens} tokens: "
          f"max |engine - ORT| = {worst:.3g} (tolerance {tolerance:g}) {verdict}")
    if worst > tolerance:
        fail(f"{label}: engine and ORT outputs differ by {worst:.3g} (sequence {worst_at}, "
             f"length {len(inputs[worst_at]['ids'])}); the comparison would not be fair")
    return worst


def check_cosine(test, reference, inputs, min_mean, min_each, label, what):
    """An int8 side against fp32 ORT: cosine similarity of each token's hidden state
    (mean and min over all tokens; the first token's, the CLS pooling input, reported)."""
    cosines = []
    for i, (a, b) in enumerate(zip(test, reference)):
        if a.shape != b.shape:
            fail(f"{label}: {what}: sequence {i}: shapes {a.shape} and {b.shape}")
        if not np.all(np.isfinite(a)):
            fail(f"{label}: {what}: sequence {i}: non-finite outputs")
        norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
        cosines.append(np.sum(a * b, axis=1) / np.maximum(norms, 1e-30))
    every = np.concatenate(cosines)
    mean, worst = float(np.mean(every)), float(np.min(every))
    cls_worst = min(float(c[0]) for c in cosines)
    worst_seq = min(range(len(cosines)), key=lambda i: float(np.min(cosines[i])))
    ok = mean >= min_mean and worst >= min_each
    print(f"  check {label} ({what}): {len(inputs)} sequences, {len(every)} tokens: "
          f"cosine mean {mean:.5f} (>= {min_mean:g}), min {worst:.5f} (>= {min_each:g}), "
          f"CLS min {cls_worst:.5f} {'ok' if ok else 'MISMATCH'}")
    if not ok:
        fail(f"{label}: {what} disagree: cosine mean {mean:.5f}, min {worst:.5f} "
             f"(sequence {worst_seq}, length {len(inputs[worst_seq]['ids'])})")
    return worst


# --- timing -----------------------------------------------------------------


def time_rounds(sides, model_dir, peer_path, wl, iters, rounds, seed):
    """Alternating engine and ORT runs (engine first in even rounds, ORT first in
    odd ones), a fresh process each. Returns per side the run medians (seconds)
    and the runs' peak resident sets (bytes), one per round."""
    times = {"engine": [], "ort": []}
    rss = {"engine": [], "ort": []}
    for r in range(rounds):
        for side in (("engine", "ort") if r % 2 == 0 else ("ort", "engine")):
            seconds, peak = (sides.engine_bench(model_dir, wl, iters, seed) if side == "engine"
                             else sides.ort_bench(peer_path, wl["input"], iters))
            times[side].append(seconds)
            rss[side].append(peak)
        print(f"  {wl['name']}: round {r + 1}/{rounds}: engine {times['engine'][-1]:.4f} s "
              f"({rss['engine'][-1] / 2**20:.0f} MB), ORT {times['ort'][-1]:.4f} s "
              f"({rss['ort'][-1] / 2**20:.0f} MB)", flush=True)
    return times, rss


def default_engine():
    for candidate in ("build/engine/encoder-cli", "build-lead/engine/encoder-cli"):
        if os.access(os.path.join(REPO, candidate), os.X_OK):
            return os.path.join(REPO, candidate)
    fail("no encoder-cli in build/ or build-lead/; pass --engine")


def installed_ort_version():
    package = os.path.join(HERE, "node_modules", "onnxruntime-node", "package.json")
    if not os.path.exists(package):
        fail(f"onnxruntime-node is not installed: cd {HERE} && npm ci --ignore-scripts")
    return json.load(open(package))["version"]


def cpu_model():
    return next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                 if line.startswith("model name")), "?")


def load_average():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def encoder_flops(config, lengths):
    h, inter, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    tokens = sum(lengths)
    return layers * (2.0 * (4 * h * h + 2 * h * inter) * tokens + 4.0 * h * sum(n * n for n in lengths))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", required=True, help="model directory (repeatable)")
    parser.add_argument("--engine", help="encoder-cli (default: build/ then build-lead/)")
    parser.add_argument("--node", default="node")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds per workload")
    parser.add_argument("--iters", type=int, default=0,
                        help="timed batches per run (default: about --seconds per run)")
    parser.add_argument("--seconds", type=float, default=2.0, help="target run length for default --iters")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--workloads", default="8x128,1x128,var",
                        help="comma list of BxS and var (32 x uniform 8..128)")
    parser.add_argument("--precision", choices=("fp32", "int8", "bf16"), default="fp32",
                        help="the engine's weights (bf16: CPUs with AVX512_BF16)")
    parser.add_argument("--peer-precision", choices=("fp32", "int8"), default="fp32",
                        help="ORT's model: the fp32 export, or it quantized by quantize_onnx.py "
                             "(quantize_dynamic's defaults)")
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="fp32: max abs difference of last hidden states")
    parser.add_argument("--min-mean-cosine", type=float, default=0.995,
                        help="int8 (either side): mean per-token cosine similarity to ORT fp32 at least this")
    parser.add_argument("--min-cosine", type=float, default=0.99,
                        help="int8 (either side): every token's cosine similarity to ORT fp32 at least this")
    parser.add_argument("--work", default="/tmp/encoder-peer", help="exported models and inputs")
    parser.add_argument("--check-only", action="store_true")
    args = parser.parse_args()

    args.engine = args.engine or default_engine()
    ort_version = installed_ort_version()
    sides = Sides(args)
    cpu = cpu_model()
    load_before = load_average()
    peer_model = "fp32 model" if args.peer_precision == "fp32" else \
        "int8 model (quantize_onnx.py: quantize_dynamic's defaults)"
    print(f"engine: {args.engine} ({args.precision})\n"
          f"ORT: onnxruntime-node {ort_version} (CPU EP, graph optimization 'all'), {peer_model}\n"
          f"threads: {args.threads} each; CPU: {cpu}, {os.cpu_count()} logical cores; "
          f"load average at start: {load_before}")

    rows, notes = [], []
    for model_dir in args.model:
        model_dir = os.path.abspath(model_dir)
        label = os.path.basename(model_dir.rstrip("/"))
        config = json.load(open(os.path.join(model_dir, "config.json")))
        work = os.path.join(args.work, label)
        os.makedirs(work, exist_ok=True)
        print(f"\n== {label}: hidden {config['hidden_size']}, layers {config['num_hidden_layers']}, "
              f"heads {config['num_attention_heads']}, intermediate {config['intermediate_size']}")
        onnx_path = os.path.join(work, "model.onnx")
        export(model_dir, onnx_path)
        peer_path = onnx_path  # the model ORT is timed on
        if args.peer_precision == "int8":
            peer_path = os.path.join(work, "model.int8.onnx")
            quantize_model(onnx_path, peer_path)
        fused = fused_ops(sides, peer_path)
        print(f"  ORT optimized graph ({args.peer_precision}): "
              + ", ".join(f"{k} x{v}" for k, v in sorted(fused.items())))
        int8_path = peer_path if args.peer_precision == "int8" else None

        # Workloads: the exact sequences encoder-cli bench generates.
        workloads = []
        for name in args.workloads.split(","):
            if name == "var":
                wl = {"name": "var 32 x 8..128", "batch": 32, "lengths": (8, 128)}
            else:
                b, s = (int(x) for x in name.lower().split("x"))
                wl = {"name": f"{b} x {s}", "batch": b, "seq": s}
            wl["sequences"] = bench_sequences(config["vocab_size"], wl["batch"], wl.get("seq"),
                                              args.seed, wl.get("lengths"))
            wl["tokens"] = sum(len(s) for s in wl["sequences"])
            wl["input"] = os.path.join(work, f"input-{name}.json")
            with open(wl["input"], "w") as f:
                json.dump({"sequences": wl["sequences"]}, f)
            workloads.append(wl)

        # Correctness, on the variable-length inputs (padding and packing both
        # exercised), then on a perturbed copy with token types.
        check_seqs = bench_sequences(config["vocab_size"], 32, None, args.seed, (8, 128))
        check(sides, model_dir, onnx_path, [{"ids": s} for s in check_seqs], args,
              "model as given", int8_path)
        perturbed = os.path.join(work, "perturbed")
        perturbed_copy(model_dir, perturbed, args.seed)
        perturbed_onnx = os.path.join(perturbed, "model.onnx")
        export(perturbed, perturbed_onnx)
        perturbed_int8 = None
        if int8_path:
            perturbed_int8 = os.path.join(perturbed, "model.int8.onnx")
            quantize_model(perturbed_onnx, perturbed_int8)
        inputs = []
        for i, s in enumerate(check_seqs[:12]):
            x = {"ids": s}
            if config.get("type_vocab_size", 2) > 1 and i % 2:
                x["token_type_ids"] = [0] * (len(s) // 2) + [1] * (len(s) - len(s) // 2)
            inputs.append(x)
        check(sides, perturbed, perturbed_onnx, inputs, args,
              "random biases + LayerNorm params, token types", perturbed_int8)
        shutil.rmtree(perturbed, ignore_errors=True)
        if args.check_only:
            continue

        for wl in workloads:
            lengths = [len(s) for s in wl["sequences"]]
            iters = args.iters or int(min(200, max(5, round(
                args.seconds / (encoder_flops(config, lengths) / 150e9)))))
            times, _ = time_rounds(sides, model_dir, peer_path, wl, iters, args.rounds, args.seed)
            engine_times, ort_times = times["engine"], times["ort"]
            e, o = statistics.median(engine_times), statistics.median(ort_times)
            rows.append((f"{label} {args.precision} vs ORT {args.peer_precision} {wl['name']}", e, o,
                         wl["tokens"] / e, wl["tokens"] / o, o / e,
                         min(engine_times), max(engine_times), min(ort_times), max(ort_times), iters))
            if wl.get("lengths"):
                padded = len(lengths) * max(lengths)
                notes.append(f"{label} {wl['name']}: {wl['tokens']} real tokens; ORT runs them padded "
                             f"to {max(lengths)} ({padded} tokens, {padded / wl['tokens']:.2f}x), the engine packed.")

    if args.check_only:
        return
    load_after = load_average()
    print(f"\n| workload | engine median s | ORT median s | engine tokens/s | ORT tokens/s | ratio (ORT s / engine s) |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row[0]} | {row[1]:.4f} | {row[2]:.4f} | {row[3]:,.0f} | {row[4]:,.0f} | {row[5]:.2f}x |")
    print(f"\nMedians over {args.rounds} alternating rounds (fresh process per run, 2 warm-up batches, "
          f"then the median of the run's timed batches); {args.threads} threads each; "
          f"tokens/s counts real tokens. Round medians (min..max):")
    for row in rows:
        print(f"- {row[0]}: engine {row[6]:.4f}..{row[7]:.4f} s, ORT {row[8]:.4f}..{row[9]:.4f} s, "
              f"{row[10]} batches per run")
    for note in notes:
        print(f"- {note}")
    print(f"- load average (1, 5, 15 min): {load_before} at start, {load_after} at end "
          f"on {os.cpu_count()} cores.")


if __name__ == "__main__":
    main()
