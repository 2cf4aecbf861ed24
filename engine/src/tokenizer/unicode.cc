#include "unicode.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utf16.h>

namespace engine::tokenizer {
namespace {

const UNormalizer2* NfdInstance() {
  static const UNormalizer2* const nfd = [] {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* n = unorm2_getNFDInstance(&status);
    return U_SUCCESS(status) ? n : nullptr;
  }();
  return nfd;
}

}  // namespace

bool UnicodeDataAvailable() { return NfdInstance() != nullptr; }

bool IsBertControlCategory(char32_t cp) {
  switch (u_charType(static_cast<UChar32>(cp))) {
    case U_CONTROL_CHAR:
    case U_SURROGATE:
    case U_PRIVATE_USE_CHAR:
      return true;
    case U_FORMAT_CHAR: {
      UVersionInfo age;
      u_charAge(static_cast<UChar32>(cp), age);
      return age[0] < 9;  // assigned before Unicode 9.0
    }
    default:
      return false;
  }
}

bool IsWhitespace(char32_t cp) { return u_isUWhiteSpace(static_cast<UChar32>(cp)); }

bool IsWordChar(char32_t cp) {
  const auto u = static_cast<UChar32>(cp);
  return u_hasBinaryProperty(u, UCHAR_ALPHABETIC) ||
         (U_GET_GC_MASK(u) & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) != 0 ||
         u_hasBinaryProperty(u, UCHAR_JOIN_CONTROL);
}

bool IsPunctuation(char32_t cp) {
  const auto c = static_cast<UChar32>(cp);
  if (cp < 0x80) return u_isgraph(c) && !u_isalnum(c);
  return u_ispunct(c);
}

bool IsNonSpacingMark(char32_t cp) {
  return u_charType(static_cast<UChar32>(cp)) == U_NON_SPACING_MARK;
}

bool IsLetter(char32_t cp) { return (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_L_MASK) != 0; }

bool IsNumber(char32_t cp) { return (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_N_MASK) != 0; }

uint8_t CombiningClass(char32_t cp) { return u_getCombiningClass(static_cast<UChar32>(cp)); }

int ToLower(char32_t cp, char32_t out[2]) {
  // ICU's simple mapping equals the full one for every code point but U+0130,
  // whose full lower case is "i" + U+0307 (pinned by unicode_test).
  if (cp == 0x130) {
    out[0] = U'i';
    out[1] = 0x307;
    return 2;
  }
  out[0] = static_cast<char32_t>(u_tolower(static_cast<UChar32>(cp)));
  return 1;
}

int DecomposeNfd(char32_t cp, char32_t* out, int capacity) {
  const UNormalizer2* nfd = NfdInstance();
  UChar buffer[2 * kMaxDecomposition];
  UErrorCode status = U_ZERO_ERROR;
  const int32_t length = nfd == nullptr
                             ? -1
                             : unorm2_getDecomposition(nfd, static_cast<UChar32>(cp), buffer,
                                                       2 * kMaxDecomposition, &status);
  if (length < 0 || U_FAILURE(status)) {
    out[0] = cp;
    return 1;
  }
  int n = 0;
  for (int32_t i = 0; i < length && n < capacity;) {
    UChar32 c;
    U16_NEXT(buffer, i, length, c);
    out[n++] = static_cast<char32_t>(c);
  }
  return n;
}

}  // namespace engine::tokenizer
