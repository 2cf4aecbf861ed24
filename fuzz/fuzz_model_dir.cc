// The whole model-directory loader, engine::Encoder::Load, on a directory
// made from the input. Framing (see fuzz/README.md):
//
//   bytes 0..3   N, little-endian uint32: the length of config.json
//   next N bytes config.json (all the rest if fewer remain)
//   the rest     model.safetensors
//
// Both files are written to a directory of this process's own and loaded
// with a small max_batch_tokens. Any Status is fine; crashes, leaks, UB and
// huge allocations are findings. A model that loads also runs one short
// sequence through Encode and Pool, as the server's warm-up does.
//
// No size caps: the loader must refuse a config that claims more than the
// file holds without allocating it (the fuzzer found two such allocations in
// the weight loader, now checked first; tests/engine/loader_test.cc).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config.h"
#include "engine/encoder.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t config_size = 0;
  for (int i = 3; i >= 0; --i) config_size = (config_size << 8) | data[i];
  const std::string_view rest(reinterpret_cast<const char*>(data) + 4, size - 4);
  const std::string_view config = rest.substr(0, config_size);
  const std::string_view weights = rest.substr(config.size());

  const std::string& dir = fuzz::ProcessTempDir("fuzz_model_dir");
  fuzz::WriteFileOrDie(dir + "/config.json", config);
  fuzz::WriteFileOrDie(dir + "/model.safetensors", weights);

  engine::EncoderOptions options;
  options.threads = 1;
  options.max_batch_tokens = 32;
  auto encoder = engine::Encoder::Load(dir, options);
  if (!encoder.ok()) return 0;

  const engine::ModelConfig& c = (*encoder)->config();
  const std::vector<int32_t> ids = {0, c.vocab_size - 1};
  const size_t length = c.max_position_embeddings >= 2 ? 2 : 1;
  const engine::Sequence sequence{absl::MakeConstSpan(ids.data(), length), {}};
  fuzz::Check((*encoder)->Validate(sequence).ok(), "a valid sequence validates");
  engine::EncodeResult result;
  fuzz::Check((*encoder)->Encode({&sequence, 1}, &result).ok(), "a valid sequence encodes");
  fuzz::Check(result.num_sequences() == 1 && result.num_tokens(0) == static_cast<int>(length),
              "one result row per token");
  std::vector<float> pooled(static_cast<size_t>(c.hidden_size));
  for (engine::Pooling pooling : {engine::Pooling::kCls, engine::Pooling::kMean}) {
    fuzz::Check((*encoder)->Pool(result, 0, pooling, /*normalize=*/true, pooled.data()).ok(),
                "pooling a result");
  }
  return 0;
}
