// Builds rust/<name>.jsonl: what Hugging Face's Rust `tokenizers` crate
// itself gives (the npm package `tokenizers`, the crate's own Node binding
// with its prebuilt native library: the code TEI, sentence-transformers and
// every *TokenizerFast run), for bert-base-uncased (the copy in this
// directory) and each tokenizer.json in ../shared/tokenizers (read in place):
// ids, token type ids (left out when all 0) and byte offsets into the text
// (the crate reports them in characters; converted here), over every corpus
// line, pairs, and truncation on the right and on the left (the crate's own
// longest_first truncation through setTruncation), and for every third line
// and every truncated single text the crate's decode of its ids (special
// tokens skipped). Records with "add_special_tokens": false are encodings
// without the post-processor's tokens (encode(..., add_special_tokens=False),
// as the Qwen3-Reranker model card tokenizes its prompt's prefix and suffix):
// every prompt line (the last lines of the corpus, from the reranker's
// prefix on), every eighth other line, some pairs, and the prompt lines
// truncated; they carry the decode both skipping the special tokens and
// keeping them ("decoded_special").
//
// Unlike make_reference.mjs / make_pipeline_reference.mjs nothing is patched
// or re-implemented here: this is the reference the others approximate.
//
//   npm ci --ignore-scripts && node make_rust_reference.mjs [shared_dir]
import { readFileSync, writeFileSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');

const here = dirname(fileURLToPath(import.meta.url));
const shared = process.argv[2] ?? join(here, '../../../../shared/tokenizers');
const FILES = {
  'bert-base-uncased': join(here, 'bert-base-uncased/tokenizer.json'),
  'BAAI--bge-m3': join(shared, 'BAAI--bge-m3/tokenizer.json'),
  'sentence-transformers--paraphrase-multilingual-mpnet-base-v2':
    join(shared, 'sentence-transformers--paraphrase-multilingual-mpnet-base-v2/tokenizer.json'),
  'sentence-transformers--all-mpnet-base-v2':
    join(shared, 'sentence-transformers--all-mpnet-base-v2/tokenizer.json'),
  'FacebookAI--roberta-base': join(shared, 'FacebookAI--roberta-base/tokenizer.json'),
  'Qwen--Qwen3-Embedding-0.6B': join(shared, 'Qwen--Qwen3-Embedding-0.6B/tokenizer.json'),
  'answerdotai--ModernBERT-base': join(shared, 'answerdotai--ModernBERT-base/tokenizer.json'),
  // Gemma Terms of Use: read in place, never copied here (the ids made from it may be).
  'google--embeddinggemma-300m': join(shared, 'google--embeddinggemma-300m/tokenizer.json'),
};

// parts/<name>.json: a pipeline of parts no shared tokenizer uses, as an RFC 7386
// merge patch over one of the tokenizers above (the C++ test applies the same
// patch with nlohmann::json::merge_patch).
function mergePatch(target, patch) {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}
const partsDir = join(here, 'parts');
const scratch = mkdtempSync(join(tmpdir(), 'tokenizer-parts-'));
const PARTS = new Set();
for (const entry of readdirSync(partsDir).filter((f) => f.endsWith('.json')).sort()) {
  const name = `parts--${entry.replace(/\.json$/, '')}`;
  const spec = JSON.parse(readFileSync(join(partsDir, entry), 'utf8'));
  const base = JSON.parse(readFileSync(FILES[spec.base], 'utf8'));
  const file = join(scratch, `${name}.json`);
  writeFileSync(file, JSON.stringify(mergePatch(base, spec.patch)));
  FILES[name] = file;
  PARTS.add(name);
}

const corpus = readFileSync(join(here, 'corpus.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.length > 0)
  .map((l) => JSON.parse(l));
// make_corpus.mjs appends the models' prompts last, the Qwen3-Reranker prefix first.
const firstPrompt = corpus.findIndex((t) => t.startsWith('<|im_start|>system\nJudge whether'));
if (firstPrompt < 2000) throw new Error('corpus.jsonl: the prompt lines are missing');

// UTF-8 byte offset of each character boundary of `text` (characters are
// Unicode scalar values, as the crate counts them).
function byteBoundaries(text) {
  const bounds = [0];
  let bytes = 0;
  for (const ch of text) {
    bytes += Buffer.byteLength(ch, 'utf8');
    bounds.push(bytes);
  }
  return bounds;
}

async function record(tok, a, b, extra) {
  const addSpecialTokens = extra.add_special_tokens ?? true;
  const e = await tok.encode(a, b, { addSpecialTokens });
  const ids = e.getIds();
  const types = e.getTypeIds();
  const seqs = e.getSequenceIds();
  const bounds = [byteBoundaries(a), b === null ? null : byteBoundaries(b)];
  const offsets = e.getOffsets().map(([begin, end], i) => {
    const seq = seqs[i];
    if (seq === null || seq === undefined) return [begin, end];  // special tokens: (0, 0)
    return [bounds[seq][begin], bounds[seq][end]];
  });
  const r = { ...extra, ids, offsets };
  if (types.some((t) => t !== 0)) r.type_ids = types;
  return r;
}

mkdirSync(join(here, 'rust'), { recursive: true });
const lengths = [4, 5, 7, 8, 16, 17, 32, 64, 128];
for (const [name, file] of Object.entries(FILES)) {
  const tok = Tokenizer.fromFile(file);
  // Only the calls below truncate; padding never.
  tok.disableTruncation();
  tok.disablePadding();
  const records = [];
  for (let i = 0; i < corpus.length; ++i) {
    const r = await record(tok, corpus[i], null, { line: i + 1 });
    if (i % 3 === 0 && r.ids.length > 0) r.decoded = await tok.decode(r.ids, true);
    records.push(r);
  }
  // The part pipelines: every line, fewer pairs and truncations (smaller files).
  const step = PARTS.has(name) ? 3 : 1;
  for (let i = 0; i + 1 < corpus.length; i += 5 * step) {
    let j = i + 1;
    while (j < corpus.length && corpus[j] === '') ++j;
    if (j >= corpus.length || corpus[i] === '') continue;
    records.push(await record(tok, corpus[i], corpus[j], { line: i + 1, pair_line: j + 1 }));
  }
  let skipped = 0;
  for (const direction of ['right', 'left']) {
    for (let i = direction === 'right' ? 0 : 3; i < corpus.length; i += 7 * step) {
      const maxLength = lengths[Math.floor(i / 7) % lengths.length];
      const j = (i * 13 + 5) % corpus.length;
      tok.setTruncation(maxLength, { strategy: 'LongestFirst', direction });
      const extra = { line: i + 1, max_length: maxLength, ...(direction === 'left' ? { direction } : {}) };
      const r = await record(tok, corpus[i], null, extra);
      // A cut may split a character's bytes (byte-level and byte-fallback pieces).
      if (r.ids.length > 0) r.decoded = await tok.decode(r.ids, true);
      records.push(r);
      if (corpus[j] !== '' && corpus[i] !== '') {
        try {
          records.push(await record(tok, corpus[i], corpus[j], { ...extra, pair_line: j + 1 }));
        } catch (err) {
          ++skipped;  // max_length below the pair's special tokens: the crate refuses
        }
      }
      tok.disableTruncation();
    }
  }
  // Without the post-processor's special tokens.
  const plain = { add_special_tokens: false };
  for (let i = 0; i < corpus.length; ++i) {
    if (corpus[i] === '' || (i < firstPrompt && i % 8 !== 1)) continue;
    const r = await record(tok, corpus[i], null, { line: i + 1, ...plain });
    r.decoded = await tok.decode(r.ids, true);
    r.decoded_special = await tok.decode(r.ids, false);
    records.push(r);
  }
  for (let i = 1; i + 1 < corpus.length; i += 40 * step) {
    if (corpus[i] === '' || corpus[i + 1] === '') continue;
    records.push(await record(tok, corpus[i], corpus[i + 1], { line: i + 1, pair_line: i + 2, ...plain }));
  }
  for (let i = firstPrompt; i < corpus.length; ++i) {
    const maxLength = lengths[i % lengths.length];
    const direction = i % 2 === 0 ? 'right' : 'left';
    tok.setTruncation(maxLength, { strategy: 'LongestFirst', direction });
    const extra = { line: i + 1, max_length: maxLength, ...(direction === 'left' ? { direction } : {}), ...plain };
    const r = await record(tok, corpus[i], null, extra);
    r.decoded = await tok.decode(r.ids, true);
    r.decoded_special = await tok.decode(r.ids, false);
    records.push(r);
    tok.disableTruncation();
  }
  writeFileSync(join(here, 'rust', `${name}.jsonl`), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  console.log(`${name}: ${records.length} records (${skipped} pairs the crate refuses to truncate)`);
}
