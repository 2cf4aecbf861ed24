#include "fuzz_service.h"

#include <string>

#include "engine/tools/random_model.h"
#include "fuzz_util.h"

namespace fuzz {

const Service& GetService(const char* prefix) {
  static const Service* const service = [prefix] {
    auto* s = new Service;
    const std::string dir = ProcessTempDir(prefix) + "/model";
    engine::RandomModelSpec spec;
    spec.config.hidden_size = 32;
    spec.config.num_layers = 1;
    spec.config.num_heads = 4;
    spec.config.intermediate_size = 64;
    spec.config.max_position_embeddings = 64;
    spec.seed = 7;
    if (!engine::WriteRandomModel(dir, spec).ok()) Fail("cannot write the model");
    engine::EncoderOptions options;
    options.threads = 1;
    options.max_batch_tokens = 256;
    auto model = server::core::LoadModel(dir, options);
    if (!model.ok()) Fail(std::string(model.status().message()).c_str());
    s->model = *std::move(model);
    s->inputs =
        std::make_unique<server::core::InputTokenizer>(&s->model, server::core::RequestLimits{});
    return s;
  }();
  return *service;
}

}  // namespace fuzz
