#include "client/unary_call.h"

namespace client {

std::optional<std::vector<encoder::v1::Input>> CollectCommandInputs(const InputOptions& options,
                                                                    const char* usage,
                                                                    std::ostream& err) {
  absl::StatusOr<std::vector<encoder::v1::Input>> inputs = CollectInputs(options);
  if (!inputs.ok()) {
    err << "encoder-client: " << inputs.status().message() << "\n";
    return std::nullopt;
  }
  if (inputs->empty()) {
    err << "encoder-client: " << usage << "\n";
    return std::nullopt;
  }
  return *std::move(inputs);
}

}  // namespace client
