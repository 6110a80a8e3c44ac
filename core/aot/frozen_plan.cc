// frozen_plan.cc: the frozen plan's file. Little-endian fixed-width integers, strings and lists
// with a u64 length before them, attributes as their variant index then their value.
#include "core/aot/frozen_plan.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <type_traits>

#include "core/platform/enforce.h"

namespace tide::core {
namespace {

class Writer {
 public:
  template <typename T>
  void Pod(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void Str(std::string_view s) {
    Pod<uint64_t>(s.size());
    out_.append(s);
  }
  void Dims(const std::vector<int64_t>& d) {
    Pod<uint64_t>(d.size());
    for (int64_t v : d) Pod(v);
  }
  void Names(const VariableNameMap& m) {
    Pod<uint64_t>(m.size());
    for (const auto& [param, names] : m) {
      Str(param);
      Pod<uint64_t>(names.size());
      for (const auto& n : names) Str(n);
    }
  }
  void Attr(const Attribute& a) {
    Pod<uint32_t>(static_cast<uint32_t>(a.index()));
    std::visit([this](const auto& v) { Value(v); }, a);
  }
  std::string& bytes() { return out_; }

 private:
  template <typename T>
  void Value(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      Str(v);
    } else if constexpr (std::is_same_v<T, BlockIndex>) {
      Pod(v.idx);
    } else if constexpr (std::is_arithmetic_v<T>) {
      Pod(v);
    } else {  // a list
      Pod<uint64_t>(v.size());
      for (const auto& e : v) Value(static_cast<typename T::value_type>(e));
    }
  }
  std::string out_;
};

class Reader {
 public:
  Reader(const char* data, size_t end, std::string path)
      : data_(data), end_(end), path_(std::move(path)) {}
  template <typename T>
  T Pod() {
    Need(sizeof(T));
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  uint64_t Count() {
    uint64_t n = Pod<uint64_t>();
    if (n > end_ - pos_) Bad(StrCat("a list of ", n, " entries"));  // each takes a byte or more
    return n;
  }
  std::string_view View() {
    uint64_t n = Count();
    Need(n);
    std::string_view s(data_ + pos_, n);
    pos_ += n;
    return s;
  }
  std::string Str() { return std::string(View()); }
  void Skip(size_t n) {
    Need(n);
    pos_ += n;
  }
  std::vector<int64_t> Dims() {
    std::vector<int64_t> d(Count());
    for (auto& v : d) v = Pod<int64_t>();
    return d;
  }
  VariableNameMap Names() {
    VariableNameMap m;
    for (uint64_t n = Count(); n > 0; --n) {
      std::string param = Str();
      std::vector<std::string> names(Count());
      for (auto& s : names) s = Str();
      m[param] = std::move(names);
    }
    return m;
  }
  Attribute Attr() {
    const uint32_t index = Pod<uint32_t>();
    Attribute a;
    if (index >= std::variant_size_v<Attribute>) Bad(StrCat("an attribute of kind ", index));
    Emplace(a, index, std::make_index_sequence<std::variant_size_v<Attribute>>());
    return a;
  }
  bool done() const { return pos_ == end_; }
  [[noreturn]] void Bad(const std::string& what) const {
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "frozen plan '", path_, "' is corrupted: ", what, " at byte ",
              pos_);
  }

 private:
  void Need(size_t n) const {
    if (n > end_ - pos_) Bad(StrCat("it ends before ", n, " more bytes"));
  }
  template <size_t... I>
  void Emplace(Attribute& a, uint32_t index, std::index_sequence<I...>) {
    ((index == I ? (a.emplace<I>(Value<std::variant_alternative_t<I, Attribute>>()), 0) : 0), ...);
  }
  template <typename T>
  T Value() {
    if constexpr (std::is_same_v<T, std::string>) {
      return Str();
    } else if constexpr (std::is_same_v<T, BlockIndex>) {
      return BlockIndex{Pod<int32_t>()};
    } else if constexpr (std::is_arithmetic_v<T>) {
      return Pod<T>();
    } else {
      T v;
      for (uint64_t n = Count(); n > 0; --n) v.push_back(Value<typename T::value_type>());
      return v;
    }
  }
  const char* data_;
  size_t end_, pos_ = 0;
  std::string path_;
};

void WriteKernel(Writer& w, const FrozenKernel& k) {
  w.Str(k.place_kind);
  w.Str(k.library);
  w.Pod<int32_t>(k.dtype);
  w.Pod<int32_t>(k.layout);
  w.Pod<int32_t>(k.data_type);
  w.Str(k.plugin);
  w.Str(k.plugin_file);
}

FrozenKernel ReadKernel(Reader& r) {
  FrozenKernel k;
  k.place_kind = r.Str();
  k.library = r.Str();
  k.dtype = static_cast<DataType>(r.Pod<int32_t>());
  k.layout = static_cast<TideLayout>(r.Pod<int32_t>());
  k.data_type = static_cast<DataType>(r.Pod<int32_t>());
  k.plugin = r.Str();
  k.plugin_file = r.Str();
  return k;
}

}  // namespace

// A byte at a time took a tenth of a second on ResNet-50's 100 MB of parameters, most of a
// load's reading time.
uint64_t Fnv1a(const char* data, size_t n) {
  uint64_t h = 1469598103934665603ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    h ^= word;
    h *= 1099511628211ull;
  }
  for (; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

std::string FrozenKernel::ToString() const {
  return StrCat("{", place_kind, ", ", DataTypeName(dtype), ", ", LayoutName(layout), ", ", library,
                "}");
}

void WriteFrozenPlan(const FrozenPlan& plan, const std::string& path) {
  Writer w;
  w.bytes().append(kFrozenMagic, sizeof(kFrozenMagic));
  w.Pod<uint32_t>(kFrozenFormatVersion);
  w.Pod<uint32_t>(TIDE_ABI_MAJOR);
  w.Pod<uint32_t>(TIDE_ABI_MINOR);
  w.Pod<uint32_t>(TIDE_ABI_LAYOUT);
  w.Str(plan.place_kind);
  w.Pod(plan.lower);
  w.Pod(plan.upper);
  w.Pod<uint64_t>(plan.feeds.size());
  for (const FrozenFeed& f : plan.feeds) {
    w.Str(f.name);
    w.Dims(f.dims);
    w.Pod<int32_t>(f.dtype);
    w.Pod(f.lod_level);
  }
  w.Pod<uint64_t>(plan.fetches.size());
  for (const auto& f : plan.fetches) w.Str(f);
  w.Pod<uint64_t>(plan.vars.size());
  for (const FrozenVar& v : plan.vars) {
    w.Str(v.name);
    w.Pod<int32_t>(v.type);
    w.Pod<int32_t>(v.dtype);
    w.Pod<int32_t>(v.layout);
    w.Pod<uint8_t>(v.persistable);
    w.Pod<uint8_t>(v.zero_dim);
    w.Pod(v.lod_level);
    w.Dims(v.dims);
    w.Dims(v.per_unit);
    w.Pod(v.offset);
    w.Pod(v.bytes);
  }
  w.Pod<uint64_t>(plan.ops.size());
  for (const FrozenOp& op : plan.ops) {
    w.Pod(op.index);
    w.Str(op.type);
    w.Names(op.inputs);
    w.Names(op.outputs);
    w.Pod<uint64_t>(op.attrs.size());
    for (const auto& [name, a] : op.attrs) {
      w.Str(name);
      w.Attr(a);
    }
    WriteKernel(w, op.kernel);
    w.Pod<uint8_t>(op.infer_at_run);
    w.Pod<uint64_t>(op.transforms.size());
    for (const auto& t : op.transforms) w.Str(t);
  }
  w.Pod(plan.arena_bytes);
  w.Pod(plan.alignment);
  w.Pod<uint64_t>(plan.params.size());
  for (const FrozenParam& p : plan.params) {
    w.Str(p.name);
    w.Pod<int32_t>(p.dtype);
    w.Dims(p.dims);
    w.Pod<uint64_t>(p.lod.size());
    for (const auto& level : p.lod) {
      w.Pod<uint64_t>(level.size());
      for (uint64_t o : level) w.Pod(o);
    }
    // Padding first, so the bytes start at a multiple of the alignment: a host load then uses
    // them where they are.
    const size_t at = w.bytes().size() + sizeof(uint32_t) + sizeof(uint64_t);
    const auto pad = static_cast<uint32_t>((kFrozenParamAlignment - at % kFrozenParamAlignment) %
                                           kFrozenParamAlignment);
    w.Pod(pad);
    w.bytes().append(pad, '\0');
    w.Str(p.data());
  }
  std::string& bytes = w.bytes();
  const uint64_t hash = Fnv1a(bytes.data(), bytes.size());
  bytes.append(reinterpret_cast<const char*>(&hash), sizeof(hash));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) TIDE_FAIL(TIDE_UNAVAILABLE, "cannot write the frozen plan to '", path, "'");
}

AllocationPtr ReadFileAligned(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) TIDE_FAIL(TIDE_NOT_FOUND, "cannot open ", what, " '", path, "'");
  const size_t size = static_cast<size_t>(in.tellg());
  // Aligned host memory of its own (not the allocator's: reading a plan needs no device plugin).
  const size_t padded = std::max<size_t>(
      (size + kFrozenParamAlignment - 1) / kFrozenParamAlignment * kFrozenParamAlignment,
      kFrozenParamAlignment);
  void* buffer = std::aligned_alloc(kFrozenParamAlignment, padded);
  if (!buffer)
    TIDE_FAIL(TIDE_RESOURCE_EXHAUSTED, "cannot read ", what, " '", path, "': no memory for its ",
              size, " bytes");
  AllocationPtr file =
      std::make_shared<Allocation>(buffer, size, HostPlace(), [](void* p) { std::free(p); });
  in.seekg(0);
  in.read(static_cast<char*>(file->ptr()), static_cast<std::streamsize>(size));
  if (!in) TIDE_FAIL(TIDE_UNAVAILABLE, "cannot read ", what, " '", path, "'");
  return file;
}

FrozenPlan ReadFrozenPlan(const std::string& path) {
  AllocationPtr file = ReadFileAligned(path, "frozen plan");
  const size_t size = file->size();
  const char* bytes = static_cast<const char*>(file->ptr());
  constexpr size_t kHeader = sizeof(kFrozenMagic) + 4 * sizeof(uint32_t);
  if (size < kHeader + sizeof(uint64_t) ||
      std::memcmp(bytes, kFrozenMagic, sizeof(kFrozenMagic)) != 0)
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "'", path,
              "' is not a frozen plan (no TIDEAOT header; tide.aot.freeze writes them)");
  uint32_t head[4];
  std::memcpy(head, bytes + sizeof(kFrozenMagic), sizeof(head));
  if (head[0] != kFrozenFormatVersion)
    TIDE_FAIL(TIDE_FAILED_PRECONDITION, "frozen plan '", path, "' has format version ", head[0],
              "; this Tide reads version ", kFrozenFormatVersion, ": freeze the program again");
  if (head[1] != TIDE_ABI_MAJOR || head[3] != TIDE_ABI_LAYOUT)
    TIDE_FAIL(TIDE_FAILED_PRECONDITION, "frozen plan '", path, "' was frozen for plugin ABI ",
              head[1], ".", head[2], " (layout ", head[3], "); this core has ABI ", TIDE_ABI_MAJOR,
              ".", TIDE_ABI_MINOR, " (layout ", TIDE_ABI_LAYOUT, "): freeze the program again");
  const size_t body_end = size - sizeof(uint64_t);
  uint64_t hash;
  std::memcpy(&hash, bytes + body_end, sizeof(hash));
  if (hash != Fnv1a(bytes, body_end))
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "frozen plan '", path,
              "' is corrupted or truncated: its checksum does not match its contents");

  Reader r(bytes, body_end, path);
  for (size_t i = 0; i < kHeader; ++i) r.Pod<char>();
  FrozenPlan plan;
  plan.place_kind = r.Str();
  plan.lower = r.Pod<int64_t>();
  plan.upper = r.Pod<int64_t>();
  plan.feeds.resize(r.Count());
  for (FrozenFeed& f : plan.feeds) {
    f.name = r.Str();
    f.dims = r.Dims();
    f.dtype = static_cast<DataType>(r.Pod<int32_t>());
    f.lod_level = r.Pod<int32_t>();
  }
  plan.fetches.resize(r.Count());
  for (auto& f : plan.fetches) f = r.Str();
  plan.vars.resize(r.Count());
  for (FrozenVar& v : plan.vars) {
    v.name = r.Str();
    v.type = static_cast<TideVarType>(r.Pod<int32_t>());
    v.dtype = static_cast<DataType>(r.Pod<int32_t>());
    v.layout = static_cast<TideLayout>(r.Pod<int32_t>());
    v.persistable = r.Pod<uint8_t>();
    v.zero_dim = r.Pod<uint8_t>();
    v.lod_level = r.Pod<int32_t>();
    v.dims = r.Dims();
    v.per_unit = r.Dims();
    v.offset = r.Pod<int64_t>();
    v.bytes = r.Pod<uint64_t>();
  }
  plan.ops.resize(r.Count());
  for (FrozenOp& op : plan.ops) {
    op.index = r.Pod<uint32_t>();
    op.type = r.Str();
    op.inputs = r.Names();
    op.outputs = r.Names();
    for (uint64_t n = r.Count(); n > 0; --n) {
      std::string name = r.Str();
      op.attrs[name] = r.Attr();
    }
    op.kernel = ReadKernel(r);
    op.infer_at_run = r.Pod<uint8_t>();
    op.transforms.resize(r.Count());
    for (auto& t : op.transforms) t = r.Str();
  }
  plan.arena_bytes = r.Pod<uint64_t>();
  plan.alignment = r.Pod<uint64_t>();
  plan.params.resize(r.Count());
  for (FrozenParam& p : plan.params) {
    p.name = r.Str();
    p.dtype = static_cast<DataType>(r.Pod<int32_t>());
    p.dims = r.Dims();
    p.lod.resize(r.Count());
    for (auto& level : p.lod) {
      level.resize(r.Count());
      for (auto& o : level) o = r.Pod<uint64_t>();
    }
    r.Skip(r.Pod<uint32_t>());
    p.view = r.View();
  }
  if (!r.done()) r.Bad("bytes follow the last parameter");
  plan.file = std::move(file);
  return plan;
}

}  // namespace tide::core
