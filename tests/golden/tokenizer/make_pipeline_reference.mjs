// Builds pipelines/<name>.jsonl: the ids and token type ids the C++ tokenizer
// must give for each tokenizer.json in ../shared/tokenizers (read in place,
// never copied into the repository), over corpus.jsonl, pairs and truncation,
// with transformers.js' tokenizer package (offline, local files only).
//
//   npm ci --ignore-scripts && node make_pipeline_reference.mjs [shared_dir]
//
// Where transformers.js differs from the Rust `tokenizers` crate (what models
// are served with), it is patched to the Rust behaviour; each patch names what
// it replaces:
//   charsmap    Precompiled applies the file's precompiled_charsmap (the
//               darts-clone trie and replacement pool, per grapheme cluster as
//               the Rust crate's normalizers/precompiled.rs) instead of NFKC
//               plus a few hand-picked replacements.
//   meta_split  Metaspace with split (the default) starts a new word at every
//               "▁"; transformers.js never splits.
//   ws_split    WhitespaceSplit splits on Unicode White_Space (Rust
//               char::is_whitespace), not JavaScript's \s (U+0085, U+180E, U+FEFF).
//   bl_space    ByteLevel's GPT-2 pattern with \s as Unicode White_Space
//               (Oniguruma's \s in the Rust crate), not JavaScript's \s.
//   roberta_types  RobertaProcessing gives every token type 0, the second
//               text's too (transformers.js gives it 1).
//   cjk_astral, per_char_lc, controls: BertNormalizer, as in make_reference.mjs.
// bert-base-uncased is make_reference.mjs' (reference.jsonl).
// Lines where unpatched transformers.js gives other ids are listed with the
// patches responsible in pipelines/<name>.js_divergences.jsonl.
//
// Truncation: the Rust crate's LongestFirst on the texts without special
// tokens (budget = max_length - the post-processor's special tokens), then the
// post-processor, as the C++ tokenizer does.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '@huggingface/tokenizers';
import { BERT_PATCHES, patchBertNormalizer } from './bert_patches.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const shared = process.argv[2] ?? join(here, '../../../../shared/tokenizers');
const NAMES = [
  'BAAI--bge-m3',
  'sentence-transformers--paraphrase-multilingual-mpnet-base-v2',
  'sentence-transformers--all-mpnet-base-v2',
  'FacebookAI--roberta-base',
];
const PATCHES = ['charsmap', 'meta_split', 'ws_split', 'bl_space', 'roberta_types',
                 ...BERT_PATCHES];

const corpus = readFileSync(join(here, 'corpus.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.length > 0)
  .map((l) => JSON.parse(l));

// spm_precompiled: [u32 trie bytes][trie: u32 units][NUL-terminated replacements].
function precompiled(base64) {
  const blob = Buffer.from(base64, 'base64');
  const trieBytes = blob.readUInt32LE(0);
  const trie = new Uint32Array(trieBytes / 4);
  for (let i = 0; i < trie.length; ++i) trie[i] = blob.readUInt32LE(4 + 4 * i);
  const pool = blob.subarray(4 + trieBytes);
  const offset = (u) => (u >>> 10) * ((u & 0x200) !== 0 ? 256 : 1);
  const label = (u) => (u & 0x800000ff) >>> 0;
  const hasLeaf = (u) => ((u >>> 8) & 1) === 1;
  // The replacement of the shortest key that prefixes `bytes`, or null.
  const transform = (bytes) => {
    let node = offset(trie[0]);
    for (const c of bytes) {
      if (c === 0) return null;
      node ^= c;
      const unit = trie[node];
      if (unit === undefined || label(unit) !== c) return null;
      node ^= offset(unit);
      if (hasLeaf(unit)) {
        const v = trie[node] & 0x7fffffff;
        let e = v;
        while (e < pool.length && pool[e] !== 0) ++e;
        return pool.subarray(v, e).toString('utf8');
      }
    }
    return null;
  };
  const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
  return (text) => {
    let out = '';
    for (const { segment } of graphemes.segment(text)) {
      const bytes = Buffer.from(segment, 'utf8');
      if (bytes.length < 6) {
        const r = transform(bytes);
        if (r !== null) {
          out += r;
          continue;
        }
      }
      for (const ch of segment) out += transform(Buffer.from(ch, 'utf8')) ?? ch;
    }
    return out;
  };
}

// Applies `fn` to every part of a (possibly Sequence) normalizer / pre-tokenizer.
function walk(part, fn) {
  if (!part) return;
  fn(part);
  for (const p of part.normalizers ?? []) walk(p, fn);
  for (const p of part.tokenizers ?? []) walk(p, fn);
}

function load(name, patches) {
  const json = JSON.parse(readFileSync(join(shared, name, 'tokenizer.json'), 'utf8'));
  let config = {};
  try {
    config = JSON.parse(readFileSync(join(shared, name, 'tokenizer_config.json'), 'utf8'));
  } catch {}
  const tok = new Tokenizer(json, config);
  const cfgOf = (type, node) => {
    const found = [];
    const visit = (c) => {
      if (!c) return;
      if (c.type === type) found.push(c);
      for (const x of c.normalizers ?? []) visit(x);
      for (const x of c.pretokenizers ?? []) visit(x);
    };
    visit(node);
    return found;
  };
  if (patches.has('roberta_types') && json.post_processor?.type === 'RobertaProcessing') {
    const original = tok.post_processor;
    tok.post_processor = (a, b, add) => {
      const r = original(a, b, add);
      if (r.token_type_ids) r.token_type_ids = r.token_type_ids.map(() => 0);
      return r;
    };
  }
  walk(tok.normalizer, (n) => {
    if (n.constructor.name.startsWith('BertNormalizer')) patchBertNormalizer(n, patches);
    if (patches.has('charsmap') && n.constructor.name.startsWith('Precompiled')) {
      const apply = precompiled(n.charsmap);
      n.normalize = apply;
    }
  });
  const metaConfigs = cfgOf('Metaspace', json.pre_tokenizer);
  walk(tok.pre_tokenizer, (p) => {
    if (patches.has('meta_split') && p.constructor.name.startsWith('Metaspace')) {
      const cfg = metaConfigs.shift();
      const split = cfg?.split ?? true;
      const original = p.pre_tokenize_text.bind(p);
      p.pre_tokenize_text = (text, options) => {
        const words = original(text, options);
        if (!split) return words;
        const out = [];
        for (const w of words) {
          let start = 0;
          const chars = Array.from(w);
          let cur = '';
          chars.forEach((c, i) => {
            if (c === p.replacement && i > start) {
              out.push(cur);
              cur = '';
            }
            cur += c;
          });
          if (cur.length > 0) out.push(cur);
        }
        return out;
      };
    }
    if (patches.has('bl_space') && p.constructor.name.startsWith('ByteLevel')) {
      p.pattern = new RegExp(
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\p{White_Space}\\p{L}\\p{N}]+" +
          '|\\p{White_Space}+(?!\\P{White_Space})|\\p{White_Space}+', 'gu');
    }
    if (patches.has('ws_split') && p.constructor.name.startsWith('WhitespaceSplit')) {
      p.pre_tokenize_text = (text) => text.split(/\p{White_Space}+/u).filter((w) => w.length > 0);
    }
  });
  return tok;
}

const idsOf = (tok, tokens) =>
  tokens.map((t) => tok.added_tokens_map.get(t)?.id ?? tok.model.tokens_to_ids.get(t) ?? tok.model.unk_token_id);

function encode(tok, a, b = null) {
  const r = tok.encode(a, { text_pair: b, return_token_type_ids: true });
  return { ids: r.ids, type_ids: r.token_type_ids ?? new Array(r.ids.length).fill(0) };
}

// The Rust crate's TruncationStrategy::LongestFirst (tokenizers/src/utils/truncation.rs).
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

function specials(tok, pair) {
  return tok.post_processor([], pair ? [] : null, true).tokens.length;
}

// direction 'left' keeps each text's last tokens (Encoding::truncate with
// TruncationDirection::Left), 'right' its first.
function truncated(tok, a, b, maxLength, direction = 'right') {
  const ta = tok.encode_text(a);
  const tb = b === null ? null : tok.encode_text(b);
  const budget = maxLength - specials(tok, b !== null);
  let [na, nb] = [Math.min(ta.length, budget), 0];
  if (tb !== null) [na, nb] = longestFirst(ta.length, tb.length, budget);
  const keep = (t, n) => (direction === 'left' ? t.slice(t.length - n) : t.slice(0, n));
  const r = tok.post_processor(keep(ta, na), tb === null ? null : keep(tb, nb), true);
  return { ids: idsOf(tok, r.tokens), type_ids: r.token_type_ids ?? new Array(r.tokens.length).fill(0) };
}

const same = (x, y) => x.length === y.length && x.every((v, i) => v === y[i]);

mkdirSync(join(here, 'pipelines'), { recursive: true });
for (const name of NAMES) {
  const ref = load(name, new Set(PATCHES));
  const records = [];
  corpus.forEach((text, i) => {
    records.push({ line: i + 1, ...encode(ref, text) });
  });
  // Pairs: every 5th line with the next non-empty one.
  for (let i = 0; i + 1 < corpus.length; i += 5) {
    let j = i + 1;
    while (j < corpus.length && corpus[j] === '') ++j;
    if (j >= corpus.length || corpus[i] === '') continue;
    const r = encode(ref, corpus[i], corpus[j]);
    const t = truncated(ref, corpus[i], corpus[j], 1 << 30);
    if (!same(r.ids, t.ids) || !same(r.type_ids, t.type_ids)) {
      throw new Error(`${name}: pair template mismatch at lines ${i + 1}/${j + 1}`);
    }
    records.push({ line: i + 1, pair_line: j + 1, ...r });
  }
  const lengths = [4, 5, 7, 8, 16, 17, 32, 64, 128];
  for (let i = 0; i < corpus.length; i += 7) {
    const maxLength = lengths[(i / 7) % lengths.length];
    records.push({ line: i + 1, max_length: maxLength, ...truncated(ref, corpus[i], null, maxLength) });
    const j = (i * 13 + 5) % corpus.length;
    if (corpus[j] !== '' && corpus[i] !== '') {
      records.push({ line: i + 1, pair_line: j + 1, max_length: maxLength,
                     ...truncated(ref, corpus[i], corpus[j], maxLength) });
    }
  }
  // Left truncation (TEI's truncation_direction "Left"): other lines, the same lengths.
  for (let i = 3; i < corpus.length; i += 7) {
    const maxLength = lengths[((i - 3) / 7) % lengths.length];
    records.push({ line: i + 1, max_length: maxLength, direction: 'left',
                   ...truncated(ref, corpus[i], null, maxLength, 'left') });
    const j = (i * 11 + 2) % corpus.length;
    if (corpus[j] !== '' && corpus[i] !== '') {
      records.push({ line: i + 1, pair_line: j + 1, max_length: maxLength, direction: 'left',
                     ...truncated(ref, corpus[i], corpus[j], maxLength, 'left') });
    }
  }
  // Decoding the single texts' ids, special tokens skipped.
  corpus.forEach((text, i) => {
    if (i % 3 !== 0 || records[i].ids.length === 0) return;
    records[i].decoded = ref.decode(records[i].ids, { skip_special_tokens: true,
                                                      clean_up_tokenization_spaces: false });
  });
  // All-zero token types are left out (the test reads a missing list as zeros).
  for (const r of records) if (r.type_ids.every((t) => t === 0)) delete r.type_ids;
  writeFileSync(join(here, 'pipelines', `${name}.jsonl`),
    records.map((r) => JSON.stringify(r)).join('\n') + '\n');

  const plain = load(name, new Set());
  const without = {};
  for (const p of PATCHES) without[p] = load(name, new Set(PATCHES.filter((q) => q !== p)));
  const divergences = [];
  corpus.forEach((text, i) => {
    const want = records[i].ids;  // lines 1..n are the single texts, in order
    const js = encode(plain, text).ids;
    if (same(js, want)) return;
    const reasons = PATCHES.filter((p) => !same(encode(without[p], text).ids, want));
    divergences.push({ line: i + 1, patches: reasons, js_ids: js });
  });
  // Pairs: ids and token types.
  for (const r of records) {
    if (!r.pair_line || r.max_length) continue;
    const [a, b] = [corpus[r.line - 1], corpus[r.pair_line - 1]];
    const js = encode(plain, a, b);
    const want = r.type_ids ?? new Array(r.ids.length).fill(0);
    if (same(js.ids, r.ids) && same(js.type_ids, want)) continue;
    const reasons = PATCHES.filter((p) => {
      const x = encode(without[p], a, b);
      return !same(x.ids, r.ids) || !same(x.type_ids, want);
    });
    divergences.push({ line: r.line, pair_line: r.pair_line, patches: reasons, js_ids: js.ids,
                       js_type_ids: js.type_ids });
  }
  writeFileSync(join(here, 'pipelines', `${name}.js_divergences.jsonl`),
    divergences.map((r) => JSON.stringify(r)).join('\n') + (divergences.length ? '\n' : ''));
  const counts = {};
  for (const d of divergences) for (const p of d.patches) counts[p] = (counts[p] ?? 0) + 1;
  console.log(`${name}: ${records.length} records; unpatched differs on ${divergences.length} lines`, counts);
}
