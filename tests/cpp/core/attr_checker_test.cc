// Tests core/registry/op_checks.h: an OpDesc checked against a hand-built OpInfo.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/platform/enforce.h"
#include "core/platform/status.h"
#include "core/registry/op_checks.h"

namespace tide::core {
namespace {

using ::testing::HasSubstr;

// A plugin-style value check: `count` must not be negative. Counts its calls in user_data.
TideStatus* NonNegative(const TideAttrValue* value, void* user_data) {
  ++*static_cast<int*>(user_data);
  if (value->type != TIDE_ATTR_INT) return NewStatus(TIDE_INTERNAL, "check got a non-int value");
  if (value->i < 0)
    return NewStatus(TIDE_OUT_OF_RANGE, "must not be negative, got " + std::to_string(value->i));
  return nullptr;
}

// A check on a list: every element of `dims` positive.
TideStatus* AllPositive(const TideAttrValue* value, void*) {
  for (size_t i = 0; i < value->count; ++i)
    if (value->longs[i] <= 0) return NewStatus(TIDE_INVALID_ARGUMENT, "dims must be positive");
  return nullptr;
}

// A check that returns a status with code OK: still a failure, reported as internal.
TideStatus* OkStatus(const TideAttrValue*, void*) { return NewStatus(TIDE_OK, "confused plugin"); }

void AddVar(google::protobuf::RepeatedPtrField<proto::OpProto::Var>* vars, const std::string& name,
            bool duplicable, bool dispensable) {
  proto::OpProto::Var* v = vars->Add();
  v->set_name(name);
  v->set_comment("");
  v->set_duplicable(duplicable);
  v->set_dispensable(dispensable);
}

AttrSpec Spec(const std::string& name, TideAttrType type) {
  AttrSpec s;
  s.name = name;
  s.type = type;
  return s;
}
AttrSpec Spec(const std::string& name, TideAttrType type, Attribute def) {
  AttrSpec s = Spec(name, type);
  s.has_default = true;
  s.default_value = std::move(def);
  return s;
}

class OpChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    info_.type = "test.op";
    info_.plugin = "test";
    info_.plugin_file = "libtide_test_ops.so";
    info_.proto.set_type("test.op");
    info_.proto.set_comment("an op for tests");
    AddVar(info_.proto.mutable_inputs(), "X", false, false);
    AddVar(info_.proto.mutable_inputs(), "Xs", true, false);
    AddVar(info_.proto.mutable_inputs(), "Bias", false, true);
    AddVar(info_.proto.mutable_outputs(), "Out", false, false);
    AddVar(info_.proto.mutable_outputs(), "Aux", true, true);

    info_.attrs.push_back(Spec("axis", TIDE_ATTR_INT, int32_t{1}));
    info_.attrs.push_back(Spec("size", TIDE_ATTR_LONG, int64_t{0}));
    info_.attrs.push_back(Spec("scale", TIDE_ATTR_FLOAT, 1.0f));
    info_.attrs.push_back(Spec("mode", TIDE_ATTR_STRING));  // required
    info_.attrs.push_back(Spec("shape", TIDE_ATTR_INTS, std::vector<int32_t>{}));
    AttrSpec count = Spec("count", TIDE_ATTR_INT, int32_t{3});
    count.check = NonNegative;
    count.check_data = &check_calls_;
    info_.attrs.push_back(count);
    AttrSpec dims = Spec("dims", TIDE_ATTR_LONGS, std::vector<int64_t>{1});
    dims.check = AllPositive;
    info_.attrs.push_back(dims);
  }

  // An error from CheckAndFillAttrs on `attrs`; fails the test when none is thrown.
  Error AttrError(AttributeMap attrs) {
    try {
      CheckAndFillAttrs(info_, &attrs);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "no error";
    return Error(TIDE_OK, "");
  }

  Error ArgError(VariableNameMap inputs, VariableNameMap outputs) {
    try {
      CheckArguments(info_, OpDesc("test.op", std::move(inputs), std::move(outputs), {}));
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "no error";
    return Error(TIDE_OK, "");
  }

  OpInfo info_;
  int check_calls_ = 0;
};

TEST_F(OpChecksTest, DefaultsAreFilled) {
  AttributeMap attrs = {{"mode", std::string("fast")}};
  CheckAndFillAttrs(info_, &attrs);
  EXPECT_EQ(attrs.size(), 7u);
  EXPECT_EQ(attrs.at("axis"), Attribute(int32_t{1}));
  EXPECT_EQ(attrs.at("size"), Attribute(int64_t{0}));
  EXPECT_EQ(attrs.at("scale"), Attribute(1.0f));
  EXPECT_EQ(attrs.at("mode"), Attribute(std::string("fast")));
  EXPECT_EQ(attrs.at("shape"), Attribute(std::vector<int32_t>{}));
  EXPECT_EQ(attrs.at("count"), Attribute(int32_t{3}));
  EXPECT_EQ(attrs.at("dims"), Attribute(std::vector<int64_t>{1}));
  EXPECT_EQ(check_calls_, 1);  // checks run on defaults too
}

TEST_F(OpChecksTest, GivenValuesAreKept) {
  AttributeMap attrs = {{"mode", std::string("m")},
                        {"axis", int32_t{-1}},
                        {"shape", std::vector<int32_t>{2, 3}},
                        {"count", int32_t{0}}};
  CheckAndFillAttrs(info_, &attrs);
  EXPECT_EQ(attrs.at("axis"), Attribute(int32_t{-1}));
  EXPECT_EQ(attrs.at("shape"), Attribute(std::vector<int32_t>{2, 3}));
  EXPECT_EQ(attrs.at("count"), Attribute(int32_t{0}));
  EXPECT_EQ(check_calls_, 1);
}

TEST_F(OpChecksTest, ValuesAreConvertedToTheDeclaredType) {
  AttributeMap attrs = {{"mode", std::string("m")},
                        {"size", int32_t{5}},                   // int for a long
                        {"scale", int32_t{2}},                  // int for a float
                        {"count", int64_t{7}},                  // long (in range) for an int
                        {"shape", std::vector<std::string>{}},  // an untyped empty list
                        {"dims", std::vector<int32_t>{4, 5}}};  // ints for longs
  CheckAndFillAttrs(info_, &attrs);
  EXPECT_EQ(attrs.at("size"), Attribute(int64_t{5}));
  EXPECT_EQ(AttrTypeOf(attrs.at("size")), TIDE_ATTR_LONG);
  EXPECT_EQ(attrs.at("scale"), Attribute(2.0f));
  EXPECT_EQ(attrs.at("count"), Attribute(int32_t{7}));
  EXPECT_EQ(attrs.at("shape"), Attribute(std::vector<int32_t>{}));
  EXPECT_EQ(attrs.at("dims"), Attribute(std::vector<int64_t>{4, 5}));
}

TEST_F(OpChecksTest, WrongTypeNamesOpAttributeAndBothTypes) {
  Error e = AttrError({{"mode", int32_t{3}}});
  EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(), HasSubstr("op 'test.op' attribute 'mode' must be string, got int 3"));

  e = AttrError({{"mode", std::string("m")}, {"axis", std::string("0")}});
  EXPECT_THAT(e.what(), HasSubstr("op 'test.op' attribute 'axis' must be int, got string \"0\""));

  e = AttrError({{"mode", std::string("m")}, {"count", int64_t{1} << 40}});
  EXPECT_THAT(e.what(), HasSubstr("attribute 'count' must be int, got long 1099511627776"));

  e = AttrError({{"mode", std::string("m")}, {"shape", std::vector<float>{1.5f}}});
  EXPECT_THAT(e.what(), HasSubstr("attribute 'shape' must be ints, got floats [1.5]"));
}

TEST_F(OpChecksTest, MissingRequiredAttribute) {
  Error e = AttrError({{"axis", int32_t{0}}});
  EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(),
              HasSubstr("op 'test.op' needs attribute 'mode' (string), which is not set"));
}

TEST_F(OpChecksTest, UnknownAttributeListsTheOpsAttributes) {
  Error e = AttrError({{"mode", std::string("m")}, {"axsi", int32_t{0}}});
  EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(), HasSubstr("op 'test.op' has no attribute 'axsi'"));
  EXPECT_THAT(e.what(),
              HasSubstr("(its attributes are: axis, size, scale, mode, shape, count, dims)"));

  info_.attrs.clear();
  e = AttrError({{"x", int32_t{0}}});
  EXPECT_THAT(e.what(), HasSubstr("(its attributes are: none)"));
}

TEST_F(OpChecksTest, FrameworkAttributesAreAccepted) {
  AttributeMap attrs = {{"mode", std::string("m")},
                        {"op_role", int32_t{1}},
                        {"op_role_var", std::vector<std::string>{"w", "w@GRAD"}},
                        {"op_namescope", std::string("/fc/")},
                        {"op_callstack", std::vector<std::string>{"a.py:1"}},
                        {"op_device", std::string("gpu:0")},
                        {"use_mkldnn", true},
                        {"library", std::string("MKLDNN")}};
  ASSERT_NO_THROW(CheckAndFillAttrs(info_, &attrs));
  EXPECT_EQ(attrs.at("op_role"), Attribute(int32_t{1}));  // kept as given
  EXPECT_EQ(attrs.at("use_mkldnn"), Attribute(true));
  EXPECT_EQ(attrs.size(), 7u + 7u);
}

TEST_F(OpChecksTest, CheckCallbackRejectionBecomesAnError) {
  Error e = AttrError({{"mode", std::string("m")}, {"count", int32_t{-4}}});
  EXPECT_EQ(e.code(), TIDE_OUT_OF_RANGE);  // the plugin's code is kept
  EXPECT_THAT(e.what(), HasSubstr("op 'test.op' attribute 'count': must not be negative, got -4"));
  EXPECT_THAT(e.what(), HasSubstr("(plugin libtide_test_ops.so)"));
  EXPECT_EQ(check_calls_, 1);

  // The check sees the converted value.
  e = AttrError({{"mode", std::string("m")}, {"count", int64_t{-2}}});
  EXPECT_THAT(e.what(), HasSubstr("must not be negative, got -2"));

  e = AttrError({{"mode", std::string("m")}, {"dims", std::vector<int32_t>{3, 0}}});
  EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(), HasSubstr("op 'test.op' attribute 'dims': dims must be positive"));
}

TEST_F(OpChecksTest, CheckReturningAnOkStatusIsAnInternalError) {
  AttrSpec s = Spec("flag", TIDE_ATTR_BOOLEAN, false);
  s.check = OkStatus;
  info_.attrs.push_back(s);
  Error e = AttrError({{"mode", std::string("m")}});
  EXPECT_EQ(e.code(), TIDE_INTERNAL);
  EXPECT_THAT(e.what(), HasSubstr("attribute 'flag': confused plugin"));
}

TEST_F(OpChecksTest, ValidArguments) {
  EXPECT_NO_THROW(CheckArguments(
      info_, OpDesc("test.op", {{"X", {"x"}}, {"Xs", {"a", "b", "c"}}}, {{"Out", {"y"}}}, {})));
  // Dispensable ones may be given, empty or absent.
  EXPECT_NO_THROW(
      CheckArguments(info_, OpDesc("test.op", {{"X", {"x"}}, {"Xs", {"a"}}, {"Bias", {}}},
                                   {{"Out", {"y"}}, {"Aux", {"t1", "t2"}}}, {})));
  EXPECT_NO_THROW(CheckArguments(
      info_,
      OpDesc("test.op", {{"X", {"x"}}, {"Xs", {"a"}}, {"Bias", {"b"}}}, {{"Out", {"y"}}}, {})));
}

TEST_F(OpChecksTest, UnknownParameter) {
  Error e = ArgError({{"X", {"x"}}, {"Xs", {"a"}}, {"Z", {"z"}}}, {{"Out", {"y"}}});
  EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(),
              HasSubstr("op 'test.op' has no input parameter 'Z' (its inputs are: X, Xs, Bias)"));
  e = ArgError({{"X", {"x"}}, {"Xs", {"a"}}}, {{"Out", {"y"}}, {"Extra", {"e"}}});
  EXPECT_THAT(
      e.what(),
      HasSubstr("op 'test.op' has no output parameter 'Extra' (its outputs are: Out, Aux)"));
}

TEST_F(OpChecksTest, MissingNonDispensableArgument) {
  Error e = ArgError({{"Xs", {"a"}}}, {{"Out", {"y"}}});
  EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(), HasSubstr("op 'test.op' needs input 'X', which is not set"));
  e = ArgError({{"X", {}}, {"Xs", {"a"}}}, {{"Out", {"y"}}});  // bound to no variable
  EXPECT_THAT(e.what(), HasSubstr("needs input 'X', which is not set"));
  e = ArgError({{"X", {"x"}}, {"Xs", {"a"}}}, {});
  EXPECT_THAT(e.what(), HasSubstr("op 'test.op' needs output 'Out', which is not set"));
}

TEST_F(OpChecksTest, TwoVariablesForANonDuplicableParameter) {
  Error e = ArgError({{"X", {"a", "b"}}, {"Xs", {"a"}}}, {{"Out", {"y"}}});
  EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(), HasSubstr("op 'test.op' input 'X' takes one variable, got 2"));
  e = ArgError({{"X", {"x"}}, {"Xs", {"a"}}}, {{"Out", {"y1", "y2", "y3"}}});
  EXPECT_THAT(e.what(), HasSubstr("op 'test.op' output 'Out' takes one variable, got 3"));
}

TEST_F(OpChecksTest, EmptyVariableName) {
  Error e = ArgError({{"X", {"x"}}, {"Xs", {"a", ""}}}, {{"Out", {"y"}}});
  EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
  EXPECT_THAT(e.what(), HasSubstr("op 'test.op' input 'Xs' has an empty variable name"));
  e = ArgError({{"X", {"x"}}, {"Xs", {"a"}}}, {{"Out", {""}}});
  EXPECT_THAT(e.what(), HasSubstr("op 'test.op' output 'Out' has an empty variable name"));
}

TEST_F(OpChecksTest, CheckOpDescChecksArgumentsThenFillsAttributes) {
  OpDesc op("test.op", {{"X", {"x"}}, {"Xs", {"a"}}}, {{"Out", {"y"}}},
            {{"mode", std::string("m")}, {"size", int32_t{9}}});
  CheckOpDesc(info_, &op);
  EXPECT_EQ(op.GetAttr("size"), Attribute(int64_t{9}));
  EXPECT_EQ(op.GetAttr("axis"), Attribute(int32_t{1}));

  OpDesc bad("test.op", {{"Xs", {"a"}}}, {{"Out", {"y"}}}, {});
  try {
    CheckOpDesc(info_, &bad);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("needs input 'X'"));  // arguments are checked first
  }
  EXPECT_TRUE(bad.attrs().empty());
}

}  // namespace
}  // namespace tide::core
