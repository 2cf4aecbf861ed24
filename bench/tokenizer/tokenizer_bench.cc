// Tokenizer throughput on one thread: every tokenizer over the golden corpus
// (tests/golden/tokenizer/corpus.jsonl: many scripts, emoji, controls, long
// words) and over English prose, as MB/s of input text, texts/s and tokens/s;
// plus load time and the time to tokenize a batch of 32 texts of about 128
// tokens (the MiniLM-L6 32 x 128 shape of issue 15).
//
//   build/bench/tokenizer/bench_tokenizer [seconds per measurement, default 2]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "engine/tokenizer.h"
#include "nlohmann/json.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::vector<std::string> Corpus() {
  std::ifstream in(std::string(TOKENIZER_GOLDEN_DIR) + "/corpus.jsonl");
  std::vector<std::string> texts;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    std::string t = nlohmann::json::parse(line).get<std::string>();
    if (!t.empty()) texts.push_back(std::move(t));
  }
  return texts;
}

std::vector<std::string> English() {
  const std::string sentence =
      "The quick brown fox jumps over the lazy dog, while the encoder service turns "
      "sentences into embeddings for search and ranking. ";
  std::vector<std::string> texts;
  for (int i = 0; i < 256; ++i) texts.push_back(sentence + sentence.substr(0, 20 + i % 60));
  return texts;
}

struct Rate {
  double mb_per_s, texts_per_s, tokens_per_s;
};

// Encodes `texts` round after round for at least `seconds`.
Rate Measure(const engine::Tokenizer& tok, const std::vector<std::string>& texts, double seconds) {
  size_t bytes = 0, count = 0, tokens = 0;
  const auto start = Clock::now();
  auto now = start;
  do {
    for (const std::string& t : texts) {
      auto enc = tok.Encode(t);
      if (!enc.ok()) std::abort();
      bytes += t.size();
      tokens += enc->ids.size();
      ++count;
    }
    now = Clock::now();
  } while (Seconds(start, now) < seconds);
  const double s = Seconds(start, now);
  return {bytes / s / 1e6, count / s, tokens / s};
}

// Texts cut to about 126 tokens plus the special tokens: the first 32 corpus
// texts of English prose repeated until long enough.
double Batch32x128(const engine::Tokenizer& tok, double seconds) {
  std::string base;
  for (int i = 0; i < 6; ++i) base += English()[i];
  std::vector<std::string> batch;
  for (int i = 0; i < 32; ++i) {
    std::string t = base.substr(i, base.size() - i);
    batch.push_back(t);
  }
  int rounds = 0;
  const auto start = Clock::now();
  auto now = start;
  do {
    for (const std::string& t : batch) {
      if (!tok.Encode(t, 128).ok()) std::abort();
    }
    ++rounds;
    now = Clock::now();
  } while (Seconds(start, now) < seconds);
  return Seconds(start, now) / rounds;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  const std::vector<std::string> corpus = Corpus();
  const std::vector<std::string> english = English();
  struct Entry {
    const char* name;
    std::string dir;
  };
  const std::string shared = SHARED_TOKENIZERS_DIR;
  const Entry entries[] = {
      {"bert-base-uncased (WordPiece)", std::string(TOKENIZER_GOLDEN_DIR) + "/bert-base-uncased"},
      {"all-mpnet-base-v2 (WordPiece)", shared + "/sentence-transformers--all-mpnet-base-v2"},
      {"bge-m3 (XLM-R Unigram)", shared + "/BAAI--bge-m3"},
      {"paraphrase-multilingual (XLM-R Unigram)",
       shared + "/sentence-transformers--paraphrase-multilingual-mpnet-base-v2"},
      {"roberta-base (byte-level BPE)", shared + "/FacebookAI--roberta-base"},
  };
  std::printf(
      "| tokenizer | load ms | corpus MB/s | corpus texts/s | corpus tokens/s | "
      "English MB/s | English texts/s | 32 x 128 batch ms |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Entry& e : entries) {
    const auto t0 = Clock::now();
    auto tok = engine::Tokenizer::Load(e.dir);
    const double load_ms = Seconds(t0, Clock::now()) * 1e3;
    if (!tok.ok()) {
      std::printf("| %s | %s |\n", e.name, std::string(tok.status().message()).c_str());
      continue;
    }
    const Rate c = Measure(**tok, corpus, seconds);
    const Rate en = Measure(**tok, english, seconds);
    const double batch_ms = Batch32x128(**tok, seconds) * 1e3;
    std::printf("| %s | %.0f | %.2f | %.0f | %.0f | %.2f | %.0f | %.2f |\n", e.name, load_ms,
                c.mb_per_s, c.texts_per_s, c.tokens_per_s, en.mb_per_s, en.texts_per_s, batch_ms);
    std::fflush(stdout);
  }
  return 0;
}
