#include "engine/encoder.h"

#include <malloc.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "dnnl/dense.h"
#include "dnnl/quantized_dense.h"
#include "engine/isa.h"
#include "engine/model_contents.h"
#include "engine/model_directory.h"
#include "engine/sentence_pipeline.h"
#include "engine/thread_count.h"
#include "engine/tokenizer.h"
#include "families/architecture.h"
#include "heads/heads.h"
#include "heads/pooling.h"
#include "heads/token_heads.h"
#include "io/checkpoint.h"
#include "layers/embeddings.h"
#include "layers/encoder_layer.h"
#include "layers/packed_batch.h"
#include "layers/weights.h"
#include "layers/workspace.h"
#include "nlohmann/json.hpp"
#include "runtime/profile.h"

namespace engine {

struct Encoder::Impl {
  ModelConfig config;
  EncoderOptions options;
  int threads = 1;  // options.threads, or the default it stands for
  IsaLevel isa = IsaLevel::kScalar;
  DnnlContext dnnl;
  MatmulCache cache{&dnnl};
  Int8MatmulCache int8_cache{&dnnl};
  ModelWeights weights;
  std::unique_ptr<ClassifierWeights> classifier;  // null: none in the checkpoint
  std::unique_ptr<MaskedLmWeights> masked_lm;     // null: none in the checkpoint
  std::unique_ptr<PairPrompt> pair_prompt;        // causal-LM rerankers
  std::unique_ptr<LexicalWeightsHead> lexical;    // bge-m3's sparse_linear.pt
  std::unique_ptr<MultiVectorWeights> multi_vector;
  // Encode's per-sequence visible keys (PackedBatch::visible_keys), kept so
  // that a batch allocates nothing once warmed up.
  std::vector<int> visible_keys;
  Workspace workspace;
};

namespace {

// The id of `token` as the model directory's tokenizer encodes it alone
// (Qwen3-Reranker's convert_tokens_to_ids("yes")); an error unless it is one id.
absl::StatusOr<int32_t> SingleTokenId(const Tokenizer& tokenizer, const std::string& token) {
  absl::StatusOr<Encoding> encoding =
      tokenizer.Encode(token, 0, TruncationSide::kRight, /*add_special_tokens=*/false);
  if (!encoding.ok()) return encoding.status();
  if (encoding->ids.size() != 1 || encoding->ids.front() == tokenizer.unk_id()) {
    return absl::InvalidArgumentError(
        absl::StrCat(tokenizer.source(), ": \"", token, "\" is not one token of its vocabulary (",
                     encoding->ids.size(), " ids); the reranker scores it"));
  }
  return encoding->ids.front();
}

// A causal LM saved with its task prefix scores pairs as its family's
// CausalLmScorerNames say; null when the family has no such scorer or the
// checkpoint is the bare model (an embedder: Qwen3-Embedding).
// word_embeddings: the encoder's [vocab, H] table (a tied LM head).
absl::Status LoadCausalLmScorerIfAny(const Checkpoint& checkpoint, const Architecture& architecture,
                                     const ModelConfig& config, const EncoderSources& sources,
                                     const std::string& config_path, const float* word_embeddings,
                                     std::unique_ptr<ClassifierWeights>* classifier,
                                     std::unique_ptr<PairPrompt>* prompt) {
  const CausalLmScorerNames& names = architecture.names.causal_lm;
  if (names.task_prefix.empty() || !checkpoint.SavedWithPrefix(names.task_prefix)) {
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(const Tokenizer* tokenizer, sources.tokenizer());
  ASSIGN_OR_RETURN(const int32_t positive, SingleTokenId(*tokenizer, names.positive_token));
  ASSIGN_OR_RETURN(const int32_t negative, SingleTokenId(*tokenizer, names.negative_token));
  ASSIGN_OR_RETURN(*classifier,
                   LoadCausalLmScorer(checkpoint, names, config, *sources.config_json, config_path,
                                      positive, negative, word_embeddings));
  *prompt = std::make_unique<PairPrompt>(
      PairPrompt{names.prefix, names.middle, names.suffix, names.default_instruction});
  return absl::OkStatus();
}

// The per-token heads: bge-m3's, when their torch.save files are in the
// directory (the lexical weights leave out the tokenizer's special tokens),
// else a ColBERT model's projection (PyLate's layout).
absl::Status LoadTokenHeadsIfAny(ModelDirectory& directory, const EncoderSources& sources,
                                 int64_t hidden, std::unique_ptr<LexicalWeightsHead>* lexical,
                                 std::unique_ptr<MultiVectorWeights>* multi_vector) {
  if (directory.Has(kLexicalWeightsFile)) {
    ASSIGN_OR_RETURN(const Tokenizer* tokenizer, sources.tokenizer());
    std::vector<int32_t> excluded;
    for (const int id :
         {tokenizer->cls_id(), tokenizer->sep_id(), tokenizer->pad_id(), tokenizer->unk_id()}) {
      if (id >= 0) excluded.push_back(id);
    }
    ASSIGN_OR_RETURN(*lexical, LoadLexicalWeights(directory, hidden, std::move(excluded)));
  }
  if (*multi_vector != nullptr) return absl::OkStatus();  // the checkpoint's (HF_ColBERT)
  ASSIGN_OR_RETURN(*multi_vector, LoadBgeM3ColbertIfAny(directory, hidden));
  if (*multi_vector != nullptr || !directory.Has("modules.json")) return absl::OkStatus();
  ASSIGN_OR_RETURN(const SentencePipeline* pipeline, sources.pipeline());
  const DenseLayer* projection =
      pipeline->token_projection.has_value() ? &*pipeline->token_projection : nullptr;
  ASSIGN_OR_RETURN(*multi_vector, ColbertProjectionHead(projection, directory.path(), hidden));
  return absl::OkStatus();
}

// The per-token heads read every token's state.
absl::Status RequireAllTokens(const EncodeResult& result) {
  if (result.rows == TokenRows::kAll) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("this output needs every token's state; the result holds only the ",
                   TokenRowsName(result.rows), " token of each sequence"));
}

}  // namespace

Encoder::Encoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Encoder::~Encoder() = default;

absl::StatusOr<std::unique_ptr<Encoder>> Encoder::Load(const std::string& model_dir,
                                                       const EncoderOptions& options) {
  ASSIGN_OR_RETURN(ModelContents contents, LoadModelContents(model_dir, options));
  return std::move(contents.encoder);
}

absl::StatusOr<std::unique_ptr<Encoder>> Encoder::Load(ModelDirectory& directory,
                                                       const ModelConfig& config,
                                                       const EncoderSources& sources,
                                                       const EncoderOptions& options) {
  // First: oneDNN's cap must be set before it creates anything.
  ASSIGN_OR_RETURN(const IsaLevel isa, ActiveIsaLevel());
  RETURN_IF_ERROR(PrecisionSupported(options.precision, isa));
  if (options.max_batch_tokens <= 0) {
    return absl::InvalidArgumentError("max_batch_tokens must be positive");
  }
  const std::string config_path = directory.PathOf("config.json");
  const nlohmann::json& config_json = *sources.config_json;
  // ParseModelConfig accepted the type, so the registry has it.
  const Architecture& architecture = ArchitectureOf(config);

  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->options = options;
  impl->threads = ResolveThreadCount(options.threads);
  omp_set_num_threads(impl->threads);
  impl->isa = isa;
  {
    // The checkpoint (and its file mappings) lives only while weights are copied.
    ASSIGN_OR_RETURN(const std::unique_ptr<Checkpoint> checkpoint,
                     Checkpoint::Open(directory, architecture.names.task_prefixes));
    ASSIGN_OR_RETURN(impl->weights,
                     LoadWeights(*checkpoint, architecture, impl->config, options.precision,
                                 &impl->cache, &impl->int8_cache));
    // The heads run in float whatever the precision; a tied decoder reads
    // the word embeddings, which the encoder keeps as float.
    ASSIGN_OR_RETURN(impl->classifier, LoadClassifier(*checkpoint, architecture.names.classifier,
                                                      impl->config, config_json, config_path));
    ASSIGN_OR_RETURN(impl->masked_lm,
                     LoadMaskedLm(*checkpoint, architecture.names.masked_lm, impl->config,
                                  config_json, config_path, impl->weights.embeddings.word.data()));
    ASSIGN_OR_RETURN(impl->multi_vector,
                     LoadHfColbertIfAny(*checkpoint, config_json, impl->config.hidden_size));
    if (impl->classifier == nullptr) {
      RETURN_IF_ERROR(LoadCausalLmScorerIfAny(*checkpoint, architecture, impl->config, sources,
                                              config_path, impl->weights.embeddings.word.data(),
                                              &impl->classifier, &impl->pair_prompt));
    }
  }
  RETURN_IF_ERROR(LoadTokenHeadsIfAny(directory, sources, impl->config.hidden_size, &impl->lexical,
                                      &impl->multi_vector));
  // Load's temporaries are freed, but glibc may keep freed heap pages (its
  // mmap threshold grows with large frees); hand them back so resident
  // memory after load is the weights, not their conversion.
  malloc_trim(0);
  ASSIGN_OR_RETURN(impl->workspace, Workspace::Create(impl->config, options.max_batch_tokens,
                                                      impl->threads, options.precision));
  return std::unique_ptr<Encoder>(new Encoder(std::move(impl)));
}

const PairPrompt* Encoder::pair_prompt() const { return impl_->pair_prompt.get(); }

const ModelConfig& Encoder::config() const { return impl_->config; }
const EncoderOptions& Encoder::options() const { return impl_->options; }
int Encoder::threads() const { return impl_->threads; }
bool Encoder::has_pooler() const { return impl_->weights.pooler != nullptr; }
IsaLevel Encoder::isa() const { return impl_->isa; }

absl::Status Encoder::Validate(const Sequence& sequence) const {
  const ModelConfig& c = impl_->config;
  const int64_t length = static_cast<int64_t>(sequence.ids.size());
  if (length == 0) return absl::InvalidArgumentError("empty sequence");
  if (length > c.max_length()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sequence of ", length, " tokens exceeds the model's maximum of ", c.max_length()));
  }
  if (length > impl_->options.max_batch_tokens) {
    return absl::InvalidArgumentError(absl::StrCat("sequence of ", length,
                                                   " tokens exceeds the batch budget of ",
                                                   impl_->options.max_batch_tokens));
  }
  for (int64_t i = 0; i < length; ++i) {
    if (sequence.ids[i] < 0 || sequence.ids[i] >= c.vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("token id ", sequence.ids[i], " at position ",
                                                     i, " is outside the vocabulary [0, ",
                                                     c.vocab_size, ")"));
    }
  }
  if (sequence.visible_keys < 0 || sequence.visible_keys > length) {
    return absl::InvalidArgumentError(absl::StrCat("visible_keys ", sequence.visible_keys,
                                                   " is not within 0..", length,
                                                   " (the sequence's tokens)"));
  }
  if (!sequence.token_type_ids.empty()) {
    if (static_cast<int64_t>(sequence.token_type_ids.size()) != length) {
      return absl::InvalidArgumentError(
          absl::StrCat(sequence.token_type_ids.size(), " token types for ", length, " tokens"));
    }
    for (int64_t i = 0; i < length; ++i) {
      if (sequence.token_type_ids[i] < 0 || sequence.token_type_ids[i] >= c.token_types()) {
        return absl::InvalidArgumentError(absl::StrCat("token type ", sequence.token_type_ids[i],
                                                       " at position ", i, " is outside [0, ",
                                                       c.token_types(), ")"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Encoder::Encode(absl::Span<const Sequence> batch, EncodeResult* result,
                             const EncodeOptions& options) {
  Impl& m = *impl_;
  // OpenMP's thread count is per calling thread: the server calls Encode from
  // its batcher thread, not the one that loaded, and the workspace holds one
  // scores block per thread of that count.
  omp_set_num_threads(m.threads);
  const int64_t h = m.config.hidden_size;
  result->hidden_size = static_cast<int>(h);
  result->rows = options.rows;
  result->offsets.resize(batch.size() + 1);
  result->offsets[0] = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (absl::Status s = Validate(batch[i]); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("sequence ", i, ": ", s.message()));
    }
    result->offsets[i + 1] = result->offsets[i] + static_cast<int>(batch[i].ids.size());
  }
  const int64_t tokens = result->offsets.back();
  if (tokens > m.options.max_batch_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch of ", tokens, " tokens exceeds the budget of ", m.options.max_batch_tokens));
  }
  // A compact result holds one row per sequence (EncodeResult).
  const int64_t rows =
      options.rows == TokenRows::kAll ? tokens : static_cast<int64_t>(batch.size());
  result->hidden_states.resize(static_cast<size_t>(rows * h));
  if (tokens == 0) return absl::OkStatus();

  PackedBatch packed;
  packed.offsets = result->offsets.data();
  packed.num_sequences = static_cast<int>(batch.size());
  if (std::any_of(batch.begin(), batch.end(),
                  [](const Sequence& sequence) { return sequence.visible_keys > 0; })) {
    m.visible_keys.resize(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) m.visible_keys[i] = batch[i].visible_keys;
    packed.visible_keys = m.visible_keys.data();
  }
  packed.tokens = tokens;
  Workspace& ws = m.workspace;
  {
    profile::ScopedOp op(profile::Op::kEmbed);
    if (absl::Status s = EmbedTokens(m.weights.embeddings, m.config, batch, packed,
                                     ws.intermediate.data(), ws.hidden.data());
        !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<const float*> output = RunEncoderLayers(
      m.weights, m.options.precision, m.config, packed, options.rows, ws, options.between_layers);
  if (!output.ok()) return output.status();
  std::memcpy(result->hidden_states.data(), *output, static_cast<size_t>(rows * h) * sizeof(float));
  return absl::OkStatus();
}

absl::Status Encoder::Pool(const EncodeResult& result, int index, Pooling pooling, bool normalize,
                           float* out) const {
  if (index < 0 || index >= result.num_sequences()) {
    return absl::OutOfRangeError(absl::StrCat("no sequence ", index, " in the result"));
  }
  const int64_t h = result.hidden_size;
  const int tokens = result.num_tokens(index);
  if (pooling == Pooling::kNone) {
    return absl::InvalidArgumentError("pooling none has no single vector");
  }
  // The modes that read one token take it where the result holds it (a
  // compact result too); the others need every token's state.
  const bool first = pooling == Pooling::kCls || pooling == Pooling::kPooler;
  const float* states = pooling == Pooling::kLastToken ? result.token_state(index, tokens - 1)
                        : first                        ? result.token_state(index, 0)
                                                       : result.sequence_states(index);
  if (states == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("pooling ", PoolingName(pooling), " needs token states the result lacks",
                     " (it holds the ", TokenRowsName(result.rows), " token of each sequence)"));
  }
  switch (pooling) {
    case Pooling::kNone:
      break;
    case Pooling::kCls:
    case Pooling::kLastToken:
      std::memcpy(out, states, static_cast<size_t>(h) * sizeof(float));
      break;
    case Pooling::kMean:
      MeanPool(states, tokens, h, out);
      break;
    case Pooling::kPooler:
      if (!has_pooler()) {
        return absl::FailedPreconditionError("the model has no pooler.dense weights");
      }
      PoolerHead(*impl_->weights.pooler, states, h, out);
      break;
    case Pooling::kMax:
    case Pooling::kMeanSqrtLen:
    case Pooling::kWeightedMean:
      PoolTokens(pooling, states, tokens, 0, h, out);
      break;
  }
  if (normalize) L2Normalize(out, h);
  return absl::OkStatus();
}

const ClassifierHead* Encoder::classifier() const {
  return impl_->classifier ? &impl_->classifier->head : nullptr;
}

absl::Status Encoder::Classify(const EncodeResult& result, int index, float* logits) const {
  if (!impl_->classifier) {
    return absl::FailedPreconditionError("the model has no sequence-classification head");
  }
  if (index < 0 || index >= result.num_sequences()) {
    return absl::OutOfRangeError(absl::StrCat("no sequence ", index, " in the result"));
  }
  const int tokens = result.num_tokens(index);
  if (tokens == 0) return absl::InvalidArgumentError("empty sequence");
  if (result.rows == TokenRows::kAll) {
    RunClassifier(*impl_->classifier, result.sequence_states(index), tokens, logits);
    return absl::OkStatus();
  }
  // A compact result: the one state the head reads, as a one-token sequence.
  const TokenRows reads = impl_->classifier->head.reads;
  const float* state = reads == TokenRows::kFirst  ? result.token_state(index, 0)
                       : reads == TokenRows::kLast ? result.token_state(index, tokens - 1)
                                                   : nullptr;
  if (state == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the classifier reads the ", TokenRowsName(reads), " token(s); the result holds the ",
        TokenRowsName(result.rows), " token of each sequence"));
  }
  RunClassifier(*impl_->classifier, state, 1, logits);
  return absl::OkStatus();
}

bool Encoder::has_masked_lm_head() const { return impl_->masked_lm != nullptr; }

absl::Status Encoder::Sparse(const EncodeResult& result, int index, const SparseOptions& options,
                             std::vector<SparseEntry>* out) const {
  if (!impl_->masked_lm) {
    return absl::FailedPreconditionError("the model has no masked-LM head (SPLADE)");
  }
  if (index < 0 || index >= result.num_sequences()) {
    return absl::OutOfRangeError(absl::StrCat("no sequence ", index, " in the result"));
  }
  RETURN_IF_ERROR(RequireAllTokens(result));
  if (options.max_active_dims < 0) {
    return absl::InvalidArgumentError("max_active_dims must not be negative");
  }
  RunSparse(*impl_->masked_lm, result.sequence_states(index), result.num_tokens(index), options,
            out);
  return absl::OkStatus();
}

bool Encoder::has_lexical_weights() const { return impl_->lexical != nullptr; }

absl::Status Encoder::LexicalWeights(const EncodeResult& result, int index,
                                     absl::Span<const int32_t> ids, int max_active_dims,
                                     std::vector<SparseEntry>* out) const {
  if (!impl_->lexical) {
    return absl::FailedPreconditionError(
        absl::StrCat("the model has no lexical-weights head (", kLexicalWeightsFile, ")"));
  }
  if (index < 0 || index >= result.num_sequences()) {
    return absl::OutOfRangeError(absl::StrCat("no sequence ", index, " in the result"));
  }
  RETURN_IF_ERROR(RequireAllTokens(result));
  if (static_cast<int>(ids.size()) != result.num_tokens(index)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ids.size(), " ids for a sequence of ", result.num_tokens(index), " tokens"));
  }
  if (max_active_dims < 0) {
    return absl::InvalidArgumentError("max_active_dims must not be negative");
  }
  RunLexicalWeights(*impl_->lexical, result.sequence_states(index), ids, max_active_dims, out);
  return absl::OkStatus();
}

const MultiVectorHead* Encoder::multi_vector() const {
  return impl_->multi_vector ? &impl_->multi_vector->head : nullptr;
}

absl::Status Encoder::MultiVectors(const EncodeResult& result, int index,
                                   absl::Span<const uint8_t> keep, std::vector<float>* out,
                                   int* rows) const {
  if (!impl_->multi_vector) {
    return absl::FailedPreconditionError("the model has no multi-vector (ColBERT) head");
  }
  if (index < 0 || index >= result.num_sequences()) {
    return absl::OutOfRangeError(absl::StrCat("no sequence ", index, " in the result"));
  }
  RETURN_IF_ERROR(RequireAllTokens(result));
  if (!keep.empty() && static_cast<int>(keep.size()) != result.num_tokens(index)) {
    return absl::InvalidArgumentError(absl::StrCat(keep.size(), " flags for a sequence of ",
                                                   result.num_tokens(index), " tokens"));
  }
  RunMultiVectors(*impl_->multi_vector, result.sequence_states(index), result.num_tokens(index),
                  keep, out, rows);
  return absl::OkStatus();
}

}  // namespace engine
