// attribute.cc: conversions between Attribute, its protobuf form and the C view.
#include "core/ir/attribute.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>

#include "core/platform/enforce.h"

namespace tide::core {

namespace {
template <typename T>
void Join(std::ostream& os, const std::vector<T>& v) {
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << "]";
}
}  // namespace

std::string AttrToString(const Attribute& a) {
  std::ostringstream os;
  switch (AttrTypeOf(a)) {
    case TIDE_ATTR_INT:
      os << std::get<int32_t>(a);
      break;
    case TIDE_ATTR_FLOAT:
      os << std::get<float>(a);
      break;
    case TIDE_ATTR_STRING:
      os << '"' << std::get<std::string>(a) << '"';
      break;
    case TIDE_ATTR_INTS:
      Join(os, std::get<std::vector<int32_t>>(a));
      break;
    case TIDE_ATTR_FLOATS:
      Join(os, std::get<std::vector<float>>(a));
      break;
    case TIDE_ATTR_STRINGS:
      Join(os, std::get<std::vector<std::string>>(a));
      break;
    case TIDE_ATTR_BOOLEAN:
      os << (std::get<bool>(a) ? "true" : "false");
      break;
    case TIDE_ATTR_BOOLEANS: {
      const auto& v = std::get<std::vector<bool>>(a);
      Join(os, std::vector<int>(v.begin(), v.end()));
      break;
    }
    case TIDE_ATTR_BLOCK:
      os << "block " << std::get<BlockIndex>(a).idx;
      break;
    case TIDE_ATTR_LONG:
      os << std::get<int64_t>(a);
      break;
    case TIDE_ATTR_BLOCKS: {
      std::vector<int32_t> idx;
      for (const auto& b : std::get<std::vector<BlockIndex>>(a)) idx.push_back(b.idx);
      os << "blocks ";
      Join(os, idx);
      break;
    }
    case TIDE_ATTR_LONGS:
      Join(os, std::get<std::vector<int64_t>>(a));
      break;
    case TIDE_ATTR_FLOAT64:
      os << std::setprecision(17) << std::get<double>(a);
      break;
    case TIDE_ATTR_FLOAT64S:
      os << std::setprecision(17);
      Join(os, std::get<std::vector<double>>(a));
      break;
  }
  return os.str();
}

void AttrToProto(const std::string& name, const Attribute& a, proto::OpDesc::Attr* p) {
  p->Clear();
  p->set_name(name);
  p->set_type(static_cast<proto::AttrType>(AttrTypeOf(a)));
  switch (AttrTypeOf(a)) {
    case TIDE_ATTR_INT:
      p->set_i(std::get<int32_t>(a));
      break;
    case TIDE_ATTR_FLOAT:
      p->set_f(std::get<float>(a));
      break;
    case TIDE_ATTR_STRING:
      p->set_s(std::get<std::string>(a));
      break;
    case TIDE_ATTR_INTS:
      for (auto v : std::get<std::vector<int32_t>>(a)) p->add_ints(v);
      break;
    case TIDE_ATTR_FLOATS:
      for (auto v : std::get<std::vector<float>>(a)) p->add_floats(v);
      break;
    case TIDE_ATTR_STRINGS:
      for (const auto& v : std::get<std::vector<std::string>>(a)) p->add_strings(v);
      break;
    case TIDE_ATTR_BOOLEAN:
      p->set_b(std::get<bool>(a));
      break;
    case TIDE_ATTR_BOOLEANS:
      for (bool v : std::get<std::vector<bool>>(a)) p->add_bools(v);
      break;
    case TIDE_ATTR_BLOCK:
      p->set_block_idx(std::get<BlockIndex>(a).idx);
      break;
    case TIDE_ATTR_LONG:
      p->set_l(std::get<int64_t>(a));
      break;
    case TIDE_ATTR_BLOCKS:
      for (const auto& b : std::get<std::vector<BlockIndex>>(a)) p->add_blocks_idx(b.idx);
      break;
    case TIDE_ATTR_LONGS:
      for (auto v : std::get<std::vector<int64_t>>(a)) p->add_longs(v);
      break;
    case TIDE_ATTR_FLOAT64:
      p->set_float64(std::get<double>(a));
      break;
    case TIDE_ATTR_FLOAT64S:
      for (auto v : std::get<std::vector<double>>(a)) p->add_float64s(v);
      break;
  }
}

namespace {

// PaddlePaddle's SCALAR attributes carry their own type; they become the plain type Tide has.
Attribute ScalarFromProto(const std::string& name, const proto::Scalar& v) {
  switch (v.type()) {
    case proto::Scalar::BOOLEAN:
      return v.b();
    case proto::Scalar::LONG:
      return static_cast<int64_t>(v.i());
    case proto::Scalar::FLOAT64:
      return v.r();
    case proto::Scalar::COMPLEX128:
      break;
  }
  TIDE_FAIL(TIDE_UNIMPLEMENTED, "attribute '", name,
            "' is a complex scalar, which Tide does not support");
}

// A bool is 0 or 1 there (Paddle 2.6's set_value writes `mask[...] = True` as a BOOLEAN scalar).
Attribute ScalarsFromProto(const proto::OpDesc::Attr& p) {
  auto integer = [](const proto::Scalar& v) {
    return v.type() == proto::Scalar::LONG || v.type() == proto::Scalar::BOOLEAN;
  };
  auto as_long = [](const proto::Scalar& v) {
    return v.type() == proto::Scalar::BOOLEAN ? int64_t{v.b()} : static_cast<int64_t>(v.i());
  };
  bool all_integer = true;
  for (const auto& v : p.scalars()) all_integer = all_integer && integer(v);
  if (all_integer) {
    std::vector<int64_t> out;
    for (const auto& v : p.scalars()) out.push_back(as_long(v));
    return out;
  }
  std::vector<double> out;
  for (const auto& v : p.scalars()) {
    TIDE_ENFORCE(v.type() == proto::Scalar::FLOAT64 || integer(v), "attribute '", p.name(),
                 "' mixes scalar types Tide cannot hold in one list");
    out.push_back(integer(v) ? static_cast<double>(as_long(v)) : v.r());
  }
  return out;
}

}  // namespace

Attribute AttrFromProto(const proto::OpDesc::Attr& p) {
  // SCALAR and the VAR types have no TideAttrType value: named by the proto's own name.
  const bool tide_type = p.type() != proto::SCALAR && p.type() != proto::SCALARS &&
                         p.type() != proto::VAR && p.type() != proto::VARS;
  const std::string type_name = tide_type ? AttrTypeName(static_cast<TideAttrType>(p.type()))
                                          : proto::AttrType_Name(p.type());
  auto need = [&](bool has, const char* field) {
    TIDE_ENFORCE(has, "attribute '", p.name(), "' of type ", type_name, " has no '", field,
                 "' value");
  };
  switch (p.type()) {
    case proto::INT:
      need(p.has_i(), "i");
      return p.i();
    case proto::FLOAT:
      need(p.has_f(), "f");
      return p.f();
    case proto::STRING:
      need(p.has_s(), "s");
      return p.s();
    case proto::INTS:
      return std::vector<int32_t>(p.ints().begin(), p.ints().end());
    case proto::FLOATS:
      return std::vector<float>(p.floats().begin(), p.floats().end());
    case proto::STRINGS:
      return std::vector<std::string>(p.strings().begin(), p.strings().end());
    case proto::BOOLEAN:
      need(p.has_b(), "b");
      return p.b();
    case proto::BOOLEANS:
      return std::vector<bool>(p.bools().begin(), p.bools().end());
    case proto::BLOCK:
      need(p.has_block_idx(), "block_idx");
      return BlockIndex{p.block_idx()};
    case proto::LONG:
      need(p.has_l(), "l");
      return static_cast<int64_t>(p.l());
    case proto::BLOCKS: {
      std::vector<BlockIndex> v;
      for (int32_t i : p.blocks_idx()) v.push_back(BlockIndex{i});
      return v;
    }
    case proto::LONGS:
      return std::vector<int64_t>(p.longs().begin(), p.longs().end());
    case proto::FLOAT64:
      need(p.has_float64(), "float64");
      return p.float64();
    case proto::FLOAT64S:
      return std::vector<double>(p.float64s().begin(), p.float64s().end());
    case proto::SCALAR:
      need(p.has_scalar(), "scalar");
      return ScalarFromProto(p.name(), p.scalar());
    case proto::SCALARS:
      return ScalarsFromProto(p);
    case proto::VAR:
    case proto::VARS:
      TIDE_FAIL(TIDE_UNIMPLEMENTED, "attribute '", p.name(), "' is bound to a variable (",
                p.type() == proto::VAR ? p.var_name() : "a list of variables",
                "), as PaddlePaddle's dynamic-to-static programs write; Tide takes such values as "
                "op inputs, not attributes");
  }
  TIDE_FAIL(TIDE_INVALID_ARGUMENT, "attribute '", p.name(), "' has unknown type ", int(p.type()));
}

Attribute AttrFromC(const TideAttrValue& v) {
  // The header's rule for every struct crossing the boundary: read no field past struct_size.
  TIDE_ENFORCE(v.struct_size >= TIDE_STRUCT_SIZE(TideAttrValue, count),
               "an attribute value's struct_size ", v.struct_size,
               " is smaller than ABI 1.0's TideAttrValue (", TIDE_STRUCT_SIZE(TideAttrValue, count),
               ")");
  switch (v.type) {
    case TIDE_ATTR_INT:
      return v.i;
    case TIDE_ATTR_FLOAT:
      return v.f;
    case TIDE_ATTR_STRING:
      return std::string(v.s ? v.s : "");
    case TIDE_ATTR_INTS:
      return std::vector<int32_t>(v.ints, v.ints + v.count);
    case TIDE_ATTR_FLOATS:
      return std::vector<float>(v.floats, v.floats + v.count);
    case TIDE_ATTR_STRINGS: {
      std::vector<std::string> out;
      for (size_t i = 0; i < v.count; ++i) out.emplace_back(v.strings[i] ? v.strings[i] : "");
      return out;
    }
    case TIDE_ATTR_BOOLEAN:
      return v.i != 0;
    case TIDE_ATTR_BOOLEANS: {
      std::vector<bool> out;
      for (size_t i = 0; i < v.count; ++i) out.push_back(v.ints[i] != 0);
      return out;
    }
    case TIDE_ATTR_BLOCK:
      return BlockIndex{v.i};
    case TIDE_ATTR_LONG:
      return v.l;
    case TIDE_ATTR_BLOCKS: {
      std::vector<BlockIndex> out;
      for (size_t i = 0; i < v.count; ++i) out.push_back(BlockIndex{v.ints[i]});
      return out;
    }
    case TIDE_ATTR_LONGS:
      return std::vector<int64_t>(v.longs, v.longs + v.count);
    case TIDE_ATTR_FLOAT64:
    case TIDE_ATTR_FLOAT64S:
      TIDE_ENFORCE(v.struct_size >= TIDE_STRUCT_SIZE(TideAttrValue, doubles), "a ",
                   AttrTypeName(v.type), " attribute value's struct_size ", v.struct_size,
                   " has no room for its value (TideAttrValue.d / .doubles)");
      if (v.type == TIDE_ATTR_FLOAT64) return v.d;
      return std::vector<double>(v.doubles, v.doubles + v.count);
  }
  TIDE_FAIL(TIDE_INVALID_ARGUMENT, "attribute value of unknown type ", int(v.type));
}

namespace {
bool IsEmptyList(const Attribute& a) {
  return std::visit(
      [](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<int32_t>> ||
                      std::is_same_v<T, std::vector<float>> ||
                      std::is_same_v<T, std::vector<std::string>> ||
                      std::is_same_v<T, std::vector<bool>> ||
                      std::is_same_v<T, std::vector<BlockIndex>> ||
                      std::is_same_v<T, std::vector<int64_t>> ||
                      std::is_same_v<T, std::vector<double>>)
          return x.empty();
        return false;
      },
      a);
}

// The value of an INT or LONG scalar.
std::optional<int64_t> IntegerOf(const Attribute& a) {
  if (const auto* i = std::get_if<int32_t>(&a)) return *i;
  if (const auto* l = std::get_if<int64_t>(&a)) return *l;
  return std::nullopt;
}

// The values of an INTS or LONGS list.
std::optional<std::vector<int64_t>> IntegersOf(const Attribute& a) {
  if (const auto* i = std::get_if<std::vector<int32_t>>(&a))
    return std::vector<int64_t>(i->begin(), i->end());
  if (const auto* l = std::get_if<std::vector<int64_t>>(&a)) return *l;
  return std::nullopt;
}

bool FitsInt32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }
}  // namespace

bool FitsFloat(double v) {
  return !std::isfinite(v) ||
         std::fabs(v) <= static_cast<double>(std::numeric_limits<float>::max());
}

namespace {

// Fluid's attribute checker: an integer is a float rounded to nearest, a float64 (exact up to
// 2^53), a long, an int where it fits, and a bool as C++ casts it (any non-zero is true).
bool IntegerTo(int64_t v, TideAttrType want, Attribute* out) {
  switch (want) {
    case TIDE_ATTR_INT:
      if (!FitsInt32(v)) return false;  // would lose bits
      *out = static_cast<int32_t>(v);
      return true;
    case TIDE_ATTR_LONG:
      *out = v;
      return true;
    case TIDE_ATTR_FLOAT:
      *out = static_cast<float>(v);
      return true;
    case TIDE_ATTR_FLOAT64:
      *out = static_cast<double>(v);
      return true;
    case TIDE_ATTR_BOOLEAN:
      *out = v != 0;
      return true;
    default:
      return false;
  }
}

template <typename T>
std::vector<T> CastEach(const std::vector<int64_t>& v) {
  std::vector<T> out;
  out.reserve(v.size());
  for (int64_t x : v) out.push_back(static_cast<T>(x));
  return out;
}

// A list of integers converts element by element as IntegerTo does. Lists of longs stay
// longs: Python makes one only when an element is beyond int32.
bool IntegersTo(const std::vector<int64_t>& v, TideAttrType want, Attribute* out) {
  switch (want) {
    case TIDE_ATTR_LONGS:
      *out = v;
      return true;
    case TIDE_ATTR_FLOATS:
      *out = CastEach<float>(v);
      return true;
    case TIDE_ATTR_FLOAT64S:
      *out = CastEach<double>(v);
      return true;
    case TIDE_ATTR_BOOLEANS:
      *out = CastEach<bool>(v);
      return true;
    default:
      return false;
  }
}
}  // namespace

bool ConvertAttr(const Attribute& a, TideAttrType want, Attribute* out) {
  TideAttrType have = AttrTypeOf(a);
  if (have == want) {
    *out = a;
    return true;
  }
  if (IsEmptyList(a)) {  // an empty list carries no element type (e.g. from Python's [])
    switch (want) {
      case TIDE_ATTR_INTS:
        *out = std::vector<int32_t>();
        return true;
      case TIDE_ATTR_FLOATS:
        *out = std::vector<float>();
        return true;
      case TIDE_ATTR_STRINGS:
        *out = std::vector<std::string>();
        return true;
      case TIDE_ATTR_BOOLEANS:
        *out = std::vector<bool>();
        return true;
      case TIDE_ATTR_BLOCKS:
        *out = std::vector<BlockIndex>();
        return true;
      case TIDE_ATTR_LONGS:
        *out = std::vector<int64_t>();
        return true;
      case TIDE_ATTR_FLOAT64S:
        *out = std::vector<double>();
        return true;
      default:
        return false;
    }
  }
  if (auto n = IntegerOf(a)) return IntegerTo(*n, want, out);
  if (auto ns = IntegersOf(a)) return IntegersTo(*ns, want, out);
  // Numbers from Python arrive as float64: float attributes take them rounded, float64 ones
  // exactly; a float given for a float64 attribute is widened. A float never becomes an
  // integer or a bool (Fluid truncates it silently).
  if (have == TIDE_ATTR_FLOAT64 && want == TIDE_ATTR_FLOAT) {
    if (!FitsFloat(std::get<double>(a))) return false;
    *out = static_cast<float>(std::get<double>(a));
    return true;
  }
  if (have == TIDE_ATTR_FLOAT && want == TIDE_ATTR_FLOAT64) {
    *out = double{std::get<float>(a)};
    return true;
  }
  if (have == TIDE_ATTR_FLOAT64S && want == TIDE_ATTR_FLOATS) {
    const auto& v = std::get<std::vector<double>>(a);
    if (!std::all_of(v.begin(), v.end(), FitsFloat)) return false;
    *out = std::vector<float>(v.begin(), v.end());
    return true;
  }
  if (have == TIDE_ATTR_FLOATS && want == TIDE_ATTR_FLOAT64S) {
    const auto& v = std::get<std::vector<float>>(a);
    *out = std::vector<double>(v.begin(), v.end());
    return true;
  }
  return false;
}

AttrViews::AttrViews(const AttributeMap& attrs) {
  entries_.reserve(attrs.size());
  for (const auto& kv : attrs) {
    entries_.emplace_back();
    Entry& e = entries_.back();
    e.name = &kv.first;
    TideAttrValue& v = e.value;
    std::memset(&v, 0, sizeof(v));
    v.struct_size = TIDE_STRUCT_SIZE(TideAttrValue, doubles);
    v.type = AttrTypeOf(kv.second);
    const Attribute& a = kv.second;
    switch (v.type) {
      case TIDE_ATTR_INT:
        v.i = std::get<int32_t>(a);
        break;
      case TIDE_ATTR_FLOAT:
        v.f = std::get<float>(a);
        v.d = v.f;
        break;
      case TIDE_ATTR_FLOAT64:
        v.d = std::get<double>(a);
        v.f = static_cast<float>(v.d);  // for a plugin reading it as float
        break;
      case TIDE_ATTR_FLOAT64S: {
        const auto& x = std::get<std::vector<double>>(a);
        v.doubles = x.data();
        v.count = x.size();
        break;
      }
      case TIDE_ATTR_STRING:
        v.s = std::get<std::string>(a).c_str();
        break;
      case TIDE_ATTR_INTS: {
        const auto& x = std::get<std::vector<int32_t>>(a);
        v.ints = x.data();
        v.count = x.size();
        break;
      }
      case TIDE_ATTR_FLOATS: {
        const auto& x = std::get<std::vector<float>>(a);
        v.floats = x.data();
        v.count = x.size();
        break;
      }
      case TIDE_ATTR_STRINGS:
        for (const auto& s : std::get<std::vector<std::string>>(a)) e.strings.push_back(s.c_str());
        v.count = e.strings.size();
        break;
      case TIDE_ATTR_BOOLEAN:
        v.i = std::get<bool>(a) ? 1 : 0;
        break;
      case TIDE_ATTR_BOOLEANS:
        for (bool b : std::get<std::vector<bool>>(a)) e.ints.push_back(b ? 1 : 0);
        v.count = e.ints.size();
        break;
      case TIDE_ATTR_BLOCK:
        v.i = std::get<BlockIndex>(a).idx;
        break;
      case TIDE_ATTR_LONG:
        v.l = std::get<int64_t>(a);
        break;
      case TIDE_ATTR_BLOCKS:
        for (const auto& b : std::get<std::vector<BlockIndex>>(a)) e.ints.push_back(b.idx);
        v.count = e.ints.size();
        break;
      case TIDE_ATTR_LONGS: {
        const auto& x = std::get<std::vector<int64_t>>(a);
        v.longs = x.data();
        v.count = x.size();
        break;
      }
    }
  }
  // Point at the entries' own vectors only now: entries_ no longer reallocates.
  for (auto& e : entries_) {
    if (!e.ints.empty()) e.value.ints = e.ints.data();
    if (!e.strings.empty()) e.value.strings = e.strings.data();
  }
}

const TideAttrValue* AttrViews::Find(const char* name) const {
  for (const auto& e : entries_)
    if (SameName(*e.name, name)) return &e.value;
  return nullptr;
}

}  // namespace tide::core
