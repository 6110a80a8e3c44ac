// data_type_test.cc: the data types' one table (tide/plugin/data_type.hpp) and the core's names,
// sizes and parsing, which read it: every type's name and enum value round-trip both ways, in the
// SDK and in the core, and what is no type is refused. (Python's side: test_data_types.py.)
#include "core/platform/data_type.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <tide/plugin/attr_type.hpp>
#include <tide/plugin/data_type.hpp>
#include <tide/plugin/data_type_visit.hpp>

#include "core/platform/enforce.h"

namespace {

// The table is usable at compile time, where a kernel picks a type, also under gcc's
// -fsanitize=null (scripts/sanitize.sh), which makes a pointer's test against null no constant
// expression: the lookups test the table's index instead.
static_assert(tide::DataTypeSize(TIDE_FP64) == 8, "float64 is 8 bytes");
static_assert(tide::DataTypeSize(TIDE_UNDEFINED) == 0, "undefined is no type");
static_assert(tide::DataTypeSlot(TIDE_UNDEFINED) == -1, "undefined is no type");
static_assert(tide::AttrTypeName(TIDE_ATTR_FLOATS)[0] == 'f', "floats is named");

TEST(DataTypeTable, EveryTypeHasOneNameAndOneCode) {
  std::set<std::string> names;
  std::set<int> codes;
  for (const tide::DataTypeInfo& d : tide::kDataTypes) {
    EXPECT_TRUE(names.insert(d.name).second) << d.name << " is listed twice";
    EXPECT_TRUE(codes.insert(d.type).second) << "code " << d.type << " is listed twice";
    EXPECT_GT(d.size, 0u) << d.name;
  }
  EXPECT_EQ(codes.size(), 12u);  // the ABI's data types, TIDE_BOOL .. TIDE_COMPLEX128
}

TEST(DataTypeTable, NamesAndCodesRoundTripInTheSdk) {
  for (const tide::DataTypeInfo& d : tide::kDataTypes) {
    EXPECT_STREQ(tide::DataTypeName(d.type), d.name);
    EXPECT_EQ(tide::DataTypeSize(d.type), d.size) << d.name;
    TideDataType parsed = TIDE_UNDEFINED;
    ASSERT_TRUE(tide::ParseDataTypeName(d.name, &parsed, /*canonical_only=*/true)) << d.name;
    EXPECT_EQ(parsed, d.type) << d.name;
  }
}

TEST(DataTypeTable, NamesAndCodesRoundTripInTheCore) {
  for (const tide::DataTypeInfo& d : tide::kDataTypes) {
    EXPECT_STREQ(tide::core::DataTypeName(d.type), d.name);
    EXPECT_EQ(tide::core::SizeOf(d.type), d.size) << d.name;
    EXPECT_EQ(tide::core::ParseDataType(d.name), d.type) << d.name;
    EXPECT_TRUE(tide::core::IsValidDataType(d.type)) << d.name;
  }
}

TEST(DataTypeTable, WhatIsNoTypeIsRefused) {
  for (int code : {-1, 7, 19, 25, 100, -100}) {
    EXPECT_EQ(tide::FindDataType(code), nullptr) << code;
    EXPECT_FALSE(tide::core::IsValidDataType(code)) << code;
  }
  EXPECT_STREQ(tide::DataTypeName(TIDE_UNDEFINED), "undefined");
  EXPECT_EQ(tide::DataTypeSize(TIDE_UNDEFINED), 0u);
  EXPECT_EQ(tide::core::SizeOf(TIDE_UNDEFINED), 0u);
  TideDataType t = TIDE_FP32;
  EXPECT_FALSE(tide::ParseDataTypeName("float128", &t));
  EXPECT_FALSE(tide::ParseDataTypeName(nullptr, &t));
  EXPECT_EQ(t, TIDE_FP32);  // untouched
  try {
    tide::core::ParseDataType("complex32");
    FAIL() << "no error";
  } catch (const tide::core::Error& e) {
    EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("'complex32'"), std::string::npos) << e.what();
  }
}

// The core keeps accepting the short and C spellings it always did; they are never printed.
TEST(DataTypeTable, AliasesParseButAreNotNames) {
  const std::pair<const char*, TideDataType> aliases[] = {
      {"fp16", TIDE_FP16}, {"bf16", TIDE_BF16},   {"fp32", TIDE_FP32}, {"float", TIDE_FP32},
      {"fp64", TIDE_FP64}, {"double", TIDE_FP64}, {"int", TIDE_INT32}, {"long", TIDE_INT64}};
  for (const auto& [name, type] : aliases) {
    EXPECT_EQ(tide::core::ParseDataType(name), type) << name;
    EXPECT_STRNE(tide::DataTypeName(type), name);
    TideDataType t = TIDE_UNDEFINED;
    EXPECT_FALSE(tide::ParseDataTypeName(name, &t, /*canonical_only=*/true)) << name;
  }
}

TEST(DataTypeTable, CxxTypesMatchTheirSizes) {
  EXPECT_EQ(tide::DataTypeSize(tide::DataTypeOf<bool>()), sizeof(bool));
  EXPECT_EQ(tide::DataTypeSize(tide::DataTypeOf<int8_t>()), sizeof(int8_t));
  EXPECT_EQ(tide::DataTypeSize(tide::DataTypeOf<uint8_t>()), sizeof(uint8_t));
  EXPECT_EQ(tide::DataTypeSize(tide::DataTypeOf<int16_t>()), sizeof(int16_t));
  EXPECT_EQ(tide::DataTypeSize(tide::DataTypeOf<int32_t>()), sizeof(int32_t));
  EXPECT_EQ(tide::DataTypeSize(tide::DataTypeOf<int64_t>()), sizeof(int64_t));
  EXPECT_EQ(tide::DataTypeSize(tide::DataTypeOf<float>()), sizeof(float));
  EXPECT_EQ(tide::DataTypeSize(tide::DataTypeOf<double>()), sizeof(double));
  EXPECT_EQ(tide::core::DataTypeOf<float>(), TIDE_FP32);  // the core's is the SDK's
}

// VisitDataType hands fn the C++ type of each data type that has one (the complex ones when
// listed), and returns fn's value.
TEST(DataTypeVisit, CallsFnWithTheCxxType) {
  for (const tide::DataTypeInfo& d : tide::kDataTypes) {
    if (d.type == TIDE_FP16 || d.type == TIDE_BF16) continue;
    auto size_of = [&](auto tag) {
      using T = typename decltype(tag)::type;
      EXPECT_EQ(tide::DataTypeOf<T>(), d.type) << d.name;
      return sizeof(T);
    };
    const bool complex = d.type == TIDE_COMPLEX64 || d.type == TIDE_COMPLEX128;
    const size_t size = complex ? tide::VisitDataType<std::complex<float>, std::complex<double>>(
                                      d.type, "test", size_of)
                                : tide::VisitDataType(d.type, "test", size_of);
    EXPECT_EQ(size, d.size) << d.name;
  }
}

// A type without a C++ type, or outside the caller's list, is an error naming what, the type
// and the types handled.
TEST(DataTypeVisit, RefusesTypesOutsideTheList) {
  int calls = 0;
  try {
    tide::VisitDataType(TIDE_FP16, "op 'fill'", [&](auto) { ++calls; });
    FAIL() << "float16 has no standard C++ type";
  } catch (const tide::Error& e) {
    EXPECT_EQ(e.code(), TIDE_UNIMPLEMENTED);
    EXPECT_NE(std::string(e.what()).find("op 'fill': data type float16 is not supported (float32"),
              std::string::npos)
        << e.what();
  }
  try {
    tide::VisitDataType(TIDE_COMPLEX64, "op 'fill'", [&](auto) { ++calls; });
    FAIL() << "complex types are not in the default list";
  } catch (const tide::Error& e) {
    EXPECT_NE(std::string(e.what()).find("op 'fill': data type complex64 is not supported"),
              std::string::npos)
        << e.what();
  }
  try {
    tide::VisitDataType<float, double>(TIDE_INT32, "Gloo", [&](auto) { ++calls; });
    FAIL() << "int32 is not in the list";
  } catch (const tide::Error& e) {
    EXPECT_STREQ(e.what(), "Gloo: data type int32 is not supported (float32, float64)");
  }
  EXPECT_EQ(calls, 0);
}

}  // namespace
