// Every way a model directory can be wrong gets a clear error naming the
// file (and the tensor), never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include "absl/strings/match.h"
#include "engine/encoder.h"
#include "io/safetensors.h"
#include "io/safetensors_writer.h"
#include "nlohmann/json.hpp"
#include "support/files.h"
#include "test_models.h"

namespace engine {
namespace {

using testing::WriteTinyModel;
using testing_support::ReadFile;
namespace fs = std::filesystem;

absl::Status LoadStatus(const std::string& dir) {
  return Encoder::Load(dir, EncoderOptions{}).status();
}

std::string WeightsPath(const std::string& dir) { return (fs::path(dir) / "model.safetensors"); }

// Reads the model's weights, lets `edit` change them, writes them back as F32.
void RewriteWeights(const std::string& dir,
                    const std::function<void(std::vector<NamedTensor>&)>& edit) {
  std::vector<NamedTensor> tensors;
  {
    auto file = SafetensorsFile::Open(WeightsPath(dir));
    ASSERT_TRUE(file.ok()) << file.status();
    for (const auto& [name, view] : (*file)->tensors()) {
      NamedTensor t{name, view.shape, std::vector<float>(view.num_elements())};
      ConvertToFloat(view, t.values.data());
      tensors.push_back(std::move(t));
    }
  }
  edit(tensors);
  ASSERT_TRUE(WriteSafetensors(WeightsPath(dir), tensors).ok());
}

// A safetensors file from a literal header and `data_bytes` zero bytes.
std::string RawSafetensors(const std::string& header, size_t data_bytes) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + std::string(data_bytes, '\0');
}

void ExpectError(const absl::Status& status, absl::StatusCode code,
                 std::initializer_list<std::string> fragments) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& fragment : fragments) {
    EXPECT_TRUE(absl::StrContains(status.message(), fragment))
        << "message \"" << status.message() << "\" lacks \"" << fragment << "\"";
  }
}

TEST(LoaderTest, LoadsAValidModel) {
  const std::string dir = WriteTinyModel("valid");
  auto encoder = Encoder::Load(dir, EncoderOptions{});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  EXPECT_EQ((*encoder)->config().hidden_size, 32);
  EXPECT_TRUE((*encoder)->has_pooler());
}

// engine::WriteRandomModel's heads (encoder-cli make-model --head) load as
// the task models they imitate.
TEST(LoaderTest, RandomModelWithoutAHeadHasNone) {
  auto encoder = Encoder::Load(WriteTinyModel("no_head"), EncoderOptions{});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  EXPECT_EQ((*encoder)->classifier(), nullptr);
  EXPECT_FALSE((*encoder)->has_masked_lm_head());
}

TEST(LoaderTest, RandomModelWithAClassifierHead) {
  RandomModelSpec spec = TinyModelSpec();
  spec.head = RandomHead::kClassifier;
  spec.num_labels = 3;
  const std::string dir = WriteTinyModel("classifier_head", spec);
  const nlohmann::json config = nlohmann::json::parse(ReadFile(dir + "/config.json"));
  EXPECT_EQ(config.at("architectures"), nlohmann::json::array({"BertForSequenceClassification"}));
  EXPECT_EQ(config.at("id2label").at("2"), "LABEL_2");
  auto encoder = Encoder::Load(dir, EncoderOptions{});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  const ClassifierHead* head = (*encoder)->classifier();
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->num_labels, 3);
  EXPECT_EQ(head->labels, (std::vector<std::string>{"LABEL_0", "LABEL_1", "LABEL_2"}));
  EXPECT_EQ(head->activation, ScoreActivation::kSoftmax);
  EXPECT_FALSE((*encoder)->has_masked_lm_head());
  EXPECT_TRUE((*encoder)->has_pooler());

  // The classifier's weights are large enough that two inputs' logits differ visibly.
  // Sequences are views: the ids must outlive the batch.
  const std::vector<int32_t> first = {2, 40, 41, 3};
  const std::vector<int32_t> second = {2, 90, 91, 92, 3};
  const std::vector<Sequence> batch = {{first, {}}, {second, {}}};
  EncodeResult result;
  ASSERT_TRUE((*encoder)->Encode(batch, &result).ok());
  float a[3], b[3];
  ASSERT_TRUE((*encoder)->Classify(result, 0, a).ok());
  ASSERT_TRUE((*encoder)->Classify(result, 1, b).ok());
  float difference = 0.0f;
  for (int i = 0; i < 3; ++i) difference = std::max(difference, std::abs(a[i] - b[i]));
  EXPECT_GT(difference, 1e-3f);
}

TEST(LoaderTest, RandomModelWithOneLabelIsAReranker) {
  RandomModelSpec spec = TinyModelSpec();
  spec.head = RandomHead::kClassifier;
  spec.with_pooler = false;  // the classifier needs BERT's pooler: written anyway
  auto encoder = Encoder::Load(WriteTinyModel("reranker_head", spec), EncoderOptions{});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  ASSERT_NE((*encoder)->classifier(), nullptr);
  EXPECT_EQ((*encoder)->classifier()->num_labels, 1);
  EXPECT_EQ((*encoder)->classifier()->labels, std::vector<std::string>{"LABEL_0"});
  EXPECT_EQ((*encoder)->classifier()->activation, ScoreActivation::kSigmoid);
}

TEST(LoaderTest, RandomModelWithAMaskedLmHead) {
  RandomModelSpec spec = TinyModelSpec();
  spec.head = RandomHead::kMaskedLm;
  const std::string dir = WriteTinyModel("masked_lm_head", spec);
  const nlohmann::json config = nlohmann::json::parse(ReadFile(dir + "/config.json"));
  EXPECT_EQ(config.at("architectures"), nlohmann::json::array({"BertForMaskedLM"}));
  EXPECT_FALSE(config.contains("id2label"));
  auto encoder = Encoder::Load(dir, EncoderOptions{});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  EXPECT_TRUE((*encoder)->has_masked_lm_head());
  EXPECT_EQ((*encoder)->classifier(), nullptr);
  {
    // Tied, as real checkpoints are: no decoder weight of its own.
    auto file = SafetensorsFile::Open(WeightsPath(dir));
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ((*file)->tensors().count("cls.predictions.decoder.weight"), 0u);
    EXPECT_EQ((*file)->tensors().count("cls.predictions.bias"), 1u);
  }
  const std::vector<int32_t> ids = {2, 40, 41, 3};  // a Sequence is a view
  const std::vector<Sequence> batch = {{ids, {}}};
  EncodeResult result;
  ASSERT_TRUE((*encoder)->Encode(batch, &result).ok());
  std::vector<SparseEntry> sparse;
  ASSERT_TRUE((*encoder)->Sparse(result, 0, SparseOptions{}, &sparse).ok());
  EXPECT_FALSE(sparse.empty());
}

TEST(LoaderTest, RandomModelRejectsABadLabelCount) {
  RandomModelSpec spec = TinyModelSpec();
  spec.head = RandomHead::kClassifier;
  spec.num_labels = 0;
  ExpectError(WriteRandomModel(testing_support::MakeTempDir("engine_test_zero_labels_"), spec),
              absl::StatusCode::kInvalidArgument, {"bad label count 0"});
}

TEST(LoaderTest, MissingDirectory) {
  ExpectError(LoadStatus("/nonexistent/model"), absl::StatusCode::kNotFound,
              {"/nonexistent/model"});
}

TEST(LoaderTest, MissingConfig) {
  const std::string dir = WriteTinyModel("no_config");
  fs::remove(fs::path(dir) / "config.json");
  ExpectError(LoadStatus(dir), absl::StatusCode::kNotFound,
              {dir + "/config.json: cannot open: No such file or directory"});
}

TEST(LoaderTest, ConfigThatIsADirectory) {
  const std::string dir = WriteTinyModel("config_dir");
  fs::remove(fs::path(dir) / "config.json");
  fs::create_directory(fs::path(dir) / "config.json");
  ExpectError(LoadStatus(dir), absl::StatusCode::kFailedPrecondition,
              {dir + "/config.json: cannot read: Is a directory"});
}

TEST(LoaderTest, ModelPathThatIsAFile) {
  const std::string dir = WriteTinyModel("path_is_file");
  ExpectError(LoadStatus(dir + "/config.json"), absl::StatusCode::kFailedPrecondition,
              {dir + "/config.json: not a directory"});
}

TEST(LoaderTest, BadConfigJson) {
  const std::string dir = WriteTinyModel("bad_json");
  ASSERT_TRUE(WriteFile(fs::path(dir) / "config.json", "{\"model_type\": \"bert\",").ok());
  ExpectError(
      LoadStatus(dir), absl::StatusCode::kInvalidArgument,
      {dir + "/config.json: not valid JSON at line 1, column 23: ", "unexpected end of input"});
}

TEST(LoaderTest, ConfigSyntaxErrorsGiveTheLine) {
  const std::string dir = WriteTinyModel("missing_comma");
  ASSERT_TRUE(WriteFile(fs::path(dir) / "config.json",
                        "{\n  \"model_type\": \"bert\",\n  \"hidden_size\": 32\n"
                        "  \"num_hidden_layers\": 2\n}\n")
                  .ok());
  ExpectError(
      LoadStatus(dir), absl::StatusCode::kInvalidArgument,
      {dir + "/config.json: not valid JSON at line 4, column 21: ", "unexpected string literal"});
}

void EditConfig(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
  const std::string path = fs::path(dir) / "config.json";
  nlohmann::json config = nlohmann::json::parse(ReadFile(path));
  edit(config);
  ASSERT_TRUE(WriteFile(path, config.dump()).ok());
}

TEST(LoaderTest, UnsupportedModelType) {
  const std::string dir = WriteTinyModel("gpt2");
  EditConfig(dir, [](nlohmann::json& c) { c["model_type"] = "gpt2"; });
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"config.json", "unsupported model_type \"gpt2\"",
               "(supported: bert, roberta, xlm-roberta, camembert, distilbert, mpnet, electra, "
               "nomic_bert, new, modernbert, bert with position_embedding_type \"alibi\", qwen3, "
               "gemma3_text)"});
}

TEST(LoaderTest, HiddenSizeNotDivisibleByHeads) {
  const std::string dir = WriteTinyModel("heads");
  EditConfig(dir, [](nlohmann::json& c) { c["num_attention_heads"] = 5; });
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"config.json", "not divisible by num_attention_heads 5"});
}

TEST(LoaderTest, ConfigClaimsMoreLayersThanTheWeightsHave) {
  const std::string dir = WriteTinyModel("lying_config");
  EditConfig(dir, [](nlohmann::json& c) { c["num_hidden_layers"] = 3; });
  ExpectError(LoadStatus(dir), absl::StatusCode::kNotFound,
              {"missing tensor encoder.layer.2.attention.self.query.weight"});
}

TEST(LoaderTest, MissingTensor) {
  const std::string dir = WriteTinyModel("missing_tensor");
  RewriteWeights(dir, [](std::vector<NamedTensor>& tensors) {
    tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                 [](const NamedTensor& t) {
                                   return t.name == "encoder.layer.1.output.LayerNorm.bias";
                                 }),
                  tensors.end());
  });
  ExpectError(LoadStatus(dir), absl::StatusCode::kNotFound,
              {dir, "missing tensor encoder.layer.1.output.LayerNorm.bias"});
}

TEST(LoaderTest, WrongShape) {
  const std::string dir = WriteTinyModel("wrong_shape");
  RewriteWeights(dir, [](std::vector<NamedTensor>& tensors) {
    for (NamedTensor& t : tensors) {
      if (t.name == "encoder.layer.0.intermediate.dense.weight") {
        t.shape = {32, 64};  // transposed
      }
    }
  });
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "tensor encoder.layer.0.intermediate.dense.weight",
               "expected shape [64, 32], got [32, 64]"});
}

TEST(LoaderTest, UnsupportedDtype) {
  const std::string dir = WriteTinyModel("dtype");
  RewriteWeights(dir, [](std::vector<NamedTensor>&) {});
  // Re-label one F32 tensor as I32: the header stays self-consistent.
  std::string bytes = ReadFile(WeightsPath(dir));
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | static_cast<uint8_t>(bytes[i]);
  nlohmann::json header = nlohmann::json::parse(bytes.substr(8, header_size));
  header["embeddings.LayerNorm.weight"]["dtype"] = "I32";
  std::string text = header.dump();
  text.append(header_size - text.size(), ' ');
  ASSERT_EQ(text.size(), header_size);
  bytes.replace(8, header_size, text);
  ASSERT_TRUE(WriteFile(WeightsPath(dir), bytes).ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "tensor embeddings.LayerNorm.weight", "unsupported dtype I32"});
}

TEST(LoaderTest, UnknownDtypeInHeader) {
  const std::string dir = WriteTinyModel("dtype_unknown");
  ASSERT_TRUE(WriteFile(WeightsPath(dir), RawSafetensors(R"({"a": {"dtype": "F8_E4M3", "shape": [2],
                                           "data_offsets": [0, 2]}})",
                                                         2))
                  .ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "tensor a", "unsupported dtype F8_E4M3"});
}

TEST(LoaderTest, TruncatedFile) {
  const std::string dir = WriteTinyModel("truncated");
  const std::string bytes = ReadFile(WeightsPath(dir));
  ASSERT_TRUE(WriteFile(WeightsPath(dir), bytes.substr(0, bytes.size() / 2)).ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "run past the end", "truncated"});
}

TEST(LoaderTest, FileShorterThanTheHeaderLength) {
  const std::string dir = WriteTinyModel("tiny_file");
  ASSERT_TRUE(WriteFile(WeightsPath(dir), "abc").ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "truncated"});
}

TEST(LoaderTest, HeaderLengthPastTheEnd) {
  const std::string dir = WriteTinyModel("header_len");
  std::string bytes = RawSafetensors("{}", 0);
  bytes[0] = static_cast<char>(0xff);
  bytes[3] = static_cast<char>(0x7f);
  ASSERT_TRUE(WriteFile(WeightsPath(dir), bytes).ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "header length", "runs past the end"});
}

TEST(LoaderTest, HeaderNotJson) {
  const std::string dir = WriteTinyModel("header_json");
  ASSERT_TRUE(WriteFile(WeightsPath(dir), RawSafetensors("{not json}", 8)).ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "header is not a JSON object"});
}

TEST(LoaderTest, OverlappingOffsets) {
  const std::string dir = WriteTinyModel("overlap");
  ASSERT_TRUE(
      WriteFile(WeightsPath(dir),
                RawSafetensors(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                                           "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})",
                               24))
          .ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "overlap"});
}

TEST(LoaderTest, OffsetsPastTheEnd) {
  const std::string dir = WriteTinyModel("past_end");
  ASSERT_TRUE(WriteFile(WeightsPath(dir),
                        RawSafetensors(
                            R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 8))
                  .ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "tensor a", "run past the end"});
}

TEST(LoaderTest, SizeDisagreesWithShape) {
  const std::string dir = WriteTinyModel("size_shape");
  ASSERT_TRUE(
      WriteFile(
          WeightsPath(dir),
          RawSafetensors(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}})", 16))
          .ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "tensor a", "16 bytes for 3 elements"});
}

TEST(LoaderTest, NoWeightsFile) {
  const std::string dir = WriteTinyModel("no_weights");
  fs::remove(WeightsPath(dir));
  const absl::Status status = LoadStatus(dir);
  ExpectError(status, absl::StatusCode::kNotFound,
              {dir + ": no model.safetensors or model.safetensors.index.json"});
  EXPECT_FALSE(absl::StrContains(status.message(), "pytorch")) << status;
}

// Only PyTorch's weights: the error names the file and both ways to
// safetensors, with this directory in them.
TEST(LoaderTest, PytorchWeightsOnlyNameTheFileAndTheWayToSafetensors) {
  const std::string dir = WriteTinyModel("pytorch_only");
  fs::remove(WeightsPath(dir));
  ASSERT_TRUE(WriteFile(fs::path(dir) / "pytorch_model.bin", "PK").ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kNotFound,
              {dir + ": no model.safetensors or model.safetensors.index.json, only "
                     "pytorch_model.bin (PyTorch's pickle format, not read)",
               "huggingface-cli download ORG/NAME --include '*.safetensors' --local-dir " + dir,
               "AutoModel.from_pretrained('" + dir + "').save_pretrained('" + dir +
                   "', safe_serialization=True)"});

  fs::remove(fs::path(dir) / "pytorch_model.bin");
  ASSERT_TRUE(WriteFile(fs::path(dir) / "pytorch_model.bin.index.json", "{}").ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kNotFound,
              {"only pytorch_model.bin.index.json (PyTorch's pickle format, not read)"});
}

// In the hub cache the repo id is known: the download command names it, and
// completes the cache rather than writing into the snapshot.
TEST(LoaderTest, PytorchWeightsInTheHubCacheNameTheRepo) {
  const std::string hub = testing_support::MakeTempDir("hub_");
  const fs::path snapshot = fs::path(hub) / "models--BAAI--bge-m3" / "snapshots" / "5617a9f6";
  fs::create_directories(snapshot.parent_path());
  fs::copy(WriteTinyModel("cached_pytorch"), snapshot);
  fs::remove(snapshot / "model.safetensors");
  ASSERT_TRUE(WriteFile(snapshot / "pytorch_model.bin", "PK").ok());
  const absl::Status status = LoadStatus(snapshot.string());
  ExpectError(status, absl::StatusCode::kNotFound,
              {"`huggingface-cli download BAAI/bge-m3 --include '*.safetensors'` when the hub "
               "has them"});
  EXPECT_FALSE(absl::StrContains(status.message(), "--local-dir")) << status;
}

// A cache snapshot whose weights blob never arrived: a dangling symlink.
TEST(LoaderTest, WeightsSymlinkToAMissingBlob) {
  const std::string dir = WriteTinyModel("dangling");
  fs::remove(WeightsPath(dir));
  fs::create_symlink("../../blobs/9b1c", WeightsPath(dir));
  ExpectError(LoadStatus(dir), absl::StatusCode::kNotFound,
              {WeightsPath(dir) + ": cannot open: No such file or directory (a symlink to "
                                  "../../blobs/9b1c, which is missing)"});
}

TEST(LoaderTest, ShardIndexNamesAMissingFile) {
  const std::string dir = WriteTinyModel("missing_shard");
  fs::rename(WeightsPath(dir), fs::path(dir) / "model-00001-of-00002.safetensors");
  nlohmann::json index = {
      {"metadata", {{"total_size", 0}}},
      {"weight_map",
       {{"embeddings.word_embeddings.weight", "model-00001-of-00002.safetensors"},
        {"pooler.dense.bias", "model-00002-of-00002.safetensors"}}}};
  ASSERT_TRUE(WriteFile(fs::path(dir) / "model.safetensors.index.json", index.dump()).ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kNotFound,
              {"model-00002-of-00002.safetensors", "cannot open"});
}

TEST(LoaderTest, ShardIndexNotJson) {
  const std::string dir = WriteTinyModel("bad_index");
  fs::remove(WeightsPath(dir));
  ASSERT_TRUE(WriteFile(fs::path(dir) / "model.safetensors.index.json", "[1,2").ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors.index.json: not valid JSON at line 1, column 5"});
  ASSERT_TRUE(WriteFile(fs::path(dir) / "model.safetensors.index.json", "[1, 2]").ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors.index.json: no \"weight_map\" object"});
}

// Regression (found by fuzz_model_dir's review): config.json's sizes were
// trusted before the tensor was looked at, so a config claiming a huge
// vocabulary or hidden size made the loader allocate (and zero) room for it:
// std::bad_alloc / an ASan allocation-size-too-big abort instead of an error.
TEST(LoaderTest, ConfigClaimingHugeSizesIsAnErrorNotAnAllocation) {
  const std::string dir = WriteTinyModel("huge_config");
  EditConfig(dir, [](nlohmann::json& c) {
    c["vocab_size"] = 1 << 30;
    c["hidden_size"] = 1 << 30;
    c["num_attention_heads"] = 1;
  });
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "tensor embeddings.word_embeddings.weight",
               "expected shape [1073741824, 1073741824], got ["});
}

TEST(LoaderTest, ConfigClaimingAHugeIntermediateSizeIsAnError) {
  const std::string dir = WriteTinyModel("huge_intermediate");
  EditConfig(dir, [](nlohmann::json& c) { c["intermediate_size"] = 1 << 30; });
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"tensor encoder.layer.0.intermediate.dense.weight",
               "expected shape [1073741824, 32], got [64, 32]"});
}

// Regression (found by fuzz_model_dir): the layer array was sized from
// num_hidden_layers before any layer was loaded, so a config claiming 2^30
// layers aborted with std::bad_alloc instead of naming the missing tensor.
TEST(LoaderTest, ConfigClaimingAHugeLayerCountIsAnErrorNotAnAllocation) {
  const std::string dir = WriteTinyModel("huge_layer_count");
  EditConfig(dir, [](nlohmann::json& c) { c["num_hidden_layers"] = 1 << 30; });
  ExpectError(LoadStatus(dir), absl::StatusCode::kNotFound,
              {"missing tensor encoder.layer.", ".attention.self.query.weight"});
}

// Regression: layer_norm_eps is used as a float; 1e39 became infinity and
// 1e-50 zero (and converting a double beyond float's range is undefined).
TEST(LoaderTest, LayerNormEpsOutsideFloatRange) {
  for (double eps : {1e39, 1e-50}) {
    const std::string dir = WriteTinyModel("eps_range");
    EditConfig(dir, [eps](nlohmann::json& c) { c["layer_norm_eps"] = eps; });
    ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
                {"config.json", "\"layer_norm_eps\" must be a positive number within float"});
  }
}

// Regression: the header check multiplied the dimensions in uint64_t, while
// TensorView::num_elements() does it in int64_t; [2^63-1, 2, 0] passed the
// check (0 elements) and overflowed int64_t in num_elements().
TEST(LoaderTest, ShapeWhosePartialProductOverflowsInt64) {
  const std::string dir = WriteTinyModel("shape_overflow");
  ASSERT_TRUE(WriteFile(WeightsPath(dir),
                        RawSafetensors(R"({"a": {"dtype": "F32", "shape": [9223372036854775807,
                                           2, 0], "data_offsets": [0, 0]}})",
                                       0))
                  .ok());
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "tensor a", "shape too large"});
}

TEST(LoaderTest, ParsesSafetensorsBytesWithoutAFile) {
  const std::string bytes = RawSafetensors(
      R"({"__metadata__": {"format": "pt"}, "s": {"dtype": "F32", "shape": [],
          "data_offsets": [0, 4]}, "e": {"dtype": "BF16", "shape": [0, 4], "data_offsets": [4, 4]}})",
      4);
  auto tensors = ParseSafetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                  "mem.safetensors");
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  ASSERT_EQ(tensors->size(), 2u);
  EXPECT_EQ(tensors->at("s").num_elements(), 1);
  EXPECT_EQ(tensors->at("e").num_elements(), 0);
  EXPECT_EQ(tensors->at("s").data,
            reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size() - 4);
  ExpectError(ParseSafetensors(reinterpret_cast<const uint8_t*>(bytes.data()), 7, "short").status(),
              absl::StatusCode::kInvalidArgument, {"short", "truncated"});
}

// Regression (found by fuzz_safetensors): converting a zero-size F32 tensor
// into an empty vector passed null pointers to memcpy (undefined even for 0
// bytes; UBSan in the sanitize stage aborts on it).
TEST(LoaderTest, ConvertsAZeroSizeTensorIntoNothing) {
  const std::string bytes =
      RawSafetensors(R"({"z": {"dtype": "F32", "shape": [92, 4, 0], "data_offsets": [0, 0]}})", 0);
  auto tensors = ParseSafetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                  "zero.safetensors");
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  std::vector<float> out;
  ConvertToFloat(tensors->at("z"), out.data());
  EXPECT_TRUE(out.empty());
}

// ---- the families of the architecture registry ----

// A copy of a family fixture's model directory (tests/golden/families).
std::string CopyFamilyModel(const std::string& family, const std::string& name) {
  const std::string dir = testing_support::MakeTempDir(name + "_");
  fs::copy(std::string(GOLDEN_DIR) + "/families/" + family + "/model", dir,
           fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  return dir;
}

TEST(LoaderTest, FamilyMissingTensorIsNamed) {
  const std::string dir = CopyFamilyModel("mpnet", "mpnet_missing");
  RewriteWeights(dir, [](std::vector<NamedTensor>& tensors) {
    tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                 [](const NamedTensor& t) {
                                   return t.name == "encoder.relative_attention_bias.weight";
                                 }),
                  tensors.end());
  });
  ExpectError(LoadStatus(dir), absl::StatusCode::kNotFound,
              {dir, "missing tensor encoder.relative_attention_bias.weight"});
}

TEST(LoaderTest, FamilyWrongShapeNamesTheStoredTensor) {
  const std::string dir = CopyFamilyModel("distilbert", "distilbert_shape");
  RewriteWeights(dir, [](std::vector<NamedTensor>& tensors) {
    for (NamedTensor& t : tensors) {
      if (t.name == "distilbert.transformer.layer.1.ffn.lin1.weight") t.shape = {64, 128};
    }
  });
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"model.safetensors", "tensor distilbert.transformer.layer.1.ffn.lin1.weight",
               "expected shape [128, 64], got [64, 128]"});
}

TEST(LoaderTest, FamilyConfigKeysAreTheFamilys) {
  // DistilBERT spells the hidden size "dim": without it the error names that key.
  const std::string dir = CopyFamilyModel("distilbert", "distilbert_keys");
  EditConfig(dir, [](nlohmann::json& c) { c.erase("dim"); });
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"config.json", "missing \"dim\""});
}

TEST(LoaderTest, ElectraProjectionIsRequiredWhenWidthsDiffer) {
  const std::string dir = CopyFamilyModel("electra", "electra_projection");
  EditConfig(dir, [](nlohmann::json& c) { c["embedding_size"] = 48; });
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"tensor electra.embeddings.word_embeddings.weight", "expected shape [100, 48]"});
}

TEST(LoaderTest, RobertaPositionsNeedRoomAfterThePadId) {
  const std::string dir = CopyFamilyModel("xlm_roberta", "roberta_positions");
  EditConfig(dir, [](nlohmann::json& c) { c["max_position_embeddings"] = 2; });
  ExpectError(LoadStatus(dir), absl::StatusCode::kInvalidArgument,
              {"config.json", "leaves no position after pad_token_id 1"});
}

TEST(LoaderTest, FamilyLimitsComeFromTheirRules) {
  // RoBERTa: 130 positions, pad 1 -> 128 tokens; DistilBERT: no token types.
  auto roberta = Encoder::Load(std::string(GOLDEN_DIR) + "/families/xlm_roberta/model", {});
  ASSERT_TRUE(roberta.ok()) << roberta.status();
  EXPECT_EQ((*roberta)->config().architecture, "roberta");
  std::vector<int32_t> ids(129, 5);
  ExpectError((*roberta)->Validate({ids, {}}), absl::StatusCode::kInvalidArgument,
              {"sequence of 129 tokens exceeds the model's maximum of 128"});
  ids.resize(128);
  EXPECT_TRUE((*roberta)->Validate({ids, {}}).ok());
  const std::vector<int32_t> types(128, 1);
  ExpectError((*roberta)->Validate({ids, types}), absl::StatusCode::kInvalidArgument,
              {"token type 1 at position 0 is outside [0, 1)"});

  auto distilbert = Encoder::Load(std::string(GOLDEN_DIR) + "/families/distilbert/model", {});
  ASSERT_TRUE(distilbert.ok()) << distilbert.status();
  EXPECT_EQ((*distilbert)->config().architecture, "distilbert");
  EXPECT_FALSE((*distilbert)->has_pooler());
  const std::vector<int32_t> zeros(4, 0), four(4, 7);
  EXPECT_TRUE((*distilbert)->Validate({four, zeros}).ok());
}

}  // namespace
}  // namespace engine
