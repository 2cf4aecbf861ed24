#include "server/core/requests/token_layout.h"

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace server::core {

absl::StatusOr<Specials> SpecialsOf(const engine::Tokenizer& tokenizer) {
  constexpr std::string_view kProbe = "a";
  absl::StatusOr<engine::Encoding> with =
      tokenizer.Encode(kProbe, 0, engine::TruncationSide::kRight,
                       /*add_special_tokens=*/true);
  if (!with.ok()) return with.status();
  absl::StatusOr<engine::Encoding> bare =
      tokenizer.Encode(kProbe, 0, engine::TruncationSide::kRight,
                       /*add_special_tokens=*/false);
  if (!bare.ok()) return bare.status();
  const std::vector<int32_t>& all = with->ids;
  const std::vector<int32_t>& body = bare->ids;
  if (all.size() >= body.size()) {
    for (size_t lead = 0; lead + body.size() <= all.size(); ++lead) {
      if (std::equal(body.begin(), body.end(), all.begin() + static_cast<std::ptrdiff_t>(lead))) {
        Specials specials;
        specials.before.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(lead));
        specials.after.assign(all.begin() + static_cast<std::ptrdiff_t>(lead + body.size()),
                              all.end());
        return specials;
      }
    }
  }
  return absl::InternalError(
      "the tokenizer's special tokens for one text could not be told apart from its tokens");
}

absl::StatusOr<PairLayout> PairLayoutOf(const engine::Tokenizer& tokenizer) {
  const auto bare = [&](std::string_view text) {
    return tokenizer.Encode(text, 0, engine::TruncationSide::kRight, false);
  };
  absl::StatusOr<engine::Encoding> a = bare("a");
  absl::StatusOr<engine::Encoding> b = bare("b");
  absl::StatusOr<engine::Encoding> pair =
      tokenizer.EncodePair("a", "b", 0, engine::TruncationSide::kRight, true);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  if (!pair.ok()) return pair.status();
  const std::vector<int32_t>& all = pair->ids;
  std::vector<int32_t> types = pair->token_type_ids;
  types.resize(all.size(), 0);
  const auto at = [&](size_t from, const std::vector<int32_t>& body) -> size_t {
    for (size_t p = from; p + body.size() <= all.size(); ++p) {
      if (std::equal(body.begin(), body.end(), all.begin() + static_cast<std::ptrdiff_t>(p))) {
        return p;
      }
    }
    return all.size() + 1;
  };
  const size_t first = at(0, a->ids);
  const size_t second = first > all.size() ? first : at(first + a->ids.size(), b->ids);
  if (a->ids.empty() || b->ids.empty() || second > all.size()) {
    return absl::InternalError(
        "the tokenizer's special tokens for a pair could not be told apart from its tokens");
  }
  const auto slice = [](const std::vector<int32_t>& v, size_t from, size_t to) {
    return std::vector<int32_t>(v.begin() + static_cast<std::ptrdiff_t>(from),
                                v.begin() + static_cast<std::ptrdiff_t>(to));
  };
  PairLayout layout;
  const size_t first_end = first + a->ids.size();
  const size_t second_end = second + b->ids.size();
  layout.before = slice(all, 0, first);
  layout.middle = slice(all, first_end, second);
  layout.after = slice(all, second_end, all.size());
  layout.before_types = slice(types, 0, first);
  layout.middle_types = slice(types, first_end, second);
  layout.after_types = slice(types, second_end, all.size());
  layout.first_type = types[first];
  layout.second_type = types[second];
  return layout;
}

}  // namespace server::core
