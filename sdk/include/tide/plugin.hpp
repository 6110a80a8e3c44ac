// tide/plugin.hpp: header-only C++ over the C plugin ABI (tide/plugin_api.h). Plugin authors
// write ordinary C++ here: views over core objects, typed attributes, exceptions that turn into
// statuses at the boundary, and registration macros. Nothing here is compiled into the core.
//
// A whole op pack (the SDK test compiles this example; docs/writing_plugins.md has more):
//
//   #include <tide/plugin.hpp>
//   template <typename T>
//   void Triple(tide::KernelContext& ctx) {
//     tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
//     const T* in = x.data<T>();
//     T* o = out.mutable_data<T>(x.dims(), ctx.place());
//     for (int64_t i = 0; i < x.numel(); ++i) o[i] = 3 * in[i];
//   }
//   TIDE_REGISTER_OP(tide::OpSchema("my.triple").Input("X").Output("Out")
//                        .InferShape(tide::SameShapeAsInput("X", "Out"))
//                        .Grad([](tide::GradMaker& g) {
//                          g.NewOp("my.triple").Input("X", g.OutputGrad("Out"))
//                              .Output("Out", g.InputGrad("X"));
//                        }));
//   TIDE_REGISTER_KERNEL("my.triple", "cpu", Triple, float, double);
//   TIDE_PLUGIN("my_ops", "0.1.0", "triples");  // once per plugin, in one file
#ifndef TIDE_PLUGIN_HPP_
#define TIDE_PLUGIN_HPP_

#include <tide/plugin_api.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tide {

using Dims = std::vector<int64_t>;

// ---------------------------------------------------------------------------------------------
// The host table, set once when the plugin is registered.
namespace detail {
inline const TideHostApi*& HostSlot() {
  static const TideHostApi* host = nullptr;
  return host;
}
}  // namespace detail
inline const TideHostApi& Host() { return *detail::HostSlot(); }

// ---------------------------------------------------------------------------------------------
// Errors: throw tide::Error (or any std::exception) anywhere in plugin code; the boundary turns
// it into a TideStatus the core reports with the op, kernel key and plugin file.
class Error : public std::runtime_error {
 public:
  Error(TideCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  TideCode code() const { return code_; }

 private:
  TideCode code_;
};

namespace detail {
template <typename... Args>
std::string Concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
inline std::string DimsToString(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}
}  // namespace detail

inline std::string ToString(const Dims& d) { return detail::DimsToString(d); }

#define TIDE_THROW(code, ...) throw ::tide::Error(code, ::tide::detail::Concat(__VA_ARGS__))
// TIDE_CHECK(cond, "message parts", ...): an InvalidArgument error when cond is false.
#define TIDE_CHECK(cond, ...)                                                        \
  do {                                                                                \
    if (!(cond)) TIDE_THROW(TIDE_INVALID_ARGUMENT, __VA_ARGS__);                     \
  } while (0)

// TIDE_HOST_FN(Scope_FindLocalVar)(scope, name): a host function newer than the oldest host the
// plugin accepts (TIDE_PLUGIN_MIN_ABI_MINOR), called only when the host that loaded the plugin
// has it; an UNIMPLEMENTED error naming it and both versions otherwise (never a call through a
// pointer the host does not have).
#define TIDE_HOST_FN(field)                                                                  \
  ::tide::detail::CheckedHostFn(                                                            \
      TIDE_HAS_FIELD(&::tide::Host(), TideHostApi, field) ? ::tide::Host().field : nullptr, #field)
namespace detail {
template <typename F>
F CheckedHostFn(F fn, const char* name) {
  if (!fn)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "host function ", name, " is missing: this Tide speaks plugin ABI ",
               Host().abi_major, ".", Host().abi_minor, ", older than the plugin's SDK (", TIDE_ABI_MAJOR,
               ".", TIDE_ABI_MINOR, ")");
  return fn;
}
}  // namespace detail

// Turns a returned TideStatus into an exception; takes ownership of the status.
inline void ThrowIfError(TideStatus* status) {
  if (!status) return;
  TideCode code = Host().Status_Code(status);
  std::string msg = Host().Status_Message(status);
  Host().Status_Free(status);
  throw Error(code, msg);
}

namespace detail {
// Runs `fn`, turning any exception into a status: the only way errors leave a plugin.
template <typename F>
TideStatus* Guard(F&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (const Error& e) {
    return Host().Status_Create(e.code(), e.what());
  } catch (const std::exception& e) {
    return Host().Status_Create(TIDE_INTERNAL, e.what());
  } catch (...) {
    return Host().Status_Create(TIDE_INTERNAL, "unknown C++ exception");
  }
}
}  // namespace detail

// The core's flag `name` as text (e.g. "cpu_threads"), or `fallback` when there is none.
inline std::string Flag(const char* name, const std::string& fallback = "") {
  char buf[256];
  int64_t n = Host().Flag_Get(name, buf, sizeof(buf));
  if (n < 0) return fallback;
  if (static_cast<size_t>(n) < sizeof(buf)) return std::string(buf, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  Host().Flag_Get(name, &big[0], big.size());
  big.resize(static_cast<size_t>(n));
  return big;
}

// Logs through the core (glog): tide::Log(TIDE_LOG_WARNING, "my_plugin", "message").
inline void Log(TideLogSeverity severity, const char* plugin, const std::string& message) {
  Host().Log(severity, plugin, message.c_str());
}

// ---------------------------------------------------------------------------------------------
// Data types.
template <typename T>
struct DataTypeTrait;
#define TIDE_DATATYPE_TRAIT(T, V) \
  template <>                     \
  struct DataTypeTrait<T> {       \
    static constexpr TideDataType value = V; \
  };
TIDE_DATATYPE_TRAIT(bool, TIDE_BOOL)
TIDE_DATATYPE_TRAIT(int8_t, TIDE_INT8)
TIDE_DATATYPE_TRAIT(uint8_t, TIDE_UINT8)
TIDE_DATATYPE_TRAIT(int16_t, TIDE_INT16)
TIDE_DATATYPE_TRAIT(int32_t, TIDE_INT32)
TIDE_DATATYPE_TRAIT(int64_t, TIDE_INT64)
TIDE_DATATYPE_TRAIT(float, TIDE_FP32)
TIDE_DATATYPE_TRAIT(double, TIDE_FP64)
#undef TIDE_DATATYPE_TRAIT

template <typename T>
constexpr TideDataType DataTypeOf() {
  return DataTypeTrait<T>::value;
}

inline const char* DataTypeName(TideDataType t) {
  switch (t) {
    case TIDE_BOOL: return "bool";
    case TIDE_INT8: return "int8";
    case TIDE_UINT8: return "uint8";
    case TIDE_INT16: return "int16";
    case TIDE_INT32: return "int32";
    case TIDE_INT64: return "int64";
    case TIDE_FP16: return "float16";
    case TIDE_BF16: return "bfloat16";
    case TIDE_FP32: return "float32";
    case TIDE_FP64: return "float64";
    default: return "undefined";
  }
}

inline size_t DataTypeSize(TideDataType t) {
  switch (t) {
    case TIDE_BOOL: case TIDE_INT8: case TIDE_UINT8: return 1;
    case TIDE_INT16: case TIDE_FP16: case TIDE_BF16: return 2;
    case TIDE_INT32: case TIDE_FP32: return 4;
    case TIDE_INT64: case TIDE_FP64: return 8;
    default: return 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Places.
class Place {
 public:
  Place() : p_{-1, 0} {}
  Place(TidePlace p) : p_(p) {}  // NOLINT: a view of the C value
  Place(const char* kind, int32_t device) : p_{Host().PlaceKind_Id(kind), device} {}
  const TidePlace& c() const { return p_; }
  int32_t kind() const { return p_.kind; }
  int32_t device() const { return p_.device; }
  std::string kind_name() const {
    const char* n = Host().PlaceKind_Name(p_.kind);
    return n ? n : "?";
  }
  std::string ToString() const { return kind_name() + ":" + std::to_string(p_.device); }
  bool operator==(const Place& o) const { return p_.kind == o.p_.kind && p_.device == o.p_.device; }
  bool operator!=(const Place& o) const { return !(*this == o); }

 private:
  TidePlace p_;
};

// ---------------------------------------------------------------------------------------------
// Attributes: an owning value (for schemas and grad ops) and typed reads of host values.
class AttrValue {
 public:
  AttrValue() { Reset(TIDE_ATTR_INT); }
  AttrValue(int32_t v) { Reset(TIDE_ATTR_INT); c_.i = v; }                 // NOLINT
  AttrValue(int64_t v) { Reset(TIDE_ATTR_LONG); c_.l = v; }                // NOLINT
  AttrValue(float v) { Reset(TIDE_ATTR_FLOAT); c_.f = v; c_.d = v; }      // NOLINT
  AttrValue(double v) { Reset(TIDE_ATTR_FLOAT64); c_.d = v; c_.f = static_cast<float>(v); }  // NOLINT
  AttrValue(bool v) { Reset(TIDE_ATTR_BOOLEAN); c_.i = v ? 1 : 0; }        // NOLINT
  AttrValue(const char* v) : AttrValue(std::string(v)) {}                  // NOLINT
  AttrValue(std::string v) { Reset(TIDE_ATTR_STRING); str_ = std::move(v); Fix(); }  // NOLINT
  AttrValue(std::vector<int32_t> v) { Reset(TIDE_ATTR_INTS); ints_ = std::move(v); Fix(); }  // NOLINT
  AttrValue(std::vector<int64_t> v) { Reset(TIDE_ATTR_LONGS); longs_ = std::move(v); Fix(); }  // NOLINT
  AttrValue(std::vector<float> v) { Reset(TIDE_ATTR_FLOATS); floats_ = std::move(v); Fix(); }  // NOLINT
  AttrValue(std::vector<double> v) { Reset(TIDE_ATTR_FLOAT64S); doubles_ = std::move(v); Fix(); }  // NOLINT
  AttrValue(std::vector<bool> v) {  // NOLINT
    Reset(TIDE_ATTR_BOOLEANS);
    for (bool b : v) ints_.push_back(b ? 1 : 0);
    Fix();
  }
  AttrValue(std::vector<std::string> v) { Reset(TIDE_ATTR_STRINGS); strs_ = std::move(v); Fix(); }  // NOLINT
  static AttrValue Block(int32_t idx) {
    AttrValue a;
    a.Reset(TIDE_ATTR_BLOCK);
    a.c_.i = idx;
    return a;
  }
  AttrValue(const AttrValue& o) { *this = o; }
  AttrValue& operator=(const AttrValue& o) {
    c_ = o.c_;
    str_ = o.str_;
    ints_ = o.ints_;
    longs_ = o.longs_;
    floats_ = o.floats_;
    doubles_ = o.doubles_;
    strs_ = o.strs_;
    Fix();
    return *this;
  }
  const TideAttrValue* c() const { return &c_; }
  TideAttrType type() const { return c_.type; }

 private:
  void Reset(TideAttrType t) {
    c_ = TideAttrValue{};
    c_.struct_size = TIDE_STRUCT_SIZE(TideAttrValue, doubles);
    c_.type = t;
  }
  // Points the C view at the owned storage (after construction or copy).
  void Fix() {
    ptrs_.clear();
    for (const auto& s : strs_) ptrs_.push_back(s.c_str());
    switch (c_.type) {
      case TIDE_ATTR_STRING: c_.s = str_.c_str(); break;
      case TIDE_ATTR_INTS: case TIDE_ATTR_BOOLEANS: case TIDE_ATTR_BLOCKS:
        c_.ints = ints_.data(); c_.count = ints_.size(); break;
      case TIDE_ATTR_LONGS: c_.longs = longs_.data(); c_.count = longs_.size(); break;
      case TIDE_ATTR_FLOATS: c_.floats = floats_.data(); c_.count = floats_.size(); break;
      case TIDE_ATTR_FLOAT64S: c_.doubles = doubles_.data(); c_.count = doubles_.size(); break;
      case TIDE_ATTR_STRINGS: c_.strings = ptrs_.data(); c_.count = ptrs_.size(); break;
      default: break;
    }
  }
  TideAttrValue c_;
  std::string str_;
  std::vector<int32_t> ints_;
  std::vector<int64_t> longs_;
  std::vector<float> floats_;
  std::vector<double> doubles_;
  std::vector<std::string> strs_;
  std::vector<const char*> ptrs_;
};

inline const char* AttrTypeName(TideAttrType t) {
  switch (t) {
    case TIDE_ATTR_INT: return "int";
    case TIDE_ATTR_FLOAT: return "float";
    case TIDE_ATTR_STRING: return "string";
    case TIDE_ATTR_INTS: return "ints";
    case TIDE_ATTR_FLOATS: return "floats";
    case TIDE_ATTR_STRINGS: return "strings";
    case TIDE_ATTR_BOOLEAN: return "bool";
    case TIDE_ATTR_BOOLEANS: return "bools";
    case TIDE_ATTR_BLOCK: return "block";
    case TIDE_ATTR_LONG: return "long";
    case TIDE_ATTR_BLOCKS: return "blocks";
    case TIDE_ATTR_LONGS: return "longs";
    case TIDE_ATTR_FLOAT64: return "float64";
    case TIDE_ATTR_FLOAT64S: return "float64s";
  }
  return "?";
}

namespace detail {
[[noreturn]] inline void BadAttr(const char* op, const char* name, const TideAttrValue* v,
                                 const char* wanted) {
  if (!v) TIDE_THROW(TIDE_NOT_FOUND, "op '", op, "' has no attribute '", name, "'");
  TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op, "' attribute '", name, "' is ",
             AttrTypeName(v->type), ", read as ", wanted);
}

template <typename T>
struct AttrReader;
template <>
struct AttrReader<int32_t> {
  static int32_t Read(const char* op, const char* n, const TideAttrValue* v) {
    // A block attribute is a block index, read like the BLOCKS list is read as ints.
    if (v && (v->type == TIDE_ATTR_INT || v->type == TIDE_ATTR_BOOLEAN ||
              v->type == TIDE_ATTR_BLOCK))
      return v->i;
    if (v && v->type == TIDE_ATTR_LONG) return static_cast<int32_t>(v->l);
    BadAttr(op, n, v, "int");
  }
};
template <>
struct AttrReader<int64_t> {
  static int64_t Read(const char* op, const char* n, const TideAttrValue* v) {
    if (v && v->type == TIDE_ATTR_LONG) return v->l;
    if (v && v->type == TIDE_ATTR_INT) return v->i;
    BadAttr(op, n, v, "long");
  }
};
template <>
struct AttrReader<float> {  // a float64 attribute read as float is rounded
  static float Read(const char* op, const char* n, const TideAttrValue* v) {
    if (v && v->type == TIDE_ATTR_FLOAT) return v->f;
    if (v && v->type == TIDE_ATTR_FLOAT64 && TIDE_HAS_FIELD(v, TideAttrValue, d))
      return static_cast<float>(v->d);
    BadAttr(op, n, v, "float");
  }
};
template <>
struct AttrReader<double> {  // exact for float64 attributes; a float one widened
  static double Read(const char* op, const char* n, const TideAttrValue* v) {
    if (v && v->type == TIDE_ATTR_FLOAT64 && TIDE_HAS_FIELD(v, TideAttrValue, d)) return v->d;
    return AttrReader<float>::Read(op, n, v);
  }
};
template <>
struct AttrReader<bool> {
  static bool Read(const char* op, const char* n, const TideAttrValue* v) {
    if (v && v->type == TIDE_ATTR_BOOLEAN) return v->i != 0;
    BadAttr(op, n, v, "bool");
  }
};
template <>
struct AttrReader<std::string> {
  static std::string Read(const char* op, const char* n, const TideAttrValue* v) {
    if (v && v->type == TIDE_ATTR_STRING) return v->s;
    BadAttr(op, n, v, "string");
  }
};
template <>
struct AttrReader<std::vector<int32_t>> {
  static std::vector<int32_t> Read(const char* op, const char* n, const TideAttrValue* v) {
    if (v && (v->type == TIDE_ATTR_INTS || v->type == TIDE_ATTR_BOOLEANS ||
              v->type == TIDE_ATTR_BLOCKS))
      return std::vector<int32_t>(v->ints, v->ints + v->count);
    if (v && v->type == TIDE_ATTR_LONGS) return std::vector<int32_t>(v->longs, v->longs + v->count);
    BadAttr(op, n, v, "ints");
  }
};
template <>
struct AttrReader<std::vector<int64_t>> {
  static std::vector<int64_t> Read(const char* op, const char* n, const TideAttrValue* v) {
    if (v && v->type == TIDE_ATTR_LONGS) return std::vector<int64_t>(v->longs, v->longs + v->count);
    if (v && v->type == TIDE_ATTR_INTS) return std::vector<int64_t>(v->ints, v->ints + v->count);
    BadAttr(op, n, v, "longs");
  }
};
template <>
struct AttrReader<std::vector<float>> {
  static std::vector<float> Read(const char* op, const char* n, const TideAttrValue* v) {
    if (v && v->type == TIDE_ATTR_FLOATS) return std::vector<float>(v->floats, v->floats + v->count);
    if (v && v->type == TIDE_ATTR_FLOAT64S && TIDE_HAS_FIELD(v, TideAttrValue, doubles))
      return std::vector<float>(v->doubles, v->doubles + v->count);
    BadAttr(op, n, v, "floats");
  }
};
template <>
struct AttrReader<std::vector<double>> {
  static std::vector<double> Read(const char* op, const char* n, const TideAttrValue* v) {
    if (v && v->type == TIDE_ATTR_FLOAT64S && TIDE_HAS_FIELD(v, TideAttrValue, doubles))
      return std::vector<double>(v->doubles, v->doubles + v->count);
    if (v && v->type == TIDE_ATTR_FLOATS) return std::vector<double>(v->floats, v->floats + v->count);
    BadAttr(op, n, v, "float64s");
  }
};
template <>
struct AttrReader<std::vector<bool>> {
  static std::vector<bool> Read(const char* op, const char* n, const TideAttrValue* v) {
    if (v && v->type == TIDE_ATTR_BOOLEANS) return std::vector<bool>(v->ints, v->ints + v->count);
    BadAttr(op, n, v, "bools");
  }
};
template <>
struct AttrReader<std::vector<std::string>> {
  static std::vector<std::string> Read(const char* op, const char* n, const TideAttrValue* v) {
    if (v && v->type == TIDE_ATTR_STRINGS)
      return std::vector<std::string>(v->strings, v->strings + v->count);
    BadAttr(op, n, v, "strings");
  }
};
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Tensors: a non-owning view of a core LoDTensor, and an owning one for scratch tensors.
using LoD = std::vector<std::vector<uint64_t>>;

// A view made from a const TideTensor* (a kernel's input, a transform's source) is read-only:
// its mutators throw (FAILED_PRECONDITION), so a kernel cannot change its inputs by mistake;
// the copy of a read-only view is read-only too. Write outputs instead.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(TideTensor* t) : t_(t) {}
  explicit Tensor(const TideTensor* t) : t_(const_cast<TideTensor*>(t)), read_only_(true) {}
  bool read_only() const { return read_only_; }
  TideTensor* c() const { return t_; }
  explicit operator bool() const { return t_ != nullptr; }

  TideDataType dtype() const { return Host().Tensor_DataType(t_); }
  int32_t rank() const { return Host().Tensor_Rank(t_); }
  Dims dims() const {
    const int64_t* d = Host().Tensor_Dims(t_);
    return Dims(d, d + rank());
  }
  int64_t dim(int i) const { return Host().Tensor_Dims(t_)[i < 0 ? i + rank() : i]; }
  int64_t numel() const { return Host().Tensor_Numel(t_); }
  TideLayout layout() const { return Host().Tensor_Layout(t_); }
  void set_layout(TideLayout l) { Host().Tensor_SetLayout(Writable("set_layout"), l); }
  // The layout's own format code (see Tensor_Format); 0 when none was set.
  int64_t format() const { return Host().Tensor_Format(t_); }
  void set_format(int64_t f) { Host().Tensor_SetFormat(Writable("set_format"), f); }
  // Names the bytes as they are now (see Tensor_ContentVersion): 0 when they must not be cached.
  uint64_t content_version() const { return TIDE_HOST_FN(Tensor_ContentVersion)(t_); }
  Place place() const { return Place(Host().Tensor_Place(t_)); }
  bool initialized() const { return Host().Tensor_Data(t_) != nullptr; }

  void Resize(const Dims& d) {
    ThrowIfError(Host().Tensor_Resize(Writable("Resize"), d.data(), static_cast<int32_t>(d.size())));
  }
  // Takes other's dims (no allocation: for hot kernels).
  void ResizeLike(const Tensor& other) {
    ThrowIfError(Host().Tensor_Resize(Writable("ResizeLike"), Host().Tensor_Dims(other.t_),
                                      Host().Tensor_Rank(other.t_)));
  }
  // Same rank and dims as other (no allocation).
  bool SameDims(const Tensor& other) const {
    int32_t r = rank();
    if (r != other.rank()) return false;
    const int64_t* a = Host().Tensor_Dims(t_);
    const int64_t* b = Host().Tensor_Dims(other.t_);
    for (int32_t i = 0; i < r; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  const void* raw_data() const { return Host().Tensor_Data(t_); }
  template <typename T>
  const T* data() const {
    TIDE_CHECK(DataTypeOf<T>() == dtype(), "tensor holds ", DataTypeName(dtype()),
               ", read as ", DataTypeName(DataTypeOf<T>()));
    return static_cast<const T*>(Host().Tensor_Data(t_));
  }
  void* mutable_data(TideDataType dtype, const Place& place) {
    void* p = nullptr;
    ThrowIfError(Host().Tensor_MutableData(Writable("mutable_data"), dtype, place.c(), &p));
    return p;
  }
  template <typename T>
  T* mutable_data(const Place& place) {
    return static_cast<T*>(mutable_data(DataTypeOf<T>(), place));
  }
  // Resize, then allocate.
  template <typename T>
  T* mutable_data(const Dims& d, const Place& place) {
    Resize(d);
    return mutable_data<T>(place);
  }
  void ShareDataWith(const Tensor& src) {
    ThrowIfError(Host().Tensor_ShareDataWith(Writable("ShareDataWith"), src.t_));
  }
  // Makes `data` (bytes long, on place) this tensor's memory for its current dims, without a
  // copy; `release` runs once no tensor uses it (not when this throws).
  void AdoptData(void* data, size_t bytes, TideDataType dtype, const Place& place,
                 std::function<void()> release) {
    TideTensor* self = Writable("AdoptData");
    auto* keep = new std::function<void()>(std::move(release));
    TideStatus* st = Host().Tensor_AdoptData(
        self, data, bytes, dtype, place.c(),
        [](void* arg) {
          std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(arg));
          (*fn)();
        },
        keep);
    if (st) delete keep;
    ThrowIfError(st);
  }
  void CopyFrom(const Tensor& src, const Place& place, TideDeviceContext* ctx = nullptr) {
    ThrowIfError(Host().Tensor_CopyTo(src.t_, place.c(), ctx, Writable("CopyFrom")));
  }

  LoD lod() const {
    LoD out(Host().Tensor_LoDLevels(t_));
    for (size_t l = 0; l < out.size(); ++l) {
      size_t n = 0;
      const uint64_t* o = Host().Tensor_LoD(t_, l, &n);
      out[l].assign(o, o + n);
    }
    return out;
  }
  void set_lod(const LoD& lod) {
    std::vector<const uint64_t*> ptrs;
    std::vector<size_t> lens;
    for (const auto& level : lod) {
      ptrs.push_back(level.data());
      lens.push_back(level.size());
    }
    ThrowIfError(Host().Tensor_SetLoD(Writable("set_lod"), ptrs.data(), lens.data(), lod.size()));
  }

 protected:
  TideTensor* Writable(const char* what) const {
    if (read_only_)
      TIDE_THROW(TIDE_FAILED_PRECONDITION, what, " on a read-only tensor (a kernel's input): ",
                 "write an output instead");
    return t_;
  }
  TideTensor* t_ = nullptr;
  bool read_only_ = false;
};

// A tensor owned by the plugin (scratch space that outlives one call, staging copies).
class OwnedTensor : public Tensor {
 public:
  OwnedTensor() : Tensor(Host().Tensor_Create()) {}
  ~OwnedTensor() { Host().Tensor_Destroy(t_); }
  OwnedTensor(OwnedTensor&& o) noexcept : Tensor(o.t_) { o.t_ = nullptr; }
  OwnedTensor& operator=(OwnedTensor&& o) noexcept {
    std::swap(t_, o.t_);
    return *this;
  }
  OwnedTensor(const OwnedTensor&) = delete;
  OwnedTensor& operator=(const OwnedTensor&) = delete;
};

class SelectedRows {
 public:
  explicit SelectedRows(TideSelectedRows* s) : s_(s) {}
  TideSelectedRows* c() const { return s_; }
  int64_t height() const { return Host().SelectedRows_Height(s_); }
  void set_height(int64_t h) { Host().SelectedRows_SetHeight(s_, h); }
  std::vector<int64_t> rows() const {
    size_t n = 0;
    const int64_t* r = Host().SelectedRows_Rows(s_, &n);
    return std::vector<int64_t>(r, r + n);
  }
  void set_rows(const std::vector<int64_t>& rows) {
    Host().SelectedRows_SetRows(s_, rows.data(), rows.size());
  }
  Tensor value() const { return Tensor(Host().SelectedRows_Value(s_)); }

 private:
  TideSelectedRows* s_;
};

class TensorArray {
 public:
  explicit TensorArray(TideTensorArray* a) : a_(a) {}
  size_t size() const { return Host().TensorArray_Size(a_); }
  void resize(size_t n) { Host().TensorArray_Resize(a_, n); }
  Tensor at(size_t i) const {
    TideTensor* t = Host().TensorArray_At(a_, i);
    if (!t) TIDE_THROW(TIDE_OUT_OF_RANGE, "tensor array index ", i, " >= size ", size());
    return Tensor(t);
  }

 private:
  TideTensorArray* a_;
};

class Scope;

// The scopes a control-flow op ran its block in, kept in a variable for its gradient op.
class StepScopes {
 public:
  explicit StepScopes(TideStepScopes* s) : s_(s) {}
  size_t size() const { return Host().StepScopes_Size(s_); }
  inline Scope at(size_t i) const;
  // A new child scope of `parent`, appended.
  inline Scope Push(const Scope& parent);
  // Deletes every listed scope from its parent.
  void Clear() { Host().StepScopes_Clear(s_); }

 private:
  TideStepScopes* s_;
};

class Variable {
 public:
  explicit Variable(TideVariable* v) : v_(v) {}
  TideVariable* c() const { return v_; }
  explicit operator bool() const { return v_ != nullptr; }
  TideVarType type() const { return Host().Variable_Type(v_); }
  bool IsTensor() const { return type() == TIDE_VAR_LOD_TENSOR; }
  bool IsSelectedRows() const { return type() == TIDE_VAR_SELECTED_ROWS; }
  Tensor GetTensor() const {
    TideTensor* t = nullptr;
    ThrowIfError(Host().Variable_GetTensor(v_, &t));
    return Tensor(t);
  }
  SelectedRows GetSelectedRows() const {
    TideSelectedRows* s = nullptr;
    ThrowIfError(Host().Variable_GetSelectedRows(v_, &s));
    return SelectedRows(s);
  }
  TensorArray GetTensorArray() const {
    TideTensorArray* a = nullptr;
    ThrowIfError(Host().Variable_GetTensorArray(v_, &a));
    return TensorArray(a);
  }
  bool IsTensorArray() const { return type() == TIDE_VAR_LOD_TENSOR_ARRAY; }
  // A LoDRankTable as an int64 CPU tensor [n, 2] of (sequence index, length) rows, longest
  // first; its LoD is the table's coarse LoD.
  Tensor GetRankTable() const {
    TideTensor* t = nullptr;
    ThrowIfError(Host().Variable_GetRankTable(v_, &t));
    return Tensor(t);
  }
  bool IsRankTable() const { return type() == TIDE_VAR_LOD_RANK_TABLE; }
  StepScopes GetStepScopes() const {
    TideStepScopes* ss = nullptr;
    ThrowIfError(Host().Variable_GetStepScopes(v_, &ss));
    return StepScopes(ss);
  }

 private:
  TideVariable* v_;
};

class Scope {
 public:
  explicit Scope(TideScope* s) : s_(s) {}
  TideScope* c() const { return s_; }
  Variable FindVar(const std::string& name) const {
    return Variable(Host().Scope_FindVar(s_, name.c_str()));
  }
  Variable Var(const std::string& name) { return Variable(Host().Scope_Var(s_, name.c_str())); }
  // `name` in this scope only, not its parents.
  Variable FindLocalVar(const std::string& name) const {
    return Variable(Host().Scope_FindLocalVar(s_, name.c_str()));
  }
  Scope NewScope() { return Scope(Host().Scope_NewScope(s_)); }
  void DropKids() { Host().Scope_DropKids(s_); }

 private:
  TideScope* s_;
};

Scope StepScopes::at(size_t i) const {
  TideScope* sc = Host().StepScopes_At(s_, i);
  if (!sc) TIDE_THROW(TIDE_OUT_OF_RANGE, "step scope ", i, " >= size ", size());
  return Scope(sc);
}
Scope StepScopes::Push(const Scope& parent) { return Scope(Host().StepScopes_Push(s_, parent.c())); }

// ---------------------------------------------------------------------------------------------
// Kernel context.
class KernelContext {
 public:
  explicit KernelContext(TideKernelContext* c) : c_(c) {}
  TideKernelContext* c() const { return c_; }
  const char* op_type() const { return Host().KernelContext_OpType(c_); }
  Place place() const { return Place(Host().KernelContext_Place(c_)); }
  TideDeviceContext* device_context() const { return Host().KernelContext_DeviceContext(c_); }
  // A device-extension struct (e.g. TideCpuContext for "tide.cpu"); throws when absent.
  template <typename T>
  const T& DeviceExtension(const char* name) const {
    const void* p = Host().DeviceContext_Extension(device_context(), name);
    if (!p) TIDE_THROW(TIDE_UNAVAILABLE, "op '", op_type(), "': device ", place().ToString(),
                       " has no extension '", name, "'");
    return *static_cast<const T*>(p);
  }
  // Sets `size` bytes at dst (memory of this place) to `value`, queued on the device context, on
  // any device (its memset, or a copy from the host).
  void Memset(void* dst, int32_t value, size_t size) const {
    ThrowIfError(TIDE_HOST_FN(DeviceContext_Memset)(device_context(), dst, value, size));
  }

  size_t InputCount(const char* param) const { return Host().KernelContext_InputCount(c_, param); }
  size_t OutputCount(const char* param) const {
    return Host().KernelContext_OutputCount(c_, param);
  }
  bool HasInput(const char* param, size_t i = 0) const {
    return Host().KernelContext_InputVar(c_, param, i) != nullptr;
  }
  bool HasOutput(const char* param, size_t i = 0) const {
    return Host().KernelContext_OutputVar(c_, param, i) != nullptr;
  }
  // The LoDTensor bound to input param[i]; throws with a clear message when absent.
  Tensor Input(const char* param, size_t i = 0) const {
    const TideTensor* t = Host().KernelContext_Input(c_, param, i);
    if (!t) MissingInput(param, i);
    return Tensor(t);
  }
  // An input that may be absent (a dispensable one): an empty view then.
  Tensor OptionalInput(const char* param, size_t i = 0) const {
    return Tensor(Host().KernelContext_Input(c_, param, i));
  }
  std::vector<Tensor> Inputs(const char* param) const {
    std::vector<Tensor> out;
    for (size_t i = 0, n = InputCount(param); i < n; ++i) out.push_back(Input(param, i));
    return out;
  }
  Tensor Output(const char* param, size_t i = 0) const {
    TideTensor* t = Host().KernelContext_Output(c_, param, i);
    if (!t) MissingOutput(param, i);
    return Tensor(t);
  }
  Tensor OptionalOutput(const char* param, size_t i = 0) const {
    return Tensor(Host().KernelContext_Output(c_, param, i));
  }
  std::vector<Tensor> Outputs(const char* param) const {
    std::vector<Tensor> out;
    for (size_t i = 0, n = OutputCount(param); i < n; ++i) out.push_back(Output(param, i));
    return out;
  }
  Variable InputVar(const char* param, size_t i = 0) const {
    return Variable(Host().KernelContext_InputVar(c_, param, i));
  }
  Variable OutputVar(const char* param, size_t i = 0) const {
    return Variable(Host().KernelContext_OutputVar(c_, param, i));
  }
  std::string InputName(const char* param, size_t i = 0) const {
    const char* n = Host().KernelContext_InputName(c_, param, i);
    return n ? n : "";
  }
  std::string OutputName(const char* param, size_t i = 0) const {
    const char* n = Host().KernelContext_OutputName(c_, param, i);
    return n ? n : "";
  }
  template <typename T>
  T Attr(const char* name) const {
    return detail::AttrReader<T>::Read(op_type(), name, Host().KernelContext_Attr(c_, name));
  }
  bool HasAttr(const char* name) const { return Host().KernelContext_Attr(c_, name) != nullptr; }
  // The op's state for this kernel (KernelContext_State in plugin_api.h): what the kernel
  // derived on an earlier run of this op, or null. The kernel keeps state of one type T.
  template <typename T>
  T* State() const {
    return static_cast<T*>(TIDE_HOST_FN(KernelContext_State)(c_));
  }
  // Hands `state` to the op (replacing and deleting the old one); the core deletes it when the
  // op goes or another kernel sets its own. Returns it, still usable for this run.
  template <typename T>
  T* SetState(std::unique_ptr<T> state) const {
    T* p = state.get();
    ThrowIfError(TIDE_HOST_FN(KernelContext_SetState)(
        c_, p, [](void* s) { delete static_cast<T*>(s); }));
    state.release();
    return p;
  }
  // Scratch memory freed when the kernel returns.
  template <typename T>
  T* TempBuffer(size_t count) const {
    void* p = nullptr;
    ThrowIfError(Host().KernelContext_TempAlloc(c_, count * sizeof(T), &p));
    return static_cast<T*>(p);
  }

 private:
  [[noreturn]] void MissingInput(const char* param, size_t i) const {
    Variable v = InputVar(param, i);
    if (!v) TIDE_THROW(TIDE_NOT_FOUND, "op '", op_type(), "' has no input ", param, "[", i, "]");
    TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op_type(), "' input ", param, " ('",
               InputName(param, i), "') does not hold a LoDTensor");
  }
  [[noreturn]] void MissingOutput(const char* param, size_t i) const {
    Variable v = OutputVar(param, i);
    if (!v) TIDE_THROW(TIDE_NOT_FOUND, "op '", op_type(), "' has no output ", param, "[", i, "]");
    TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op_type(), "' output ", param, " ('",
               OutputName(param, i), "') does not hold a LoDTensor");
  }
  TideKernelContext* c_;
};

// ---------------------------------------------------------------------------------------------
// Shape inference context.
class InferShapeContext {
 public:
  explicit InferShapeContext(TideInferShapeContext* c) : c_(c) {}
  const char* op_type() const { return Host().InferShape_OpType(c_); }
  bool IsRuntime() const { return Host().InferShape_IsRuntime(c_) != 0; }
  size_t InputCount(const char* param) const { return Host().InferShape_InputCount(c_, param); }
  size_t OutputCount(const char* param) const { return Host().InferShape_OutputCount(c_, param); }
  bool HasInput(const char* param) const { return InputCount(param) > 0; }
  bool HasOutput(const char* param) const { return OutputCount(param) > 0; }
  std::string InputName(const char* param, size_t i = 0) const {
    const char* n = Host().InferShape_InputName(c_, param, i);
    return n ? n : "";
  }
  std::string OutputName(const char* param, size_t i = 0) const {
    const char* n = Host().InferShape_OutputName(c_, param, i);
    return n ? n : "";
  }
  Dims InputDims(const char* param, size_t i = 0) const {
    int64_t d[16];
    int32_t rank = 0;
    ThrowIfError(Host().InferShape_InputDims(c_, param, i, d, 16, &rank));
    return Dims(d, d + rank);
  }
  std::vector<Dims> InputsDims(const char* param) const {
    std::vector<Dims> out;
    for (size_t i = 0, n = InputCount(param); i < n; ++i) out.push_back(InputDims(param, i));
    return out;
  }
  void SetOutputDims(const char* param, const Dims& d, size_t i = 0) {
    ThrowIfError(Host().InferShape_SetOutputDims(c_, param, i, d.data(),
                                                 static_cast<int32_t>(d.size())));
  }
  TideDataType InputDataType(const char* param, size_t i = 0) const {
    return Host().InferShape_InputDataType(c_, param, i);
  }
  void SetOutputDataType(const char* param, TideDataType t, size_t i = 0) {
    Host().InferShape_SetOutputDataType(c_, param, i, t);
  }
  TideVarType InputVarType(const char* param, size_t i = 0) const {
    return Host().InferShape_InputVarType(c_, param, i);
  }
  void SetOutputVarType(const char* param, TideVarType t, size_t i = 0) {
    Host().InferShape_SetOutputVarType(c_, param, i, t);
  }
  void ShareLoD(const char* in, const char* out, size_t i = 0, size_t j = 0) {
    ThrowIfError(Host().InferShape_ShareLoD(c_, in, i, out, j));
  }
  // Compile time: the input's lod_level; run time: its tensor's number of LoD levels; -1 when
  // absent or not a tensor.
  int32_t InputLoDLevel(const char* param, size_t i = 0) const {
    return Host().InferShape_InputLoDLevel(c_, param, i);
  }
  // Compile time only (kernels set the LoD at run time).
  void SetOutputLoDLevel(const char* param, int32_t level, size_t i = 0) {
    Host().InferShape_SetOutputLoDLevel(c_, param, i, level);
  }
  template <typename T>
  T Attr(const char* name) const {
    return detail::AttrReader<T>::Read(op_type(), name, Host().InferShape_Attr(c_, name));
  }
  bool HasAttr(const char* name) const { return Host().InferShape_Attr(c_, name) != nullptr; }

 private:
  TideInferShapeContext* c_;
};

// Common shape rules.
using InferShapeFn = std::function<void(InferShapeContext&)>;
// Out has In's dims, dtype and LoD.
inline InferShapeFn SameShapeAsInput(std::string in, std::string out) {
  return [in, out](InferShapeContext& ctx) {
    ctx.SetOutputDims(out.c_str(), ctx.InputDims(in.c_str()));
    ctx.SetOutputDataType(out.c_str(), ctx.InputDataType(in.c_str()));
    ctx.ShareLoD(in.c_str(), out.c_str());
  };
}

// ---------------------------------------------------------------------------------------------
// Gradient op makers.
inline std::string GradVarName(const std::string& name) { return name + "@GRAD"; }
constexpr const char* kEmptyVarName = "@EMPTY@";

class GradOp {
 public:
  explicit GradOp(TideGradOp* op) : op_(op) {}
  GradOp& Input(const std::string& param, const std::vector<std::string>& args) {
    Set(Host().GradOp_SetInput, param, args);
    return *this;
  }
  GradOp& Output(const std::string& param, const std::vector<std::string>& args) {
    Set(Host().GradOp_SetOutput, param, args);
    return *this;
  }
  GradOp& Attr(const std::string& name, const AttrValue& v) {
    Host().GradOp_SetAttr(op_, name.c_str(), v.c());
    return *this;
  }
  GradOp& CopyAttrs() {
    Host().GradOp_CopyAttrs(op_);
    return *this;
  }

 private:
  template <typename F>
  void Set(F f, const std::string& param, const std::vector<std::string>& args) {
    std::vector<const char*> ptrs;
    for (const auto& a : args) ptrs.push_back(a.c_str());
    f(op_, param.c_str(), ptrs.data(), ptrs.size());
  }
  TideGradOp* op_;
};

class GradMaker {
 public:
  explicit GradMaker(TideGradOpMaker* m) : m_(m) {}
  const char* op_type() const { return Host().GradMaker_OpType(m_); }
  std::vector<std::string> InputParams() const { return List(Host().GradMaker_InputParams(m_, &n_)); }
  std::vector<std::string> OutputParams() const {
    return List(Host().GradMaker_OutputParams(m_, &n_));
  }
  std::vector<std::string> Input(const char* p) const { return List(Host().GradMaker_Input(m_, p, &n_)); }
  std::vector<std::string> Output(const char* p) const {
    return List(Host().GradMaker_Output(m_, p, &n_));
  }
  std::vector<std::string> InputGrad(const char* p) const {
    return List(Host().GradMaker_InputGrad(m_, p, &n_));
  }
  std::vector<std::string> OutputGrad(const char* p) const {
    return List(Host().GradMaker_OutputGrad(m_, p, &n_));
  }
  template <typename T>
  T Attr(const char* name) const {
    return detail::AttrReader<T>::Read(op_type(), name, Host().GradMaker_Attr(m_, name));
  }
  GradOp NewOp(const std::string& type) { return GradOp(Host().GradMaker_NewOp(m_, type.c_str())); }
  // The gradient block the core built for block attribute `attr` of the forward op (a
  // control-flow op's body), for the grad op to run; an error when there is none.
  int32_t GradBlock(const char* attr = "sub_block") const {
    int32_t idx = Host().GradMaker_GradBlock(m_, attr);
    if (idx < 0) TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op_type(), "': no gradient block for attribute '", attr, "'");
    return idx;
  }

 private:
  std::vector<std::string> List(const char* const* names) const {
    return std::vector<std::string>(names, names + n_);
  }
  TideGradOpMaker* m_;
  mutable size_t n_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Operators without kernels.
class OpRunContext {
 public:
  explicit OpRunContext(TideOpRunContext* c) : c_(c) {}
  const char* op_type() const { return Host().OpRun_OpType(c_); }
  Scope scope() const { return Scope(Host().OpRun_Scope(c_)); }
  Place place() const { return Place(Host().OpRun_Place(c_)); }
  TideDeviceContext* device_context() const { return Host().OpRun_DeviceContext(c_); }
  template <typename T>
  T Attr(const char* name) const {
    return detail::AttrReader<T>::Read(op_type(), name, Host().OpRun_Attr(c_, name));
  }
  std::vector<std::string> Inputs(const char* param) const {
    size_t n = 0;
    const char* const* v = Host().OpRun_Inputs(c_, param, &n);
    return std::vector<std::string>(v, v + n);
  }
  std::vector<std::string> Outputs(const char* param) const {
    size_t n = 0;
    const char* const* v = Host().OpRun_Outputs(c_, param, &n);
    return std::vector<std::string>(v, v + n);
  }
  void RunBlock(int32_t block_idx, Scope scope) {
    ThrowIfError(Host().OpRun_RunBlock(c_, block_idx, scope.c()));
  }

 private:
  TideOpRunContext* c_;
};

// ---------------------------------------------------------------------------------------------
// Op schemas: the builder plugin authors use to declare an operator.
using KernelFn = void (*)(KernelContext&);
using GradMakerFn = std::function<void(GradMaker&)>;
using OpRunFn = std::function<void(OpRunContext&)>;
using AttrCheckFn = std::function<void(const TideAttrValue&)>;

class OpSchema {
 public:
  explicit OpSchema(std::string type) : type_(std::move(type)) {}

  OpSchema& Comment(std::string c) { comment_ = std::move(c); return *this; }
  OpSchema& Input(std::string name, std::string comment = "") {
    args_in_.push_back({std::move(name), std::move(comment), 0});
    last_ = kLastInput;
    return *this;
  }
  OpSchema& Output(std::string name, std::string comment = "") {
    args_out_.push_back({std::move(name), std::move(comment), 0});
    last_ = kLastOutput;
    return *this;
  }
  // Modifiers of the last Input/Output declared.
  OpSchema& AsDuplicable() { return Flag(TIDE_ARG_DUPLICABLE); }
  OpSchema& AsDispensable() { return Flag(TIDE_ARG_DISPENSABLE); }
  OpSchema& AsIntermediate() { return Flag(TIDE_ARG_INTERMEDIATE); }

  // An attribute with a default value; its type is the default's.
  OpSchema& Attr(std::string name, AttrValue default_value, std::string comment = "") {
    TideAttrType t = default_value.type();
    attrs_.push_back({std::move(name), t, std::move(comment), true, std::move(default_value), {}});
    return *this;
  }
  // An attribute every op must set.
  OpSchema& RequiredAttr(std::string name, TideAttrType type, std::string comment = "") {
    attrs_.push_back({std::move(name), type, std::move(comment), false, AttrValue(), {}});
    return *this;
  }
  // A check of the last attribute declared; throw tide::Error to reject a value.
  OpSchema& Check(AttrCheckFn fn) {
    TIDE_CHECK(!attrs_.empty(), "Check() before any Attr() in op '", type_, "'");
    attrs_.back().check = std::move(fn);
    return *this;
  }
  OpSchema& GreaterThan(double bound) {
    std::string name = attrs_.empty() ? "" : attrs_.back().name;
    return Check([name, bound](const TideAttrValue& v) {
      double x = v.type == TIDE_ATTR_FLOAT ? v.f : v.type == TIDE_ATTR_LONG ? v.l : v.i;
      TIDE_CHECK(x > bound, "attribute '", name, "' must be > ", bound, ", got ", x);
    });
  }
  OpSchema& InSet(std::vector<std::string> allowed) {
    std::string name = attrs_.empty() ? "" : attrs_.back().name;
    return Check([name, allowed](const TideAttrValue& v) {
      for (const auto& a : allowed)
        if (v.s && a == v.s) return;
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "attribute '", name, "' must be one of {", list,
                 "}, got '", v.s ? v.s : "", "'");
    });
  }

  OpSchema& InferShape(InferShapeFn fn) { infer_ = std::move(fn); return *this; }
  OpSchema& Grad(GradMakerFn fn) { grad_ = std::move(fn); return *this; }
  // Fluid's default grad rule, to an op named `grad_type` (default: type + "_grad").
  OpSchema& DefaultGrad(std::string grad_type = "") {
    default_grad_ = grad_type.empty() ? type_ + "_grad" : std::move(grad_type);
    return *this;
  }
  // Which input (or "attr:<name>") picks the kernel's data type.
  OpSchema& KernelDataTypeFrom(std::string source) { dtype_source_ = std::move(source); return *this; }
  // Declares that the op has no gradient by design (its outputs do not depend differentiably
  // on its inputs). Without this, Grad or DefaultGrad, append_backward stops at the op with an
  // error when a parameter's gradient would have to pass through it.
  OpSchema& NoGradient() { no_gradient_ = true; return *this; }
  // Makes this an operator without kernels, run by `fn`.
  OpSchema& Run(OpRunFn fn) { run_ = std::move(fn); return *this; }

  const std::string& type() const { return type_; }

  // Registers through the C ABI. The schema is kept alive by the caller (see Registrar).
  void Register(TideRegistrar* r) const;

 private:
  struct Arg {
    std::string name, comment;
    uint32_t flags;
  };
  struct AttrSpec {
    std::string name;
    TideAttrType type;
    std::string comment;
    bool has_default;
    AttrValue default_value;
    AttrCheckFn check;
  };
  OpSchema& Flag(uint32_t f) {
    TIDE_CHECK(last_ != kLastNone, "argument flag before any Input/Output in op '", type_, "'");
    (last_ == kLastInput ? args_in_ : args_out_).back().flags |= f;
    return *this;
  }
  static TideStatus* InferTrampoline(TideInferShapeContext* c, void* data) {
    return detail::Guard([&] {
      InferShapeContext ctx(c);
      (*static_cast<InferShapeFn*>(data))(ctx);
    });
  }
  static TideStatus* GradTrampoline(TideGradOpMaker* m, void* data) {
    return detail::Guard([&] {
      GradMaker g(m);
      (*static_cast<GradMakerFn*>(data))(g);
    });
  }
  static TideStatus* RunTrampoline(TideOpRunContext* c, void* data) {
    return detail::Guard([&] {
      OpRunContext ctx(c);
      (*static_cast<OpRunFn*>(data))(ctx);
    });
  }
  static TideStatus* CheckTrampoline(const TideAttrValue* v, void* data) {
    return detail::Guard([&] { (*static_cast<AttrCheckFn*>(data))(*v); });
  }

  std::string type_, comment_, default_grad_, dtype_source_;
  std::vector<Arg> args_in_, args_out_;
  enum { kLastNone, kLastInput, kLastOutput } last_ = kLastNone;  // what a flag modifies
  std::vector<AttrSpec> attrs_;
  InferShapeFn infer_;
  GradMakerFn grad_;
  OpRunFn run_;
  bool no_gradient_ = false;
};

inline void OpSchema::Register(TideRegistrar* r) const {
  std::vector<TideArgDef> ins, outs;
  for (const auto& a : args_in_)
    ins.push_back({TIDE_STRUCT_SIZE(TideArgDef, flags), a.name.c_str(), a.comment.c_str(), a.flags});
  for (const auto& a : args_out_)
    outs.push_back({TIDE_STRUCT_SIZE(TideArgDef, flags), a.name.c_str(), a.comment.c_str(), a.flags});
  std::vector<TideAttrDef> attrs;
  for (const auto& a : attrs_) {
    TideAttrDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideAttrDef, check_data);
    d.name = a.name.c_str();
    d.type = a.type;
    d.comment = a.comment.c_str();
    d.default_value = a.has_default ? a.default_value.c() : nullptr;
    if (a.check) {
      d.check = &OpSchema::CheckTrampoline;
      d.check_data = const_cast<AttrCheckFn*>(&a.check);
    }
    attrs.push_back(d);
  }
  TideOpDef def{};
  def.struct_size = TIDE_STRUCT_SIZE(TideOpDef, no_gradient);
  def.type = type_.c_str();
  def.comment = comment_.c_str();
  def.inputs = ins.data();
  def.num_inputs = ins.size();
  def.outputs = outs.data();
  def.num_outputs = outs.size();
  def.attrs = attrs.data();
  def.num_attrs = attrs.size();
  if (infer_) {
    def.infer_shape = &OpSchema::InferTrampoline;
    def.infer_shape_data = const_cast<InferShapeFn*>(&infer_);
  }
  if (grad_) {
    def.grad_maker = &OpSchema::GradTrampoline;
    def.grad_maker_data = const_cast<GradMakerFn*>(&grad_);
  }
  def.default_grad_op = default_grad_.empty() ? nullptr : default_grad_.c_str();
  def.kernel_dtype_source = dtype_source_.empty() ? nullptr : dtype_source_.c_str();
  if (run_) {
    def.run = &OpSchema::RunTrampoline;
    def.run_data = const_cast<OpRunFn*>(&run_);
  }
  def.no_gradient = no_gradient_ ? 1 : 0;
  ThrowIfError(Host().Registrar_AddOp(r, &def));
}

// ---------------------------------------------------------------------------------------------
// Devices: derive from Device and register it; the adapter fills the C function table.
class Device {
 public:
  virtual ~Device() = default;
  virtual const char* kind() const = 0;
  virtual bool host_accessible() const { return false; }
  virtual size_t alignment() const { return 64; }
  virtual int32_t Count() = 0;
  virtual void* Alloc(int32_t device, size_t size) = 0;  // throw tide::Error on failure
  virtual void Free(int32_t device, void* ptr, size_t size) = 0;
  virtual void MemoryInfo(int32_t device, size_t* total, size_t* available) = 0;
  virtual void* CreateContext(int32_t device) = 0;
  virtual void DestroyContext(void* ctx) = 0;
  virtual void Synchronize(void* ctx) = 0;
  virtual void Copy(void* ctx, TideCopyKind kind, void* dst, const void* src, size_t size) = 0;
  virtual const void* Extension(void* /*ctx*/, const char* /*name*/) { return nullptr; }
  // Once at process exit, after every context was destroyed (see TideDeviceDef.finalize).
  virtual void Finalize() {}
  // Defaults of fraction_of_<kind>_memory_to_use / initial_<kind>_memory_in_mb; 0: 1.0 / 64.
  virtual double DefaultMemoryFraction() const { return 0; }
  virtual uint64_t DefaultInitialMemoryMb() const { return 0; }
  // Peer copies between two devices of this kind (see TideDeviceDef.copy_peer): a device that
  // has them returns true from HasPeerCopy and implements CopyPeer.
  virtual bool HasPeerCopy() const { return false; }
  virtual void CopyPeer(void* /*ctx*/, void* /*dst*/, int32_t /*src_device*/,
                        const void* /*src*/, size_t /*size*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' has no peer copies");
  }
  // Optional entries (see TideDeviceDef): a device that has one returns true from its Has*.
  // Properties: fill the fields props->struct_size covers (TIDE_HAS_FIELD).
  virtual bool HasProperties() const { return false; }
  virtual void Properties(int32_t /*device*/, TideDeviceProperties* /*props*/) {}
  virtual bool HasMemset() const { return false; }
  virtual void Memset(void* /*ctx*/, void* /*dst*/, int32_t /*value*/, size_t /*size*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' has no memset");
  }
  // Pinned host memory.
  virtual bool HasHostAlloc() const { return false; }
  virtual void* HostAlloc(size_t /*size*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' has no pinned host memory");
  }
  virtual void HostFree(void* /*ptr*/) {}
  // DLPack's DLDeviceType of this kind's memory (see TideDeviceDef); 0: none.
  virtual int32_t DLPackDeviceType() const { return 0; }
  // Events: all six.
  virtual bool HasEvents() const { return false; }
  virtual void* CreateEvent(void* /*ctx*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' has no events");
  }
  virtual void DestroyEvent(void* /*event*/) {}
  virtual void RecordEvent(void* /*ctx*/, void* /*event*/) {}
  virtual bool QueryEvent(void* /*event*/) { return true; }
  virtual void SynchronizeEvent(void* /*event*/) {}
  virtual void WaitEvent(void* /*ctx*/, void* /*event*/) {}

  void AddOptionalEntries(TideDeviceDef* d) {
    if (HasProperties())
      d->properties = [](void* s, int32_t device, TideDeviceProperties* p) -> TideStatus* {
        return detail::Guard([&] { static_cast<Device*>(s)->Properties(device, p); });
      };
    if (HasMemset())
      d->memset = [](void* s, void* ctx, void* dst, int32_t v, size_t n) -> TideStatus* {
        return detail::Guard([&] { static_cast<Device*>(s)->Memset(ctx, dst, v, n); });
      };
    if (HasHostAlloc()) {
      d->host_alloc = [](void* s, size_t size, void** p) -> TideStatus* {
        *p = nullptr;
        return detail::Guard([&] { *p = static_cast<Device*>(s)->HostAlloc(size); });
      };
      d->host_free = [](void* s, void* p) { static_cast<Device*>(s)->HostFree(p); };
    }
    if (!HasEvents()) return;
    d->event_create = [](void* s, void* ctx, void** e) -> TideStatus* {
      *e = nullptr;
      return detail::Guard([&] { *e = static_cast<Device*>(s)->CreateEvent(ctx); });
    };
    d->event_destroy = [](void* s, void* e) { static_cast<Device*>(s)->DestroyEvent(e); };
    d->event_record = [](void* s, void* ctx, void* e) -> TideStatus* {
      return detail::Guard([&] { static_cast<Device*>(s)->RecordEvent(ctx, e); });
    };
    d->event_query = [](void* s, void* e, int32_t* done) -> TideStatus* {
      return detail::Guard([&] { *done = static_cast<Device*>(s)->QueryEvent(e) ? 1 : 0; });
    };
    d->event_synchronize = [](void* s, void* e) -> TideStatus* {
      return detail::Guard([&] { static_cast<Device*>(s)->SynchronizeEvent(e); });
    };
    d->context_wait_event = [](void* s, void* ctx, void* e) -> TideStatus* {
      return detail::Guard([&] { static_cast<Device*>(s)->WaitEvent(ctx, e); });
    };
  }

  TideDeviceDef def() {
    TideDeviceDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideDeviceDef, finalize);
    d.dlpack_device_type = DLPackDeviceType();
    d.memory_fraction_default = DefaultMemoryFraction();
    d.initial_memory_mb_default = DefaultInitialMemoryMb();
    d.kind = kind();
    d.self = this;
    d.host_accessible = host_accessible() ? 1 : 0;
    d.alignment = alignment();
    d.device_count = [](void* s) -> int32_t { return static_cast<Device*>(s)->Count(); };
    d.alloc = [](void* s, int32_t dev, size_t size, void** p) -> TideStatus* {
      *p = nullptr;
      return detail::Guard([&] { *p = static_cast<Device*>(s)->Alloc(dev, size); });
    };
    d.free = [](void* s, int32_t dev, void* p, size_t size) {
      static_cast<Device*>(s)->Free(dev, p, size);
    };
    d.memory_info = [](void* s, int32_t dev, size_t* total, size_t* avail) -> TideStatus* {
      return detail::Guard([&] { static_cast<Device*>(s)->MemoryInfo(dev, total, avail); });
    };
    d.context_create = [](void* s, int32_t dev, void** ctx) -> TideStatus* {
      return detail::Guard([&] { *ctx = static_cast<Device*>(s)->CreateContext(dev); });
    };
    d.context_destroy = [](void* s, void* ctx) { static_cast<Device*>(s)->DestroyContext(ctx); };
    d.synchronize = [](void* s, void* ctx) -> TideStatus* {
      return detail::Guard([&] { static_cast<Device*>(s)->Synchronize(ctx); });
    };
    d.copy = [](void* s, void* ctx, TideCopyKind k, void* dst, const void* src,
                size_t size) -> TideStatus* {
      return detail::Guard([&] { static_cast<Device*>(s)->Copy(ctx, k, dst, src, size); });
    };
    d.context_extension = [](void* s, void* ctx, const char* name) -> const void* {
      return static_cast<Device*>(s)->Extension(ctx, name);
    };
    if (HasPeerCopy())
      d.copy_peer = [](void* s, void* ctx, void* dst, int32_t src_device, const void* src,
                       size_t size) -> TideStatus* {
        return detail::Guard(
            [&] { static_cast<Device*>(s)->CopyPeer(ctx, dst, src_device, src, size); });
      };
    d.finalize = [](void* s) {
      try {
        static_cast<Device*>(s)->Finalize();
      } catch (...) {  // nothing to report to at exit
      }
    };
    AddOptionalEntries(&d);
    return d;
  }
};

// ---------------------------------------------------------------------------------------------
// Registration.
class Registrar {
 public:
  explicit Registrar(TideRegistrar* r) : r_(r) {}
  TideRegistrar* c() const { return r_; }

  // Registers an op; the schema is kept for the life of the process (its callbacks live there).
  void Op(OpSchema schema) {
    // Never freed (plugins are never unloaded), and listed even when the core refuses the op, so
    // the memory stays reachable.
    static auto* kept = new std::vector<std::unique_ptr<OpSchema>>();
    static std::mutex mu;
    OpSchema* s;
    {
      std::lock_guard<std::mutex> lock(mu);
      kept->push_back(std::make_unique<OpSchema>(std::move(schema)));
      s = kept->back().get();
    }
    s->Register(r_);
  }
  void Kernel(const std::string& op_type, const std::string& place_kind, TideDataType dtype,
              KernelFn fn, TideLayout layout = TIDE_LAYOUT_ANY,
              const std::string& library = "plain", int32_t priority = 0) {
    TideKernelDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideKernelDef, priority);
    d.op_type = op_type.c_str();
    d.place_kind = place_kind.c_str();
    d.dtype = dtype;
    d.layout = layout;
    d.library = library.c_str();
    d.compute = &KernelTrampoline;
    d.user_data = reinterpret_cast<void*>(fn);
    d.priority = priority;
    ThrowIfError(Host().Registrar_AddKernel(r_, &d));
  }
  // A transform fn(in, out, ctx): for layouts, out gets in's data in layout `to`; for casts,
  // out gets in's values as dtype `to`. out's dims are set; allocate it with mutable_data.
  using TransformFn = void (*)(const Tensor& in, Tensor& out, TideDeviceContext* ctx);
  void LayoutTransform(const std::string& place_kind, TideLayout from, TideLayout to, TransformFn fn) {
    TideLayoutTransformDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideLayoutTransformDef, user_data);
    d.place_kind = place_kind.c_str();
    d.from = from;
    d.to = to;
    d.fn = &TransformTrampoline;
    d.user_data = reinterpret_cast<void*>(fn);
    ThrowIfError(Host().Registrar_AddLayoutTransform(r_, &d));
  }
  void DataTypeCast(const std::string& place_kind, TideDataType from, TideDataType to, TransformFn fn) {
    TideDataTypeCastDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideDataTypeCastDef, user_data);
    d.place_kind = place_kind.c_str();
    d.from = from;
    d.to = to;
    d.fn = &TransformTrampoline;
    d.user_data = reinterpret_cast<void*>(fn);
    ThrowIfError(Host().Registrar_AddDataTypeCast(r_, &d));
  }

  // Registers a kernel library: ops ask for it by the bool attribute `op_attr`, all ops by the
  // bool flag `flag` (defined by the core); empty: no such way (see TideLibraryDef).
  void AddLibrary(const std::string& name, const std::string& op_attr, const std::string& flag,
                  const std::string& description = "") {
    TideLibraryDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideLibraryDef, description);
    d.name = name.c_str();
    d.op_attr = op_attr.empty() ? nullptr : op_attr.c_str();
    d.flag = flag.empty() ? nullptr : flag.c_str();
    d.description = description.c_str();
    ThrowIfError(TIDE_HOST_FN(Registrar_AddLibrary)(r_, &d));
  }

  // Registers a device; the object lives for the life of the process.
  void AddDevice(std::unique_ptr<Device> device) {
    Device* d = device.release();
    TideDeviceDef def = d->def();
    ThrowIfError(Host().Registrar_AddDevice(r_, &def));
  }

 private:
  static TideStatus* TransformTrampoline(const TideTensor* in, TideTensor* out, TideDeviceContext* ctx,
                                         void* data) {
    return detail::Guard([&] {
      Tensor out_view(out);
      reinterpret_cast<TransformFn>(data)(Tensor(in), out_view, ctx);
    });
  }
  static TideStatus* KernelTrampoline(TideKernelContext* c, void* data) {
    return detail::Guard([&] {
      KernelContext ctx(c);
      reinterpret_cast<KernelFn>(data)(ctx);
    });
  }
  TideRegistrar* r_;
};

namespace detail {
// Registration functions collected from TIDE_REGISTER_* in any file of the plugin; run in
// order at tide_plugin_register. One list per plugin (plugins build with hidden visibility).
inline std::vector<std::function<void(Registrar&)>>& StaticRegistrations() {
  static std::vector<std::function<void(Registrar&)>> list;
  return list;
}
inline bool AddStaticRegistration(std::function<void(Registrar&)> fn) {
  StaticRegistrations().push_back(std::move(fn));
  return true;
}
template <typename T>
struct TypeTag {
  using type = T;
};
template <typename... Ts, typename F>
void ForEachType(F&& f) {
  (f(TypeTag<Ts>{}), ...);
}
// The oldest host minor ABI a plugin runs on: by default the one it is built against (a host
// without the newer functions refuses it at load, naming both versions). Define it lower before
// including plugin.hpp only when every newer host function is reached through TIDE_HOST_FN.
#ifndef TIDE_PLUGIN_MIN_ABI_MINOR
#define TIDE_PLUGIN_MIN_ABI_MINOR TIDE_ABI_MINOR
#endif

struct Requires {
  Requires(std::initializer_list<const char*> names) : list(names) { list.push_back(nullptr); }
  std::vector<const char*> list;
};

inline const TidePluginInfo* MakeInfo(const char* name, const char* version, const char* desc,
                                      const Requires& req, const TideAbiRange* host) {
  static TidePluginInfo info{};
  info.struct_size = TIDE_STRUCT_SIZE(TidePluginInfo, min_abi_minor);
  info.min_abi_minor = TIDE_PLUGIN_MIN_ABI_MINOR;
  info.name = name;
  info.version = version;
  info.abi_major = TIDE_ABI_MAJOR;
  // Speak the newest minor both sides know; plugin.hpp checks struct_size before newer calls.
  info.abi_minor = TIDE_ABI_MINOR;
  if (host && host->major == TIDE_ABI_MAJOR && int64_t{host->max_minor} < int64_t{TIDE_ABI_MINOR})
    info.abi_minor = host->max_minor;
  info.requires = req.list.size() > 1 ? req.list.data() : nullptr;
  info.description = desc;
  return &info;
}

inline TideStatus* RunRegistrations(const TideHostApi* host, TideRegistrar* r) {
  HostSlot() = host;
  return Guard([&] {
    Registrar reg(r);
    for (auto& fn : StaticRegistrations()) fn(reg);
  });
}
}  // namespace detail

}  // namespace tide

#define TIDE_CONCAT_INNER(a, b) a##b
#define TIDE_CONCAT(a, b) TIDE_CONCAT_INNER(a, b)
#define TIDE_UNIQUE(prefix) TIDE_CONCAT(prefix, __COUNTER__)

// Registers an op schema: TIDE_REGISTER_OP(tide::OpSchema("relu").Input("X")...);
#define TIDE_REGISTER_OP(schema_expr)                                            \
  static const bool TIDE_UNIQUE(tide_op_reg_) = ::tide::detail::AddStaticRegistration( \
      [](::tide::Registrar& r) { r.Op(schema_expr); })

// Registers kernel template `fn<T>` for each listed type T, on `place_kind` (plain library):
//   TIDE_REGISTER_KERNEL("relu", "cpu", ReluKernel, float, double);
#define TIDE_REGISTER_KERNEL(op_type, place_kind, fn, ...)                                 \
  static const bool TIDE_UNIQUE(tide_kernel_reg_) = ::tide::detail::AddStaticRegistration( \
      [](::tide::Registrar& r) {                                                          \
        ::tide::detail::ForEachType<__VA_ARGS__>([&](auto tag) {                         \
          using T = typename decltype(tag)::type;                                         \
          r.Kernel(op_type, place_kind, ::tide::DataTypeOf<T>(), &fn<T>);                \
        });                                                                               \
      })

// Like TIDE_REGISTER_KERNEL with a layout, library and override priority.
#define TIDE_REGISTER_KERNEL_EX(op_type, place_kind, layout, library, priority, fn, ...)   \
  static const bool TIDE_UNIQUE(tide_kernel_reg_) = ::tide::detail::AddStaticRegistration( \
      [](::tide::Registrar& r) {                                                          \
        ::tide::detail::ForEachType<__VA_ARGS__>([&](auto tag) {                         \
          using T = typename decltype(tag)::type;                                         \
          r.Kernel(op_type, place_kind, ::tide::DataTypeOf<T>(), &fn<T>, layout, library, \
                   priority);                                                             \
        });                                                                               \
      })

// Any other registration step: TIDE_ON_REGISTER([](tide::Registrar& r) { ... });
#define TIDE_ON_REGISTER(...) \
  static const bool TIDE_UNIQUE(tide_on_reg_) = ::tide::detail::AddStaticRegistration(__VA_ARGS__)

// Defines the plugin's optional finalize (TIDE_PLUGIN_FINALIZE_SYMBOL), at most once per plugin:
//   TIDE_ON_FINALIZE([] { pool.reset(); });
// An exception it throws is dropped: there is no one to report to at exit.
#define TIDE_ON_FINALIZE(...)                                         \
  extern "C" TIDE_PLUGIN_EXPORT void tide_plugin_finalize(void) {     \
    try {                                                              \
      (__VA_ARGS__)();                                                 \
    } catch (...) {                                                    \
    }                                                                  \
  }

// Defines the plugin's two exported entry points. Once per plugin:
//   TIDE_PLUGIN("ops_math", "0.1.0", "one-line description");
//   TIDE_PLUGIN_REQUIRES("device_mkldnn", "0.1.0", "description", "device_cpu");
#define TIDE_PLUGIN(name, version, description) \
  TIDE_PLUGIN_REQUIRES(name, version, description)
#define TIDE_PLUGIN_REQUIRES(name, version, description, ...)                               \
  extern "C" TIDE_PLUGIN_EXPORT const TidePluginInfo* tide_plugin_info(                    \
      const TideAbiRange* host) {                                                          \
    static const ::tide::detail::Requires req{__VA_ARGS__};                                \
    return ::tide::detail::MakeInfo(name, version, description, req, host);               \
  }                                                                                        \
  extern "C" TIDE_PLUGIN_EXPORT TideStatus* tide_plugin_register(const TideHostApi* host,  \
                                                                 TideRegistrar* r) {       \
    return ::tide::detail::RunRegistrations(host, r);                                      \
  }

#endif  // TIDE_PLUGIN_HPP_
