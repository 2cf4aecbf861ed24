// Reading a model directory's files: every way a file can fail to be read
// gives its path and the OS's reason; JSON syntax errors give their line and
// column.
#include "engine/model_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "nlohmann/json.hpp"
#include "support/files.h"

namespace engine {
namespace {

namespace fs = std::filesystem;
using testing_support::TempDir;

TEST(ModelFilesTest, ReadsAWholeFile) {
  TempDir dir;
  const std::string path = dir.path() + "/config.json";
  std::string content(70000, 'x');  // more than one read's worth
  content += "\nend";
  testing_support::WriteFile(path, content);
  absl::StatusOr<std::string> read = ReadModelFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, content);
  testing_support::WriteFile(path, "");
  EXPECT_EQ(*ReadModelFile(path), "");
}

TEST(ModelFilesTest, FileErrorsGiveThePathAndTheReason) {
  TempDir dir;
  const std::string missing = dir.path() + "/config.json";
  EXPECT_EQ(ReadModelFile(missing).status(),
            absl::NotFoundError(missing + ": cannot open: No such file or directory"));

  const std::string directory = dir.path() + "/vocab.txt";
  fs::create_directory(directory);
  EXPECT_EQ(ReadModelFile(directory).status(),
            absl::FailedPreconditionError(directory + ": cannot read: Is a directory"));

  // A cache snapshot whose blob was never downloaded.
  const std::string dangling = dir.path() + "/tokenizer.json";
  fs::create_symlink("../../blobs/4f2e", dangling);
  EXPECT_EQ(ReadModelFile(dangling).status(),
            absl::NotFoundError(dangling + ": cannot open: No such file or directory (a symlink to "
                                           "../../blobs/4f2e, which is missing)"));

  // A file where a directory should be.
  const std::string file = dir.path() + "/model";
  testing_support::WriteFile(file, "");
  EXPECT_EQ(ReadModelFile(file + "/config.json").status(),
            absl::NotFoundError(file + "/config.json: cannot open: Not a directory"));
}

TEST(ModelFilesTest, AnUnreadableFileIsPermissionDenied) {
  if (geteuid() == 0) {
    GTEST_SKIP() << "running as root, which reads any file; tests/reliability/startup_faults.sh "
                    "checks this error with the server run as nobody";
  }
  TempDir dir;
  const std::string path = dir.path() + "/config.json";
  testing_support::WriteFile(path, "{}");
  fs::permissions(path, fs::perms::none);
  EXPECT_EQ(ReadModelFile(path).status(),
            absl::PermissionDeniedError(path + ": cannot open: Permission denied"));
}

TEST(ModelFilesTest, LineAndColumnCountFromOne) {
  const std::string text = "{\n  \"a\": 1,\n  \"b\": tru\n}";
  EXPECT_EQ(LineAndColumn(text, 0), "line 1, column 1");
  EXPECT_EQ(LineAndColumn(text, 1), "line 1, column 2");  // the first newline ends line 1
  EXPECT_EQ(LineAndColumn(text, 2), "line 2, column 1");
  EXPECT_EQ(LineAndColumn(text, 12), "line 3, column 1");
  EXPECT_EQ(LineAndColumn(text, 19), "line 3, column 8");  // the 't' of tru
  EXPECT_EQ(LineAndColumn(text, text.size()), "line 4, column 2");
  EXPECT_EQ(LineAndColumn(text, text.size() + 7), "line 4, column 2");
  EXPECT_EQ(LineAndColumn("", 0), "line 1, column 1");
}

// What nlohmann::json reports for `text`, as DescribeJsonSyntaxError words it.
std::string SyntaxError(const std::string& text) {
  try {
    const nlohmann::json parsed = nlohmann::json::parse(text);
    return "parsed: " + parsed.dump();
  } catch (const nlohmann::json::parse_error& error) {
    return DescribeJsonSyntaxError(text, error.byte, error.what());
  }
}

TEST(ModelFilesTest, JsonSyntaxErrorsSayWhereTheParserStopped) {
  // A missing comma: the parser stops at the end of the next key, line 5.
  EXPECT_EQ(SyntaxError("{\n  \"model_type\": \"bert\",\n  \"hidden_size\": 64,\n"
                        "  \"vocab_size\": 303\n  \"x\": 1\n}\n"),
            "not valid JSON at line 5, column 5: syntax error while parsing object - unexpected "
            "string literal; expected '}'");
  // Cut short: just past the last byte.
  EXPECT_EQ(SyntaxError("{\"model_type\": \"bert\","),
            "not valid JSON at line 1, column 23: syntax error while parsing object key - "
            "unexpected end of input; expected string literal");
  // Not JSON at all.
  EXPECT_EQ(SyntaxError("hidden_size = 128\n"),
            "not valid JSON at line 1, column 1: syntax error while parsing value - invalid "
            "literal; last read: 'h'");
  // A trailing comma, on line 3.
  EXPECT_EQ(SyntaxError("{\n \"a\": 1,\n}\n"),
            "not valid JSON at line 3, column 1: syntax error while parsing object key - "
            "unexpected '}'; expected string literal");
}

}  // namespace
}  // namespace engine
