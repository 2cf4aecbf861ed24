// The name a model is served under: in GetModelInfo, HTTP /info's model_id,
// /v1/models and OpenAI's "model", and the model label of encoder_model_info.
#pragma once

#include <string>

namespace server::core {

// The name when --served-model-name does not give one: the Hugging Face
// repo id when the path shows it (a hub cache snapshot
// ".../models--BAAI--bge-m3/snapshots/COMMIT" or the cache folder
// ".../models--BAAI--bge-m3" itself: "BAAI/bge-m3"), else the directory's
// last component. Read from the path as given, not from where its symlinks
// lead; a relative path is first taken from `working_dir` ("." serves under
// the working directory's name).
std::string DefaultModelName(const std::string& model_path, const std::string& working_dir);

}  // namespace server::core
