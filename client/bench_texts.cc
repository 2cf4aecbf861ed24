#include "client/bench_texts.h"

#include <charconv>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace client {
namespace {

// Common English words: one token each in BERT's vocabulary and in the demo
// model's (encoder-cli make-model).
constexpr const char* kWords[] = {
    "the",   "of",    "and",   "to",     "in",    "is",    "that",   "for",   "it",    "as",
    "was",   "with",  "be",    "by",     "on",    "not",   "he",     "this",  "are",   "or",
    "his",   "from",  "at",    "which",  "but",   "have",  "an",     "had",   "they",  "you",
    "were",  "their", "one",   "all",    "we",    "can",   "her",    "has",   "there", "been",
    "if",    "more",  "when",  "will",   "would", "who",   "so",     "no",    "what",  "up",
    "out",   "about", "time",  "into",   "only",  "some",  "could",  "new",   "them",  "man",
    "other", "then",  "do",    "first",  "any",   "my",    "now",    "such",  "like",  "our",
    "over",  "me",    "even",  "most",   "made",  "after", "also",   "did",   "many",  "before",
    "must",  "back",  "years", "where",  "much",  "your",  "way",    "well",  "down",  "should",
    "each",  "just",  "those", "people", "how",   "too",   "little", "state", "good",  "very",
    "make",  "world", "still", "own",    "see",   "men",   "work",   "long",  "get",   "here"};

bool ParsePositive(absl::string_view text, int* value) {
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, *value);
  return !text.empty() && error == std::errc() && ptr == end && *value > 0;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ReadTextLines(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(file, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  if (lines.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no texts"));
  return lines;
}

std::vector<std::string> SyntheticTexts(int count, int min_words, int max_words,
                                        std::mt19937_64& random) {
  std::uniform_int_distribution<int> length(min_words, max_words);
  std::uniform_int_distribution<size_t> word(0, std::size(kWords) - 1);
  std::vector<std::string> texts(static_cast<size_t>(count));
  for (std::string& text : texts) {
    const int words = length(random);
    for (int w = 0; w < words; ++w) absl::StrAppend(&text, w > 0 ? " " : "", kWords[word(random)]);
  }
  return texts;
}

encoder::v1::EncodeRequest BenchRequests::Unique(uint64_t i) const {
  encoder::v1::EncodeRequest request = Next(i);
  constexpr uint64_t kBase = std::size(kWords);
  for (int k = 0; k < request.inputs_size(); ++k) {
    uint64_t n = i * static_cast<uint64_t>(request.inputs_size()) + static_cast<uint64_t>(k);
    std::string prefix;
    for (int w = 0; w < 3; ++w, n /= kBase) absl::StrAppend(&prefix, kWords[n % kBase], " ");
    encoder::v1::Input* input = request.mutable_inputs(k);
    input->set_text(prefix + input->text());
  }
  return request;
}

absl::Status ParseWordRange(const std::string& text, int* min_words, int* max_words) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  const bool ok = (parts.size() == 1 && ParsePositive(parts[0], min_words) &&
                   ParsePositive(parts[0], max_words)) ||
                  (parts.size() == 2 && ParsePositive(parts[0], min_words) &&
                   ParsePositive(parts[1], max_words) && *min_words <= *max_words);
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--text-words must be MIN:MAX with 0 < MIN <= MAX, or N (got \"", text, "\")"));
}

BenchRequests::BenchRequests(const std::vector<std::string>& texts, int inputs_per_request,
                             encoder::v1::Pooling pooling, bool normalize, bool truncate,
                             const std::string& model) {
  const auto make = [&] {
    encoder::v1::EncodeRequest request;
    request.set_model(model);
    request.set_pooling(pooling);
    request.set_normalize(normalize);
    if (truncate) request.set_truncate(true);  // unset: the server's --auto-truncate
    return request;
  };
  // Enough requests to use every text once (at least one request).
  const size_t count = (texts.size() + inputs_per_request - 1) / inputs_per_request;
  size_t next = 0;
  for (size_t r = 0; r < std::max<size_t>(count, 1); ++r) {
    encoder::v1::EncodeRequest request = make();
    for (int i = 0; i < inputs_per_request; ++i) {
      request.add_inputs()->set_text(texts[next++ % texts.size()]);
    }
    requests_.push_back(std::move(request));
  }
  invalid_ = requests_.front();
  invalid_.mutable_inputs(invalid_.inputs_size() - 1)->set_text("");
}

}  // namespace client
