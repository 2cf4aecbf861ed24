#include "server/core/model/model_heads.h"

#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace server::core {

std::string ServedOutputs(const ModelHeads& heads) {
  std::vector<std::string> served = {heads.sparse_default || heads.multi_vector_default
                                         ? "embeddings with an explicit pooling"
                                         : "embeddings"};
  if (heads.classifier.has_value()) {
    served.push_back(absl::StrCat("classify with ", heads.classifier->num_labels,
                                  heads.classifier->num_labels == 1 ? " label" : " labels"));
    if (heads.classifier->num_labels == 1) served.push_back("rerank");
  } else if (heads.multi_vector.has_value()) {
    served.push_back("rerank (MaxSim)");
  }
  if (heads.sparse) served.push_back(heads.sparse_default ? "sparse (its output)" : "sparse");
  if (heads.multi_vector.has_value()) {
    served.push_back(absl::StrCat("colbert (", heads.multi_vector->dimensions, " per token)"));
  }
  return absl::StrJoin(served, "; ");
}

absl::Status CheckHead(const ModelHeads& heads, HeadRequest request) {
  const char* wanted = "";
  switch (request) {
    case HeadRequest::kEmbedding:
      if (heads.multi_vector_default) {
        wanted =
            "this model is a ColBERT model: its output is one vector per token (EncodeMulti's "
            "colbert, POST /embed_multi), and a single vector needs an explicit pooling";
        break;
      }
      if (!heads.sparse_default) return absl::OkStatus();
      wanted =
          "this model is a sentence-transformers SparseEncoder: its output is sparse weights "
          "(EncodeSparse, POST /embed_sparse), and a dense vector needs an explicit pooling";
      break;
    case HeadRequest::kClassify:
      if (heads.classifier.has_value()) return absl::OkStatus();
      wanted = "classify needs a sequence-classification head";
      break;
    case HeadRequest::kRerank:
      if (heads.classifier.has_value() && heads.classifier->num_labels == 1) {
        return absl::OkStatus();
      }
      if (!heads.classifier.has_value() && heads.multi_vector.has_value()) {
        return absl::OkStatus();  // MaxSim of ColBERT vectors
      }
      wanted =
          "rerank needs a cross-encoder (a classification head with one label) or a ColBERT "
          "head (MaxSim)";
      break;
    case HeadRequest::kSparse:
      if (heads.sparse) return absl::OkStatus();
      wanted =
          "sparse embeddings need a masked-LM (SPLADE) head or bge-m3's lexical weights "
          "(sparse_linear.pt)";
      break;
    case HeadRequest::kMultiVector:
      if (heads.multi_vector.has_value()) return absl::OkStatus();
      wanted = "colbert vectors need a multi-vector head (bge-m3's colbert_linear.pt)";
      break;
  }
  absl::Status status = absl::FailedPreconditionError(
      absl::StrCat(wanted, "; this model serves ", ServedOutputs(heads)));
  status.SetPayload(kMissingHeadPayload, absl::Cord(ServedOutputs(heads)));
  return status;
}

}  // namespace server::core
