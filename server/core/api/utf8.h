#pragma once

#include <cstddef>
#include <string_view>

namespace server::core {

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code
// points past U+10FFFF). On false, `*error_offset` is the first bad byte.
bool IsValidUtf8(std::string_view text, size_t* error_offset);

}  // namespace server::core
