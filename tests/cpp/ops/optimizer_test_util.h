// optimizer_test_util.h: what OpTester cannot do for the optimizer tests: run one op whose Grad
// is a SelectedRows (made in the scope before the run).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/executor/executor.h"
#include "core/framework/scope.h"
#include "core/framework/selected_rows.h"
#include "core/host/initialize.h"
#include "core/ir/program_desc.h"
#include "one_op_program.h"
#include "op_tester.h"

namespace tide::test::optim {

// `v` as the dtype stores it (float32 rounds), so references see what the kernel sees.
inline double Round(double v, TideDataType dtype) {
  return dtype == TIDE_FP32 ? static_cast<double>(static_cast<float>(v)) : v;
}

// A SelectedRows gradient: `value` holds one row of Param per entry of `rows`.
struct SparseGrad {
  int64_t height = 0;
  std::vector<int64_t> rows;
  TestTensor value;
};

// Runs `op` once through the executor: Grad is the SelectedRows variable "grad", made in the
// scope before the run (declared persistable, so the run uses it); the other inputs are fed as
// variables named like their parameters ("Param", "LearningRate", ...); `outputs` binds each
// output parameter to a variable (an input's name for an in-place update). Returns the fetched
// outputs by variable name. Throws tide::core::Error on failure.
inline std::map<std::string, TestTensor> RunWithSparseGrad(
    const std::string& op, const std::map<std::string, TestTensor>& inputs, const SparseGrad& grad,
    const std::vector<std::pair<std::string, std::string>>& outputs,
    const core::AttributeMap& attrs = {}) {
  core::Initialize();
  core::ProgramDesc program;
  core::BlockDesc* block = program.MutableBlock(0);
  core::VariableNameMap in, out;
  for (const auto& [param, t] : inputs) {
    core::VarDesc* v = block->Var(param);
    v->set_dtype(t.dtype);
    v->set_shape(t.dims);
    in[param] = {param};
  }
  core::VarDesc* g = block->Var("grad");
  g->set_type(TIDE_VAR_SELECTED_ROWS);
  g->set_dtype(grad.value.dtype);
  g->set_persistable(true);
  in["Grad"] = {"grad"};
  std::vector<std::string> fetch;
  for (const auto& [param, var] : outputs) {
    if (!block->FindVar(var)) block->Var(var)->set_dtype(grad.value.dtype);
    out[param] = {var};
    fetch.push_back(var);
  }
  core::OpDesc* added = block->AppendOp();
  *added = core::OpDesc(op, in, out, attrs);
  added->set_block(block);

  core::Scope scope;
  auto* sr = scope.Var("grad")->GetMutable<core::SelectedRows>();
  sr->set_height(grad.height);
  *sr->mutable_rows() = grad.rows;
  *sr->mutable_value() = ToLoD(grad.value);

  std::map<std::string, core::LoDTensor> feeds;
  for (const auto& [param, t] : inputs) feeds[param] = ToLoD(t);
  core::Executor exe(core::Place("cpu", 0));
  std::vector<core::LoDTensor> got = exe.Run(program, &scope, feeds, fetch);
  std::map<std::string, TestTensor> result;
  for (size_t i = 0; i < fetch.size(); ++i) result[fetch[i]] = FromLoD(got[i]);
  return result;
}

}  // namespace tide::test::optim
