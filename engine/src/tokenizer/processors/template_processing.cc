#include "processors/template_processing.h"

#include <algorithm>

#include "unicode.h"
#include "utf8.h"

namespace engine::tokenizer {

int Template::NumSpecialTokens() const {
  int n = 0;
  for (const TemplatePiece& p : pieces) {
    if (p.sequence < 0) n += static_cast<int>(p.ids.size());
  }
  return n;
}

void TrimOffsets(const OffsetTrimming& trim, std::string_view token, bool first, int32_t* begin,
                 int32_t* end) {
  if (!trim.enabled) return;
  // Characters of the token: "Ġ" (U+0120, the byte-level space) or whitespace.
  const auto space = [](char32_t c) { return c == 0x120 || IsWhitespace(c); };
  int leading = 0;
  int trailing = 0;  // the current run of spaces, reset by any other character
  bool in_lead = true;
  for (size_t i = 0; i < token.size();) {
    char32_t cp = 0;
    int n = DecodeUtf8(token, i, &cp);
    if (n == 0) n = 1;
    i += n;
    if (space(cp)) {
      ++trailing;
      if (in_lead) ++leading;
    } else {
      trailing = 0;
      in_lead = false;
    }
  }
  if (leading > 0) {
    if ((first || *begin == 0) && trim.add_prefix_space && leading == 1) leading = 0;
    *begin = std::min(*begin + leading, *end);
  }
  if (trailing > 0 && *end >= trailing) *end = std::max(*end - trailing, *begin);
}

Template BertTemplate(int32_t cls_id, int32_t sep_id, bool pair) {
  Template t;
  t.pieces.push_back({-1, 0, {cls_id}});
  t.pieces.push_back({0, 0, {}});
  t.pieces.push_back({-1, 0, {sep_id}});
  if (pair) {
    t.pieces.push_back({1, 1, {}});
    t.pieces.push_back({-1, 1, {sep_id}});
  }
  return t;
}

Template RobertaTemplate(int32_t cls_id, int32_t sep_id, bool pair) {
  Template t;
  t.pieces.push_back({-1, 0, {cls_id}});
  t.pieces.push_back({0, 0, {}});
  t.pieces.push_back({-1, 0, {sep_id}});
  if (pair) {
    t.pieces.push_back({-1, 0, {sep_id}});
    t.pieces.push_back({1, 0, {}});
    t.pieces.push_back({-1, 0, {sep_id}});
  }
  return t;
}

}  // namespace engine::tokenizer
