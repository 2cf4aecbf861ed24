// The task heads (engine/heads.h) against the PyTorch fixtures of
// tests/golden/make_heads.py: classifier logits of every family in fp32 and
// the ranking they give in int8, SPLADE weights (max and sum pooling), the
// score activations, and the load rules (no head, a bad activation_fn, the
// head keys of ModernBERT's config.json).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/encoder.h"
#include "engine/heads.h"
#include "families/architecture.h"
#include "heads/heads.h"
#include "nlohmann/json.hpp"
#include "support/files.h"
#include "test_models.h"

namespace engine {
namespace {

namespace fs = std::filesystem;

// fp32 logits: the engine's float32 against PyTorch's float64 (float32
// torch on the same weights stays within 1e-5, make_heads.py check (c)).
constexpr float kLogitsMaxAbs = 1e-4f;
// SPLADE weights, relative to max(|weight|, 1) (as make_heads.py measures).
constexpr double kSparseMaxRel = 1e-3;
// Weights below this may be kept or dropped by float32 rounding: the sets of
// ids are compared above it.
constexpr double kSparseThreshold = 1e-3;

const std::vector<std::string> kClassifiers = {"bert_reranker",         "xlm_roberta_classifier",
                                               "distilbert_classifier", "mpnet_reranker",
                                               "electra_classifier",    "modernbert_reranker"};
const std::vector<std::string> kMaskedLm = {"bert_mlm",  "roberta_mlm", "distilbert_mlm",
                                            "mpnet_mlm", "electra_mlm", "modernbert_mlm"};
// Causal LMs scored by their "yes" / "no" logits (Qwen3-Reranker), with
// the LM head stored and tied to the word embeddings.
const std::vector<std::string> kYesNoScorers = {"qwen3_reranker", "qwen3_reranker_tied"};

std::string FixtureDir(const std::string& name) {
  return std::string(GOLDEN_DIR) + "/heads/" + name;
}

nlohmann::json Reference(const std::string& name) {
  return nlohmann::json::parse(testing_support::ReadFile(FixtureDir(name) + "/reference.json"));
}

std::unique_ptr<Encoder> LoadHeadsFixture(const std::string& name,
                                          Precision precision = Precision::kFloat32) {
  EncoderOptions options;
  options.threads = 1;
  options.max_batch_tokens = 1024;
  options.precision = precision;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder =
      Encoder::Load(FixtureDir(name) + "/model", options);
  EXPECT_TRUE(encoder.ok()) << name << ": " << encoder.status();
  return encoder.ok() ? *std::move(encoder) : nullptr;
}

// The fixture's inputs, encoded as one packed batch.
struct Encoded {
  std::vector<std::vector<int32_t>> ids, types;
  EncodeResult result;
};

void EncodeInputs(Encoder& encoder, const nlohmann::json& reference, Encoded* encoded) {
  for (const auto& input : reference.at("inputs")) {
    encoded->ids.push_back(input.at("ids").get<std::vector<int32_t>>());
    encoded->types.push_back(input.contains("token_type_ids")
                                 ? input.at("token_type_ids").get<std::vector<int32_t>>()
                                 : std::vector<int32_t>{});
  }
  std::vector<Sequence> batch;
  for (size_t i = 0; i < encoded->ids.size(); ++i) {
    batch.push_back({encoded->ids[i], encoded->types[i]});
  }
  ASSERT_TRUE(encoder.Encode(batch, &encoded->result).ok());
}

std::vector<std::vector<float>> Logits(const Encoder& encoder, const EncodeResult& result) {
  std::vector<std::vector<float>> logits;
  for (int i = 0; i < result.num_sequences(); ++i) {
    std::vector<float> row(static_cast<size_t>(encoder.classifier()->num_labels));
    EXPECT_TRUE(encoder.Classify(result, i, row.data()).ok());
    logits.push_back(row);
  }
  return logits;
}

class ClassifierTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ClassifierTest, Fp32LogitsMatchPyTorch) {
  const nlohmann::json reference = Reference(GetParam());
  std::unique_ptr<Encoder> encoder = LoadHeadsFixture(GetParam());
  ASSERT_NE(encoder, nullptr);
  ASSERT_NE(encoder->classifier(), nullptr);
  EXPECT_EQ(encoder->classifier()->num_labels, reference.at("num_labels").get<int>());
  EXPECT_EQ(encoder->classifier()->labels.size(),
            static_cast<size_t>(encoder->classifier()->num_labels));
  Encoded encoded;
  EncodeInputs(*encoder, reference, &encoded);
  const auto logits = Logits(*encoder, encoded.result);
  const auto want = reference.at("logits").get<std::vector<std::vector<double>>>();
  ASSERT_EQ(logits.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(logits[i].size(), want[i].size());
    for (size_t k = 0; k < want[i].size(); ++k) {
      EXPECT_NEAR(logits[i][k], want[i][k], kLogitsMaxAbs) << "input " << i << " label " << k;
    }
  }
}

// Ranks with ties averaged.
std::vector<double> Ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = (i + j) / 2.0;
    i = j + 1;
  }
  return ranks;
}

double Spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> ra = Ranks(a), rb = Ranks(b);
  const double n = static_cast<double>(a.size());
  const double mean = (n - 1) / 2.0;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return cov / std::sqrt(va * vb);
}

// int8 quantizes the encoder's activations and weights (the head stays
// float): on these random models with large activations its logits move by
// up to ~0.08 (spread of the scores ~0.6), far beyond fp32's 1e-4, so what
// a reranker needs is checked instead: the order it puts the inputs in.
// Over 16 inputs a swap of two neighbours costs 0.003 of Spearman's rho;
// >= 0.98 allows a few such swaps of near-equal scores, not a reordering
// (measured: 0.991 at the avx2 and scalar levels, 0.997 with VNNI, 1.0 for
// MPNet; ModernBERT 0.997 without VNNI, 1.0 with).
TEST(ClassifierInt8Test, KeepsTheRankingOfOneLabelScores) {
  for (const char* name : {"bert_reranker", "mpnet_reranker", "modernbert_reranker"}) {
    const nlohmann::json reference = Reference(name);
    std::unique_ptr<Encoder> encoder = LoadHeadsFixture(name, Precision::kInt8);
    ASSERT_NE(encoder, nullptr);
    ASSERT_EQ(encoder->classifier()->num_labels, 1);
    Encoded encoded;
    EncodeInputs(*encoder, reference, &encoded);
    std::vector<double> got, want;
    for (const auto& row : Logits(*encoder, encoded.result)) got.push_back(row[0]);
    for (const auto& row : reference.at("logits")) want.push_back(row.at(0).get<double>());
    ASSERT_GE(got.size(), 16u);
    EXPECT_GE(Spearman(got, want), 0.98) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ClassifierTest, ::testing::ValuesIn(kClassifiers),
                         [](const auto& info) { return info.param; });

// Qwen3-Reranker: the checkpoint saved from Qwen3ForCausalLM is a one-label
// classifier whose logit is logit("yes") - logit("no") at the last token
// (ids found through the directory's tokenizer.json), so that its sigmoid is
// the model card's softmax over the two. Against make_decoders.py's float64
// reference: the logit within 2e-4 (the difference of two 1e-4-accurate
// logits; float32 torch stays within 5e-6), the score within 1e-4 and the
// same order of the inputs.
class YesNoScorerTest : public ::testing::TestWithParam<std::string> {};

TEST_P(YesNoScorerTest, ScoresMatchPyTorch) {
  const nlohmann::json reference = Reference(GetParam());
  std::unique_ptr<Encoder> encoder = LoadHeadsFixture(GetParam());
  ASSERT_NE(encoder, nullptr);
  ASSERT_NE(encoder->classifier(), nullptr);
  ASSERT_NE(encoder->pair_prompt(), nullptr);
  EXPECT_EQ(encoder->classifier()->num_labels, 1);
  EXPECT_EQ(encoder->classifier()->activation, ScoreActivation::kSigmoid);
  EXPECT_NE(encoder->pair_prompt()->middle.find("{document}"), std::string::npos);
  Encoded encoded;
  EncodeInputs(*encoder, reference, &encoded);
  const auto logits = Logits(*encoder, encoded.result);
  const auto yes = reference.at("yes_logits").get<std::vector<double>>();
  const auto no = reference.at("no_logits").get<std::vector<double>>();
  const auto scores = reference.at("scores").get<std::vector<double>>();
  ASSERT_EQ(logits.size(), scores.size());
  std::vector<double> got;
  for (size_t i = 0; i < scores.size(); ++i) {
    EXPECT_NEAR(logits[i][0], yes[i] - no[i], 2 * kLogitsMaxAbs) << "input " << i;
    float score = logits[i][0];
    ApplyScoreActivation(encoder->classifier()->activation, &score, 1);
    EXPECT_NEAR(score, scores[i], 1e-4) << "input " << i;
    got.push_back(score);
  }
  EXPECT_EQ(Spearman(got, scores), 1.0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, YesNoScorerTest, ::testing::ValuesIn(kYesNoScorers),
                         [](const auto& info) { return info.param; });

// The same checkpoint without the "model." prefix is Qwen3-Embedding's
// layout: an embedder, no scorer.
TEST(YesNoScorerLoadTest, TheBareModelIsAnEmbedder) {
  EncoderOptions options;
  options.threads = 1;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder =
      Encoder::Load(std::string(GOLDEN_DIR) + "/families/qwen3/model", options);
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  EXPECT_EQ((*encoder)->classifier(), nullptr);
  EXPECT_EQ((*encoder)->pair_prompt(), nullptr);
}

// A tokenizer without a single "yes" token cannot score: a load error
// naming the tokenizer and the token.
TEST(YesNoScorerLoadTest, ATokenizerWithoutTheJudgmentTokenIsALoadError) {
  const std::string dir = testing_support::MakeTempDir();
  fs::copy(FixtureDir("qwen3_reranker") + "/model", dir, fs::copy_options::recursive);
  std::string tokenizer = testing_support::ReadFile(dir + "/tokenizer.json");
  const size_t at = tokenizer.find("\"yes\"");
  ASSERT_NE(at, std::string::npos);
  tokenizer.replace(at, 5, "\"yup\"");
  testing_support::WriteFile(dir + "/tokenizer.json", tokenizer);
  EncoderOptions options;
  options.threads = 1;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Load(dir, options);
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(std::string(encoder.status().message()).find("\"yes\""), std::string::npos)
      << encoder.status();
  EXPECT_NE(std::string(encoder.status().message()).find("tokenizer.json"), std::string::npos)
      << encoder.status();
}

TEST(ClassifierConfigTest, LabelsAndActivationFromConfigJson) {
  struct Want {
    ScoreActivation activation;
    std::vector<std::string> labels;
  };
  const std::map<std::string, Want> want = {
      {"bert_reranker", {ScoreActivation::kSigmoid, {"LABEL_0"}}},  // activation_fn Sigmoid
      {"xlm_roberta_classifier", {ScoreActivation::kSoftmax, {"negative", "neutral", "positive"}}},
      {"distilbert_classifier",  // problem_type multi_label_classification
       {ScoreActivation::kSigmoid, {"toxic", "insult", "threat", "obscene"}}},
      {"mpnet_reranker", {ScoreActivation::kIdentity, {"LABEL_0"}}},                // the older key
      {"electra_classifier", {ScoreActivation::kSoftmax, {"LABEL_0", "LABEL_1"}}},  // no id2label
      {"modernbert_reranker", {ScoreActivation::kSigmoid, {"LABEL_0"}}},
  };
  for (const auto& [name, w] : want) {
    std::unique_ptr<Encoder> encoder = LoadHeadsFixture(name);
    ASSERT_NE(encoder, nullptr);
    ASSERT_NE(encoder->classifier(), nullptr) << name;
    EXPECT_EQ(encoder->classifier()->activation, w.activation) << name;
    EXPECT_EQ(encoder->classifier()->labels, w.labels) << name;
  }
}

class SparseTest : public ::testing::TestWithParam<std::string> {};

void ExpectSparseMatches(const std::vector<SparseEntry>& got, const nlohmann::json& want_json,
                         const std::string& what) {
  std::map<int, double> want, have;
  for (const auto& entry : want_json) want[entry.at(0).get<int>()] = entry.at(1).get<double>();
  for (const SparseEntry& e : got) have[e.id] = e.weight;
  for (size_t k = 1; k < got.size(); ++k) {
    EXPECT_TRUE(got[k - 1].weight > got[k].weight ||
                (got[k - 1].weight == got[k].weight && got[k - 1].id < got[k].id))
        << what << ": not sorted at " << k;
  }
  for (const auto& [id, weight] : want) {
    if (weight <= kSparseThreshold) continue;
    ASSERT_EQ(have.count(id), 1u) << what << ": id " << id << " (" << weight << ") missing";
    EXPECT_LE(std::abs(have[id] - weight) / std::max(std::abs(weight), 1.0), kSparseMaxRel)
        << what << ": id " << id;
  }
  for (const auto& [id, weight] : have) {
    if (weight <= kSparseThreshold) continue;
    EXPECT_EQ(want.count(id), 1u) << what << ": id " << id << " (" << weight << ") extra";
  }
}

TEST_P(SparseTest, Fp32WeightsMatchPyTorch) {
  const nlohmann::json reference = Reference(GetParam());
  std::unique_ptr<Encoder> encoder = LoadHeadsFixture(GetParam());
  ASSERT_NE(encoder, nullptr);
  ASSERT_TRUE(encoder->has_masked_lm_head());
  EXPECT_EQ(encoder->classifier(), nullptr);
  Encoded encoded;
  EncodeInputs(*encoder, reference, &encoded);
  std::vector<SparseEntry> entries;
  for (SparsePooling pooling : {SparsePooling::kMax, SparsePooling::kSum}) {
    const char* key = pooling == SparsePooling::kMax ? "sparse_max" : "sparse_sum";
    SparseOptions options;
    options.pooling = pooling;
    for (int i = 0; i < encoded.result.num_sequences(); ++i) {
      ASSERT_TRUE(encoder->Sparse(encoded.result, i, options, &entries).ok());
      ExpectSparseMatches(entries, reference.at(key).at(i),
                          std::string(key) + " input " + std::to_string(i));
    }
  }
}

TEST_P(SparseTest, MaxActiveDimsKeepsTheLargest) {
  const nlohmann::json reference = Reference(GetParam());
  std::unique_ptr<Encoder> encoder = LoadHeadsFixture(GetParam());
  ASSERT_NE(encoder, nullptr);
  Encoded encoded;
  EncodeInputs(*encoder, reference, &encoded);
  std::vector<SparseEntry> all, top;
  SparseOptions options;
  ASSERT_TRUE(encoder->Sparse(encoded.result, 2, options, &all).ok());
  options.max_active_dims = 5;
  ASSERT_TRUE(encoder->Sparse(encoded.result, 2, options, &top).ok());
  ASSERT_EQ(top.size(), 5u);
  for (size_t k = 0; k < top.size(); ++k) {
    EXPECT_EQ(top[k].id, all[k].id);
    EXPECT_EQ(top[k].weight, all[k].weight);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SparseTest, ::testing::ValuesIn(kMaskedLm),
                         [](const auto& info) { return info.param; });

// The fixtures' inputs fit in one decoder chunk (64 rows); this runs the
// head on 150 tokens (chunks of 64, 64, 22) against a plain double loop.
TEST(SparseChunksTest, ManyTokensMatchAPlainLoop) {
  constexpr int64_t kHidden = 8, kVocab = 50, kTokens = 150;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const auto fill = [&](std::vector<float>& v, size_t n) {
    v.resize(n);
    for (float& x : v) x = normal(rng);
  };
  MaskedLmWeights w;
  w.transform.in = w.transform.out = kHidden;
  fill(w.transform.weight, kHidden * kHidden);
  fill(w.transform.bias, kHidden);
  w.activation = Activation::kGeluErf;
  fill(w.norm_gamma, kHidden);
  fill(w.norm_beta, kHidden);
  w.norm_eps = 1e-5f;
  w.vocab = kVocab;
  fill(w.own_decoder, kVocab * kHidden);
  w.decoder = w.own_decoder.data();
  fill(w.bias, kVocab);
  std::vector<float> states;
  fill(states, kTokens * kHidden);

  std::vector<double> want_max(kVocab, 0.0), want_sum(kVocab, 0.0);
  for (int64_t t = 0; t < kTokens; ++t) {
    std::vector<double> x(kHidden);
    for (int64_t o = 0; o < kHidden; ++o) {
      double acc = w.transform.bias[o];
      for (int64_t i = 0; i < kHidden; ++i) {
        acc += double{w.transform.weight[o * kHidden + i]} * states[t * kHidden + i];
      }
      x[o] = 0.5 * acc * (1.0 + std::erf(acc / std::sqrt(2.0)));
    }
    double mean = 0, var = 0;
    for (double v : x) mean += v / kHidden;
    for (double v : x) var += (v - mean) * (v - mean) / kHidden;
    for (int64_t o = 0; o < kHidden; ++o) {
      x[o] = (x[o] - mean) / std::sqrt(var + w.norm_eps) * w.norm_gamma[o] + w.norm_beta[o];
    }
    for (int64_t v = 0; v < kVocab; ++v) {
      double logit = w.bias[v];
      for (int64_t o = 0; o < kHidden; ++o) logit += double{w.own_decoder[v * kHidden + o]} * x[o];
      const double weight = std::log1p(std::max(logit, 0.0));
      want_max[v] = std::max(want_max[v], weight);
      want_sum[v] += weight;
    }
  }
  for (SparsePooling pooling : {SparsePooling::kMax, SparsePooling::kSum}) {
    const std::vector<double>& want = pooling == SparsePooling::kMax ? want_max : want_sum;
    SparseOptions options;
    options.pooling = pooling;
    std::vector<SparseEntry> got;
    RunSparse(w, states.data(), kTokens, options, &got);
    nlohmann::json want_json = nlohmann::json::array();
    for (int64_t v = 0; v < kVocab; ++v) {
      if (want[v] > 0) want_json.push_back({v, want[v]});
    }
    ExpectSparseMatches(got, want_json, pooling == SparsePooling::kMax ? "max" : "sum");
  }
}

TEST(ScoreActivationTest, HandComputedValues) {
  float identity[] = {-2.0f, 0.5f};
  ApplyScoreActivation(ScoreActivation::kIdentity, identity, 2);
  EXPECT_EQ(identity[0], -2.0f);
  EXPECT_EQ(identity[1], 0.5f);
  // sigmoid(0) = 0.5; sigmoid(2) = 1 / (1 + e^-2) = 0.880797078; sigmoid(-2) = 0.119202922.
  float sigmoid[] = {0.0f, 2.0f, -2.0f};
  ApplyScoreActivation(ScoreActivation::kSigmoid, sigmoid, 3);
  EXPECT_NEAR(sigmoid[0], 0.5f, 1e-7f);
  EXPECT_NEAR(sigmoid[1], 0.880797078f, 1e-7f);
  EXPECT_NEAR(sigmoid[2], 0.119202922f, 1e-7f);
  // softmax(1, 2, 3) = e^k / (e + e^2 + e^3) = 0.090030573, 0.244728471, 0.665240956;
  // shifted by 1000 it is the same (the maximum is subtracted first).
  float softmax[] = {1.0f, 2.0f, 3.0f};
  float shifted[] = {1001.0f, 1002.0f, 1003.0f};
  ApplyScoreActivation(ScoreActivation::kSoftmax, softmax, 3);
  ApplyScoreActivation(ScoreActivation::kSoftmax, shifted, 3);
  const float want[] = {0.090030573f, 0.244728471f, 0.665240956f};
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(softmax[k], want[k], 1e-6f);
    EXPECT_NEAR(shifted[k], want[k], 1e-6f);
  }
  EXPECT_STREQ(ScoreActivationName(ScoreActivation::kSoftmax), "softmax");
}

TEST(HeadsLoadTest, AModelWithoutHeadsHasNone) {
  const std::string dir = testing::WriteTinyModel("no_heads");
  EncoderOptions options;
  options.threads = 1;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Load(dir, options);
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  EXPECT_EQ((*encoder)->classifier(), nullptr);
  EXPECT_FALSE((*encoder)->has_masked_lm_head());
  const std::vector<int32_t> ids = {2, 7, 9, 3};
  const std::vector<Sequence> batch = {{ids, {}}};
  EncodeResult result;
  ASSERT_TRUE((*encoder)->Encode(batch, &result).ok());
  float logits[4];
  EXPECT_EQ((*encoder)->Classify(result, 0, logits).code(), absl::StatusCode::kFailedPrecondition);
  std::vector<SparseEntry> entries;
  EXPECT_EQ((*encoder)->Sparse(result, 0, SparseOptions(), &entries).code(),
            absl::StatusCode::kFailedPrecondition);
}

// A copy of a fixture with `edit` applied to its config.json.
std::string EditedFixture(const std::string& name,
                          const std::function<void(nlohmann::json&)>& edit) {
  const std::string dir = testing_support::MakeTempDir("heads_" + name + "_");
  for (const char* file : {"config.json", "model.safetensors"}) {
    fs::copy_file(FixtureDir(name) + "/model/" + file, dir + "/" + file,
                  fs::copy_options::overwrite_existing);
  }
  nlohmann::json config = nlohmann::json::parse(testing_support::ReadFile(dir + "/config.json"));
  edit(config);
  testing_support::WriteFile(dir + "/config.json", config.dump(2));
  return dir;
}

TEST(HeadsLoadTest, AnUnknownActivationFnIsALoadErrorNamingTheFile) {
  const std::string dir = EditedFixture("bert_reranker", [](nlohmann::json& config) {
    config["sentence_transformers"]["activation_fn"] = "torch.nn.modules.activation.Tanh";
  });
  EncoderOptions options;
  options.threads = 1;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Load(dir, options);
  ASSERT_FALSE(encoder.ok());
  EXPECT_EQ(encoder.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(encoder.status().message());
  EXPECT_NE(message.find(dir + "/config.json"), std::string::npos) << message;
  EXPECT_NE(message.find("torch.nn.modules.activation.Tanh"), std::string::npos) << message;
}

// The head's config.json keys are read only for a checkpoint that has the
// head: an embedding model is not refused for a stray activation_fn.
TEST(HeadsLoadTest, HeadSettingsOfAModelWithoutTheHeadAreNotRead) {
  const std::string dir = EditedFixture("roberta_mlm", [](nlohmann::json& config) {
    config["sentence_transformers"]["activation_fn"] = "torch.nn.modules.activation.Tanh";
    config["id2label"] = {{"7", "odd"}};
  });
  EncoderOptions options;
  options.threads = 1;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Load(dir, options);
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  EXPECT_EQ((*encoder)->classifier(), nullptr);
  EXPECT_TRUE((*encoder)->has_masked_lm_head());
}

TEST(HeadsLoadTest, Id2LabelMustMatchTheClassifierWeight) {
  const std::string dir = EditedFixture("bert_reranker", [](nlohmann::json& config) {
    config["id2label"] = {{"0", "a"}, {"1", "b"}, {"2", "c"}};
  });
  EncoderOptions options;
  options.threads = 1;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Load(dir, options);
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(std::string(encoder.status().message()).find("classifier.weight"), std::string::npos)
      << encoder.status();
}

// Every fixture of tests/golden/heads runs here (cli_heads.sh runs them all
// by their directories), and every family with a head in the registry has a
// fixture of that head.
TEST(HeadsFixturesTest, EveryFixtureAndEveryFamilysHeadIsTested) {
  std::set<std::string> classifiers, masked_lm;  // families with a fixture
  int fixtures = 0;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(std::string(GOLDEN_DIR) + "/heads")) {
    if (!entry.is_directory()) continue;
    ++fixtures;
    const std::string name = entry.path().filename().string();
    const nlohmann::json reference = Reference(name);
    const Architecture* architecture = FindArchitecture(reference.at("family"));
    ASSERT_NE(architecture, nullptr) << name;
    if (reference.at("head") == "yes_no") {
      EXPECT_NE(std::find(kYesNoScorers.begin(), kYesNoScorers.end(), name), kYesNoScorers.end())
          << name << " is not in kYesNoScorers";
      continue;
    }
    if (reference.at("head") == "classifier") {
      EXPECT_NE(std::find(kClassifiers.begin(), kClassifiers.end(), name), kClassifiers.end())
          << name << " is not in kClassifiers";
      classifiers.insert(architecture->name);
    } else {
      EXPECT_NE(std::find(kMaskedLm.begin(), kMaskedLm.end(), name), kMaskedLm.end())
          << name << " is not in kMaskedLm";
      masked_lm.insert(architecture->name);
    }
  }
  EXPECT_EQ(fixtures,
            static_cast<int>(kClassifiers.size() + kMaskedLm.size() + kYesNoScorers.size()));
  // Families whose heads have no fixture of their own yet: JinaBERT takes
  // BERT's heads (names and math) on its ALiBi encoder.
  const std::set<std::string> without_fixtures = {"jina_bert"};
  for (const Architecture& architecture : Architectures()) {
    const TensorNames& n = architecture.names;
    if (without_fixtures.count(architecture.name) > 0) {
      EXPECT_EQ(classifiers.count(architecture.name) + masked_lm.count(architecture.name), 0u)
          << architecture.name << " has head fixtures now: take it off the list";
      continue;
    }
    EXPECT_EQ(classifiers.count(architecture.name), n.classifier.out.empty() ? 0u : 1u)
        << architecture.name << ": a classifier head without a fixture (make_heads.py)";
    EXPECT_EQ(masked_lm.count(architecture.name), n.masked_lm.transform.empty() ? 0u : 1u)
        << architecture.name << ": a masked-LM head without a fixture (make_heads.py)";
  }
}

absl::StatusOr<std::unique_ptr<Encoder>> LoadDir(const std::string& dir) {
  EncoderOptions options;
  options.threads = 1;
  return Encoder::Load(dir, options);
}

// ModernBERT's head keys are read: an unknown pooling or activation is a
// load error naming the file, the key and the value.
TEST(ModernBertHeadsTest, UnknownPoolingOrActivationIsALoadErrorNamingKeyAndValue) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"classifier_pooling", "max"}, {"classifier_activation", "softplus"}}) {
    for (const char* fixture : {"modernbert_reranker", "modernbert_mlm"}) {
      const std::string dir = EditedFixture(
          fixture, [&, k = key, v = value](nlohmann::json& config) { config[k] = v; });
      absl::StatusOr<std::unique_ptr<Encoder>> encoder = LoadDir(dir);
      if (key == "classifier_pooling" && std::string(fixture) == "modernbert_mlm") {
        // Only the classifier reads it.
        ASSERT_TRUE(encoder.ok()) << encoder.status();
        EXPECT_TRUE((*encoder)->has_masked_lm_head());
        continue;
      }
      ASSERT_FALSE(encoder.ok()) << fixture << " " << key;
      EXPECT_EQ(encoder.status().code(), absl::StatusCode::kInvalidArgument);
      const std::string message(encoder.status().message());
      for (const std::string& part : {dir + "/config.json", key, value}) {
        EXPECT_NE(message.find(part), std::string::npos) << message;
      }
    }
  }
}

std::vector<float> ModernBertRerankerLogits(Encoder& encoder) {
  Encoded encoded;
  EncodeInputs(encoder, Reference("modernbert_reranker"), &encoded);
  std::vector<float> logits;
  for (const auto& row : Logits(encoder, encoded.result)) logits.push_back(row.at(0));
  return logits;
}

// classifier_pooling "cls" (and its absence: the default) reads the first
// token: the logits leave the fixture's, made on the mean.
TEST(ModernBertHeadsTest, ClsPoolingReadsTheFirstToken) {
  const nlohmann::json reference = Reference("modernbert_reranker");
  for (bool erase : {false, true}) {
    const std::string dir = EditedFixture("modernbert_reranker", [&](nlohmann::json& config) {
      if (erase) {
        config.erase("classifier_pooling");
      } else {
        config["classifier_pooling"] = "cls";
      }
    });
    absl::StatusOr<std::unique_ptr<Encoder>> encoder = LoadDir(dir);
    ASSERT_TRUE(encoder.ok()) << encoder.status();
    const std::vector<float> logits = ModernBertRerankerLogits(**encoder);
    float moved = 0.0f;
    for (size_t i = 0; i < logits.size(); ++i) {
      const float want = reference.at("logits").at(i).at(0).get<float>();
      if (i == 0) {
        // The first input has one token: its mean is its first token.
        EXPECT_NEAR(logits[i], want, kLogitsMaxAbs);
      }
      moved = std::max(moved, std::abs(logits[i] - want));
    }
    EXPECT_GT(moved, 100 * kLogitsMaxAbs) << (erase ? "no key" : "cls");
  }
}

// A bias config.json says is there must be in the checkpoint.
TEST(ModernBertHeadsTest, AHeadBiasTheConfigCallsForMustBeInTheCheckpoint) {
  const std::string dir = EditedFixture(
      "modernbert_reranker", [](nlohmann::json& config) { config["classifier_bias"] = true; });
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = LoadDir(dir);
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(std::string(encoder.status().message()).find("head.dense.bias"), std::string::npos)
      << encoder.status();
  const std::string not_bool = EditedFixture(
      "modernbert_mlm", [](nlohmann::json& config) { config["decoder_bias"] = "yes"; });
  encoder = LoadDir(not_bool);
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(std::string(encoder.status().message()).find("\"decoder_bias\" must be true or false"),
            std::string::npos)
      << encoder.status();
}

// decoder_bias false: the masked-LM head has no output bias (the file's is
// not read, the weights move), and a classifier's checkpoint, whose
// head.dense is the same module, still has no masked-LM head.
TEST(ModernBertHeadsTest, WithoutADecoderBias) {
  const auto no_decoder_bias = [](nlohmann::json& config) { config["decoder_bias"] = false; };
  absl::StatusOr<std::unique_ptr<Encoder>> mlm =
      LoadDir(EditedFixture("modernbert_mlm", no_decoder_bias));
  ASSERT_TRUE(mlm.ok()) << mlm.status();
  ASSERT_TRUE((*mlm)->has_masked_lm_head());
  const nlohmann::json reference = Reference("modernbert_mlm");
  Encoded encoded;
  EncodeInputs(**mlm, reference, &encoded);
  std::vector<SparseEntry> entries;
  ASSERT_TRUE((*mlm)->Sparse(encoded.result, 2, SparseOptions(), &entries).ok());
  std::map<int, double> want;
  for (const auto& entry : reference.at("sparse_max").at(2)) {
    want[entry.at(0).get<int>()] = entry.at(1).get<double>();
  }
  double moved = 0.0;
  for (const SparseEntry& e : entries) moved = std::max(moved, std::abs(e.weight - want[e.id]));
  EXPECT_GT(moved, 100 * kSparseMaxRel);

  absl::StatusOr<std::unique_ptr<Encoder>> reranker =
      LoadDir(EditedFixture("modernbert_reranker", no_decoder_bias));
  ASSERT_TRUE(reranker.ok()) << reranker.status();
  EXPECT_NE((*reranker)->classifier(), nullptr);
  EXPECT_FALSE((*reranker)->has_masked_lm_head());
}

}  // namespace
}  // namespace engine
