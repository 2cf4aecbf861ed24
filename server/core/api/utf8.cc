#include "server/core/api/utf8.h"

#include "engine/tokenizer.h"

namespace server::core {

bool IsValidUtf8(std::string_view text, size_t* error_offset) {
  const size_t bad = engine::FindInvalidUtf8(text);
  if (bad == std::string_view::npos) return true;
  *error_offset = bad;
  return false;
}

}  // namespace server::core
