// common/flag_help.h: which flags "<binary> COMMAND --help" lists, and
// which argument names the command.
#include "common/flag_help.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

const std::vector<std::string> kCommands = {"encode", "bench", "make-model"};

TEST(FlagHelpTest, AFlagNamingCommandsBelongsOnlyToThem) {
  EXPECT_TRUE(common::FlagBelongsToCommand("encode, bench: fp32 or int8", "bench", kCommands));
  EXPECT_FALSE(
      common::FlagBelongsToCommand("encode, bench: fp32 or int8", "make-model", kCommands));
  EXPECT_FALSE(common::FlagBelongsToCommand("make-model: hidden size", "encode", kCommands));
}

TEST(FlagHelpTest, AFlagNamingNoCommandBelongsToAll) {
  EXPECT_TRUE(common::FlagBelongsToCommand("model directory", "encode", kCommands));
  // A colon after words that are not all commands is part of the description.
  EXPECT_TRUE(common::FlagBelongsToCommand("threads (0: all CPUs)", "make-model", kCommands));
  EXPECT_TRUE(common::FlagBelongsToCommand("encode, later: x", "bench", kCommands));
  EXPECT_TRUE(common::FlagBelongsToCommand("make-model: hidden size", "", kCommands));
}

TEST(FlagHelpTest, TheCommandIsTheFirstPositionalArgumentWhenKnown) {
  EXPECT_EQ(common::CommandNamedIn({"cli", "--threads=2", "bench", "--help"}, kCommands), "bench");
  EXPECT_EQ(common::CommandNamedIn({"cli", "--help"}, kCommands), "");
  EXPECT_EQ(common::CommandNamedIn({"cli", "serve", "--help"}, kCommands), "");
  EXPECT_EQ(common::CommandNamedIn({"cli", "--", "bench"}, kCommands), "");
}

}  // namespace
