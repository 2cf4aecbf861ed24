// The named prompts of a sentence-transformers model (query: / passage: ...).
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace server {

// Prompt name -> the text put before an input ("query" -> "query: ").
using Prompts = std::map<std::string, std::string>;

// Reads "prompts" from `model_dir`/config_sentence_transformers.json, as
// text-embeddings-inference does for its prompt_name; none without the file
// or the key. A "prompts" that is not an object of strings is an error
// naming the file.
absl::StatusOr<Prompts> ReadPrompts(const std::string& model_dir);

}  // namespace server
