#include <vector>

#include "absl/strings/str_join.h"
#include "models/architecture.h"

namespace engine {

const std::vector<Architecture>& Architectures() {
  static const std::vector<Architecture> registry = {
      BertArchitecture(),  RobertaArchitecture(), DistilBertArchitecture(),
      MpnetArchitecture(), ElectraArchitecture(),
  };
  return registry;
}

const Architecture* FindArchitecture(const std::string& model_type) {
  for (const Architecture& architecture : Architectures()) {
    for (const std::string& type : architecture.model_types) {
      if (type == model_type) return &architecture;
    }
  }
  return nullptr;
}

std::string SupportedModelTypes() {
  std::vector<std::string> types;
  for (const Architecture& architecture : Architectures()) {
    types.insert(types.end(), architecture.model_types.begin(), architecture.model_types.end());
  }
  return absl::StrJoin(types, ", ");
}

}  // namespace engine
