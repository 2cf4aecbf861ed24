// engine::ReadTorchFile on files written by real torch (tests/golden/
// make_torch_files.py, torch 1.13): the values must be exactly what torch
// converts to float32 (expected.json, written by torch), and the malicious
// or broken files must be refused with an error naming the cause.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "io/torch_file.h"
#include "nlohmann/json.hpp"

namespace engine {
namespace {

std::string FixturePath(const std::string& name) {
  return std::string(GOLDEN_DIR) + "/torch_files/" + name;
}

nlohmann::json Expected() {
  std::ifstream in(FixturePath("expected.json"));
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// Bitwise equality: -0.0 vs 0.0 or a rounding difference must fail.
bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

void ExpectTorchValues(const std::string& file) {
  SCOPED_TRACE(file);
  const nlohmann::json expected = Expected().at(file);
  absl::StatusOr<TorchStateDict> tensors = ReadTorchFile(FixturePath(file));
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  ASSERT_EQ(tensors->size(), expected.size());
  for (const auto& [name, want] : expected.items()) {
    SCOPED_TRACE(name);
    auto it = tensors->find(name);
    ASSERT_NE(it, tensors->end());
    const TorchTensor& got = it->second;
    EXPECT_EQ(got.dtype, want.at("dtype").get<std::string>());
    EXPECT_EQ(got.shape, want.at("shape").get<std::vector<int64_t>>());
    const std::vector<double> values = want.at("values").get<std::vector<double>>();
    ASSERT_EQ(got.values.size(), values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_TRUE(SameBits(got.values[i], static_cast<float>(values[i])))
          << "element " << i << ": " << got.values[i] << " vs " << values[i];
    }
  }
}

std::string ErrorOf(const std::string& file) {
  absl::StatusOr<TorchStateDict> tensors = ReadTorchFile(FixturePath(file));
  if (tensors.ok()) return "(no error: the file was read)";
  return std::string(tensors.status().message());
}

TEST(TorchFileTest, ExpectedValuesCoverEveryGoodFixture) {
  std::set<std::string> files;
  const nlohmann::json expected = Expected();
  for (const auto& [file, tensors] : expected.items()) files.insert(file);
  EXPECT_EQ(files, (std::set<std::string>{"bare_f64.pt", "deflated.pt", "linear_bf16.pt",
                                          "linear_f16.pt", "linear_f32.pt", "offset_view.pt",
                                          "parameter.pt", "shared.pt", "transposed.pt"}));
}

TEST(TorchFileTest, Float32LinearStateDict) {
  ExpectTorchValues("linear_f32.pt");
  absl::StatusOr<TorchStateDict> tensors = ReadTorchFile(FixturePath("linear_f32.pt"));
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  EXPECT_EQ(tensors->at("weight").shape, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(tensors->at("bias").shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(tensors->at("weight").dtype, "float32");
}

TEST(TorchFileTest, Float16LinearStateDict) { ExpectTorchValues("linear_f16.pt"); }

TEST(TorchFileTest, Bfloat16LinearStateDict) { ExpectTorchValues("linear_bf16.pt"); }

TEST(TorchFileTest, TransposedViewIsCopiedOutRowMajor) { ExpectTorchValues("transposed.pt"); }

TEST(TorchFileTest, ViewWithAStorageOffset) { ExpectTorchValues("offset_view.pt"); }

TEST(TorchFileTest, BareFloat64TensorIsTheEmptyName) { ExpectTorchValues("bare_f64.pt"); }

TEST(TorchFileTest, ParameterInADict) { ExpectTorchValues("parameter.pt"); }

TEST(TorchFileTest, TwoViewsOfOneStorage) { ExpectTorchValues("shared.pt"); }

TEST(TorchFileTest, DeflatedRecordsAreRead) { ExpectTorchValues("deflated.pt"); }

TEST(TorchFileTest, RefusesAZipBomb) {
  // 16 MiB of zeros in an 899-byte file: refused from the record's declared size.
  const std::string error = ErrorOf("zip_bomb.pt");
  EXPECT_NE(error.find("zip record linear_f32/data/0 claims 16777216 bytes, more than a file of "
                       "this size may hold"),
            std::string::npos)
      << error;
}

TEST(TorchFileTest, RefusesAPickleCallingOsSystem) {
  // Python names os.system "posix system" on Linux; the rewritten file says "os system".
  const std::string posix = ErrorOf("evil_posix_system.pt");
  EXPECT_NE(posix.find("evil_posix_system.pt: pickle global \"posix system\" is not allowed"),
            std::string::npos)
      << posix;
  const std::string os = ErrorOf("evil_os_system.pt");
  EXPECT_NE(os.find("pickle global \"os system\" is not allowed (only tensors and ordered dicts "
                    "of them are read)"),
            std::string::npos)
      << os;
}

TEST(TorchFileTest, RefusesAPickleCallingEval) {
  // Protocol 2 names the builtins module "__builtin__"; the rewritten file says "builtins".
  const std::string py2 = ErrorOf("evil_eval.pt");
  EXPECT_NE(py2.find("pickle global \"__builtin__ eval\" is not allowed"), std::string::npos)
      << py2;
  const std::string error = ErrorOf("evil_builtins_eval.pt");
  EXPECT_NE(error.find("pickle global \"builtins eval\" is not allowed"), std::string::npos)
      << error;
}

TEST(TorchFileTest, RefusesATruncatedArchive) {
  const std::string error = ErrorOf("truncated.pt");
  EXPECT_NE(error.find("truncated.pt: not a readable zip archive (truncated"), std::string::npos)
      << error;
}

TEST(TorchFileTest, RefusesAViewPastItsStorage) {
  const std::string error = ErrorOf("past_storage.pt");
  EXPECT_NE(error.find("a tensor view past its storage of 35 elements: offset 0, size (5, 8), "
                       "stride (7, 1)"),
            std::string::npos)
      << error;
}

TEST(TorchFileTest, RefusesAListAtTheTopLevel) {
  const std::string error = ErrorOf("list_top_level.pt");
  EXPECT_NE(error.find("the top-level object is a list, not a dict of tensors or a tensor"),
            std::string::npos)
      << error;
}

TEST(TorchFileTest, RefusesAnOpcodeOutsideTheWhitelist) {
  const std::string error = ErrorOf("bad_opcode.pt");
  EXPECT_NE(error.find("pickle opcode POP (0x30) at byte 288 is not allowed"), std::string::npos)
      << error;
}

TEST(TorchFileTest, RefusesABigEndianFile) {
  const std::string error = ErrorOf("big_endian.pt");
  EXPECT_NE(error.find("byte order \"big\": only little-endian files are read"), std::string::npos)
      << error;
}

TEST(TorchFileTest, RefusesAStorageWithoutItsRecord) {
  const std::string error = ErrorOf("missing_storage.pt");
  EXPECT_NE(error.find("storage 1 has no record linear_f32/data/1"), std::string::npos) << error;
}

TEST(TorchFileTest, ErrorsNameTheFile) {
  const std::string missing = FixturePath("no_such_file.pt");
  absl::StatusOr<TorchStateDict> tensors = ReadTorchFile(missing);
  ASSERT_FALSE(tensors.ok());
  EXPECT_NE(tensors.status().message().find(missing), std::string::npos) << tensors.status();
}

TEST(TorchFileTest, ParsesBytesInMemoryAndRefusesEmptyOnes) {
  std::ifstream in(FixturePath("linear_f32.pt"), std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string file = bytes.str();
  absl::StatusOr<TorchStateDict> tensors =
      ParseTorchFile(reinterpret_cast<const uint8_t*>(file.data()), file.size(), "mem.pt");
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  EXPECT_EQ(tensors->size(), 2u);
  absl::StatusOr<TorchStateDict> empty = ParseTorchFile(nullptr, 0, "empty.pt");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty.pt: empty file"), std::string::npos)
      << empty.status();
}

}  // namespace
}  // namespace engine
