// one_op_program.h: one-op programs for the tests that need more than OpTester (ops_nn, CUDA):
// test tensors to and from LoDTensors, ops appended checked (shapes inferred), programs run on
// any place, grads through the registered grad ops and checked by finite differences.
// Header-only.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/executor/executor.h"
#include "core/host/initialize.h"
#include "core/passes/compile_infer_shape.h"
#include "core/passes/grad_op_maker.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"
#include "op_tester.h"

namespace tide::test {

inline core::LoDTensor ToLoD(const TestTensor& t) {
  core::LoDTensor out;
  out.Resize(core::DDim(t.dims));
  const core::Place host("cpu", 0);
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
    case TIDE_BOOL:
      fill(out.mutable_data<bool>(host));
      break;
    case TIDE_UINT8:
      fill(out.mutable_data<uint8_t>(host));
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
    case TIDE_BOOL:
      read(t.data<bool>());
      break;
    case TIDE_UINT8:
      read(t.data<uint8_t>());
      break;
    default:
      ADD_FAILURE() << "unsupported result dtype " << core::DataTypeName(t.dtype());
  }
  return out;
}

// Declares each fed variable in `block` with its test tensor's dtype and dims.
inline void DeclareFeeds(core::BlockDesc* block, const std::map<std::string, TestTensor>& feeds) {
  for (const auto& [var, t] : feeds) {
    core::VarDesc* v = block->Var(var);
    v->set_dtype(t.dtype);
    v->set_shape(t.dims);
  }
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

// Runs `prog` on `place` in a fresh scope: `feeds` fed, `fetch` fetched by variable name.
inline std::map<std::string, TestTensor> RunProgram(const core::ProgramDesc& prog,
                                                    const core::Place& place,
                                                    const std::map<std::string, TestTensor>& feeds,
                                                    const std::vector<std::string>& fetch) {
  std::map<std::string, core::LoDTensor> f;
  for (const auto& [var, t] : feeds) f[var] = ToLoD(t);
  core::Executor exe(place);
  core::Scope scope;
  std::vector<core::LoDTensor> got = exe.Run(prog, &scope, f, fetch);
  std::map<std::string, TestTensor> out;
  for (size_t i = 0; i < fetch.size(); ++i) out[fetch[i]] = FromLoD(got[i]);
  return out;
}
inline std::map<std::string, TestTensor> RunProgram(const core::ProgramDesc& prog,
                                                    const std::map<std::string, TestTensor>& feeds,
                                                    const std::vector<std::string>& fetch) {
  return RunProgram(prog, core::Place("cpu", 0), feeds, fetch);
}

// A one-op program. Inputs are fed; outputs are fetched by variable name; runs on any place
// (cpu:0 unless told).
class OneOpProgram {
 public:
  explicit OneOpProgram(std::string type) : type_(std::move(type)) { core::Initialize(); }

  OneOpProgram& In(const std::string& param, const std::string& var, TestTensor t) {
    ins_[param].push_back(var);
    feeds_[var] = std::move(t);
    return *this;
  }
  // `fetch` false: bound but not fetched by Run() (e.g. XShape, which holds dims, no data).
  OneOpProgram& Out(const std::string& param, const std::string& var, bool fetch = true) {
    outs_[param].push_back(var);
    if (fetch) fetch_.push_back(var);
    return *this;
  }
  OneOpProgram& Attr(const std::string& name, core::Attribute v) {
    attrs_[name] = std::move(v);
    return *this;
  }
  const std::string& type() const { return type_; }
  const std::map<std::string, TestTensor>& feeds() const { return feeds_; }
  const std::vector<std::string>& fetched() const { return fetch_; }

  // The program (block 0 holds the op) and the op as checked (defaults filled).
  core::ProgramDesc Build(core::OpDesc* fwd = nullptr) const {
    core::ProgramDesc prog;
    core::BlockDesc* b = prog.MutableBlock(0);
    DeclareFeeds(b, feeds_);
    core::OpDesc* op = AppendChecked(b, core::OpDesc(type_, ins_, outs_, attrs_));
    if (fwd) *fwd = *op;
    return prog;
  }

  std::map<std::string, TestTensor> Run(const core::Place& place = core::Place("cpu", 0)) const {
    return RunProgram(Build(), place, feeds_, fetch_);
  }
  std::map<std::string, TestTensor> Run(const std::map<std::string, TestTensor>& feeds) const {
    return RunProgram(Build(), feeds, fetch_);
  }

  // The forward op and its registered grad ops, with out@GRAD fed from `douts` (one per output
  // variable); returns the grads of the input variables `wrt`, keyed by those variables.
  std::map<std::string, TestTensor> RunGrad(const core::Place& place,
                                            const std::vector<std::string>& wrt,
                                            const std::map<std::string, TestTensor>& douts) const {
    core::OpDesc fwd;
    core::ProgramDesc prog = Build(&fwd);
    core::BlockDesc* block = prog.MutableBlock(0);
    auto feeds = feeds_;
    for (const auto& [out, d] : douts) {
      const std::string g = core::GradVarName(out);
      core::VarDesc* v = block->Var(g);
      v->set_dtype(d.dtype);
      v->set_shape(d.dims);
      feeds[g] = d;
    }
    for (const core::OpDesc& g : core::MakeGradOps(fwd, {})) AppendChecked(block, g);
    std::vector<std::string> fetch;
    for (const auto& v : wrt) fetch.push_back(core::GradVarName(v));
    auto got = RunProgram(prog, place, feeds, fetch);
    std::map<std::string, TestTensor> out;
    for (const auto& v : wrt) out[v] = got[core::GradVarName(v)];
    return out;
  }

  // Checks the registered grad ops' d(L)/d(wrt) on cpu:0 against central differences, where
  // L = sum over `outs` of sum(w_k * out_k) with fixed random weights w_k.
  void CheckGrad(const std::vector<std::string>& wrt, const std::vector<std::string>& outs,
                 double rtol, double atol, double delta) const {
    const core::ProgramDesc prog = Build();
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
    auto analytic = RunGrad(core::Place("cpu", 0), wrt, weights);
    for (const auto& v : wrt) {
      const TestTensor& a = analytic[v];
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
  std::vector<std::string> fetch_;
};

}  // namespace tide::test
