#!/usr/bin/env node
// Rerank throughput: encoder-server's POST /rerank against ONNX Runtime
// running the same cross-encoder, in alternating rounds (see rerank.sh).
//
//   node rerank.mjs --onnx M.onnx --vocab vocab.txt --url http://127.0.0.1:PORT
//        [--rounds 5] [--seconds 3] [--concurrency 2] [--threads 2]
//        [--query-tokens 16] [--passage-tokens 112] [--passages 32]
//
// A request is one query and --passages passages. Texts are words of the
// model's vocab.txt that are whole tokens, so a pair is exactly
// [CLS] query [SEP] passage [SEP]: --query-tokens counts [CLS] and the
// first [SEP], --passage-tokens the passage's words and the last [SEP]
// (16 + 112 = 128 tokens a pair). ONNX Runtime gets the same ids as one
// batch of --passages pairs (no padding: every pair has the same length);
// the server gets the texts over HTTP from --concurrency clients. First a
// check: the server's raw scores must equal ONNX Runtime's logits (max abs
// difference <= 1e-3; both are fp32). Prints one JSON line: per side the
// median pairs/s of the rounds, and the ratio server / ORT.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import ort from 'onnxruntime-node';

function parseArgs(argv) {
  const numeric = ['rounds', 'seconds', 'concurrency', 'threads', 'query-tokens', 'passage-tokens',
    'passages', 'seed', 'tolerance', 'peer-tolerance'];
  const args = { rounds: 5, seconds: 3, concurrency: 2, threads: 2, 'query-tokens': 16,
    'passage-tokens': 112, passages: 32, seed: 1, tolerance: 1e-3, 'peer-tolerance': 5e-2 };
  for (let i = 0; i < argv.length; ++i) {
    const [key, inline] = argv[i].replace(/^--/, '').split('=', 2);
    const value = inline ?? argv[++i];
    args[key] = numeric.includes(key) ? Number(value) : value;
  }
  for (const required of ['onnx', 'vocab', 'url']) {
    if (!args[required]) throw new Error(`--${required} is required; see the header`);
  }
  return args;
}

// Deterministic word picks (a 32-bit LCG), so every run sends the same texts.
function makeWords(vocab, seed) {
  const words = vocab
    .map((word, id) => ({ word, id }))
    .filter(({ word }) => /^[a-z]{2,}$/.test(word));
  if (words.length < 100) throw new Error('the vocabulary has too few whole words');
  let state = seed >>> 0;
  return (n) => Array.from({ length: n }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return words[state % words.length];
  });
}

function makeWorkload(args) {
  const vocab = readFileSync(args.vocab, 'utf8').split('\n');
  const cls = vocab.indexOf('[CLS]');
  const sep = vocab.indexOf('[SEP]');
  const pick = makeWords(vocab, args.seed);
  const query = pick(args['query-tokens'] - 2);
  const passages = Array.from({ length: args.passages }, () => pick(args['passage-tokens'] - 1));
  const seq = args['query-tokens'] + args['passage-tokens'];
  const batch = args.passages;
  const ids = new BigInt64Array(batch * seq);
  const types = new BigInt64Array(batch * seq);
  passages.forEach((passage, b) => {
    const row = [cls, ...query.map((w) => w.id), sep, ...passage.map((w) => w.id), sep];
    row.forEach((id, t) => {
      ids[b * seq + t] = BigInt(id);
      types[b * seq + t] = t >= args['query-tokens'] ? 1n : 0n;
    });
  });
  const dims = [batch, seq];
  return {
    body: JSON.stringify({
      query: query.map((w) => w.word).join(' '),
      texts: passages.map((p) => p.map((w) => w.word).join(' ')),
      raw_scores: true,
      truncate: false,
    }),
    feeds: {
      input_ids: new ort.Tensor('int64', ids, dims),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(batch * seq).fill(1n), dims),
      token_type_ids: new ort.Tensor('int64', types, dims),
    },
  };
}

async function rerank(args, body) {
  const response = await fetch(`${args.url}/rerank`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`/rerank answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

// Pairs per second over `seconds` of back-to-back work by `workers` loops.
async function timed(seconds, workers, once, pairsPerCall) {
  const end = performance.now() + seconds * 1000;
  let calls = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: workers }, async () => {
    while (performance.now() < end) {
      await once();
      calls += 1;
    }
  }));
  return (calls * pairsPerCall) / ((performance.now() - start) / 1000);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const args = parseArgs(process.argv.slice(2));
const { body, feeds } = makeWorkload(args);
const session = await ort.InferenceSession.create(args.onnx, {
  executionProviders: ['cpu'], graphOptimizationLevel: 'all', intraOpNumThreads: args.threads,
  interOpNumThreads: 1, executionMode: 'sequential',
  // Idle ORT threads must not spin while the server has its turn.
  extra: { session: { intra_op: { allow_spinning: '0' } } },
});

// The model timed: --onnx itself, or --timed-onnx (ORT's int8 of it), whose
// scores are checked against --onnx's the same way.
const timedSession = args['timed-onnx']
  ? await ort.InferenceSession.create(args['timed-onnx'], {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all', intraOpNumThreads: args.threads,
    interOpNumThreads: 1, executionMode: 'sequential',
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  })
  : session;

const logits = (await session.run(feeds)).logits.data;
if (timedSession !== session) {
  const timedLogits = (await timedSession.run(feeds)).logits.data;
  let peerDiff = 0;
  for (let i = 0; i < logits.length; ++i) {
    peerDiff = Math.max(peerDiff, Math.abs(timedLogits[i] - logits[i]));
  }
  if (!(peerDiff <= args['peer-tolerance'])) {
    throw new Error(`--timed-onnx's scores differ from --onnx's by ${peerDiff}`);
  }
  console.error(`ORT's timed model checked: max |diff| from --onnx ${peerDiff.toExponential(2)} ` +
    `(--peer-tolerance ${args['peer-tolerance']})`);
}
const served = await rerank(args, body);
let maxDiff = 0;
for (const { index, score } of served) maxDiff = Math.max(maxDiff, Math.abs(score - logits[index]));
if (served.length !== args.passages || !(maxDiff <= args.tolerance)) {
  throw new Error(`the server's scores differ from ONNX Runtime's: ${served.length} results, ` +
    `max |diff| ${maxDiff} (--tolerance ${args.tolerance})`);
}
console.error(`scores checked: ${served.length} results, max |diff| from ONNX Runtime ` +
  `${maxDiff.toExponential(2)} (--tolerance ${args.tolerance})`);

const serverRates = [];
const ortRates = [];
for (let round = 0; round < args.rounds; ++round) {
  // Alternate which side goes first, so neither always gets the warmer caches.
  const sides = [
    async () => serverRates.push(await timed(args.seconds, args.concurrency,
      () => rerank(args, body), args.passages)),
    async () => ortRates.push(await timed(args.seconds, 1, () => timedSession.run(feeds),
      args.passages)),
  ];
  if (round % 2) sides.reverse();
  for (const side of sides) await side();
}
console.log(JSON.stringify({
  pairs_per_request: args.passages, tokens_per_pair: args['query-tokens'] + args['passage-tokens'],
  concurrency: args.concurrency, threads: args.threads, rounds: args.rounds,
  max_abs_diff: maxDiff,
  server_pairs_per_second: median(serverRates), ort_pairs_per_second: median(ortRates),
  ratio: median(serverRates) / median(ortRates),
  server_rounds: serverRates.map(Math.round), ort_rounds: ortRates.map(Math.round),
}));
