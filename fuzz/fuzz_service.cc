#include "fuzz_service.h"

#include <string>

#include "engine/tools/random_model.h"
#include "fuzz_util.h"

namespace fuzz {

const Service& GetService(const char* prefix) {
  static const Service* const service = [prefix] {
    auto* s = new Service;
    const std::string dir = ProcessTempDir(prefix) + "/model";
    engine::RandomModelSpec spec = engine::TinyModelSpec();
    spec.config.num_layers = 1;  // the fuzzers test the service around it: one layer is faster
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
