// The canned answer of every candidate server: 384 floats as JSON (4 KB), the
// size of a MiniLM embedding response (the body read is discarded).
#pragma once

#include <string>

inline std::string CannedAnswer() {
  std::string body = "[[";
  for (int i = 0; i < 384; ++i) {
    if (i > 0) body += ",";
    body += "-0.0123456";
  }
  return body + "]]";
}
