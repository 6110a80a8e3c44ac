// bad_input_test.cc: programs and runs that are wrong in one way each, built with ProgramDesc and
// run by the Executor directly. Every one must end in one tide::core::Error (never a crash)
// whose message names what is at fault: the op, the variable, the attribute, the shapes, the
// dtypes, the place.
#include <map>
#include <string>
#include <vector>

#include "core/executor/executor.h"
#include "core/host/initialize.h"
#include "op_tester.h"

namespace tide::test {
namespace {

using core::BlockDesc;
using core::Executor;
using core::LoDTensor;
using core::OpDesc;
using core::Place;
using core::ProgramDesc;
using core::Scope;

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override { core::Initialize(); }

  // Declares `name` in block 0 with a dtype and, when given, a shape.
  void Var(const std::string& name, TideDataType dtype = TIDE_FP32,
           std::vector<int64_t> shape = {}) {
    core::VarDesc* v = block()->Var(name);
    v->set_dtype(dtype);
    if (!shape.empty()) v->set_shape(std::move(shape));
  }
  void Op(const std::string& type, core::VariableNameMap in, core::VariableNameMap out,
          core::AttributeMap attrs = {}) {
    OpDesc* op = block()->AppendOp();
    *op = OpDesc(type, std::move(in), std::move(out), std::move(attrs));
    op->set_block(block());
  }
  BlockDesc* block() { return program_.MutableBlock(0); }

  // Runs the program on the CPU with `feeds`, fetching `fetch`.
  std::vector<LoDTensor> Run(const std::map<std::string, LoDTensor>& feeds,
                             const std::vector<std::string>& fetch) {
    Executor exe(Place("cpu", 0));
    return exe.Run(program_, &scope_, feeds, fetch);
  }

  ProgramDesc program_;
  Scope scope_;
};

template <typename T>
LoDTensor Tensor(std::vector<int64_t> dims, T value = T(1)) {
  LoDTensor t;
  t.Resize(core::DDim(dims));
  T* d = t.mutable_data<T>(Place("cpu", 0));
  for (int64_t i = 0; i < t.numel(); ++i) d[i] = value;
  return t;
}

// (1) An op type no loaded plugin provides.
TEST_F(BadInputTest, UnknownOpType) {
  Var("x", TIDE_FP32, {2, 3});
  Var("y");
  Op("frobnicate_v2", {{"X", {"x"}}}, {{"Out", {"y"}}});
  ExpectError(
      [&] {
        Run({{"x", Tensor<float>({2, 3})}}, {"y"});
      },
      {"frobnicate_v2", "no loaded plugin provides it"});
}

// (2) An input naming a variable the block does not declare and nobody feeds.
TEST_F(BadInputTest, MissingInputVariable) {
  Var("x", TIDE_FP32, {2, 3});
  Var("y");
  Op("relu", {{"X", {"x"}}}, {{"Out", {"y"}}});
  Var("z");
  Op("elementwise_add", {{"X", {"y"}}, {"Y", {"ghost_bias"}}}, {{"Out", {"z"}}});
  ExpectError(
      [&] {
        Run({{"x", Tensor<float>({2, 3})}}, {"z"});
      },
      {"elementwise_add", "ghost_bias"});
}

// (3) An attribute of the wrong type.
TEST_F(BadInputTest, AttributeOfTheWrongType) {
  Var("x", TIDE_FP32, {2, 3});
  Var("y");
  Op("scale", {{"X", {"x"}}}, {{"Out", {"y"}}}, {{"scale", std::string("2.0")}});
  std::string msg = ExpectError(
      [&] {
        Run({{"x", Tensor<float>({2, 3})}}, {"y"});
      },
      {"scale", "attribute 'scale'", "float", "string"});
  // The expected type comes before the given one.
  EXPECT_LT(msg.find("float"), msg.find("string")) << msg;
}

TEST_F(BadInputTest, AttributeOfTheWrongTypeBool) {
  Var("x", TIDE_FP32, {2, 3});
  Var("w", TIDE_FP32, {3, 4});
  Var("y");
  Op("matmul", {{"X", {"x"}}, {"Y", {"w"}}}, {{"Out", {"y"}}}, {{"transpose_X", 1.5f}});
  ExpectError(
      [&] {
        Run({{"x", Tensor<float>({2, 3})}, {"w", Tensor<float>({3, 4})}}, {"y"});
      },
      {"matmul", "transpose_X", "bool", "float"});
}

// (4) Shapes an op cannot combine.
TEST_F(BadInputTest, MulWithIncompatibleInnerDims) {
  Var("x", TIDE_FP32, {-1, 13});
  Var("w", TIDE_FP32, {12, 1});
  Var("y");
  Op("mul", {{"X", {"x"}}, {"Y", {"w"}}}, {{"Out", {"y"}}});
  ExpectError(
      [&] {
        Run({{"x", Tensor<float>({4, 13})}, {"w", Tensor<float>({12, 1})}}, {"y"});
      },
      {"mul", "[4, 13]", "[12, 1]"});
}

TEST_F(BadInputTest, ElementwiseAddWithIncompatibleBroadcast) {
  Var("x", TIDE_FP32, {2, 3, 4});
  Var("b", TIDE_FP32, {5});
  Var("y");
  Op("elementwise_add", {{"X", {"x"}}, {"Y", {"b"}}}, {{"Out", {"y"}}});
  ExpectError(
      [&] {
        Run({{"x", Tensor<float>({2, 3, 4})}, {"b", Tensor<float>({5})}}, {"y"});
      },
      {"elementwise_add", "[2, 3, 4]", "[5]"});
}

// (5) Feeds that do not match the data variable.
TEST_F(BadInputTest, FeedOfTheWrongDtype) {
  Var("image", TIDE_FP32, {-1, 13});
  Var("y");
  Op("relu", {{"X", {"image"}}}, {{"Out", {"y"}}});
  ExpectError(
      [&] {
        Run({{"image", Tensor<double>({2, 13})}}, {"y"});
      },
      {"image", "float64", "float32"});
}

TEST_F(BadInputTest, FeedOfTheWrongShape) {
  Var("image", TIDE_FP32, {-1, 13});
  Var("y");
  Op("relu", {{"X", {"image"}}}, {{"Out", {"y"}}});
  ExpectError(
      [&] {
        Run({{"image", Tensor<float>({2, 12})}}, {"y"});
      },
      {"image", "[2, 12]", "[-1, 13]"});
  ExpectError([&] { Run({{"image", Tensor<float>({26})}}, {"y"}); }, {"image", "[26]", "[-1, 13]"});
  // Any batch size fits the -1.
  std::vector<LoDTensor> ok = Run({{"image", Tensor<float>({5, 13}, -2.0f)}}, {"y"});
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].dims().ToVector(), (std::vector<int64_t>{5, 13}));
  EXPECT_EQ(ok[0].data<float>()[0], 0.0f);
}

// (6) A fetch target that does not exist.
TEST_F(BadInputTest, FetchOfAnUnknownVariable) {
  Var("x", TIDE_FP32, {2, 3});
  Var("y");
  Op("relu", {{"X", {"x"}}}, {{"Out", {"y"}}});
  ExpectError([&] { Run({{"x", Tensor<float>({2, 3})}}, {"no_such_output"}); }, {"no_such_output"});
}

// (7) A declared variable that nothing feeds, initialises or writes.
TEST_F(BadInputTest, DeclaredButNeverFedInput) {
  Var("x", TIDE_FP32, {-1, 13});
  Var("w", TIDE_FP32, {13, 1});  // a parameter whose startup program never ran
  Var("y");
  Op("mul", {{"X", {"x"}}, {"Y", {"w"}}}, {{"Out", {"y"}}});
  ExpectError(
      [&] {
        Run({{"x", Tensor<float>({2, 13})}}, {"y"});
      },
      {"holds no data", "mul", "'w'"});
}

// (8) Places that do not exist.
TEST_F(BadInputTest, ExecutorOnAPlaceNoDevicePluginProvides) {
  ExpectError([] { Executor exe(Place("nosuchdevice", 0)); }, {"nosuchdevice"});
}

TEST_F(BadInputTest, ExecutorOnACpuOrdinalThatDoesNotExist) {
  ExpectError([] { Executor exe(Place("cpu", 3)); }, {"cpu:3"});
}

// After any of these errors, the same scope still runs a correct program.
TEST_F(BadInputTest, ErrorsLeaveTheScopeUsable) {
  Var("x", TIDE_FP32, {-1, 3});
  Var("y");
  Op("scale", {{"X", {"x"}}}, {{"Out", {"y"}}}, {{"scale", 3.0f}});
  EXPECT_THROW(Run({{"x", Tensor<double>({2, 3})}}, {"y"}), core::Error);
  EXPECT_THROW(Run({{"x", Tensor<float>({2, 3})}}, {"nope"}), core::Error);
  std::vector<LoDTensor> out = Run({{"x", Tensor<float>({2, 3}, 1.5f)}}, {"y"});
  ASSERT_EQ(out.size(), 1u);
  for (int64_t i = 0; i < out[0].numel(); ++i) EXPECT_EQ(out[0].data<float>()[i], 4.5f);
}

}  // namespace
}  // namespace tide::test
