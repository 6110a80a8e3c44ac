// pir_json.h: the JSON of a PaddlePaddle 3.x PIR program as pir_program.cc reads it: a value
// with its path in the file (every error names the key that failed), and Paddle's data type
// names and ids as Fluid's. Internal to core/io.
#pragma once

#include <google/protobuf/struct.pb.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "core/platform/enforce.h"

namespace tide::core::pir {
namespace pb = google::protobuf;

// A JSON value with its path in the file, for errors.
class Json {
 public:
  Json(const pb::Value& v, std::string path, const std::string& file)
      : v_(v), path_(std::move(path)), file_(file) {}

  [[noreturn]] void Fail(const std::string& what) const {
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, file_, ": not a PIR program Tide reads: at ", path_, ": ",
              what);
  }
  const std::string& path() const { return path_; }
  bool IsObject() const { return v_.kind_case() == pb::Value::kStructValue; }
  bool IsList() const { return v_.kind_case() == pb::Value::kListValue; }
  bool Has(const std::string& key) const {
    return IsObject() && v_.struct_value().fields().count(key) > 0;
  }
  Json operator[](const std::string& key) const {
    if (!IsObject()) Fail("an object was expected");
    auto it = v_.struct_value().fields().find(key);
    if (it == v_.struct_value().fields().end()) Fail("no key '" + key + "'");
    return Json(it->second, path_ + "." + key, file_);
  }
  size_t size() const {
    if (!IsList()) Fail("a list was expected");
    return static_cast<size_t>(v_.list_value().values_size());
  }
  Json operator[](size_t i) const {
    if (i >= size()) Fail("a list of more than " + std::to_string(i) + " items was expected");
    return Json(v_.list_value().values(static_cast<int>(i)), path_ + "[" + std::to_string(i) + "]",
                file_);
  }
  const std::string& Str() const {
    if (v_.kind_case() != pb::Value::kStringValue) Fail("a string was expected");
    return v_.string_value();
  }
  double Num() const {
    if (v_.kind_case() != pb::Value::kNumberValue) Fail("a number was expected");
    return v_.number_value();
  }
  // JSON numbers arrive as doubles: integers past 2^53 are rounded, and Paddle's INT64_MAX (an
  // open slice end) becomes 2^63, kept at INT64_MAX.
  int64_t Int() const {
    const double d = Num();
    if (d != std::floor(d)) Fail("an integer was expected");
    if (d >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
    if (d <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(d);
  }
  // A float: a number, or the string Paddle writes for a non-finite one ("INF", "-INF", "NAN").
  double Float() const {
    if (v_.kind_case() != pb::Value::kStringValue) return Num();
    std::string t = v_.string_value();
    for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (t == "INF" || t == "+INF") return std::numeric_limits<double>::infinity();
    if (t == "-INF") return -std::numeric_limits<double>::infinity();
    if (t == "NAN" || t == "-NAN") return std::numeric_limits<double>::quiet_NaN();
    Fail("a number, or INF / -INF / NAN, was expected");
  }
  bool Bool() const {
    if (v_.kind_case() != pb::Value::kBoolValue) Fail("true or false was expected");
    return v_.bool_value();
  }

 private:
  const pb::Value& v_;
  std::string path_;
  const std::string& file_;
};

// Paddle's DataType names (a_dtype attributes, Scalar's) and type ids (t_f32 ...) as Fluid's
// VarType values; -1 for "undefined" (full_like: the input's).
std::optional<int> DataTypeFromName(const std::string& n);

std::optional<int> DataTypeFromTypeId(const std::string& id);

bool IsIntegerType(int t);

// PIR attributes that say nothing about what an op computes: Paddle's layer names, where it
// would place a tensor, its autograd and role markers.
bool IsIgnoredAttr(const std::string& name);

}  // namespace tide::core::pir
