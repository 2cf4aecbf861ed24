// transformers.js' BertNormalizer patched to the Rust crate (see make_reference.mjs):
//   cjk_astral, per_char_lc, controls.

// The Rust crate's CJK ranges (normalizers/bert.rs), by code point: extension
// E from U+2B920, not U+2B820 as in Google's tokenization.py.
const isChineseChar = (cp) =>
  (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
  (cp >= 0x20000 && cp <= 0x2a6df) || (cp >= 0x2a700 && cp <= 0x2b73f) ||
  (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b920 && cp <= 0x2ceaf) ||
  (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);

export const BERT_PATCHES = ['cjk_astral', 'per_char_lc', 'controls'];

export function patchBertNormalizer(norm, patches) {
  if (norm?.config?.type !== 'BertNormalizer') throw new Error('expected a BertNormalizer');
  const cfg = norm.config;
  if (patches.has('cjk_astral')) {
    norm.tokenize_chinese_chars = (text) => {
      let out = '';
      for (const ch of text) out += isChineseChar(ch.codePointAt(0)) ? ` ${ch} ` : ch;
      return out;
    };
  }
  if (patches.has('controls')) {
    // The crate's is_other(): Cc, Cf, Co, Cs from tables older than Unicode
    // 9.0 (U+08E2 and later format characters are kept); unassigned code
    // points and noncharacters are kept (they end up inside an [UNK] word).
    const newFormat = new Set([0x08e2, 0x0890, 0x0891, 0x110cd, 0x13430, 0x13431, 0x13432, 0x13433,
      0x13434, 0x13435, 0x13436, 0x13437, 0x13438, 0x13439, 0x1343a, 0x1343b, 0x1343c, 0x1343d,
      0x1343e, 0x1343f]);
    norm.is_control = (ch) =>
      ch !== '\t' && ch !== '\n' && ch !== '\r' && /^[\p{Cc}\p{Cf}\p{Co}\p{Cs}]$/u.test(ch) &&
      !newFormat.has(ch.codePointAt(0));
  }
  if (patches.has('per_char_lc')) {
    // Same steps and order as BertNormalizer.normalize, lower-casing per code point.
    norm.normalize = (text) => {
      if (cfg.clean_text) text = norm.clean_text(text);
      if (cfg.handle_chinese_chars) text = norm.tokenize_chinese_chars(text);
      if (cfg.lowercase) {
        text = Array.from(text, (c) => c.toLowerCase()).join('');
        if (cfg.strip_accents !== false) text = norm.strip_accents(text);
      } else if (cfg.strip_accents) {
        text = norm.strip_accents(text);
      }
      return text;
    };
  }
}
