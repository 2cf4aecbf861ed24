#include "json_document.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/model_files.h"

namespace engine::tokenizer {
namespace {

class Builder : public nlohmann::json_sax<json> {
 public:
  Builder(std::string_view text, JsonDocument* doc) : text_(text), doc_(doc) {}

  bool null() override { return Value(nullptr); }
  bool boolean(bool v) override { return Value(v); }
  bool number_integer(number_integer_t v) override {
    if (entry_ == 2) return Score(static_cast<double>(v));
    return Value(v);
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (entry_ == 2) return Score(static_cast<double>(v));
    return Value(v);
  }
  bool number_float(number_float_t v, const string_t&) override {
    if (entry_ == 2) return Score(v);
    return Value(v);
  }
  bool string(string_t& v) override {
    if (entry_ == 1) {
      doc_->pieces.emplace_back(std::move(v), 0.0);
      entry_ = 2;
      return true;
    }
    return Value(std::move(v));
  }
  bool binary(binary_t&) override { return Fail("binary values are not JSON"); }

  bool start_object(std::size_t) override {
    if (streaming_) return Fail("model.vocab entries must be [piece, score]");
    json* o = Value(json::object()) ? last_ : nullptr;
    if (o == nullptr) return false;
    stack_.push_back(o);
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    keys_.back() = std::move(k);
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    if (streaming_) {
      if (entry_ != 0) return Fail("model.vocab entries must be [piece, score]");
      entry_ = 1;
      return true;
    }
    // root["model"]["vocab"] as a list: stream it.
    if (stack_.size() == 2 && keys_[0] == "model" && keys_[1] == "vocab" &&
        stack_[1]->is_object()) {
      (*stack_[1])["vocab"] = json::array();
      doc_->has_piece_list = true;
      streaming_ = true;
      return true;
    }
    json* a = Value(json::array()) ? last_ : nullptr;
    if (a == nullptr) return false;
    stack_.push_back(a);
    keys_.emplace_back();
    return true;
  }
  bool end_array() override {
    if (streaming_) {
      if (entry_ == 0) {
        streaming_ = false;
        return true;
      }
      if (entry_ != 3) return Fail("model.vocab entries must be [piece, score]");
      entry_ = 0;
      return true;
    }
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& error) override {
    return Fail(DescribeJsonSyntaxError(absl::string_view(text_.data(), text_.size()), position,
                                        error.what()));
  }

  const std::string& error() const { return error_; }

 private:
  bool Fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
    return false;
  }
  bool Score(double v) {
    doc_->pieces.back().second = v;
    entry_ = 3;
    return true;
  }
  // Places a value in the current container (or as the root).
  bool Value(json v) {
    if (streaming_) return Fail("model.vocab entries must be [piece, score]");
    if (stack_.empty()) {
      doc_->root = std::move(v);
      last_ = &doc_->root;
      return true;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      last_ = &top.back();
    } else {
      json& slot = top[keys_.back()];
      slot = std::move(v);
      last_ = &slot;
    }
    return true;
  }

  std::string_view text_;  // what is parsed, for the position of a syntax error
  JsonDocument* doc_;
  std::vector<json*> stack_;
  std::vector<std::string> keys_;  // the current key of each open object
  json* last_ = nullptr;
  bool streaming_ = false;
  int entry_ = 0;  // in a streamed entry: 1 wants the piece, 2 the score, 3 the end
  std::string error_;
};

}  // namespace

absl::StatusOr<JsonDocument> ParseTokenizerJson(std::string_view text) {
  JsonDocument doc;
  Builder builder(text, &doc);
  const bool ok = json::sax_parse(text.begin(), text.end(), &builder,
                                  nlohmann::detail::input_format_t::json, /*strict=*/true);
  if (!ok) {
    return absl::InvalidArgumentError(builder.error().empty() ? "not valid JSON" : builder.error());
  }
  return doc;
}

}  // namespace engine::tokenizer
