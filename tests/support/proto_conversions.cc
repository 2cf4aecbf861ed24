#include "support/proto_conversions.h"

#include <map>

namespace testing_support {

server::core::Input ToCoreInput(const encoder::v1::Input& input) {
  server::core::Input core;
  switch (input.kind_case()) {
    case encoder::v1::Input::kText:
      core.kind = server::core::Input::Kind::kText;
      core.text = input.text();
      break;
    case encoder::v1::Input::kTextPair:
      core.kind = server::core::Input::Kind::kTextPair;
      core.text = input.text_pair().text();
      core.text_pair = input.text_pair().text_pair();
      break;
    case encoder::v1::Input::kTokenIds:
      core.kind = server::core::Input::Kind::kTokenIds;
      core.ids.assign(input.token_ids().ids().begin(), input.token_ids().ids().end());
      core.token_type_ids.assign(input.token_ids().token_type_ids().begin(),
                                 input.token_ids().token_type_ids().end());
      break;
    default:
      break;
  }
  return core;
}

engine::Pooling ToEnginePooling(encoder::v1::Pooling pooling) {
  static const std::map<encoder::v1::Pooling, engine::Pooling> kPoolings = {
      {encoder::v1::POOLING_CLS, engine::Pooling::kCls},
      {encoder::v1::POOLING_MEAN, engine::Pooling::kMean},
      {encoder::v1::POOLING_NONE, engine::Pooling::kNone},
      {encoder::v1::POOLING_POOLER, engine::Pooling::kPooler},
      {encoder::v1::POOLING_MAX, engine::Pooling::kMax},
      {encoder::v1::POOLING_MEAN_SQRT_LEN, engine::Pooling::kMeanSqrtLen},
      {encoder::v1::POOLING_WEIGHTED_MEAN, engine::Pooling::kWeightedMean},
      {encoder::v1::POOLING_LAST_TOKEN, engine::Pooling::kLastToken}};
  const auto it = kPoolings.find(pooling);
  return it == kPoolings.end() ? engine::Pooling::kCls : it->second;
}

}  // namespace testing_support
