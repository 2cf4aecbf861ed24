// BAAI/bge-m3's three outputs (engine/heads.h: dense, lexical weights,
// ColBERT vectors) against the PyTorch fixture of
// tests/golden/make_multi_vector.py: float32 within 1e-4 of torch's float64
// (float32 torch on the same weights stays within 2.5e-6: its check (c)),
// int8 within cosine 0.99; and the load rules for the torch.save heads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/encoder.h"
#include "engine/heads.h"
#include "nlohmann/json.hpp"
#include "support/files.h"

namespace engine {
// Named: a unity build shares one translation unit between test files.
namespace multi_vector_test {
namespace {

namespace fs = std::filesystem;

constexpr double kMaxAbs = 1e-4;
// int8 activations and weights: the dense and ColBERT vectors' cosine with
// float64 torch, and the lexical weights' (as vectors over token ids).
constexpr double kInt8MinCosine = 0.99;
// Weights this small may be kept or dropped by float32 rounding of a logit
// near zero: the sets of ids are compared above it.
constexpr double kSparseThreshold = 1e-4;

const std::string kFixture = std::string(GOLDEN_DIR) + "/multi_vector/bge_m3";

nlohmann::json Reference() {
  return nlohmann::json::parse(testing_support::ReadFile(kFixture + "/reference.json"));
}

std::unique_ptr<Encoder> Load(const std::string& dir, Precision precision = Precision::kFloat32) {
  EncoderOptions options;
  options.threads = 1;
  options.max_batch_tokens = 512;
  options.precision = precision;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Load(dir, options);
  EXPECT_TRUE(encoder.ok()) << encoder.status();
  return encoder.ok() ? *std::move(encoder) : nullptr;
}

struct Outputs {
  std::vector<std::vector<float>> dense;
  std::vector<std::map<int32_t, float>> sparse;
  std::vector<std::vector<std::vector<float>>> colbert;
};

// The fixture's inputs in one packed batch, and the three outputs of each.
Outputs RunFixture(Encoder& encoder, const nlohmann::json& reference) {
  std::vector<std::vector<int32_t>> ids;
  for (const auto& input : reference.at("inputs")) {
    ids.push_back(input.at("ids").get<std::vector<int32_t>>());
  }
  std::vector<Sequence> batch;
  for (const auto& sequence : ids) batch.push_back({sequence, {}});
  EncodeResult result;
  Outputs out;
  EXPECT_TRUE(encoder.Encode(batch, &result).ok());
  const int dim = encoder.multi_vector()->dimensions;
  for (int i = 0; i < result.num_sequences(); ++i) {
    std::vector<float> dense(static_cast<size_t>(result.hidden_size));
    EXPECT_TRUE(encoder.Pool(result, i, Pooling::kCls, true, dense.data()).ok());
    out.dense.push_back(dense);
    std::vector<SparseEntry> entries;
    EXPECT_TRUE(encoder.LexicalWeights(result, i, ids[i], 0, &entries).ok());
    std::map<int32_t, float> sparse;
    for (const SparseEntry& e : entries) sparse[e.id] = e.weight;
    out.sparse.push_back(sparse);
    std::vector<float> vectors;
    int rows = 0;
    EXPECT_TRUE(encoder.MultiVectors(result, i, {}, &vectors, &rows).ok());
    std::vector<std::vector<float>> colbert;
    for (int r = 0; r < rows; ++r) {
      colbert.emplace_back(vectors.begin() + r * dim, vectors.begin() + (r + 1) * dim);
    }
    out.colbert.push_back(colbert);
  }
  return out;
}

double Cosine(const std::vector<float>& a, const std::vector<double>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    dot += a[k] * b[k];
    na += static_cast<double>(a[k]) * a[k];
    nb += b[k] * b[k];
  }
  return dot / std::sqrt(na * nb);
}

std::map<int32_t, double> SparseReference(const nlohmann::json& pairs) {
  std::map<int32_t, double> weights;
  for (const auto& pair : pairs) weights[pair.at(0).get<int32_t>()] = pair.at(1).get<double>();
  return weights;
}

TEST(BgeM3Test, LoadsBothTorchSaveHeads) {
  std::unique_ptr<Encoder> encoder = Load(kFixture + "/model");
  ASSERT_NE(encoder, nullptr);
  EXPECT_TRUE(encoder->has_lexical_weights());
  ASSERT_NE(encoder->multi_vector(), nullptr);
  EXPECT_EQ(encoder->multi_vector()->dimensions, Reference().at("colbert_dim").get<int>());
  EXPECT_TRUE(encoder->multi_vector()->skip_first_token);
}

TEST(BgeM3Test, Fp32OutputsMatchPyTorch) {
  const nlohmann::json reference = Reference();
  std::unique_ptr<Encoder> encoder = Load(kFixture + "/model");
  ASSERT_NE(encoder, nullptr);
  const Outputs out = RunFixture(*encoder, reference);
  const size_t n = reference.at("inputs").size();
  ASSERT_EQ(out.dense.size(), n);
  for (size_t i = 0; i < n; ++i) {
    const auto dense = reference.at("dense").at(i).get<std::vector<double>>();
    ASSERT_EQ(out.dense[i].size(), dense.size());
    for (size_t k = 0; k < dense.size(); ++k) {
      EXPECT_NEAR(out.dense[i][k], dense[k], kMaxAbs) << "dense " << i << "[" << k << "]";
    }
    const std::map<int32_t, double> sparse = SparseReference(reference.at("sparse").at(i));
    for (const auto& [id, weight] : sparse) {
      if (weight <= kSparseThreshold) continue;
      ASSERT_TRUE(out.sparse[i].count(id)) << "input " << i << ": id " << id << " missing";
      EXPECT_NEAR(out.sparse[i].at(id), weight, kMaxAbs) << "input " << i << " id " << id;
    }
    for (const auto& [id, weight] : out.sparse[i]) {
      if (weight <= kSparseThreshold) continue;
      EXPECT_TRUE(sparse.count(id)) << "input " << i << ": id " << id << " is not in torch's";
    }
    const auto colbert = reference.at("colbert").at(i).get<std::vector<std::vector<double>>>();
    ASSERT_EQ(out.colbert[i].size(), colbert.size()) << "input " << i;
    for (size_t r = 0; r < colbert.size(); ++r) {
      for (size_t k = 0; k < colbert[r].size(); ++k) {
        EXPECT_NEAR(out.colbert[i][r][k], colbert[r][k], kMaxAbs)
            << "colbert " << i << " row " << r << "[" << k << "]";
      }
    }
  }
}

TEST(BgeM3Test, LexicalWeightsLeaveOutSpecialTokensAndKeepTheLargest) {
  const nlohmann::json reference = Reference();
  std::unique_ptr<Encoder> encoder = Load(kFixture + "/model");
  ASSERT_NE(encoder, nullptr);
  const Outputs out = RunFixture(*encoder, reference);
  for (const auto& sparse : out.sparse) {
    for (const int32_t special : {0, 1, 2, 3}) EXPECT_EQ(sparse.count(special), 0u) << special;
  }
  // max_active_dims keeps the largest, in order.
  std::vector<int32_t> ids = reference.at("inputs").at(5).at("ids").get<std::vector<int32_t>>();
  EncodeResult result;
  std::vector<Sequence> batch = {{ids, {}}};
  ASSERT_TRUE(encoder->Encode(batch, &result).ok());
  std::vector<SparseEntry> all, top;
  ASSERT_TRUE(encoder->LexicalWeights(result, 0, ids, 0, &all).ok());
  ASSERT_TRUE(encoder->LexicalWeights(result, 0, ids, 3, &top).ok());
  ASSERT_GT(all.size(), 3u);
  ASSERT_EQ(top.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(top[k].id, all[k].id);
    if (k > 0) {
      EXPECT_GE(top[k - 1].weight, top[k].weight);
    }
  }
  EXPECT_EQ(encoder->LexicalWeights(result, 0, absl::MakeSpan(ids).subspan(1), 0, &all).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BgeM3Test, KeepFlagsChooseTheColbertVectors) {
  const nlohmann::json reference = Reference();
  std::unique_ptr<Encoder> encoder = Load(kFixture + "/model");
  ASSERT_NE(encoder, nullptr);
  std::vector<int32_t> ids = reference.at("inputs").at(3).at("ids").get<std::vector<int32_t>>();
  EncodeResult result;
  std::vector<Sequence> batch = {{ids, {}}};
  ASSERT_TRUE(encoder->Encode(batch, &result).ok());
  std::vector<uint8_t> keep(ids.size(), 0);
  keep[0] = 1;  // the first token is never a bge-m3 ColBERT vector
  keep[4] = 1;
  keep[7] = 1;
  std::vector<float> vectors;
  int rows = 0;
  ASSERT_TRUE(encoder->MultiVectors(result, 0, keep, &vectors, &rows).ok());
  ASSERT_EQ(rows, 2);
  const auto colbert = reference.at("colbert").at(3).get<std::vector<std::vector<double>>>();
  const int dim = encoder->multi_vector()->dimensions;
  for (int k = 0; k < dim; ++k) {
    EXPECT_NEAR(vectors[k], colbert[3][k], kMaxAbs);  // token 4 is ColBERT row 3
    EXPECT_NEAR(vectors[dim + k], colbert[6][k], kMaxAbs);
  }
  keep.pop_back();
  EXPECT_EQ(encoder->MultiVectors(result, 0, keep, &vectors, &rows).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BgeM3Test, Int8OutputsStayWithinCosine) {
  const nlohmann::json reference = Reference();
  std::unique_ptr<Encoder> encoder = Load(kFixture + "/model", Precision::kInt8);
  ASSERT_NE(encoder, nullptr);
  const Outputs out = RunFixture(*encoder, reference);
  for (size_t i = 0; i < out.dense.size(); ++i) {
    EXPECT_GE(Cosine(out.dense[i], reference.at("dense").at(i).get<std::vector<double>>()),
              kInt8MinCosine)
        << "dense " << i;
    const std::map<int32_t, double> sparse = SparseReference(reference.at("sparse").at(i));
    std::vector<float> got;
    std::vector<double> want;
    for (const auto& [id, weight] : sparse) {
      want.push_back(weight);
      got.push_back(out.sparse[i].count(id) ? out.sparse[i].at(id) : 0.0f);
    }
    for (const auto& [id, weight] : out.sparse[i]) {
      if (!sparse.count(id)) {
        want.push_back(0.0);
        got.push_back(weight);
      }
    }
    EXPECT_GE(Cosine(got, want), kInt8MinCosine) << "sparse " << i;
    const auto colbert = reference.at("colbert").at(i).get<std::vector<std::vector<double>>>();
    ASSERT_EQ(out.colbert[i].size(), colbert.size());
    for (size_t r = 0; r < colbert.size(); ++r) {
      EXPECT_GE(Cosine(out.colbert[i][r], colbert[r]), kInt8MinCosine)
          << "colbert " << i << " row " << r;
    }
  }
}

// PyLate's ColBERT layout (tests/golden/multi_vector/colbert): the
// projection of modules.json's pylate.models.Dense.Dense on every token;
// queries expanded with [MASK] that no token attends to (visible_keys), as
// PyLate's attention_mask 0 on them does.
const std::string kColbert = std::string(GOLDEN_DIR) + "/multi_vector/colbert";

// The two layouts of the same weights: PyLate's (skiplist . , ! ?) and
// colbert-ir's HF_ColBERT (linear.weight in the checkpoint, artifact.metadata;
// mask_punctuation also skips ";").
struct ColbertLayout {
  std::string fixture;
  std::vector<int32_t> skip_ids;  // the skiplist's ids in the fixtures' vocabulary
};

class ColbertLayoutTest : public ::testing::TestWithParam<ColbertLayout> {};

TEST_P(ColbertLayoutTest, VectorsMatchPyTorchWithHiddenExpansionTokens) {
  const std::string dir = std::string(GOLDEN_DIR) + "/multi_vector/" + GetParam().fixture;
  const nlohmann::json reference =
      nlohmann::json::parse(testing_support::ReadFile(dir + "/reference.json"));
  std::unique_ptr<Encoder> encoder = Load(dir + "/model");
  ASSERT_NE(encoder, nullptr);
  ASSERT_NE(encoder->multi_vector(), nullptr);
  EXPECT_FALSE(encoder->multi_vector()->skip_first_token);
  EXPECT_FALSE(encoder->multi_vector()->mean_score);
  const int dim = encoder->multi_vector()->dimensions;
  ASSERT_EQ(dim, reference.at("dim").get<int>());
  EXPECT_FALSE(encoder->has_lexical_weights());
  const std::vector<int32_t>& skip = GetParam().skip_ids;
  for (const char* kind : {"queries", "documents"}) {
    const bool queries = std::string(kind) == "queries";
    std::vector<std::vector<int32_t>> ids;
    std::vector<Sequence> batch;
    for (const auto& item : reference.at(kind)) ids.push_back(item.at("ids"));
    for (size_t i = 0; i < ids.size(); ++i) {
      const int visible = queries ? reference.at(kind).at(i).at("visible_keys").get<int>() : 0;
      batch.push_back({ids[i], {}, visible == static_cast<int>(ids[i].size()) ? 0 : visible});
    }
    EncodeResult result;
    ASSERT_TRUE(encoder->Encode(batch, &result).ok());
    for (size_t i = 0; i < ids.size(); ++i) {
      std::vector<uint8_t> keep;
      if (!queries) {
        for (const int32_t id : ids[i]) {
          keep.push_back(std::find(skip.begin(), skip.end(), id) == skip.end() ? 1 : 0);
        }
      }
      std::vector<float> vectors;
      int rows = 0;
      ASSERT_TRUE(encoder->MultiVectors(result, static_cast<int>(i), keep, &vectors, &rows).ok());
      const auto want =
          reference.at(kind).at(i).at("vectors").get<std::vector<std::vector<double>>>();
      ASSERT_EQ(rows, static_cast<int>(want.size())) << kind << " " << i;
      for (int r = 0; r < rows; ++r) {
        for (int k = 0; k < dim; ++k) {
          EXPECT_NEAR(vectors[r * dim + k], want[r][k], kMaxAbs)
              << kind << " " << i << " row " << r << "[" << k << "]";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ColbertLayoutTest,
                         ::testing::Values(ColbertLayout{"colbert", {33, 34, 35, 36}},
                                           ColbertLayout{"colbertv2", {33, 34, 35, 36, 37}}),
                         [](const ::testing::TestParamInfo<ColbertLayout>& info) {
                           return info.param.fixture;
                         });

TEST(ColbertTest, AttendingToTheExpansionTokensChangesTheQuery) {
  // The same query with every key visible: what a server that ignored
  // attend_to_expansion_tokens false would compute. Far from PyTorch's.
  const nlohmann::json reference =
      nlohmann::json::parse(testing_support::ReadFile(kColbert + "/reference.json"));
  std::unique_ptr<Encoder> encoder = Load(kColbert + "/model");
  ASSERT_NE(encoder, nullptr);
  const auto ids = reference.at("queries").at(1).at("ids").get<std::vector<int32_t>>();
  ASSERT_LT(reference.at("queries").at(1).at("visible_keys").get<size_t>(), ids.size());
  std::vector<Sequence> batch = {{ids, {}}};
  EncodeResult result;
  ASSERT_TRUE(encoder->Encode(batch, &result).ok());
  std::vector<float> vectors;
  int rows = 0;
  ASSERT_TRUE(encoder->MultiVectors(result, 0, {}, &vectors, &rows).ok());
  const auto want =
      reference.at("queries").at(1).at("vectors").get<std::vector<std::vector<double>>>();
  double moved = 0;
  for (int r = 0; r < rows; ++r) {
    for (size_t k = 0; k < want[r].size(); ++k) {
      moved = std::max(moved, std::abs(vectors[r * want[r].size() + k] - want[r][k]));
    }
  }
  EXPECT_GT(moved, 100 * kMaxAbs);
  // visible_keys beyond the sequence is refused.
  batch[0].visible_keys = static_cast<int>(ids.size()) + 1;
  EXPECT_EQ(encoder->Encode(batch, &result).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ColbertTest, MaxSimScoresAsPyLate) {
  // MaxSim over the reference's own vectors (sum; bge-m3's mean divides by
  // the query's vector count).
  const nlohmann::json reference =
      nlohmann::json::parse(testing_support::ReadFile(kColbert + "/reference.json"));
  MultiVectorHead head;
  head.dimensions = reference.at("dim").get<int>();
  const auto flat = [](const nlohmann::json& rows) {
    std::vector<float> out;
    for (const auto& row : rows) {
      for (const auto& v : row) out.push_back(v.get<float>());
    }
    return out;
  };
  for (size_t q = 0; q < reference.at("queries").size(); ++q) {
    const auto query = flat(reference.at("queries").at(q).at("vectors"));
    const int query_rows = static_cast<int>(reference.at("queries").at(q).at("vectors").size());
    for (size_t d = 0; d < reference.at("documents").size(); ++d) {
      const auto document = flat(reference.at("documents").at(d).at("vectors"));
      const int document_rows =
          static_cast<int>(reference.at("documents").at(d).at("vectors").size());
      const double want = reference.at("scores").at(q).at(d).get<double>();
      head.mean_score = false;
      EXPECT_NEAR(MaxSimScore(head, query.data(), query_rows, document.data(), document_rows), want,
                  1e-5);
      head.mean_score = true;
      EXPECT_NEAR(MaxSimScore(head, query.data(), query_rows, document.data(), document_rows),
                  want / query_rows, 1e-6);
    }
  }
}

// A copy of the fixture with one of its files replaced.
class BgeM3LoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_support::MakeTempDir("bge_m3_load");
    fs::copy(kFixture + "/model", dir_, fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(BgeM3LoadTest, WithoutTheTorchFilesTheModelHasNeitherHead) {
  fs::remove(dir_ + "/sparse_linear.pt");
  fs::remove(dir_ + "/colbert_linear.pt");
  std::unique_ptr<Encoder> encoder = Load(dir_);
  ASSERT_NE(encoder, nullptr);
  EXPECT_FALSE(encoder->has_lexical_weights());
  EXPECT_EQ(encoder->multi_vector(), nullptr);
  EncodeResult result;
  std::vector<int32_t> ids = {0, 5, 2};
  std::vector<Sequence> batch = {{ids, {}}};
  ASSERT_TRUE(encoder->Encode(batch, &result).ok());
  std::vector<SparseEntry> entries;
  EXPECT_EQ(encoder->LexicalWeights(result, 0, ids, 0, &entries).code(),
            absl::StatusCode::kFailedPrecondition);
  std::vector<float> vectors;
  int rows = 0;
  EXPECT_EQ(encoder->MultiVectors(result, 0, {}, &vectors, &rows).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(BgeM3LoadTest, AHeadOfTheWrongWidthIsALoadErrorNamingTheFile) {
  // colbert_linear.pt in place of sparse_linear.pt: [D, H] where [1, H] is due.
  fs::copy_file(dir_ + "/colbert_linear.pt", dir_ + "/sparse_linear.pt",
                fs::copy_options::overwrite_existing);
  EncoderOptions options;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Load(dir_, options);
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(encoder.status().message().find("sparse_linear.pt"), std::string::npos)
      << encoder.status();
}

TEST_F(BgeM3LoadTest, ATruncatedTorchFileIsALoadErrorNamingTheFile) {
  const std::string bytes = testing_support::ReadFile(dir_ + "/colbert_linear.pt");
  testing_support::WriteFile(dir_ + "/colbert_linear.pt", bytes.substr(0, bytes.size() / 2));
  EncoderOptions options;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Load(dir_, options);
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(encoder.status().message().find("colbert_linear.pt"), std::string::npos)
      << encoder.status();
}

}  // namespace
}  // namespace multi_vector_test
}  // namespace engine
