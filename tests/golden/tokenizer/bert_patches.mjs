// transformers.js' BertNormalizer patched to the Rust crate (see make_reference.mjs):
//   cjk_astral, per_char_lc, drop_cn.

// BERT's CJK ranges (Google's tokenization.py), by code point.
const isChineseChar = (cp) =>
  (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
  (cp >= 0x20000 && cp <= 0x2a6df) || (cp >= 0x2a700 && cp <= 0x2b73f) ||
  (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b820 && cp <= 0x2ceaf) ||
  (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);

export const BERT_PATCHES = ['cjk_astral', 'per_char_lc', 'drop_cn'];

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
  if (patches.has('drop_cn')) {
    norm.is_control = (ch) =>
      ch !== '\t' && ch !== '\n' && ch !== '\r' && /^[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}]$/u.test(ch);
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
