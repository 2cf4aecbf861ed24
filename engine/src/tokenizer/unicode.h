// Character properties the tokenizer parts need, all answered by ICU (Debian's
// ICU 72, Unicode 15.0): no hand-made tables.
#pragma once

#include <cstdint>

namespace engine::tokenizer {

// What the Rust crate's BertNormalizer drops as a control: Cc, Cf, Cs or Co
// (its `unicode_categories` tables, which predate Unicode 9.0: a format
// character assigned later, such as U+08E2, is kept). Unassigned code points
// and noncharacters (Cn) are kept too, to become part of a word ([UNK]), as
// the crate itself does (tests/golden/tokenizer/rust).
bool IsBertControlCategory(char32_t cp);

// The White_Space property (Rust char::is_whitespace).
bool IsWhitespace(char32_t cp);

// A regex \w character as UTS #18 defines it and both engines the crate uses
// (Rust's regex, Oniguruma) match it: Alphabetic, marks, decimal digits,
// connector punctuation and the joiners U+200C/U+200D.
bool IsWordChar(char32_t cp);

// BERT's punctuation: any ASCII graphic that is not a letter or digit
// (33-47, 58-64, 91-96, 123-126) or a Unicode P* character.
bool IsPunctuation(char32_t cp);

// The Rust crate's "Chinese character" ranges (CJK Unified Ideographs and
// extensions A-F, compatibility ideographs). They differ from Google's
// tokenization.py in one place, kept for identical ids: extension E starts at
// U+2B920 there, not U+2B820, so U+2B820..U+2B91F stay inside words.
inline bool IsChineseChar(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool IsNonSpacingMark(char32_t cp);  // general category Mn
bool IsLetter(char32_t cp);          // general category L* (regex \p{L})
bool IsNumber(char32_t cp);          // general category N* (regex \p{N})
uint8_t CombiningClass(char32_t cp);

// Full lower-case mapping of one code point without context (Rust's
// char::to_lowercase): 1 or 2 code points written to out[0..].
int ToLower(char32_t cp, char32_t out[2]);

// Full canonical decomposition (NFD) of one code point, canonically ordered.
// Writes up to `capacity` code points; returns how many (1 if none applies).
int DecomposeNfd(char32_t cp, char32_t* out, int capacity);

// False if ICU could not load its normalization data.
bool UnicodeDataAvailable();

// The longest DecomposeNfd result in Unicode is 4 code points; room to spare.
inline constexpr int kMaxDecomposition = 8;

}  // namespace engine::tokenizer
