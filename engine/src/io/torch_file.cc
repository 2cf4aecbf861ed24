#include "io/torch_file.h"

#include <zip.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "engine/model_files.h"
#include "io/safetensors.h"

namespace engine {
// Its own namespace: in a unity build this file shares a translation unit
// with safetensors.cc, whose helpers have the same names.
namespace torch_file {
namespace {

// Bounds on what a pickle may build; a state_dict of a thousand tensors
// needs a few tens of thousands of values and a stack of a dozen.
constexpr size_t kMaxStack = 1 << 16;
constexpr size_t kMaxMarks = 1 << 10;  // nesting depth of MARKs
constexpr size_t kMaxMemo = 1 << 20;
constexpr size_t kMaxValues = 1 << 20;
constexpr size_t kMaxDims = 64;
constexpr size_t kMaxGlobalName = 256;
constexpr uint64_t kMaxPickleBytes = 64ull << 20;
// Decompressed bytes allowed per byte of the file (torch stores its records
// uncompressed; some compression is fine, a zip bomb is not), plus slack
// for tiny files.
constexpr uint64_t kMaxExpansion = 64;
constexpr uint64_t kExpansionSlack = 1 << 20;

absl::Status Error(const std::string& source, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", what));
}

// ---- the zip archive -------------------------------------------------------

// A read-only archive over bytes in memory (libzip). Reads are charged to a
// budget so that the decompressed records stay proportional to the file.
class ZipArchive {
 public:
  static absl::StatusOr<std::unique_ptr<ZipArchive>> Open(const uint8_t* bytes, size_t size,
                                                          const std::string& source);
  ~ZipArchive() { zip_discard(archive_); }
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  // The folder holding data.pkl ("archive" or the file's stem), or an error.
  absl::StatusOr<std::string> FindRoot();
  // Index of the record named `name`, or -1.
  int64_t Find(const std::string& name) { return zip_name_locate(archive_, name.c_str(), 0); }
  absl::StatusOr<std::string> Read(int64_t index, const std::string& name);

 private:
  ZipArchive(zip_t* archive, const std::string& source, uint64_t budget)
      : archive_(archive), source_(source), budget_(budget) {}
  zip_t* archive_;
  const std::string& source_;
  uint64_t budget_;
};

absl::StatusOr<std::unique_ptr<ZipArchive>> ZipArchive::Open(const uint8_t* bytes, size_t size,
                                                             const std::string& source) {
  if (size == 0) return Error(source, "empty file, not a torch.save zip archive");
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* zip_source = zip_source_buffer_create(bytes, size, 0, &error);
  zip_t* archive = nullptr;
  if (zip_source != nullptr) {
    archive = zip_open_from_source(zip_source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
    if (archive == nullptr) zip_source_free(zip_source);
  }
  if (archive == nullptr) {
    absl::Status status = Error(
        source, absl::StrCat("not a readable zip archive (truncated or corrupt; torch.save files "
                             "are zip archives since torch 1.6): ",
                             zip_error_strerror(&error)));
    zip_error_fini(&error);
    return status;
  }
  zip_error_fini(&error);
  const uint64_t budget = kMaxExpansion * static_cast<uint64_t>(size) + kExpansionSlack;
  return std::unique_ptr<ZipArchive>(new ZipArchive(archive, source, budget));
}

absl::StatusOr<std::string> ZipArchive::FindRoot() {
  constexpr absl::string_view kPickle = "/data.pkl";
  const zip_int64_t entries = zip_get_num_entries(archive_, 0);
  std::string root;
  bool found = false;
  for (zip_int64_t i = 0; i < entries; ++i) {
    const char* name = zip_get_name(archive_, static_cast<zip_uint64_t>(i), 0);
    if (name == nullptr) continue;
    const absl::string_view path(name);
    if (path.size() <= kPickle.size() || path.substr(path.size() - kPickle.size()) != kPickle ||
        path.find('/') != path.size() - kPickle.size()) {
      continue;
    }
    if (found) {
      return Error(source_, absl::StrCat("two data.pkl records (", root, "/data.pkl and ",
                                         absl::CHexEscape(path), ")"));
    }
    found = true;
    root = std::string(path.substr(0, path.size() - kPickle.size()));
  }
  if (!found) {
    return Error(source_, "no <folder>/data.pkl record: not a file written by torch.save");
  }
  return root;
}

absl::StatusOr<std::string> ZipArchive::Read(int64_t index, const std::string& name) {
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive_, static_cast<zip_uint64_t>(index), 0, &stat) != 0 ||
      (stat.valid & ZIP_STAT_SIZE) == 0) {
    return Error(source_, absl::StrCat("zip record ", name, ": ",
                                       zip_error_strerror(zip_get_error(archive_))));
  }
  // Checked before anything is allocated: the size is the archive's word.
  if (stat.size > budget_) {
    return Error(source_, absl::StrCat("zip record ", name, " claims ", stat.size,
                                       " bytes, more than a file of this size may hold"));
  }
  budget_ -= stat.size;
  zip_file_t* file = zip_fopen_index(archive_, static_cast<zip_uint64_t>(index), 0);
  if (file == nullptr) {
    return Error(source_, absl::StrCat("zip record ", name, ": ",
                                       zip_error_strerror(zip_get_error(archive_))));
  }
  std::string bytes(stat.size, '\0');
  uint64_t got = 0;
  zip_int64_t n = 1;
  while (got < stat.size && (n = zip_fread(file, bytes.data() + got, stat.size - got)) > 0) {
    got += static_cast<uint64_t>(n);
  }
  char extra;
  // One more byte must not come: a record longer than declared is refused.
  if (n > 0) n = zip_fread(file, &extra, 1);
  std::string reason = n < 0 ? zip_file_strerror(file) : "";
  zip_fclose(file);
  if (n < 0) return Error(source_, absl::StrCat("zip record ", name, ": ", reason));
  if (got != stat.size || n > 0) {
    return Error(source_,
                 absl::StrCat("zip record ", name, ": ", n > 0 ? "more" : std::to_string(got),
                              " bytes where its header says ", stat.size));
  }
  return bytes;
}

// ---- pickle values ---------------------------------------------------------

enum class Kind {
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kTuple,
  kList,
  kDict,
  kGlobal,
  kStorage,
  kTensor
};
enum class Callable { kOrderedDict, kRebuildTensorV2, kRebuildParameter, kStorageType };
enum class ElementType { kF32, kF16, kBF16, kF64 };

struct StorageType {
  const char* name;
  const char* dtype;
  ElementType type;
  size_t size;
};
constexpr StorageType kStorageTypes[] = {
    {"FloatStorage", "float32", ElementType::kF32, 4},
    {"HalfStorage", "float16", ElementType::kF16, 2},
    {"BFloat16Storage", "bfloat16", ElementType::kBF16, 2},
    {"DoubleStorage", "float64", ElementType::kF64, 8},
};

struct Value {
  Kind kind = Kind::kNone;
  int64_t number = 0;                          // kBool, kInt
  double real = 0;                             // kFloat
  std::string text;                            // kString; kGlobal: "module name"
  std::vector<Value*> items;                   // kTuple, kList; kDict: key, value, key, value...
  bool ordered = false;                        // kDict: an OrderedDict
  Callable callable = Callable::kOrderedDict;  // kGlobal
  const StorageType* type = nullptr;           // kGlobal (storage type), kStorage, kTensor
  const std::string* bytes = nullptr;          // kStorage, kTensor: the record
  uint64_t storage_elements = 0;               // kStorage, kTensor
  // kTensor: the view.
  uint64_t offset = 0;
  uint64_t elements = 0;
  std::vector<int64_t> sizes, strides;
};

const char* KindName(const Value& value) {
  switch (value.kind) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kTuple:
      return "tuple";
    case Kind::kList:
      return "list";
    case Kind::kDict:
      return value.ordered ? "OrderedDict" : "dict";
    case Kind::kGlobal:
      return "global";
    case Kind::kStorage:
      return "storage";
    case Kind::kTensor:
      return "tensor";
  }
  return "?";
}

// Every pickle opcode (protocols 0-5), for errors naming the ones refused.
struct Opcode {
  uint8_t op;
  const char* name;
};
// clang-format off
constexpr Opcode kOpcodes[] = {
    {'(', "MARK"}, {'.', "STOP"}, {'0', "POP"}, {'1', "POP_MARK"}, {'2', "DUP"}, {'F', "FLOAT"},
    {'I', "INT"}, {'J', "BININT"}, {'K', "BININT1"}, {'L', "LONG"}, {'M', "BININT2"},
    {'N', "NONE"}, {'P', "PERSID"}, {'Q', "BINPERSID"}, {'R', "REDUCE"}, {'S', "STRING"},
    {'T', "BINSTRING"}, {'U', "SHORT_BINSTRING"}, {'V', "UNICODE"}, {'X', "BINUNICODE"},
    {'a', "APPEND"}, {'b', "BUILD"}, {'c', "GLOBAL"}, {'d', "DICT"}, {'}', "EMPTY_DICT"},
    {'e', "APPENDS"}, {'g', "GET"}, {'h', "BINGET"}, {'i', "INST"}, {'j', "LONG_BINGET"},
    {'l', "LIST"}, {']', "EMPTY_LIST"}, {'o', "OBJ"}, {'p', "PUT"}, {'q', "BINPUT"},
    {'r', "LONG_BINPUT"}, {'s', "SETITEM"}, {'t', "TUPLE"}, {')', "EMPTY_TUPLE"},
    {'u', "SETITEMS"}, {'G', "BINFLOAT"}, {0x80, "PROTO"}, {0x81, "NEWOBJ"}, {0x82, "EXT1"},
    {0x83, "EXT2"}, {0x84, "EXT4"}, {0x85, "TUPLE1"}, {0x86, "TUPLE2"}, {0x87, "TUPLE3"},
    {0x88, "NEWTRUE"}, {0x89, "NEWFALSE"}, {0x8a, "LONG1"}, {0x8b, "LONG4"}, {'B', "BINBYTES"},
    {'C', "SHORT_BINBYTES"}, {0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"},
    {0x8e, "BINBYTES8"}, {0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"}, {0x91, "FROZENSET"},
    {0x92, "NEWOBJ_EX"}, {0x93, "STACK_GLOBAL"}, {0x94, "MEMOIZE"}, {0x95, "FRAME"},
    {0x96, "BYTEARRAY8"}, {0x97, "NEXT_BUFFER"}, {0x98, "READONLY_BUFFER"},
};
// clang-format on

const char* OpcodeName(uint8_t op) {
  for (const Opcode& opcode : kOpcodes) {
    if (opcode.op == op) return opcode.name;
  }
  return nullptr;
}

// ---- the pickle VM ---------------------------------------------------------

// Runs data.pkl over the whitelist; storages (BINPERSID) are read from the
// archive's <root>/data/<key> records, each once.
class PickleVm {
 public:
  PickleVm(const std::string& source, absl::string_view pickle, ZipArchive& archive,
           const std::string& root)
      : source_(source), pickle_(pickle), archive_(archive), root_(root) {}

  // The unpickled object (owned by the VM).
  absl::StatusOr<const Value*> Run();
  // Elements of all storages read, which bounds what tensors may copy out.
  uint64_t storage_elements() const { return storage_elements_; }

 private:
  absl::Status Step(uint8_t op);
  absl::Status Fail(absl::string_view what) const {
    return Error(source_, absl::StrCat("data.pkl: ", what));
  }
  std::string OpAt() const { return absl::StrCat(OpcodeName(op_), " at byte ", op_at_); }
  absl::StatusOr<Value*> New(Kind kind);
  absl::Status Push(Value* value);
  absl::StatusOr<Value*> Pop();
  absl::StatusOr<Value*> Top();
  absl::StatusOr<std::vector<Value*>> PopMark();
  absl::StatusOr<std::vector<Value*>> PopN(size_t n);
  absl::StatusOr<const uint8_t*> Take(uint64_t n);
  absl::StatusOr<uint64_t> TakeUint(size_t n);
  absl::StatusOr<std::string> TakeLine();
  absl::Status PushInt(int64_t number);
  absl::Status PushString(size_t length_bytes);
  absl::Status PushLong1();
  absl::Status PushFloat();
  absl::Status PushTuple(std::vector<Value*> items);
  absl::Status Global(const std::string& module, const std::string& name);
  absl::Status Put(uint64_t index);
  absl::Status Get(uint64_t index);
  absl::Status SetItems(std::vector<Value*> items);
  absl::Status Appends(std::vector<Value*> items);
  absl::Status Reduce();
  absl::Status Build();
  absl::Status PersistentLoad();
  absl::StatusOr<Value*> RebuildTensor(const std::vector<Value*>& args);
  absl::Status CheckView(Value& tensor) const;

  const std::string& source_;
  absl::string_view pickle_;
  ZipArchive& archive_;
  const std::string& root_;
  size_t pos_ = 0;
  uint8_t op_ = 0;
  size_t op_at_ = 0;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<Value*> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Value*> memo_;
  struct Record {
    std::string bytes;
    uint64_t counted = 0;  // elements of it counted in storage_elements_
  };
  std::unordered_map<std::string, Record> records_;  // by storage key
  uint64_t storage_elements_ = 0;
  Value* result_ = nullptr;
};

absl::StatusOr<Value*> PickleVm::New(Kind kind) {
  if (values_.size() >= kMaxValues) return Fail("more than 2^20 objects");
  values_.push_back(std::make_unique<Value>());
  values_.back()->kind = kind;
  return values_.back().get();
}

absl::Status PickleVm::Push(Value* value) {
  if (stack_.size() >= kMaxStack) return Fail(absl::StrCat("stack deeper than ", kMaxStack));
  stack_.push_back(value);
  return absl::OkStatus();
}

absl::StatusOr<Value*> PickleVm::Pop() {
  if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) {
    return Fail(absl::StrCat(OpAt(), " pops an empty stack"));
  }
  Value* value = stack_.back();
  stack_.pop_back();
  return value;
}

absl::StatusOr<Value*> PickleVm::Top() {
  if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) {
    return Fail(absl::StrCat(OpAt(), " needs a value on the stack"));
  }
  return stack_.back();
}

absl::StatusOr<std::vector<Value*>> PickleVm::PopMark() {
  if (marks_.empty()) return Fail(absl::StrCat(OpAt(), " without a MARK"));
  const size_t mark = marks_.back();
  marks_.pop_back();
  std::vector<Value*> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
  stack_.resize(mark);
  return items;
}

absl::StatusOr<std::vector<Value*>> PickleVm::PopN(size_t n) {
  std::vector<Value*> items(n);
  for (size_t i = n; i-- > 0;) {
    absl::StatusOr<Value*> value = Pop();
    if (!value.ok()) return value.status();
    items[i] = *value;
  }
  return items;
}

absl::StatusOr<const uint8_t*> PickleVm::Take(uint64_t n) {
  if (n > pickle_.size() - pos_) {
    return Fail(absl::StrCat(OpAt(), " needs ", n, " bytes, ", pickle_.size() - pos_,
                             " left: the pickle is truncated"));
  }
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(pickle_.data()) + pos_;
  pos_ += n;
  return bytes;
}

absl::StatusOr<uint64_t> PickleVm::TakeUint(size_t n) {
  absl::StatusOr<const uint8_t*> bytes = Take(n);
  if (!bytes.ok()) return bytes.status();
  uint64_t value = 0;
  for (size_t i = n; i-- > 0;) value = (value << 8) | (*bytes)[i];
  return value;
}

absl::StatusOr<std::string> PickleVm::TakeLine() {
  const size_t end = pickle_.find('\n', pos_);
  if (end == absl::string_view::npos || end - pos_ > kMaxGlobalName) {
    return Fail(absl::StrCat(OpAt(), ": no name line of at most ", kMaxGlobalName, " bytes"));
  }
  std::string line(pickle_.substr(pos_, end - pos_));
  pos_ = end + 1;
  return line;
}

absl::Status PickleVm::PushInt(int64_t number) {
  absl::StatusOr<Value*> value = New(Kind::kInt);
  if (!value.ok()) return value.status();
  (*value)->number = number;
  return Push(*value);
}

absl::Status PickleVm::PushString(size_t length_bytes) {
  absl::StatusOr<uint64_t> length = TakeUint(length_bytes);
  if (!length.ok()) return length.status();
  // Take checks the length against the bytes left before anything is copied.
  absl::StatusOr<const uint8_t*> bytes = Take(*length);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<Value*> value = New(Kind::kString);
  if (!value.ok()) return value.status();
  (*value)->text.assign(reinterpret_cast<const char*>(*bytes), *length);
  return Push(*value);
}

absl::Status PickleVm::PushLong1() {
  absl::StatusOr<uint64_t> length = TakeUint(1);
  if (!length.ok()) return length.status();
  if (*length > 8) return Fail(absl::StrCat(OpAt(), ": a ", *length, "-byte integer"));
  absl::StatusOr<uint64_t> bits = TakeUint(*length);
  if (!bits.ok()) return bits.status();
  uint64_t value = *bits;
  // Two's complement of `length` bytes: extend the sign.
  if (*length > 0 && *length < 8 && (value >> (8 * *length - 1)) != 0) {
    value |= ~uint64_t{0} << (8 * *length);
  }
  int64_t number;
  std::memcpy(&number, &value, sizeof(number));
  return PushInt(number);
}

absl::Status PickleVm::PushFloat() {
  absl::StatusOr<const uint8_t*> bytes = Take(8);
  if (!bytes.ok()) return bytes.status();
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) bits = (bits << 8) | (*bytes)[i];  // big-endian
  absl::StatusOr<Value*> value = New(Kind::kFloat);
  if (!value.ok()) return value.status();
  std::memcpy(&(*value)->real, &bits, sizeof(bits));
  return Push(*value);
}

absl::Status PickleVm::PushTuple(std::vector<Value*> items) {
  absl::StatusOr<Value*> value = New(Kind::kTuple);
  if (!value.ok()) return value.status();
  (*value)->items = std::move(items);
  return Push(*value);
}

absl::Status PickleVm::Global(const std::string& module, const std::string& name) {
  absl::StatusOr<Value*> value = New(Kind::kGlobal);
  if (!value.ok()) return value.status();
  Value& global = **value;
  global.text = absl::StrCat(module, " ", name);
  if (module == "collections" && name == "OrderedDict") {
    global.callable = Callable::kOrderedDict;
  } else if (module == "torch._utils" && name == "_rebuild_tensor_v2") {
    global.callable = Callable::kRebuildTensorV2;
  } else if (module == "torch._utils" && name == "_rebuild_parameter") {
    global.callable = Callable::kRebuildParameter;
  } else if (module == "torch") {
    global.callable = Callable::kStorageType;
    for (const StorageType& type : kStorageTypes) {
      if (name == type.name) global.type = &type;
    }
  }
  const bool allowed = global.callable != Callable::kOrderedDict || module == "collections";
  if (!allowed || (global.callable == Callable::kStorageType && global.type == nullptr)) {
    return Error(source_, absl::StrCat("pickle global \"", absl::CHexEscape(global.text),
                                       "\" is not allowed (only tensors and ordered dicts of "
                                       "them are read)"));
  }
  return Push(&global);
}

absl::Status PickleVm::Put(uint64_t index) {
  absl::StatusOr<Value*> top = Top();
  if (!top.ok()) return top.status();
  if (memo_.size() >= kMaxMemo && memo_.count(index) == 0) {
    return Fail(absl::StrCat("more than ", kMaxMemo, " memo entries"));
  }
  memo_[index] = *top;
  return absl::OkStatus();
}

absl::Status PickleVm::Get(uint64_t index) {
  auto it = memo_.find(index);
  if (it == memo_.end()) return Fail(absl::StrCat(OpAt(), ": no memo entry ", index));
  return Push(it->second);
}

absl::Status PickleVm::SetItems(std::vector<Value*> items) {
  absl::StatusOr<Value*> dict = Top();
  if (!dict.ok()) return dict.status();
  if ((*dict)->kind != Kind::kDict) {
    return Fail(absl::StrCat(OpAt(), " on a ", KindName(**dict), ", not a dict"));
  }
  if (items.size() % 2 != 0) return Fail(absl::StrCat(OpAt(), ": a key without a value"));
  (*dict)->items.insert((*dict)->items.end(), items.begin(), items.end());
  return absl::OkStatus();
}

absl::Status PickleVm::Appends(std::vector<Value*> items) {
  absl::StatusOr<Value*> list = Top();
  if (!list.ok()) return list.status();
  if ((*list)->kind != Kind::kList) {
    return Fail(absl::StrCat(OpAt(), " on a ", KindName(**list), ", not a list"));
  }
  (*list)->items.insert((*list)->items.end(), items.begin(), items.end());
  return absl::OkStatus();
}

bool IsEmptyDict(const Value* value) { return value->kind == Kind::kDict && value->items.empty(); }

absl::Status PickleVm::Reduce() {
  absl::StatusOr<Value*> args = Pop();
  if (!args.ok()) return args.status();
  absl::StatusOr<Value*> callable = Pop();
  if (!callable.ok()) return callable.status();
  if ((*callable)->kind != Kind::kGlobal || (*args)->kind != Kind::kTuple) {
    return Fail(absl::StrCat(OpAt(), " calls a ", KindName(**callable), " with a ",
                             KindName(**args), " (only globals with a tuple are called)"));
  }
  const std::vector<Value*>& items = (*args)->items;
  Value* result = nullptr;
  switch ((*callable)->callable) {
    case Callable::kOrderedDict: {
      if (!items.empty()) return Fail(absl::StrCat(OpAt(), ": OrderedDict with arguments"));
      absl::StatusOr<Value*> dict = New(Kind::kDict);
      if (!dict.ok()) return dict.status();
      (*dict)->ordered = true;
      result = *dict;
      break;
    }
    case Callable::kRebuildTensorV2: {
      absl::StatusOr<Value*> tensor = RebuildTensor(items);
      if (!tensor.ok()) return tensor.status();
      result = *tensor;
      break;
    }
    case Callable::kRebuildParameter:
      // (data, requires_grad, backward_hooks): the parameter is its data.
      if (items.size() != 3 || items[0]->kind != Kind::kTensor || items[1]->kind != Kind::kBool ||
          !IsEmptyDict(items[2])) {
        return Fail(absl::StrCat(OpAt(), ": _rebuild_parameter without (tensor, bool, {})"));
      }
      result = items[0];
      break;
    case Callable::kStorageType:
      return Fail(absl::StrCat(OpAt(), " calls ", (*callable)->text,
                               " (storage types are only read in persistent ids)"));
  }
  return Push(result);
}

absl::Status PickleVm::Build() {
  absl::StatusOr<Value*> state = Pop();
  if (!state.ok()) return state.status();
  absl::StatusOr<Value*> object = Top();
  if (!object.ok()) return object.status();
  // torch's state_dict keeps its _metadata (versions) as an OrderedDict
  // attribute; the weights do not depend on it.
  if ((*object)->kind != Kind::kDict || !(*object)->ordered) {
    return Fail(absl::StrCat(OpAt(), " sets the state of a ", KindName(**object),
                             " (only an OrderedDict's, which is ignored)"));
  }
  return absl::OkStatus();
}

// ('storage', <storage type>, key, location, numel): the record <root>/data/<key>.
absl::Status PickleVm::PersistentLoad() {
  absl::StatusOr<Value*> pid = Pop();
  if (!pid.ok()) return pid.status();
  const std::vector<Value*>& items = (*pid)->items;
  if ((*pid)->kind != Kind::kTuple || items.size() != 5 || items[0]->kind != Kind::kString ||
      items[0]->text != "storage" || items[1]->kind != Kind::kGlobal || items[1]->type == nullptr ||
      items[2]->kind != Kind::kString || items[3]->kind != Kind::kString ||
      items[4]->kind != Kind::kInt) {
    return Fail(absl::StrCat(OpAt(), ": not a ('storage', type, key, location, numel) id"));
  }
  const std::string& key = items[2]->text;
  bool plain = !key.empty() && key.size() <= 64;
  for (char c : key) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!plain) return Fail(absl::StrCat(OpAt(), ": storage key \"", absl::CHexEscape(key), "\""));
  auto record = records_.find(key);
  if (record == records_.end()) {
    const std::string name = absl::StrCat(root_, "/data/", key);
    const int64_t index = archive_.Find(name);
    if (index < 0) return Fail(absl::StrCat("storage ", key, " has no record ", name));
    absl::StatusOr<std::string> bytes = archive_.Read(index, name);
    if (!bytes.ok()) return bytes.status();
    record = records_.emplace(key, Record{*std::move(bytes)}).first;
  }
  const StorageType& type = *items[1]->type;
  const int64_t numel = items[4]->number;
  uint64_t needed = 0;
  if (numel < 0 || __builtin_mul_overflow(static_cast<uint64_t>(numel), type.size, &needed) ||
      needed > record->second.bytes.size()) {
    return Fail(absl::StrCat("storage ", key, ": ", numel, " elements of ", type.dtype,
                             " do not fit its record of ", record->second.bytes.size(), " bytes"));
  }
  absl::StatusOr<Value*> storage = New(Kind::kStorage);
  if (!storage.ok()) return storage.status();
  (*storage)->type = &type;
  (*storage)->bytes = &record->second.bytes;
  (*storage)->storage_elements = static_cast<uint64_t>(numel);
  // Each record counts once, however many ids name it.
  if (static_cast<uint64_t>(numel) > record->second.counted) {
    storage_elements_ += static_cast<uint64_t>(numel) - record->second.counted;
    record->second.counted = static_cast<uint64_t>(numel);
  }
  return Push(*storage);
}

bool IsIntTuple(const Value* value) {
  if (value->kind != Kind::kTuple) return false;
  for (const Value* item : value->items) {
    if (item->kind != Kind::kInt) return false;
  }
  return true;
}

// (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata]).
absl::StatusOr<Value*> PickleVm::RebuildTensor(const std::vector<Value*>& args) {
  if (args.size() < 6 || args.size() > 7 || args[0]->kind != Kind::kStorage ||
      args[1]->kind != Kind::kInt || !IsIntTuple(args[2]) || !IsIntTuple(args[3]) ||
      args[2]->items.size() != args[3]->items.size() || args[4]->kind != Kind::kBool ||
      !IsEmptyDict(args[5])) {
    return Fail(absl::StrCat(OpAt(),
                             ": _rebuild_tensor_v2 without (storage, offset, size, "
                             "stride, requires_grad, {})"));
  }
  // Metadata (conjugate or negative bits) would change the values: refused.
  if (args.size() == 7 && !IsEmptyDict(args[6])) {
    return Fail(
        absl::StrCat(OpAt(), ": tensor metadata (", KindName(*args[6]), ") is not supported"));
  }
  if (args[2]->items.size() > kMaxDims) {
    return Fail(absl::StrCat(OpAt(), ": a tensor of ", args[2]->items.size(), " dimensions"));
  }
  absl::StatusOr<Value*> tensor = New(Kind::kTensor);
  if (!tensor.ok()) return tensor.status();
  Value& t = **tensor;
  t.type = args[0]->type;
  t.bytes = args[0]->bytes;
  t.storage_elements = args[0]->storage_elements;
  for (const Value* size : args[2]->items) t.sizes.push_back(size->number);
  for (const Value* stride : args[3]->items) t.strides.push_back(stride->number);
  if (args[1]->number < 0) return Fail(absl::StrCat(OpAt(), ": negative storage offset"));
  t.offset = static_cast<uint64_t>(args[1]->number);
  RETURN_IF_ERROR(CheckView(t));
  return &t;
}

// The view must lie inside the storage: its first element (the offset) and,
// with non-negative strides, its last, offset + sum((size - 1) * stride).
absl::Status PickleVm::CheckView(Value& t) const {
  const auto view = [&t] {
    return absl::StrCat("offset ", t.offset, ", size (", absl::StrJoin(t.sizes, ", "),
                        "), stride (", absl::StrJoin(t.strides, ", "), ")");
  };
  uint64_t elements = 1;
  for (size_t d = 0; d < t.sizes.size(); ++d) {
    if (t.sizes[d] < 0 || t.strides[d] < 0) {
      return Fail(absl::StrCat("a tensor with a negative size or stride: ", view()));
    }
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(t.sizes[d]), &elements) ||
        elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Fail(absl::StrCat("a tensor of too many elements: ", view()));
    }
  }
  uint64_t last = t.offset;
  bool overflow = false;
  for (size_t d = 0; d < t.sizes.size() && elements > 0; ++d) {
    uint64_t reach = 0;
    overflow |= __builtin_mul_overflow(static_cast<uint64_t>(t.sizes[d] - 1),
                                       static_cast<uint64_t>(t.strides[d]), &reach);
    overflow |= __builtin_add_overflow(last, reach, &last);
  }
  if (overflow || (elements > 0 ? last >= t.storage_elements : t.offset > t.storage_elements)) {
    return Fail(absl::StrCat("a tensor view past its storage of ", t.storage_elements,
                             " elements: ", view()));
  }
  t.elements = elements;
  return absl::OkStatus();
}

absl::Status PickleVm::Step(uint8_t op) {
  switch (op) {
    case 0x80: {  // PROTO
      absl::StatusOr<uint64_t> version = TakeUint(1);
      if (!version.ok()) return version.status();
      if (*version > 5) return Fail(absl::StrCat("pickle protocol ", *version));
      return absl::OkStatus();
    }
    case 0x95:  // FRAME: a length hint only
      return TakeUint(8).status();
    case '}':
    case ']': {
      absl::StatusOr<Value*> value = New(op == '}' ? Kind::kDict : Kind::kList);
      if (!value.ok()) return value.status();
      return Push(*value);
    }
    case ')':
      return PushTuple({});
    case '(':
      if (marks_.size() >= kMaxMarks) return Fail(absl::StrCat("MARKs nested over ", kMaxMarks));
      marks_.push_back(stack_.size());
      return absl::OkStatus();
    case 't':
    case 0x85:
    case 0x86:
    case 0x87: {
      absl::StatusOr<std::vector<Value*>> items =
          op == 't' ? PopMark() : PopN(static_cast<size_t>(op - 0x84));
      if (!items.ok()) return items.status();
      return PushTuple(*std::move(items));
    }
    case 'J': {
      absl::StatusOr<uint64_t> bits = TakeUint(4);
      if (!bits.ok()) return bits.status();
      return PushInt(static_cast<int32_t>(static_cast<uint32_t>(*bits)));
    }
    case 'K':
    case 'M': {
      absl::StatusOr<uint64_t> number = TakeUint(op == 'K' ? 1 : 2);
      if (!number.ok()) return number.status();
      return PushInt(static_cast<int64_t>(*number));
    }
    case 0x8a:
      return PushLong1();
    case 'N':
    case 0x88:
    case 0x89: {
      absl::StatusOr<Value*> value = New(op == 'N' ? Kind::kNone : Kind::kBool);
      if (!value.ok()) return value.status();
      (*value)->number = op == 0x88 ? 1 : 0;
      return Push(*value);
    }
    case 'G':
      return PushFloat();
    case 'X':
    case 'T':
      return PushString(4);
    case 0x8c:
    case 'U':
      return PushString(1);
    case 0x8d:
      return PushString(8);
    case 'c': {
      absl::StatusOr<std::string> module = TakeLine();
      if (!module.ok()) return module.status();
      absl::StatusOr<std::string> name = TakeLine();
      if (!name.ok()) return name.status();
      return Global(*module, *name);
    }
    case 0x93: {  // STACK_GLOBAL
      absl::StatusOr<std::vector<Value*>> names = PopN(2);
      if (!names.ok()) return names.status();
      if ((*names)[0]->kind != Kind::kString || (*names)[1]->kind != Kind::kString) {
        return Fail(absl::StrCat(OpAt(), " of a non-string"));
      }
      return Global((*names)[0]->text, (*names)[1]->text);
    }
    case 'R':
      return Reduce();
    case 'b':
      return Build();
    case 'Q':
      return PersistentLoad();
    case 'q':
    case 'r':
    case 'h':
    case 'j': {
      absl::StatusOr<uint64_t> index = TakeUint(op == 'q' || op == 'h' ? 1 : 4);
      if (!index.ok()) return index.status();
      return op == 'q' || op == 'r' ? Put(*index) : Get(*index);
    }
    case 0x94:
      return Put(memo_.size());
    case 's':
    case 'u': {
      absl::StatusOr<std::vector<Value*>> items = op == 's' ? PopN(2) : PopMark();
      if (!items.ok()) return items.status();
      return SetItems(*std::move(items));
    }
    case 'a':
    case 'e': {
      absl::StatusOr<std::vector<Value*>> items = op == 'a' ? PopN(1) : PopMark();
      if (!items.ok()) return items.status();
      return Appends(*std::move(items));
    }
    case '.': {
      absl::StatusOr<Value*> result = Pop();
      if (!result.ok()) return result.status();
      if (!stack_.empty() || !marks_.empty()) return Fail("STOP leaves values on the stack");
      result_ = *result;
      return absl::OkStatus();
    }
  }
  const char* name = OpcodeName(op);
  return Fail(absl::StrCat("pickle opcode ", name != nullptr ? name : "(unknown)", " (0x",
                           absl::Hex(op, absl::kZeroPad2), ") at byte ", op_at_,
                           " is not allowed (only those torch.save writes for tensors are read)"));
}

absl::StatusOr<const Value*> PickleVm::Run() {
  while (result_ == nullptr) {
    if (pos_ >= pickle_.size()) return Fail("ends without STOP: the pickle is truncated");
    op_at_ = pos_;
    op_ = static_cast<uint8_t>(pickle_[pos_++]);
    RETURN_IF_ERROR(Step(op_));
  }
  if (pos_ != pickle_.size()) {
    return Fail(absl::StrCat(pickle_.size() - pos_, " bytes after STOP"));
  }
  return result_;
}

// ---- tensors out -----------------------------------------------------------

float DoubleToFloat(double d) {
  // Round to nearest like torch's .float(); beyond float's range (from FLT_MAX
  // plus half an ulp) that is infinity, said explicitly to avoid UB.
  constexpr double kRoundsToInfinity = 0x1.ffffffp127;
  if (std::isfinite(d) && std::fabs(d) >= kRoundsToInfinity) {
    return d > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  }
  return static_cast<float>(d);
}

float Element(const StorageType& type, const uint8_t* bytes, uint64_t index) {
  const uint8_t* p = bytes + index * type.size;
  switch (type.type) {
    case ElementType::kF32: {
      float f;
      std::memcpy(&f, p, sizeof(f));
      return f;
    }
    case ElementType::kF16:
    case ElementType::kBF16: {
      uint16_t h;
      std::memcpy(&h, p, sizeof(h));
      if (type.type == ElementType::kF16) return HalfToFloat(h);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      return f;
    }
    case ElementType::kF64: {
      double d;
      std::memcpy(&d, p, sizeof(d));
      return DoubleToFloat(d);
    }
  }
  return 0;
}

// Copies a checked view out in row-major order, walking the strides.
TorchTensor CopyOut(const Value& t) {
  TorchTensor out;
  out.dtype = t.type->dtype;
  out.shape = t.sizes;
  out.values.resize(t.elements);
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(t.bytes->data());
  const size_t dims = t.sizes.size();
  std::vector<int64_t> index(dims, 0);
  uint64_t position = t.offset;
  for (uint64_t n = 0; n < t.elements; ++n) {
    out.values[n] = Element(*t.type, bytes, position);
    for (size_t d = dims; d-- > 0;) {
      if (++index[d] < t.sizes[d]) {
        position += static_cast<uint64_t>(t.strides[d]);
        break;
      }
      position -= static_cast<uint64_t>(t.sizes[d] - 1) * static_cast<uint64_t>(t.strides[d]);
      index[d] = 0;
    }
  }
  return out;
}

// The top level: a dict of str -> tensor, or one tensor (the entry "").
absl::StatusOr<TorchStateDict> ToStateDict(const Value& root, uint64_t storage_elements,
                                           const std::string& source) {
  std::vector<std::pair<std::string, const Value*>> entries;
  if (root.kind == Kind::kTensor) {
    entries.emplace_back("", &root);
  } else if (root.kind == Kind::kDict) {
    for (size_t i = 0; i + 1 < root.items.size(); i += 2) {
      const Value& key = *root.items[i];
      const Value& value = *root.items[i + 1];
      if (key.kind != Kind::kString) {
        return Error(source, absl::StrCat("a top-level key is a ", KindName(key), ", not a str"));
      }
      if (value.kind != Kind::kTensor) {
        return Error(source, absl::StrCat("top-level entry \"", absl::CHexEscape(key.text),
                                          "\" is a ", KindName(value), ", not a tensor"));
      }
      entries.emplace_back(key.text, &value);
    }
  } else {
    return Error(source, absl::StrCat("the top-level object is a ", KindName(root),
                                      ", not a dict of tensors or a tensor"));
  }
  // Views may share a storage (tied weights), but copies out far beyond the
  // storages read would be an amplification, not a state_dict.
  uint64_t total = 0;
  bool overflow = false;
  for (const auto& entry : entries) {
    overflow |= __builtin_add_overflow(total, entry.second->elements, &total);
  }
  if (overflow || total > 2 * storage_elements + 1024) {
    return Error(source, absl::StrCat("the tensors hold ", total, " elements, more than twice the ",
                                      storage_elements, " of their storages"));
  }
  TorchStateDict tensors;
  for (const auto& [name, value] : entries) tensors[name] = CopyOut(*value);
  return tensors;
}

absl::Status CheckByteOrder(ZipArchive& archive, const std::string& root,
                            const std::string& source) {
  const std::string name = root + "/byteorder";
  const int64_t index = archive.Find(name);
  if (index < 0) return absl::OkStatus();  // torch < 2.1 wrote little-endian without saying
  absl::StatusOr<std::string> order = archive.Read(index, name);
  if (!order.ok()) return order.status();
  if (*order != "little") {
    return Error(source, absl::StrCat("byte order \"", absl::CHexEscape(*order),
                                      "\": only little-endian files are read"));
  }
  return absl::OkStatus();
}

// Archive, byte order, pickle, then the tensors out.
absl::StatusOr<TorchStateDict> Parse(const uint8_t* bytes, size_t size, const std::string& source) {
  absl::StatusOr<std::unique_ptr<ZipArchive>> archive = ZipArchive::Open(bytes, size, source);
  if (!archive.ok()) return archive.status();
  absl::StatusOr<std::string> root = (*archive)->FindRoot();
  if (!root.ok()) return root.status();
  RETURN_IF_ERROR(CheckByteOrder(**archive, *root, source));
  const std::string pickle_name = *root + "/data.pkl";
  const int64_t index = (*archive)->Find(pickle_name);
  if (index < 0) return Error(source, absl::StrCat("cannot open ", pickle_name));
  absl::StatusOr<std::string> pickle = (*archive)->Read(index, pickle_name);
  if (!pickle.ok()) return pickle.status();
  if (pickle->size() > kMaxPickleBytes) {
    return Error(source, absl::StrCat(pickle_name, " is ", pickle->size(), " bytes"));
  }
  PickleVm vm(source, *pickle, **archive, *root);
  absl::StatusOr<const Value*> result = vm.Run();
  if (!result.ok()) return result.status();
  return ToStateDict(**result, vm.storage_elements(), source);
}

}  // namespace
}  // namespace torch_file

absl::StatusOr<TorchStateDict> ParseTorchFile(const uint8_t* bytes, size_t size,
                                              const std::string& source) {
  return torch_file::Parse(bytes, size, source);
}

absl::StatusOr<TorchStateDict> ReadTorchFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadModelFile(path);
  if (!bytes.ok()) return bytes.status();
  return ParseTorchFile(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size(), path);
}

}  // namespace engine
