// tide/plugin/attributes.hpp: op attributes: tide::AttrValue (an owning value, for schema
// defaults and grad ops) and the typed reads behind every context's Attr<T>(name).
#ifndef TIDE_PLUGIN_ATTRIBUTES_HPP_
#define TIDE_PLUGIN_ATTRIBUTES_HPP_

#include <cstdint>
#include <string>
#include <tide/plugin/attr_type.hpp>
#include <tide/plugin/host.hpp>
#include <utility>
#include <vector>

namespace tide {

class AttrValue {
 public:
  AttrValue() { Reset(TIDE_ATTR_INT); }
  AttrValue(int32_t v) {
    Reset(TIDE_ATTR_INT);
    c_.i = v;
  }  // NOLINT
  AttrValue(int64_t v) {
    Reset(TIDE_ATTR_LONG);
    c_.l = v;
  }  // NOLINT
  AttrValue(float v) {
    Reset(TIDE_ATTR_FLOAT);
    c_.f = v;
    c_.d = v;
  }  // NOLINT
  AttrValue(double v) {
    Reset(TIDE_ATTR_FLOAT64);
    c_.d = v;
    c_.f = static_cast<float>(v);
  }  // NOLINT
  AttrValue(bool v) {
    Reset(TIDE_ATTR_BOOLEAN);
    c_.i = v ? 1 : 0;
  }                                                        // NOLINT
  AttrValue(const char* v) : AttrValue(std::string(v)) {}  // NOLINT
  AttrValue(std::string v) {
    Reset(TIDE_ATTR_STRING);
    str_ = std::move(v);
    Fix();
  }  // NOLINT
  AttrValue(std::vector<int32_t> v) {
    Reset(TIDE_ATTR_INTS);
    ints_ = std::move(v);
    Fix();
  }  // NOLINT
  AttrValue(std::vector<int64_t> v) {
    Reset(TIDE_ATTR_LONGS);
    longs_ = std::move(v);
    Fix();
  }  // NOLINT
  AttrValue(std::vector<float> v) {
    Reset(TIDE_ATTR_FLOATS);
    floats_ = std::move(v);
    Fix();
  }  // NOLINT
  AttrValue(std::vector<double> v) {
    Reset(TIDE_ATTR_FLOAT64S);
    doubles_ = std::move(v);
    Fix();
  }                                 // NOLINT
  AttrValue(std::vector<bool> v) {  // NOLINT
    Reset(TIDE_ATTR_BOOLEANS);
    for (bool b : v) ints_.push_back(b ? 1 : 0);
    Fix();
  }
  AttrValue(std::vector<std::string> v) {
    Reset(TIDE_ATTR_STRINGS);
    strs_ = std::move(v);
    Fix();
  }  // NOLINT
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
      case TIDE_ATTR_STRING:
        c_.s = str_.c_str();
        break;
      case TIDE_ATTR_INTS:
      case TIDE_ATTR_BOOLEANS:
      case TIDE_ATTR_BLOCKS:
        c_.ints = ints_.data();
        c_.count = ints_.size();
        break;
      case TIDE_ATTR_LONGS:
        c_.longs = longs_.data();
        c_.count = longs_.size();
        break;
      case TIDE_ATTR_FLOATS:
        c_.floats = floats_.data();
        c_.count = floats_.size();
        break;
      case TIDE_ATTR_FLOAT64S:
        c_.doubles = doubles_.data();
        c_.count = doubles_.size();
        break;
      case TIDE_ATTR_STRINGS:
        c_.strings = ptrs_.data();
        c_.count = ptrs_.size();
        break;
      default:
        break;
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
    if (v &&
        (v->type == TIDE_ATTR_INT || v->type == TIDE_ATTR_BOOLEAN || v->type == TIDE_ATTR_BLOCK))
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
    if (v &&
        (v->type == TIDE_ATTR_INTS || v->type == TIDE_ATTR_BOOLEANS || v->type == TIDE_ATTR_BLOCKS))
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
    if (v && v->type == TIDE_ATTR_FLOATS)
      return std::vector<float>(v->floats, v->floats + v->count);
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
    if (v && v->type == TIDE_ATTR_FLOATS)
      return std::vector<double>(v->floats, v->floats + v->count);
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

}  // namespace tide

#endif  // TIDE_PLUGIN_ATTRIBUTES_HPP_
