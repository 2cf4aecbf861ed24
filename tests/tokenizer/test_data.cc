#include "test_data.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/mutex.h"
#include "nlohmann/json.hpp"

namespace engine::tokenizer_test {
namespace {

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace

std::string GoldenDir() { return TOKENIZER_GOLDEN_DIR; }
std::string BertDir() { return GoldenDir() + "/bert-base-uncased"; }

const std::vector<std::string>& Corpus() {
  static const std::vector<std::string> corpus = [] {
    std::vector<std::string> texts;
    for (const std::string& line : ReadLines(GoldenDir() + "/corpus.jsonl")) {
      texts.push_back(nlohmann::json::parse(line).get<std::string>());
    }
    return texts;
  }();
  return corpus;
}

std::string SharedTokenizersDir() { return SHARED_TOKENIZERS_DIR; }

std::vector<Reference> ReadReferences(const std::string& path) {
  std::vector<Reference> out;
  for (const std::string& line : ReadLines(path)) {
    const auto j = nlohmann::json::parse(line);
    Reference r;
    r.line = j.at("line").get<int>();
    r.pair_line = j.value("pair_line", 0);
    r.max_length = j.value("max_length", 0);
    if (j.value("direction", "right") == "left") r.side = TruncationSide::kLeft;
    r.add_special_tokens = j.value("add_special_tokens", true);
    r.ids = j.at("ids").get<std::vector<int>>();
    if (j.contains("type_ids")) r.type_ids = j.at("type_ids").get<std::vector<int>>();
    if (j.contains("offsets")) {
      r.has_offsets = true;
      r.offsets = j.at("offsets").get<std::vector<std::pair<int, int>>>();
    }
    if (j.contains("decoded")) {
      r.has_decoded = true;
      r.decoded = j.at("decoded").get<std::string>();
    }
    if (j.contains("decoded_special")) {
      r.has_decoded_special = true;
      r.decoded_special = j.at("decoded_special").get<std::string>();
    }
    out.push_back(std::move(r));
  }
  return out;
}

const std::vector<Reference>& RustReferences(const std::string& name) {
  static common::Mutex mu;
  static std::map<std::string, std::vector<Reference>> cache ABSL_GUARDED_BY(mu);
  common::MutexLock lock(&mu);
  auto it = cache.find(name);
  if (it == cache.end()) {
    it = cache.emplace(name, ReadReferences(GoldenDir() + "/rust/" + name + ".jsonl")).first;
  }
  return it->second;
}

absl::StatusOr<Encoding> EncodeReference(const Tokenizer& tok, const Reference& r) {
  const std::string& text = Corpus().at(r.line - 1);
  if (r.pair_line == 0) return tok.Encode(text, r.max_length, r.side, r.add_special_tokens);
  return tok.EncodePair(text, Corpus().at(r.pair_line - 1), r.max_length, r.side,
                        r.add_special_tokens);
}

std::string DescribeReference(const Reference& r) {
  std::string s = absl::StrCat("corpus.jsonl:", r.line);
  if (r.pair_line) absl::StrAppend(&s, " + corpus.jsonl:", r.pair_line);
  if (r.max_length) absl::StrAppend(&s, " max_length=", r.max_length);
  if (r.side == TruncationSide::kLeft) absl::StrAppend(&s, " direction=left");
  if (!r.add_special_tokens) absl::StrAppend(&s, " add_special_tokens=false");
  absl::StrAppend(&s, " \"", Escape(Corpus().at(r.line - 1)).substr(0, 200), "\"");
  return s;
}

// Compares every reference record; returns how many matched and describes
// the first few mismatches.
int CompareAll(const Tokenizer& tok, const std::vector<Reference>& refs, std::string* report,
               bool compare_offsets) {
  int identical = 0;
  int reported = 0;
  for (const Reference& r : refs) {
    absl::StatusOr<Encoding> enc = EncodeReference(tok, r);
    std::vector<int> ids;
    std::vector<int> types;
    if (enc.ok()) {
      ids.assign(enc->ids.begin(), enc->ids.end());
      types.assign(enc->token_type_ids.begin(), enc->token_type_ids.end());
    }
    const std::vector<int> want_types =
        r.type_ids.empty() ? std::vector<int>(r.ids.size(), 0) : r.type_ids;
    const bool offsets_match =
        !compare_offsets || !r.has_offsets || (enc.ok() && enc->offsets == r.offsets);
    if (enc.ok() && ids == r.ids && types == want_types && offsets_match) {
      ++identical;
      continue;
    }
    if (++reported <= 10) {
      absl::StrAppend(report, "\n", DescribeReference(r), "\n  want ids ",
                      absl::StrJoin(r.ids, " "), "\n  got  ids ", absl::StrJoin(ids, " "));
      if (!offsets_match) {
        const auto pairs = [](const std::vector<std::pair<int, int>>& v) {
          return absl::StrJoin(v, " ", absl::PairFormatter(","));
        };
        absl::StrAppend(report, "\n  want offsets ", pairs(r.offsets), "\n  got  offsets ",
                        enc.ok() ? pairs(enc->offsets) : "");
      }
      if (enc.ok()) {
        absl::StrAppend(report, "\n  got tokens ", absl::StrJoin(enc->tokens, " "));
      } else {
        absl::StrAppend(report, "\n  error ", enc.status().ToString());
      }
    }
  }
  return identical;
}

namespace {

std::string TokenizerDir(const std::string& name) {
  return name == "bert-base-uncased" ? BertDir() : SharedTokenizersDir() + "/" + name;
}

// "parts--<x>": parts/<x>.json's merge patch over its base tokenizer.json,
// written to a temporary directory (as make_rust_reference.mjs does).
std::string PartsDir(const std::string& name) {
  const std::string spec_path = absl::StrCat(GoldenDir(), "/parts/", name.substr(7), ".json");
  const nlohmann::json spec = nlohmann::json::parse(ReadFile(spec_path));
  nlohmann::json tokenizer = nlohmann::json::parse(
      ReadFile(TokenizerDir(spec.at("base").get<std::string>()) + "/tokenizer.json"));
  tokenizer.merge_patch(spec.at("patch"));
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/tokenizer.json", tokenizer.dump());
  return dir;
}

}  // namespace

const Tokenizer& NamedTokenizer(const std::string& name) {
  static common::Mutex mu;
  static std::map<std::string, std::unique_ptr<Tokenizer>> loaded ABSL_GUARDED_BY(mu);
  common::MutexLock lock(&mu);
  auto& slot = loaded[name];
  if (slot == nullptr) {
    const std::string dir = name.rfind("parts--", 0) == 0 ? PartsDir(name) : TokenizerDir(name);
    const auto start = std::chrono::steady_clock::now();
    auto tok = Tokenizer::Load(dir);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!tok.ok()) throw std::runtime_error(tok.status().ToString());
    // The load time is printed, not asserted: timing depends on the machine.
    std::cout << "[load] " << name << ": " << ms << " ms, " << (*tok)->vocab_size() << " tokens\n";
    slot = *std::move(tok);
  }
  return *slot;
}

std::string TestNameOf(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

const Tokenizer& Bert() {
  static const std::unique_ptr<Tokenizer> tokenizer = [] {
    auto t = Tokenizer::Load(BertDir());
    if (!t.ok()) throw std::runtime_error(std::string(t.status().message()));
    return *std::move(t);
  }();
  return *tokenizer;
}

std::string Escape(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7F) {
      out += absl::StrCat("\\x", absl::Hex(c, absl::kZeroPad2));
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

}  // namespace engine::tokenizer_test
