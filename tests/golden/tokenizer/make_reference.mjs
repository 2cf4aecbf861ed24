// Builds reference.jsonl, the ids the C++ tokenizer must reproduce, from
// corpus.jsonl with Hugging Face's transformers.js (offline, local files only).
//
//   npm ci --ignore-scripts && node make_corpus.mjs && node make_reference.mjs
//
// transformers.js re-implements the Rust `tokenizers` crate (the library behind
// Python's BertTokenizerFast, TEI and sentence-transformers). Where the two
// differ, the Rust crate is the one models are served with, so the reference is
// patched to it; each patch names the transformers.js behaviour it replaces:
//   cjk_astral   CJK ideographs outside the BMP (U+20000...) are isolated like
//                the others (transformers.js tests UTF-16 units, so it never
//                sees them), in the crate's ranges (extension E from U+2B920).
//   per_char_lc  lower-casing is per code point (Rust char::to_lowercase): no
//                Greek final-sigma context rule (ΑΣ -> ασ, not ας).
//   controls     the characters dropped as controls are the crate's
//                is_other(): Cc, Cf, Co, Cs from tables older than Unicode 9.0;
//                unassigned code points and noncharacters (Cn) stay (and make
//                their word [UNK]), as the crate itself shows (rust/). Unpatched
//                transformers.js agrees on this corpus (no line lists it).
// Lines where unpatched transformers.js gives other ids are listed with the
// patches responsible in js_divergences.jsonl.
//
// Truncation: transformers.js cuts the final id list (dropping the closing
// [SEP]); the reference applies the Rust crate's LongestFirst rule below to
// the sequences without special tokens instead, then adds [CLS]/[SEP].
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { BERT_PATCHES, patchBertNormalizer } from './bert_patches.mjs';

const here = dirname(fileURLToPath(import.meta.url));
env.allowRemoteModels = false;
env.localModelPath = here + '/';

const corpus = readFileSync(join(here, 'corpus.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.length > 0)
  .map((l) => JSON.parse(l));

const PATCHES = BERT_PATCHES;

async function load(patches) {
  const tok = await AutoTokenizer.from_pretrained('bert-base-uncased');
  patchBertNormalizer(tok._tokenizer.normalizer, patches);
  return tok;
}

const CLS = 101;
const SEP = 102;

function encode(tok, a, b = null) {
  const r = tok._tokenizer.encode(a, { text_pair: b, return_token_type_ids: true });
  return { ids: r.ids, type_ids: r.token_type_ids };
}
const bare = (tok, text) => tok._tokenizer.encode(text, { add_special_tokens: false }).ids;

// The Rust crate's TruncationStrategy::LongestFirst (tokenizers/src/utils/truncation.rs)
// on sequences without special tokens; `budget` = max_length - number of special tokens.
function longestFirst(n1, n2, budget) {
  if (n1 + n2 <= budget) return [n1, n2];
  let [short, long] = n1 > n2 ? [n2, n1] : [n1, n2];
  long = short > budget ? short : Math.max(short, budget - short);
  if (short + long > budget) {
    short = Math.floor(budget / 2);
    long = short + (budget % 2);
  }
  return n1 > n2 ? [long, short] : [short, long];
}
function truncated(tok, a, b, maxLength) {
  const ia = bare(tok, a);
  if (b === null) {
    const keep = ia.slice(0, maxLength - 2);
    return { ids: [CLS, ...keep, SEP], type_ids: new Array(keep.length + 2).fill(0) };
  }
  const ib = bare(tok, b);
  const [na, nb] = longestFirst(ia.length, ib.length, maxLength - 3);
  const ka = ia.slice(0, na);
  const kb = ib.slice(0, nb);
  return {
    ids: [CLS, ...ka, SEP, ...kb, SEP],
    type_ids: [...new Array(ka.length + 2).fill(0), ...new Array(kb.length + 1).fill(1)],
  };
}

const same = (x, y) => x.length === y.length && x.every((v, i) => v === y[i]);

const ref = await load(new Set(PATCHES));
const records = [];
// Every line alone.
corpus.forEach((text, i) => {
  const { ids } = encode(ref, text);
  records.push({ line: i + 1, ids });
});
// Pairs: every 5th line with the next non-empty one (transformers.js treats an
// empty text_pair as no pair at all, so empty seconds are left out).
for (let i = 0; i + 1 < corpus.length; i += 5) {
  let j = i + 1;
  while (j < corpus.length && corpus[j] === '') ++j;
  if (j >= corpus.length) break;
  const r = encode(ref, corpus[i], corpus[j]);
  // Cross-check the template the truncation path assembles by hand.
  const t = truncated(ref, corpus[i], corpus[j], 1 << 30);
  if (!same(r.ids, t.ids) || !same(r.type_ids, t.type_ids)) {
    throw new Error(`pair template mismatch at lines ${i + 1}/${j + 1}`);
  }
  records.push({ line: i + 1, pair_line: j + 1, ids: r.ids, type_ids: r.type_ids });
}
// Truncation, single and pair, with budgets from tiny to larger than the text.
const lengths = [2, 3, 4, 5, 7, 8, 16, 17, 32, 64, 128];
for (let i = 0; i < corpus.length; i += 7) {
  const maxLength = lengths[(i / 7) % lengths.length];
  const single = truncated(ref, corpus[i], null, maxLength);
  records.push({ line: i + 1, max_length: maxLength, ids: single.ids, type_ids: single.type_ids });
  const j = (i * 13 + 5) % corpus.length;
  if (maxLength >= 3 && corpus[j] !== '') {
    const pair = truncated(ref, corpus[i], corpus[j], maxLength);
    records.push({ line: i + 1, pair_line: j + 1, max_length: maxLength, ids: pair.ids, type_ids: pair.type_ids });
  }
}
writeFileSync(join(here, 'reference.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');

// The tokenizer.json in this directory carries truncation/padding (256); like
// transformers (Python and JS) AutoTokenizer, a plain call applies neither.
const long = corpus.join(' ');
if (encode(ref, long).ids.length <= 256) throw new Error('expected an untruncated long encoding');

// Which lines unpatched transformers.js tokenizes differently, and why.
const plain = await load(new Set());
const without = {};
for (const p of PATCHES) without[p] = await load(new Set(PATCHES.filter((q) => q !== p)));
const divergences = [];
corpus.forEach((text, i) => {
  const want = records[i].ids;
  const js = encode(plain, text).ids;
  if (same(js, want)) return;
  const reasons = PATCHES.filter((p) => !same(encode(without[p], text).ids, want));
  divergences.push({ line: i + 1, patches: reasons, js_ids: js });
});
writeFileSync(join(here, 'js_divergences.jsonl'),
  divergences.map((r) => JSON.stringify(r)).join('\n') + (divergences.length ? '\n' : ''));

const counts = {};
for (const d of divergences) for (const p of d.patches) counts[p] = (counts[p] ?? 0) + 1;
console.log(`reference.jsonl: ${records.length} records (${corpus.length} lines)`);
console.log(`unpatched transformers.js differs on ${divergences.length} lines:`, counts);
