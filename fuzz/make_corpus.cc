// Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/
// (committed; rerun after changing a format):
//   build-sanitize/fuzz/fuzz_make_corpus fuzz/corpus
// Seeds are small and meaningful: tiny real models (F32, F16, BF16, pre- and
// post-LN), the golden test models' configs and a real BF16 checkpoint,
// texts in many scripts from the tokenizer's golden corpus, and valid and
// invalid serialized requests.
#include <unistd.h>
#include <zip.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "encoder/v1/encoder.pb.h"
#include "engine/config.h"
#include "engine/tools/random_model.h"
#include "io/safetensors.h"
#include "io/safetensors_writer.h"
#include "nlohmann/json.hpp"

namespace fs = std::filesystem;

namespace {

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "make_corpus: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "make_corpus: cannot write %s\n", (dir / name).c_str());
    std::exit(1);
  }
}

std::string LengthPrefix(uint64_t n, int bytes) {
  std::string out(bytes, '\0');
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

// fuzz_model_dir's framing: uint32 LE config length, config.json, model.safetensors.
std::string Frame(const std::string& config, const std::string& weights) {
  return LengthPrefix(config.size(), 4) + config + weights;
}

uint16_t ToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

uint16_t ToF16(float f) {  // normal-range values only, which is all the seeds hold
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint32_t sign = (bits >> 16) & 0x8000;
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  if (exponent <= 0) return static_cast<uint16_t>(sign);  // flush tiny values to zero
  if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  return static_cast<uint16_t>(sign | (exponent << 10) | ((bits >> 13) & 0x3ff));
}

// A safetensors file of `tensors` in `dtype` ("F32", "F16", "BF16").
std::string Serialize(const std::vector<engine::NamedTensor>& tensors, const std::string& dtype) {
  if (dtype == "F32") return engine::SerializeSafetensors(tensors);
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const engine::NamedTensor& t : tensors) {
    const uint64_t begin = data.size();
    for (float v : t.values) {
      const uint16_t h = dtype == "F16" ? ToF16(v) : ToBf16(v);
      data.push_back(static_cast<char>(h & 0xff));
      data.push_back(static_cast<char>(h >> 8));
    }
    header[t.name] = {{"dtype", dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  const std::string text = header.dump();
  return LengthPrefix(text.size(), 8) + text + data;
}

std::vector<engine::NamedTensor> ReadTensors(const fs::path& path) {
  auto file = engine::SafetensorsFile::Open(path.string());
  if (!file.ok()) {
    std::fprintf(stderr, "make_corpus: %s\n", std::string(file.status().message()).c_str());
    std::exit(1);
  }
  std::vector<engine::NamedTensor> tensors;
  for (const auto& [name, view] : (*file)->tensors()) {
    engine::NamedTensor t{name, view.shape, std::vector<float>(view.num_elements())};
    engine::ConvertToFloat(view, t.values.data());
    tensors.push_back(std::move(t));
  }
  return tensors;
}

// A tiny model (16-token vocabulary, hidden 8) written by the engine itself.
struct TinyModel {
  std::string config;
  std::vector<engine::NamedTensor> tensors;
};

TinyModel MakeTiny(const fs::path& scratch, engine::LayerNormPlacement placement, bool pooler) {
  engine::RandomModelSpec spec;
  spec.config.hidden_size = 8;
  spec.config.num_heads = 2;
  spec.config.num_layers = 1;
  spec.config.intermediate_size = 16;
  spec.config.max_position_embeddings = 16;
  spec.config.layer_norm_placement = placement;
  spec.with_pooler = pooler;
  spec.vocabulary = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c",
                     "the",   "hello", "world", "##s",   "##ing",  ",", ".", "!"};
  const fs::path dir = scratch / (placement == engine::LayerNormPlacement::kPre ? "pre" : "post");
  if (!engine::WriteRandomModel(dir.string(), spec).ok()) std::exit(1);
  return {ReadFile(dir / "config.json"), ReadTensors(dir / "model.safetensors")};
}

void ModelDirCorpus(const fs::path& out, const fs::path& source, const fs::path& scratch) {
  const TinyModel post = MakeTiny(scratch, engine::LayerNormPlacement::kPost, true);
  const TinyModel pre = MakeTiny(scratch, engine::LayerNormPlacement::kPre, false);
  Write(out, "tiny_post_f32", Frame(post.config, Serialize(post.tensors, "F32")));
  Write(out, "tiny_post_f16", Frame(post.config, Serialize(post.tensors, "F16")));
  Write(out, "tiny_pre_bf16", Frame(pre.config, Serialize(pre.tensors, "BF16")));
  Write(out, "tiny_pre_f32", Frame(pre.config, Serialize(pre.tensors, "F32")));
  // The golden BF16 checkpoint, saved by PyTorch (bert. prefix, HF header layout).
  const fs::path bf16 = source / "tests/golden/bf16/model";
  Write(out, "golden_bf16",
        Frame(ReadFile(bf16 / "config.json"), ReadFile(bf16 / "model.safetensors")));
  // Near misses: a config that lies about the vocabulary, a missing tensor, a truncated file.
  nlohmann::json lying = nlohmann::json::parse(post.config);
  lying["vocab_size"] = 1 << 30;
  Write(out, "config_claims_huge_vocab", Frame(lying.dump(), Serialize(post.tensors, "F32")));
  std::vector<engine::NamedTensor> missing = post.tensors;
  missing.pop_back();
  Write(out, "missing_tensor", Frame(post.config, Serialize(missing, "F32")));
  const std::string full = Serialize(post.tensors, "F32");
  Write(out, "truncated", Frame(post.config, full.substr(0, full.size() - 100)));
}

void ConfigCorpus(const fs::path& out, const fs::path& source) {
  for (const char* name : {"post_ln", "pre_ln", "bf16", "variants"}) {
    Write(out, std::string("golden_") + name,
          ReadFile(source / "tests/golden" / name / "model/config.json"));
  }
  // Every family of the architecture registry, with its own keys.
  for (const char* name :
       {"roberta", "xlm_roberta", "camembert", "distilbert", "mpnet", "electra"}) {
    Write(out, std::string("family_") + name,
          ReadFile(source / "tests/golden/families" / name / "model/config.json"));
  }
  engine::ModelConfig demo = engine::DefaultModelConfig();
  demo.vocab_size = 303;
  demo.hidden_size = 384;
  demo.num_layers = 6;
  demo.num_heads = 12;
  demo.intermediate_size = 1536;
  Write(out, "demo", engine::ModelConfigToJson(demo));
  Write(out, "minimal",
        R"({"model_type":"bert","vocab_size":10,"hidden_size":8,"num_hidden_layers":1,)"
        R"("num_attention_heads":2,"intermediate_size":16})");
  Write(
      out, "pre_relu_eps",
      R"({"model_type":"bert","vocab_size":10,"hidden_size":8,"num_hidden_layers":1,)"
      R"("num_attention_heads":2,"intermediate_size":16,"hidden_act":"relu",)"
      R"("layer_norm_placement":"pre","layer_norm_eps":1e-5,"pad_token_id":3,)"
      R"("position_embedding_type":"absolute","max_position_embeddings":32,"type_vocab_size":1})");
  Write(out, "gelu_tanh",
        R"({"model_type":"bert","vocab_size":10,"hidden_size":8,"num_hidden_layers":1,)"
        R"("num_attention_heads":2,"intermediate_size":16,"hidden_act":"gelu_pytorch_tanh"})");
  Write(out, "bad_heads",
        R"({"model_type":"bert","vocab_size":10,"hidden_size":9,"num_hidden_layers":1,)"
        R"("num_attention_heads":2,"intermediate_size":16})");
  Write(out, "bad_eps",
        R"({"model_type":"bert","vocab_size":10,"hidden_size":8,"num_hidden_layers":1,)"
        R"("num_attention_heads":2,"intermediate_size":16,"layer_norm_eps":1e39})");
  Write(out, "not_bert", R"({"model_type":"gpt2"})");
  Write(out, "not_object", "[1, 2, 3]");
}

void SafetensorsCorpus(const fs::path& out, const fs::path& source, const fs::path& scratch) {
  const TinyModel post = MakeTiny(scratch, engine::LayerNormPlacement::kPost, true);
  Write(out, "tiny_f32", Serialize(post.tensors, "F32"));
  Write(out, "tiny_f16", Serialize(post.tensors, "F16"));
  Write(out, "golden_bf16", ReadFile(source / "tests/golden/bf16/model/model.safetensors"));
  const auto raw = [](const std::string& header, size_t data_bytes) {
    return LengthPrefix(header.size(), 8) + header + std::string(data_bytes, '\x01');
  };
  Write(out, "empty_header", raw("{}", 0));
  Write(out, "metadata_only", raw(R"({"__metadata__":{"format":"pt"}})", 0));
  Write(out, "scalar_and_empty",
        raw(R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
            R"("e":{"dtype":"BF16","shape":[0,4],"data_offsets":[4,4]}})",
            4));
  Write(out, "ints",
        raw(R"({"i32":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},)"
            R"("i64":{"dtype":"I64","shape":[1,1],"data_offsets":[8,16]}})",
            16));
  Write(out, "overlap",
        raw(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
            12));
  Write(out, "huge_dims",
        raw(R"({"a":{"dtype":"F32","shape":[9223372036854775807,2,0],"data_offsets":[0,0]}})", 0));
}

// A record of a zip archive, read with libzip.
std::string ZipRecord(const fs::path& path, const std::string& name) {
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY, &error);
  zip_stat_t stat;
  zip_file_t* file = nullptr;
  if (archive == nullptr || zip_stat(archive, name.c_str(), 0, &stat) != 0 ||
      (file = zip_fopen(archive, name.c_str(), 0)) == nullptr) {
    std::fprintf(stderr, "make_corpus: cannot read %s from %s\n", name.c_str(), path.c_str());
    std::exit(1);
  }
  std::string bytes(stat.size, '\0');
  const zip_int64_t got = zip_fread(file, bytes.data(), stat.size);
  zip_fclose(file);
  zip_discard(archive);
  if (got != static_cast<zip_int64_t>(stat.size)) {
    std::fprintf(stderr, "make_corpus: short read of %s\n", name.c_str());
    std::exit(1);
  }
  return bytes;
}

// torch.save files written by torch (tests/golden/make_torch_files.py), in
// fuzz_torch_file's two framings: byte 0 even and the whole file (the good
// ones and the broken ones that get past the zip layer); byte 0 odd, the
// length of data.pkl (2 bytes LE), data.pkl and the storage data/0.
void TorchFileCorpus(const fs::path& out, const fs::path& source) {
  const fs::path dir = source / "tests/golden/torch_files";
  for (const char* name :
       {"linear_f32", "linear_f16", "linear_bf16", "transposed", "offset_view", "bare_f64",
        "parameter", "shared", "list_top_level", "past_storage", "bad_opcode", "big_endian",
        "missing_storage", "evil_os_system", "deflated", "zip_bomb"}) {
    Write(out, name, std::string(1, '\0') + ReadFile(dir / (std::string(name) + ".pt")));
  }
  for (const char* name : {"linear_f32", "linear_f16", "linear_bf16", "transposed", "offset_view",
                           "bare_f64", "parameter", "shared", "evil_eval"}) {
    const fs::path file = dir / (std::string(name) + ".pt");
    const std::string pickle = ZipRecord(file, std::string(name) + "/data.pkl");
    const std::string storage = std::string(name).rfind("evil", 0) == 0
                                    ? ""
                                    : ZipRecord(file, std::string(name) + "/data/0");
    Write(out, std::string("records_") + name,
          "\x01" + LengthPrefix(pickle.size(), 2) + pickle + storage);
  }
}

// The golden tokenizer corpus (one JSON string per line): a spread of scripts.
std::vector<std::string> GoldenTexts(const fs::path& source) {
  std::vector<std::string> texts;
  std::istringstream lines(ReadFile(source / "tests/golden/tokenizer/corpus.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_string()) texts.push_back(j.get<std::string>());
  }
  return texts;
}

void TokenizerCorpus(const fs::path& out, const fs::path& source) {
  const std::vector<std::string> texts = GoldenTexts(source);
  // Every 40th line (about 60 of 2,448: Latin, Greek, Cyrillic, CJK, Arabic,
  // Indic, emoji, controls...), each with its own flags: tokenizer, pair, truncation.
  int n = 0;
  for (size_t i = 0; i < texts.size(); i += 40, ++n) {
    const uint8_t flags = static_cast<uint8_t>(n % 16);
    const uint8_t max_length = static_cast<uint8_t>(3 + n % 13);
    std::string body = texts[i];
    if ((flags & 4) && i + 1 < texts.size()) body += "\xff" + texts[i + 1];
    char name[32];
    std::snprintf(name, sizeof(name), "golden_%04zu", i + 1);
    Write(out, name, std::string{static_cast<char>(flags), static_cast<char>(max_length)} + body);
  }
  Write(out, "special_tokens", std::string("\x00\x00", 2) + "[CLS] a [MASK] b [SEP] [UNK] [PAD]");
  Write(out, "invalid_utf8", std::string("\x00\x00", 2) + "ok \xc0\xaf \xed\xa0\x80 \xf4\x90");
  Write(out, "long_word", std::string("\x08\x05", 2) + std::string(300, 'x') + " y");
  Write(out, "pair_truncated",
        std::string("\x0c\x07", 2) + "what is a transformer encoder?\xff" +
            "an encoder maps tokens to vectors, one per token.");
}

std::string Serialized(const google::protobuf::Message& m) {
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

void RequestCorpus(const fs::path& out) {
  using encoder::v1::EncodeRequest;
  EncodeRequest text;
  text.set_id("text");
  text.add_inputs()->set_text("hello world");
  Write(out, "text", Serialized(text));

  EncodeRequest mixed;
  mixed.set_id("mixed");
  mixed.set_pooling(encoder::v1::POOLING_MEAN);
  mixed.set_normalize(true);
  mixed.add_inputs()->set_text("Crème brûlée, 東京, Привет, مرحبا, 👋");
  auto* pair = mixed.add_inputs()->mutable_text_pair();
  pair->set_text("what is bert?");
  pair->set_text_pair("an encoder");
  auto* ids = mixed.add_inputs()->mutable_token_ids();
  for (int id : {2, 150, 160, 3}) ids->add_ids(id);
  for (int type : {0, 0, 1, 1}) ids->add_token_type_ids(type);
  Write(out, "mixed", Serialized(mixed));

  EncodeRequest truncate;
  truncate.set_truncate(true);
  truncate.set_pooling(encoder::v1::POOLING_NONE);
  std::string long_text;
  for (int i = 0; i < 100; ++i) long_text += "the quick brown fox ";
  truncate.add_inputs()->set_text(long_text);
  auto* long_ids = truncate.add_inputs()->mutable_token_ids();
  for (int i = 0; i < 100; ++i) long_ids->add_ids(5 + i % 50);
  Write(out, "truncate", Serialized(truncate));

  EncodeRequest pooler;
  pooler.set_pooling(encoder::v1::POOLING_POOLER);
  pooler.add_inputs()->set_text("[CLS] literal [SEP] tokens [MASK]");
  Write(out, "pooler_special_tokens", Serialized(pooler));

  // Invalid: no inputs, too many, empty text, bad ids and types, unknown pooling,
  // an unset input, too long without truncate, invalid UTF-8 (raw wire bytes).
  Write(out, "no_inputs", Serialized(EncodeRequest()));
  EncodeRequest many;
  for (int i = 0; i < 65; ++i) many.add_inputs()->set_text("x");
  Write(out, "too_many_inputs", Serialized(many));
  EncodeRequest bad;
  bad.add_inputs()->set_text("");
  bad.add_inputs();
  auto* bad_ids = bad.add_inputs()->mutable_token_ids();
  bad_ids->add_ids(-1);
  bad_ids->add_ids(100000);
  bad_ids->add_token_type_ids(7);
  Write(out, "bad_inputs", Serialized(bad));
  EncodeRequest unknown_pooling;
  unknown_pooling.set_pooling(static_cast<encoder::v1::Pooling>(9));
  unknown_pooling.add_inputs()->set_text("x");
  Write(out, "unknown_pooling", Serialized(unknown_pooling));
  EncodeRequest too_long = truncate;
  too_long.set_truncate(false);
  Write(out, "too_long", Serialized(too_long));
  EncodeRequest utf8;
  utf8.set_id("utf8");
  utf8.add_inputs()->set_text("fine");
  utf8.add_inputs()->mutable_text_pair()->set_text_pair("@@@@");
  std::string bytes = Serialized(utf8);
  bytes.replace(bytes.find("@@@@"), 4, "a\xc3\x28z");
  Write(out, "invalid_utf8", bytes);

  encoder::v1::TokenizeRequest tokenize;
  tokenize.set_text("Hello, world!");
  tokenize.set_text_pair("second text");
  tokenize.set_truncate(true);
  Write(out, "tokenize_pair", Serialized(tokenize));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_corpus OUT_DIR (e.g. fuzz/corpus)\n");
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path source = FUZZ_SOURCE_DIR;
  const fs::path scratch = fs::temp_directory_path() / ("make_corpus." + std::to_string(getpid()));
  ModelDirCorpus(out / "fuzz_model_dir", source, scratch);
  ConfigCorpus(out / "fuzz_config", source);
  SafetensorsCorpus(out / "fuzz_safetensors", source, scratch);
  TorchFileCorpus(out / "fuzz_torch_file", source);
  TokenizerCorpus(out / "fuzz_tokenizer", source);
  RequestCorpus(out / "fuzz_request");
  fs::remove_all(scratch);
  return 0;
}
