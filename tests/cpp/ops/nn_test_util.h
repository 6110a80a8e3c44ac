// nn_test_util.h: what the ops_nn tests need beyond OpTester: a one-op program whose grad check
// weighs several outputs at once (split), compile-time shape inference on declared (possibly
// -1) dims, and direct access to the program and scope (sparse grads). Header-only.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/executor/executor.h"
#include "core/framework/selected_rows.h"
#include "core/host/initialize.h"
#include "core/passes/compile_infer_shape.h"
#include "core/passes/grad_op_maker.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"
#include "one_op_program.h"
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

// A one-op program on cpu:0 (one_op_program.h): In/Out/Attr, Run, CheckGrad by finite
// differences.
using NnOp = OneOpProgram;

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
