// op_tester.cc: one-op programs, run through the executor, and finite-difference grad checks.
#include "op_tester.h"

#include <cmath>
#include <random>

#include "core/executor/executor.h"
#include "core/host/initialize.h"
#include "core/passes/compile_infer_shape.h"
#include "core/passes/grad_op_maker.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"
#include "one_op_program.h"

namespace tide::test {
using namespace tide::core;  // NOLINT

int64_t TestTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

TestTensor Random(std::vector<int64_t> dims, TideDataType dtype, double lo, double hi,
                  unsigned seed) {
  TestTensor t;
  t.dims = std::move(dims);
  t.dtype = dtype;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  t.data.resize(static_cast<size_t>(t.numel()));
  for (auto& v : t.data) {
    v = dist(rng);
    if (dtype == TIDE_FP32) v = static_cast<float>(v);  // exactly representable
    if (dtype == TIDE_INT32 || dtype == TIDE_INT64) v = std::round(v);
  }
  return t;
}

TestTensor Values(std::vector<int64_t> dims, std::vector<double> data, TideDataType dtype) {
  TestTensor t;
  t.dims = std::move(dims);
  t.data = std::move(data);
  t.dtype = dtype;
  return t;
}

namespace {

void Declare(BlockDesc* b, const std::string& name, const TestTensor* t, TideDataType dtype) {
  VarDesc* v = b->Var(name);
  v->set_dtype(t ? t->dtype : dtype);
  if (t) v->set_shape(t->dims);
}

// Appends `op` to `b`, declaring its variables, checking it and inferring shapes.
void Append(BlockDesc* b, const OpDesc& op, TideDataType dtype) {
  for (const auto& name : op.InputArgumentNames())
    if (!b->FindVar(name) && name != kEmptyVarName) Declare(b, name, nullptr, dtype);
  for (const auto& name : op.OutputArgumentNames())
    if (!b->FindVar(name) && name != kEmptyVarName) Declare(b, name, nullptr, dtype);
  OpDesc* added = b->AppendOp();
  *added = op;
  added->set_block(b);
  const OpInfo& info = Registry::Global().GetOp(op.type());
  CheckOpDesc(info, added);
  InferShapeAtCompileTime(info, *added, b);
}

}  // namespace

OpTester::OpTester(std::string type, Place place) : type_(std::move(type)), place_(place) {
  Initialize();
}

OpTester& OpTester::Input(const std::string& param, const std::string& var, TestTensor t) {
  inputs_.emplace_back(param, var);
  feeds_[var] = std::move(t);
  return *this;
}

OpTester& OpTester::Output(const std::string& param, const std::string& var) {
  outputs_.emplace_back(param, var);
  return *this;
}

OpTester& OpTester::Attr(const std::string& name, Attribute value) {
  attrs_[name] = std::move(value);
  return *this;
}

namespace {
struct Built {
  ProgramDesc program;
  OpDesc fwd;
  TideDataType dtype = TIDE_FP32;
};
}  // namespace

static Built Build(const std::string& type,
                   const std::vector<std::pair<std::string, std::string>>& ins,
                   const std::map<std::string, TestTensor>& feeds,
                   const std::vector<std::pair<std::string, std::string>>& outs,
                   const AttributeMap& attrs) {
  Built b;
  BlockDesc* block = b.program.MutableBlock(0);
  VariableNameMap in, out;
  for (const auto& [param, var] : ins) in[param].push_back(var);
  for (const auto& [param, var] : outs) out[param].push_back(var);
  if (!feeds.empty()) b.dtype = feeds.begin()->second.dtype;
  for (const auto& [var, t] : feeds) Declare(block, var, &t, t.dtype);
  b.fwd = OpDesc(type, in, out, attrs);
  Append(block, b.fwd, b.dtype);
  b.fwd = *block->Op(0);  // with defaults filled
  return b;
}

std::map<std::string, TestTensor> OpTester::Run() const {
  Built b = Build(type_, inputs_, feeds_, outputs_, attrs_);
  std::map<std::string, LoDTensor> feeds;
  for (const auto& [var, t] : feeds_) feeds[var] = ToLoD(t);
  std::vector<std::string> fetch;
  for (const auto& [param, var] : outputs_) fetch.push_back(var);
  Executor exe(place_);
  Scope scope;
  std::vector<LoDTensor> got = exe.Run(b.program, &scope, feeds, fetch);
  std::map<std::string, TestTensor> out;
  for (size_t i = 0; i < fetch.size(); ++i) out[fetch[i]] = FromLoD(got[i]);
  return out;
}

void OpTester::CheckGrad(const std::vector<std::string>& wrt, const std::string& out_var,
                         double rtol, double atol, double delta) const {
  Built b = Build(type_, inputs_, feeds_, outputs_, attrs_);
  Executor exe(place_);
  // Forward once for Out's dims, then the weights of L = sum(w * out).
  auto forward = [&](const std::map<std::string, TestTensor>& in) {
    std::map<std::string, LoDTensor> feeds;
    for (const auto& [var, t] : in) feeds[var] = ToLoD(t);
    Scope scope;
    return FromLoD(exe.Run(b.program, &scope, feeds, {out_var}).at(0));
  };
  TestTensor out0 = forward(feeds_);
  TestTensor w = Random(out0.dims, out0.dtype, -1, 1, 77);

  // Analytic: forward + grad ops, with out@GRAD fed as w.
  std::map<std::string, TestTensor> analytic = RunGrad(wrt, out_var, w);

  for (size_t k = 0; k < wrt.size(); ++k) {
    const TestTensor& a = analytic.at(wrt[k]);
    const TestTensor& x = feeds_.at(wrt[k]);
    ASSERT_EQ(a.dims, x.dims) << "grad of " << wrt[k] << " has other dims than " << wrt[k];
    EXPECT_EQ(a.dtype, x.dtype) << "grad of " << wrt[k] << " has dtype " << DataTypeName(a.dtype)
                                << ", " << wrt[k] << " has " << DataTypeName(x.dtype);
    for (size_t i = 0; i < x.data.size(); ++i) {
      auto loss = [&](double shift) {
        auto in = feeds_;
        in[wrt[k]].data[i] += shift;
        TestTensor o = forward(in);
        double l = 0;
        for (size_t j = 0; j < o.data.size(); ++j) l += w.data[j] * o.data[j];
        return l;
      };
      double numeric = (loss(delta) - loss(-delta)) / (2 * delta);
      ASSERT_NEAR(a.data[i], numeric, atol + rtol * std::fabs(numeric))
          << type_ << ": d/d " << wrt[k] << "[" << i << "] analytic vs finite difference";
    }
  }
}

std::map<std::string, TestTensor> OpTester::RunGrad(const std::vector<std::string>& wrt,
                                                    const std::string& out_var,
                                                    const TestTensor& dout_value) const {
  Built b = Build(type_, inputs_, feeds_, outputs_, attrs_);
  ProgramDesc grad_prog = b.program;
  BlockDesc* block = grad_prog.MutableBlock(0);
  std::string dout = GradVarName(out_var);
  Declare(block, dout, &dout_value, dout_value.dtype);
  for (const OpDesc& g : MakeGradOps(b.fwd, {})) Append(block, g, b.dtype);
  std::map<std::string, LoDTensor> feeds;
  for (const auto& [var, t] : feeds_) feeds[var] = ToLoD(t);
  feeds[dout] = ToLoD(dout_value);
  std::vector<std::string> fetch;
  for (const auto& v : wrt) fetch.push_back(GradVarName(v));
  Executor exe(place_);
  Scope scope;
  std::vector<LoDTensor> got = exe.Run(grad_prog, &scope, feeds, fetch);
  std::map<std::string, TestTensor> out;
  for (size_t k = 0; k < wrt.size(); ++k) out[wrt[k]] = FromLoD(got[k]);
  return out;
}

void ExpectNear(const TestTensor& got, const std::vector<double>& want, double rtol, double atol) {
  ASSERT_EQ(got.data.size(), want.size()) << "element count";
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got.data[i], want[i], atol + rtol * std::fabs(want[i])) << "at element " << i;
}

std::string DtypeParamName(const ::testing::TestParamInfo<TideDataType>& info) {
  switch (info.param) {
    case TIDE_FP32:
      return "fp32";
    case TIDE_FP64:
      return "fp64";
    default:
      return DataTypeName(info.param);
  }
}

std::string ExpectError(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const Error& e) {
    std::string msg = e.what();
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' is not in the message: " << msg;
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a tide::core::Error, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected a tide::core::Error, nothing was thrown";
  return "";
}

}  // namespace tide::test
