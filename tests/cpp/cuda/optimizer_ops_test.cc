// optimizer_ops_test.cc: the ops_optimizers kernels of the CUDA plugin against the CPU's: one
// update with dense gradients, in place (outputs bound to their inputs' variables) and not, with
// the learning rate in either float type; with SelectedRows gradients (repeated rows, lazy Adam).
#include "selected_rows_util.h"

namespace tide::test::cuda {
namespace {

TestTensor Scalar(double v, TideDataType dt) { return Values({1}, {v}, dt); }

struct OptCase {
  const char* op;
  std::vector<std::string> state;                         // Param-shaped inputs besides Param, Grad
  std::vector<std::pair<std::string, std::string>> outs;  // output param -> input param
  std::vector<std::string> scalars;                       // one-element inputs besides LearningRate
  core::AttributeMap attrs;
};

const std::vector<OptCase>& Cases() {
  static const std::vector<OptCase> cases = {
      {"sgd", {}, {{"ParamOut", "Param"}}, {}, {}},
      {"momentum",
       {"Velocity"},
       {{"ParamOut", "Param"}, {"VelocityOut", "Velocity"}},
       {},
       {{"mu", 0.9f}}},
      {"momentum",
       {"Velocity"},
       {{"ParamOut", "Param"}, {"VelocityOut", "Velocity"}},
       {},
       {{"mu", 0.9f}, {"use_nesterov", true}}},
      {"adam",
       {"Moment1", "Moment2"},
       {{"ParamOut", "Param"}, {"Moment1Out", "Moment1"}, {"Moment2Out", "Moment2"}},
       {"Beta1Pow", "Beta2Pow"},
       {}},
      {"adagrad", {"Moment"}, {{"ParamOut", "Param"}, {"MomentOut", "Moment"}}, {}, {}},
      {"rmsprop",
       {"MeanSquare", "Moment"},
       {{"ParamOut", "Param"}, {"MeanSquareOut", "MeanSquare"}, {"MomentOut", "Moment"}},
       {},
       {{"momentum", 0.5f}}},
      {"rmsprop",
       {"MeanSquare", "Moment", "MeanGrad"},
       {{"ParamOut", "Param"},
        {"MeanSquareOut", "MeanSquare"},
        {"MomentOut", "Moment"},
        {"MeanGradOut", "MeanGrad"}},
       {},
       {{"momentum", 0.5f}, {"centered", true}}},
  };
  return cases;
}

class GpuOptimizerTest : public ::testing::TestWithParam<TideDataType> {
 protected:
  void SetUp() override { TIDE_REQUIRE_GPU(); }
};

// `in_place`: each output is bound to its input's variable, as Fluid's optimizers do.
OpCase Make(const OptCase& k, TideDataType dt, TideDataType lr_dt, bool in_place,
            std::vector<int64_t> dims, double beta1_pow = 0.9 * 0.9) {
  OpCase c(k.op);
  unsigned seed = 1;
  c.In("Param", "Param", Random(dims, dt, -1, 1, seed++));
  c.In("Grad", "Grad", Random(dims, dt, -1, 1, seed++));
  c.In("LearningRate", "LearningRate", Scalar(0.05, lr_dt));
  for (const auto& s : k.state) {
    // Second moments must be >= 0 (and MeanSquare >= MeanGrad^2 for centered RMSProp).
    const bool positive =
        s == "Moment2" || s == "MeanSquare" || (s == "Moment" && std::string(k.op) == "adagrad");
    c.In(s, s, Random(dims, dt, positive ? 0.5 : -0.5, positive ? 1.5 : 0.5, seed++));
  }
  if (std::string(k.op) == "adam") {
    c.In("Beta1Pow", "Beta1Pow", Scalar(beta1_pow, lr_dt));
    c.In("Beta2Pow", "Beta2Pow", Scalar(0.999 * 0.999, lr_dt));
  }
  for (const auto& [out, in] : k.outs) c.Out(out, in_place ? in : out + "_var");
  for (const auto& [name, v] : k.attrs) c.Attr(name, v);
  return c;
}

TEST_P(GpuOptimizerTest, DenseUpdatesMatchCpu) {
  const TideDataType dt = GetParam();
  for (const OptCase& k : Cases())
    for (bool in_place : {true, false})
      for (TideDataType lr_dt : {TIDE_FP32, TIDE_FP64})
        for (std::vector<int64_t> dims : {std::vector<int64_t>{7, 5}, {100000}}) {
          SCOPED_TRACE(std::string(k.op) + (in_place ? " in place" : "") + " lr " +
                       core::DataTypeName(lr_dt) + " " + DimsStr(dims));
          ExpectGpuMatchesCpu(Make(k, dt, lr_dt, in_place, dims), GpuTol(dt));
        }
}

// A SelectedRows Grad, made in the scope before the run (a feed holds LoDTensors only), its value
// on the host: the GPU kernels must move it themselves.
std::map<std::string, TestTensor> RunSparse(const core::Place& place, const OptCase& k,
                                            TideDataType dt, const core::AttributeMap& extra) {
  OpCase c = Make(k, dt, dt, true, {6, 3});
  core::ProgramDesc program;
  core::BlockDesc* block = program.MutableBlock(0);
  core::VariableNameMap in, out;
  for (const auto& [var, t] : c.feeds()) {
    if (var == "Grad") continue;
    core::VarDesc* v = block->Var(var);
    v->set_dtype(t.dtype);
    v->set_shape(t.dims);
    in[var] = {var};
  }
  DeclareSelectedRows(block, "grad", dt);
  in["Grad"] = {"grad"};
  std::vector<std::string> fetch;
  for (const auto& [param, var] : k.outs) {
    out[param] = {var};
    fetch.push_back(var);
  }
  core::AttributeMap attrs = k.attrs;
  for (const auto& [n, v] : extra) attrs[n] = v;
  core::OpDesc* added = block->AppendOp();
  *added = core::OpDesc(k.op, in, out, attrs);
  added->set_block(block);

  core::Scope scope;
  PutSelectedRows(&scope, "grad", 6, {4, 1, 4, 0}, Random({4, 3}, dt, -1, 1, 99));  // row 4 twice
  std::map<std::string, core::LoDTensor> feeds;
  for (const auto& [var, t] : c.feeds())
    if (var != "Grad") feeds[var] = ToLoD(t);
  core::Executor exe(place);
  std::vector<core::LoDTensor> got = exe.Run(program, &scope, feeds, fetch);
  std::map<std::string, TestTensor> result;
  for (size_t i = 0; i < fetch.size(); ++i) result[fetch[i]] = FromLoD(got[i]);
  return result;
}

TEST_P(GpuOptimizerTest, SparseUpdatesMatchCpu) {
  const TideDataType dt = GetParam();
  for (const OptCase& k : Cases())
    for (bool lazy : {false, true}) {
      if (lazy && std::string(k.op) != "adam") continue;
      SCOPED_TRACE(std::string(k.op) + (lazy ? " lazy" : ""));
      core::AttributeMap extra;
      if (lazy) extra["lazy_mode"] = true;
      auto cpu = RunSparse(Cpu(), k, dt, extra);
      auto gpu = RunSparse(Gpu(), k, dt, extra);
      for (const auto& [var, t] : cpu) ExpectClose(gpu[var], t, GpuTol(dt), var);
    }
}

TEST_P(GpuOptimizerTest, AdamBeta1PowOfOneIsReported) {
  OpCase c = Make(Cases()[3], GetParam(), GetParam(), true, {3, 2}, /*beta1_pow=*/1.0);
  try {
    c.Run(Gpu());
    FAIL() << "Beta1Pow = 1 was accepted";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Beta1Pow"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuOptimizerTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParam);

}  // namespace
}  // namespace tide::test::cuda
