#!/usr/bin/env node
// ONNX Runtime (CPU, onnxruntime-node) side of the peer comparison.
//
//   node run_peer.mjs bench  --model M.onnx --input W.json [--iters N] [--warmup N] [--threads T]
//       W.json is {"sequences": [[ids...], ...]}: one batch, padded to its longest
//       sequence with attention_mask 0 on the padding. Prints one JSON line:
//       median_seconds, min_seconds, tokens (real), padded_tokens, tokens_per_second (real),
//       load_seconds (InferenceSession.create: reading the model, graph optimization).
//   node run_peer.mjs encode --model M.onnx [--threads T] < lines.jsonl
//       Reads JSON lines {"ids": [...], "token_type_ids": [...]?} (encoder-cli encode's
//       format), runs them as one padded batch and prints {"hidden_states": [[...]]}
//       per line, real tokens only.
//   node run_peer.mjs fusions --model M.onnx --save OPT.onnx [--threads T]
//       Writes the graph after ORT's optimizations (to list the fused ops).
//
// Session: intraOpNumThreads T (default 2), interOpNumThreads 1, sequential
// execution, graphOptimizationLevel 'all', everything else ORT's defaults.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import ort from 'onnxruntime-node';

function parseArgs(argv) {
  const args = { command: argv[0], iters: 10, warmup: 2, threads: 2 };
  for (let i = 1; i < argv.length; ++i) {
    const flag = argv[i];
    if (!flag.startsWith('--')) throw new Error(`unexpected argument ${flag}`);
    const [key, inline] = flag.slice(2).split('=', 2);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    args[key] = ['iters', 'warmup', 'threads'].includes(key) ? Number(value) : value;
  }
  if (!['bench', 'encode', 'fusions'].includes(args.command) || !args.model) {
    throw new Error('usage: run_peer.mjs <bench|encode|fusions> --model M.onnx [flags]; see the header');
  }
  return args;
}

async function createSession(args, extra = {}) {
  return ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    ...extra,
  });
}

// Pads sequences to the longest; returns the three int64 feeds.
function makeFeeds(sequences, typeIds) {
  const batch = sequences.length;
  const seq = Math.max(...sequences.map((s) => s.length));
  const ids = new BigInt64Array(batch * seq);
  const mask = new BigInt64Array(batch * seq);
  const types = new BigInt64Array(batch * seq);
  sequences.forEach((s, b) => {
    s.forEach((id, t) => {
      ids[b * seq + t] = BigInt(id);
      mask[b * seq + t] = 1n;
      if (typeIds && typeIds[b]) types[b * seq + t] = BigInt(typeIds[b][t] ?? 0);
    });
  });
  const dims = [batch, seq];
  return {
    seq,
    feeds: {
      input_ids: new ort.Tensor('int64', ids, dims),
      attention_mask: new ort.Tensor('int64', mask, dims),
      token_type_ids: new ort.Tensor('int64', types, dims),
    },
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function bench(args) {
  const { sequences } = JSON.parse(readFileSync(args.input, 'utf8'));
  const { seq, feeds } = makeFeeds(sequences);
  const loadStart = performance.now();
  const session = await createSession(args);
  const loadSeconds = (performance.now() - loadStart) / 1000;
  for (let i = 0; i < args.warmup; ++i) await session.run(feeds);
  const seconds = [];
  for (let i = 0; i < args.iters; ++i) {
    const start = performance.now();
    const out = await session.run(feeds);
    seconds.push((performance.now() - start) / 1000);
    out.last_hidden_state.dispose?.();
  }
  const tokens = sequences.reduce((n, s) => n + s.length, 0);
  const med = median(seconds);
  console.log(JSON.stringify({
    runtime: `onnxruntime-node ${ort.env.versions?.common ?? ''}`.trim(),
    batch: sequences.length, padded_seq: seq, tokens, padded_tokens: sequences.length * seq,
    iters: args.iters, threads: args.threads,
    median_seconds: med, min_seconds: Math.min(...seconds), tokens_per_second: tokens / med,
    load_seconds: loadSeconds,
  }));
}

async function encode(args) {
  const lines = readFileSync(0, 'utf8').split('\n').filter((l) => l.trim() !== '');
  const inputs = lines.map((l) => JSON.parse(l));
  const { seq, feeds } = makeFeeds(inputs.map((x) => x.ids), inputs.map((x) => x.token_type_ids));
  const session = await createSession(args);
  const out = (await session.run(feeds)).last_hidden_state;
  const hidden = out.dims[2];
  const data = out.data;
  const chunks = [];
  inputs.forEach((x, b) => {
    const rows = [];
    for (let t = 0; t < x.ids.length; ++t) {
      const offset = (b * seq + t) * hidden;
      rows.push(Array.from(data.subarray(offset, offset + hidden)));
    }
    chunks.push(JSON.stringify({ hidden_states: rows }));
  });
  process.stdout.write(chunks.join('\n') + '\n');
}

async function fusions(args) {
  if (!args.save) throw new Error('fusions needs --save OPT.onnx');
  await createSession(args, { optimizedModelFilePath: args.save });
}

const args = parseArgs(process.argv.slice(2));
try {
  await { bench, encode, fusions }[args.command](args);
} catch (error) {
  console.error(`run_peer.mjs: ${error.message ?? error}`);
  process.exit(1);
}
