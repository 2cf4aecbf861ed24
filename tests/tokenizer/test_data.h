// The committed golden data (tests/golden/tokenizer) and helpers shared by the tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/tokenizer.h"
#include "support/files.h"

namespace engine::tokenizer_test {

// tests/golden/tokenizer and its copy of the bert-base-uncased files.
std::string GoldenDir();
std::string BertDir();

// corpus.jsonl: the decoded texts, index 0 = line 1.
const std::vector<std::string>& Corpus();

struct Reference {
  int line = 0;                                  // 1-based line in corpus.jsonl
  int pair_line = 0;                             // 0: a single text
  int max_length = 0;                            // 0: no truncation
  TruncationSide side = TruncationSide::kRight;  // "direction": "left" in the file
  bool add_special_tokens = true;                // false: without the post-processor's tokens
  std::vector<int> ids;
  std::vector<int> type_ids;  // empty: all 0
  bool has_offsets = false;   // byte offsets, compared when the file has them
  std::vector<std::pair<int, int>> offsets;
  bool has_decoded = false;  // `decoded` is Decode(ids, skip_special_tokens=true)
  std::string decoded;
  bool has_decoded_special = false;  // `decoded_special` is Decode(ids, false)
  std::string decoded_special;
};
// A reference file of records as above.
std::vector<Reference> ReadReferences(const std::string& path);
// rust/<name>.jsonl: the Rust crate's records for a tokenizer (make_rust_reference.mjs),
// read once per process.
const std::vector<Reference>& RustReferences(const std::string& name);

// ../shared/tokenizers: the real tokenizer files, read in place (not in the repository).
std::string SharedTokenizersDir();

// The record's texts through `tok` (Encode or EncodePair, with its max_length
// and add_special_tokens).
absl::StatusOr<Encoding> EncodeReference(const Tokenizer& tok, const Reference& r);
std::string DescribeReference(const Reference& r);
// Compares every record's ids, token types and (where recorded) offsets; returns how many matched
// and describes the first few mismatches in *report.
int CompareAll(const Tokenizer& tok, const std::vector<Reference>& refs, std::string* report,
               bool compare_offsets = true);

// A tokenizer by name: "bert-base-uncased" (the copy in GoldenDir()), a
// directory of SharedTokenizersDir(), or "parts--<x>" (GoldenDir()/parts/<x>.json:
// a merge patch over one of those); loaded once per process.
const Tokenizer& NamedTokenizer(const std::string& name);

// A tokenizer's name as a gtest parameter name (letters, digits and '_').
std::string TestNameOf(std::string name);

// The bert-base-uncased tokenizer loaded from tokenizer.json (shared, loaded once).
const Tokenizer& Bert();

// Scratch directories and whole files: the support library's.
using testing_support::MakeTempDir;
using testing_support::ReadFile;
using testing_support::WriteFile;

// Printable form of a text for failure messages (escapes controls, keeps UTF-8).
std::string Escape(const std::string& text);

}  // namespace engine::tokenizer_test
