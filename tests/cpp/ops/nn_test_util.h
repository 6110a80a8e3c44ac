// nn_test_util.h: what the ops_nn tests need beyond OpTester: a one-op program whose grad check
// weighs several outputs at once (split), compile-time shape inference on declared (possibly
// -1) dims, and direct access to the program and scope (sparse grads). Header-only.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/executor/executor.h"
#include "core/framework/selected_rows.h"
#include "core/ir/compile_infer_shape.h"
#include "core/ir/grad_op_maker.h"
#include "core/plugin/loader.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"
#include "op_tester.h"

namespace tide::test::nn {

// Tolerances of a float32 / float64 result against a float64 reference.
inline double FwdTol(TideDataType t) { return t == TIDE_FP64 ? 1e-10 : 1e-4; }
struct GradTolerances {
  double rtol, atol, delta;
};
inline GradTolerances GradTols(TideDataType t) {
  return t == TIDE_FP64 ? GradTolerances{1e-6, 1e-7, 1e-6} : GradTolerances{5e-3, 2e-3, 1e-2};
}

// The parameter name of the dtype suites: "fp32", "fp64".
inline std::string DtypeName(const ::testing::TestParamInfo<TideDataType>& info) {
  return info.param == TIDE_FP64   ? "fp64"
         : info.param == TIDE_FP32 ? "fp32"
                                   : core::DataTypeName(info.param);
}

inline core::LoDTensor ToLoD(const TestTensor& t) {
  core::LoDTensor out;
  out.Resize(core::DDim(t.dims));
  core::Place host("cpu", 0);
  auto fill = [&](auto* d) {
    for (size_t i = 0; i < t.data.size(); ++i)
      d[i] = static_cast<std::remove_pointer_t<decltype(d)>>(t.data[i]);
  };
  switch (t.dtype) {
    case TIDE_FP32:
      fill(out.mutable_data<float>(host));
      break;
    case TIDE_FP64:
      fill(out.mutable_data<double>(host));
      break;
    case TIDE_INT32:
      fill(out.mutable_data<int32_t>(host));
      break;
    case TIDE_INT64:
      fill(out.mutable_data<int64_t>(host));
      break;
    default:
      ADD_FAILURE() << "unsupported test dtype " << core::DataTypeName(t.dtype);
  }
  out.set_lod(t.lod);
  return out;
}

inline TestTensor FromLoD(const core::LoDTensor& t) {
  TestTensor out;
  out.dims = t.dims().ToVector();
  out.dtype = t.dtype();
  out.lod = t.lod();
  auto read = [&](const auto* d) { out.data.assign(d, d + t.numel()); };
  switch (t.dtype()) {
    case TIDE_FP32:
      read(t.data<float>());
      break;
    case TIDE_FP64:
      read(t.data<double>());
      break;
    case TIDE_INT32:
      read(t.data<int32_t>());
      break;
    case TIDE_INT64:
      read(t.data<int64_t>());
      break;
    default:
      ADD_FAILURE() << "unsupported result dtype " << core::DataTypeName(t.dtype());
  }
  return out;
}

// Appends `op` to `block` (declaring its undeclared variables), checks it and infers shapes.
inline core::OpDesc* AppendChecked(core::BlockDesc* block, const core::OpDesc& op) {
  for (const auto& names : {op.InputArgumentNames(), op.OutputArgumentNames()})
    for (const auto& n : names)
      if (n != core::kEmptyVarName && !block->FindVar(n)) block->Var(n);
  core::OpDesc* added = block->AppendOp();
  *added = op;
  added->set_block(block);
  const core::OpInfo& info = core::Registry::Global().GetOp(op.type());
  core::CheckOpDesc(info, added);
  core::InferShapeAtCompileTime(info, *added, block);
  return added;
}

// A one-op program. Inputs are fed; outputs are fetched by variable name.
class NnOp {
 public:
  explicit NnOp(std::string type) : type_(std::move(type)) { core::Initialize(); }

  NnOp& In(const std::string& param, const std::string& var, TestTensor t) {
    ins_[param].push_back(var);
    feeds_[var] = std::move(t);
    return *this;
  }
  // `fetch` false: bound but not fetched by Run() (e.g. XShape, which holds dims, no data).
  NnOp& Out(const std::string& param, const std::string& var, bool fetch = true) {
    outs_[param].push_back(var);
    if (fetch) out_vars_.push_back(var);
    return *this;
  }
  NnOp& Attr(const std::string& name, core::Attribute v) {
    attrs_[name] = std::move(v);
    return *this;
  }
  const std::map<std::string, TestTensor>& feeds() const { return feeds_; }

  // The program (block 0 holds the op) and the op as checked (defaults filled).
  core::ProgramDesc Build(core::OpDesc* fwd = nullptr) const {
    core::ProgramDesc prog;
    core::BlockDesc* b = prog.MutableBlock(0);
    for (const auto& [var, t] : feeds_) {
      core::VarDesc* v = b->Var(var);
      v->set_dtype(t.dtype);
      v->set_shape(t.dims);
    }
    core::OpDesc* op = AppendChecked(b, core::OpDesc(type_, ins_, outs_, attrs_));
    if (fwd) *fwd = *op;
    return prog;
  }

  std::map<std::string, TestTensor> Run(const std::map<std::string, TestTensor>& feeds) const {
    core::ProgramDesc prog = Build();
    return RunProgram(prog, feeds, out_vars_);
  }
  std::map<std::string, TestTensor> Run() const { return Run(feeds_); }

  static std::map<std::string, TestTensor> RunProgram(
      const core::ProgramDesc& prog, const std::map<std::string, TestTensor>& feeds,
      const std::vector<std::string>& fetch) {
    std::map<std::string, core::LoDTensor> f;
    for (const auto& [var, t] : feeds) f[var] = ToLoD(t);
    core::Executor exe(core::Place("cpu", 0));
    core::Scope scope;
    std::vector<core::LoDTensor> got = exe.Run(prog, &scope, f, fetch);
    std::map<std::string, TestTensor> out;
    for (size_t i = 0; i < fetch.size(); ++i) out[fetch[i]] = FromLoD(got[i]);
    return out;
  }

  // Checks the registered grad ops' d(L)/d(wrt) against central differences, where
  // L = sum over `outs` of sum(w_k * out_k) with fixed random weights w_k.
  void CheckGrad(const std::vector<std::string>& wrt, const std::vector<std::string>& outs,
                 double rtol, double atol, double delta) const {
    core::OpDesc fwd;
    core::ProgramDesc prog = Build(&fwd);
    auto out0 = RunProgram(prog, feeds_, outs);
    std::map<std::string, TestTensor> weights;
    unsigned seed = 101;
    for (const auto& o : outs) weights[o] = Random(out0[o].dims, out0[o].dtype, -1, 1, seed++);
    auto loss = [&](const std::map<std::string, TestTensor>& in) {
      auto got = RunProgram(prog, in, outs);
      double l = 0;
      for (const auto& o : outs)
        for (size_t j = 0; j < got[o].data.size(); ++j) l += weights[o].data[j] * got[o].data[j];
      return l;
    };
    core::ProgramDesc grad_prog = prog;
    core::BlockDesc* block = grad_prog.MutableBlock(0);
    auto feeds = feeds_;
    for (const auto& o : outs) {
      std::string g = core::GradVarName(o);
      core::VarDesc* v = block->Var(g);
      v->set_dtype(weights[o].dtype);
      v->set_shape(weights[o].dims);
      feeds[g] = weights[o];
    }
    for (const core::OpDesc& g : core::MakeGradOps(fwd, {})) AppendChecked(block, g);
    std::vector<std::string> fetch;
    for (const auto& v : wrt) fetch.push_back(core::GradVarName(v));
    auto analytic = RunProgram(grad_prog, feeds, fetch);
    for (const auto& v : wrt) {
      const TestTensor& a = analytic[core::GradVarName(v)];
      const TestTensor& x = feeds_.at(v);
      ASSERT_EQ(a.dims, x.dims) << type_ << ": grad of " << v << " has other dims than " << v;
      for (size_t i = 0; i < x.data.size(); ++i) {
        auto shifted = [&](double s) {
          auto in = feeds_;
          in[v].data[i] += s;
          return loss(in);
        };
        double numeric = (shifted(delta) - shifted(-delta)) / (2 * delta);
        ASSERT_NEAR(a.data[i], numeric, atol + rtol * std::fabs(numeric))
            << type_ << ": d/d " << v << "[" << i << "] analytic vs finite difference";
      }
    }
  }

 private:
  std::string type_;
  core::VariableNameMap ins_, outs_;
  core::AttributeMap attrs_;
  std::map<std::string, TestTensor> feeds_;
  std::vector<std::string> out_vars_;
};

// Compile-time shape inference only: declares inputs with `dims` (may hold -1) and `dtype`,
// appends the op, returns each output variable's inferred shape.
struct DeclaredVar {
  std::string param, var;
  std::vector<int64_t> dims;
  TideDataType dtype = TIDE_FP32;
};
struct InferredVar {
  std::vector<int64_t> dims;
  TideDataType dtype = TIDE_UNDEFINED;
  TideVarType type = TIDE_VAR_LOD_TENSOR;
};
inline std::map<std::string, InferredVar> CompileInfer(
    const std::string& type, const std::vector<DeclaredVar>& ins,
    const std::vector<std::pair<std::string, std::string>>& outs,
    const core::AttributeMap& attrs = {}) {
  core::Initialize();
  core::ProgramDesc prog;
  core::BlockDesc* b = prog.MutableBlock(0);
  core::VariableNameMap in_map, out_map;
  for (const auto& d : ins) {
    core::VarDesc* v = b->Var(d.var);
    v->set_shape(d.dims);
    v->set_dtype(d.dtype);
    in_map[d.param].push_back(d.var);
  }
  for (const auto& [param, var] : outs) out_map[param].push_back(var);
  AppendChecked(b, core::OpDesc(type, in_map, out_map, attrs));
  std::map<std::string, InferredVar> got;
  for (const auto& [param, var] : outs) {
    const core::VarDesc* v = b->FindVar(var);
    got[var] = {v->shape(), v->dtype(), v->type()};
  }
  return got;
}

// Runs `f`, which must throw a tide::core::Error whose message holds each of `parts`.
inline void ExpectThrows(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const core::Error& e) {
    std::string msg = e.what();
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' is not in: " << msg;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a tide::core::Error, got: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected a tide::core::Error, nothing was thrown";
}

// Integer-valued test tensors (ids, labels).
inline TestTensor Ints(std::vector<int64_t> dims, std::vector<double> v,
                       TideDataType dtype = TIDE_INT64) {
  return Values(std::move(dims), std::move(v), dtype);
}

}  // namespace tide::test::nn
