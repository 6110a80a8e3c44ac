// optimizer_test.cc: the ops_optimizers ops (sgd, momentum, adam, adagrad, rmsprop): three
// successive steps through the executor, each step's outputs fed back, against float64
// references; in-place runs (ParamOut bound to Param's variable); SelectedRows gradients; errors.
#include <cmath>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "op_tester.h"
#include "optimizer_test_util.h"

namespace tide::test {
namespace {

using optim::Round;
using optim::RunWithSparseGrad;
using optim::SparseGrad;

using State = std::map<std::string, std::vector<double>>;  // by input parameter
using Scalars = std::map<std::string, double>;             // one-element inputs, as fed

const std::vector<int64_t> kDims = {4, 3};
constexpr int kSteps = 3;

// An optimizer configuration and its float64 reference.
struct Spec {
  std::string name;
  std::string op;
  std::vector<std::pair<std::string, std::string>> state;  // input -> output, Param first
  std::map<std::string, std::pair<double, double>> init;   // value range of each state input
  core::AttributeMap attrs;
  std::function<Scalars(int t)> scalars;  // the one-element inputs at step t = 1, 2, ...
  // Advances `s` by one step with gradient `g` and the scalars `in`, element by element.
  std::function<void(State& s, const std::vector<double>& g, const Scalars& in)> step;
};

Scalars Lr(int) { return {{"LearningRate", 0.05}}; }

Spec Sgd() {
  return {"sgd",
          "sgd",
          {{"Param", "ParamOut"}},
          {},
          {},
          Lr,
          [](State& s, const std::vector<double>& g, const Scalars& in) {
            for (size_t i = 0; i < g.size(); ++i) s["Param"][i] -= in.at("LearningRate") * g[i];
          }};
}

Spec Momentum(float mu_f, bool nesterov) {
  const double mu = mu_f;
  return {nesterov ? "momentum_nesterov" : "momentum",
          "momentum",
          {{"Param", "ParamOut"}, {"Velocity", "VelocityOut"}},
          {{"Velocity", {-0.5, 0.5}}},
          {{"mu", mu_f}, {"use_nesterov", nesterov}},
          Lr,
          [mu, nesterov](State& s, const std::vector<double>& g, const Scalars& in) {
            const double lr = in.at("LearningRate");
            auto &p = s["Param"], &v = s["Velocity"];
            for (size_t i = 0; i < g.size(); ++i) {
              v[i] = mu * v[i] + g[i];
              p[i] -= nesterov ? lr * (g[i] + mu * v[i]) : lr * v[i];
            }
          }};
}

// Without set_attrs the attributes are left unset: b1, b2 and eps must be the op's defaults.
// adam's attributes are float64: the kernels get them exactly.
Spec Adam(std::string name, double b1, double b2, double eps, bool set_attrs) {
  core::AttributeMap attrs;
  if (set_attrs) attrs = {{"beta1", b1}, {"beta2", b2}, {"epsilon", eps}};
  return {std::move(name),
          "adam",
          {{"Param", "ParamOut"}, {"Moment1", "Moment1Out"}, {"Moment2", "Moment2Out"}},
          {{"Moment1", {-0.5, 0.5}}, {"Moment2", {0.1, 1.0}}},
          attrs,
          // What the Python optimizer's scale ops would feed: beta^t at step t.
          [b1, b2](int t) {
            return Scalars{{"LearningRate", 0.05},
                           {"Beta1Pow", std::pow(b1, t)},
                           {"Beta2Pow", std::pow(b2, t)}};
          },
          [b1, b2, eps](State& s, const std::vector<double>& g, const Scalars& in) {
            // The paper's bias-corrected form: epsilon joins sqrt(m2_hat) (Paddle 2+, PyTorch).
            const double c1 = 1 - in.at("Beta1Pow"), c2 = 1 - in.at("Beta2Pow");
            auto &p = s["Param"], &m1 = s["Moment1"], &m2 = s["Moment2"];
            for (size_t i = 0; i < g.size(); ++i) {
              m1[i] = b1 * m1[i] + (1 - b1) * g[i];
              m2[i] = b2 * m2[i] + (1 - b2) * g[i] * g[i];
              p[i] -= in.at("LearningRate") * (m1[i] / c1) / (std::sqrt(m2[i] / c2) + eps);
            }
          }};
}

Spec Adagrad(std::string name, float eps_f, bool set_attr) {
  const double eps = eps_f;
  core::AttributeMap attrs;
  if (set_attr) attrs = {{"epsilon", eps_f}};
  return {std::move(name),
          "adagrad",
          {{"Param", "ParamOut"}, {"Moment", "MomentOut"}},
          {{"Moment", {0.1, 1.0}}},
          attrs,
          Lr,
          [eps](State& s, const std::vector<double>& g, const Scalars& in) {
            const double lr = in.at("LearningRate");
            auto &p = s["Param"], &m = s["Moment"];
            for (size_t i = 0; i < g.size(); ++i) {
              m[i] += g[i] * g[i];
              p[i] -= lr * g[i] / (std::sqrt(m[i]) + eps);
            }
          }};
}

Spec Rmsprop(std::string name, float eps_f, float decay_f, float momentum_f, bool centered,
             bool set_attrs) {
  const double eps = eps_f, decay = decay_f, momentum = momentum_f;
  std::vector<std::pair<std::string, std::string>> state = {
      {"Param", "ParamOut"}, {"MeanSquare", "MeanSquareOut"}, {"Moment", "MomentOut"}};
  std::map<std::string, std::pair<double, double>> init = {{"MeanSquare", {0.5, 1.5}},
                                                           {"Moment", {-0.1, 0.1}}};
  if (centered) {
    state.push_back({"MeanGrad", "MeanGradOut"});
    init["MeanGrad"] = {-0.3, 0.3};
  }
  core::AttributeMap attrs;
  if (set_attrs) attrs = {{"epsilon", eps_f}, {"decay", decay_f}, {"momentum", momentum_f}};
  if (centered) attrs["centered"] = true;
  return {std::move(name),
          "rmsprop",
          state,
          init,
          attrs,
          Lr,
          [=](State& s, const std::vector<double>& g, const Scalars& in) {
            const double lr = in.at("LearningRate");
            auto &p = s["Param"], &ms = s["MeanSquare"], &mom = s["Moment"];
            for (size_t i = 0; i < g.size(); ++i) {
              ms[i] = decay * ms[i] + (1 - decay) * g[i] * g[i];
              double denom = ms[i];
              if (centered) {
                auto& mg = s["MeanGrad"];
                mg[i] = decay * mg[i] + (1 - decay) * g[i];
                denom = ms[i] - mg[i] * mg[i];
              }
              mom[i] = momentum * mom[i] + lr * g[i] / std::sqrt(denom + eps);
              p[i] -= mom[i];
            }
          }};
}

std::vector<Spec> AllSpecs() {
  return {Sgd(),
          Momentum(0.9f, false),
          Momentum(0.8f, true),
          Adam("adam_defaults", 0.9, 0.999, 1e-8, false),
          Adam("adam", 0.8, 0.95, 1e-4, true),
          Adagrad("adagrad_defaults", 1e-6f, false),
          Adagrad("adagrad", 0.1f, true),
          Rmsprop("rmsprop_defaults", 1e-10f, 0.9f, 0.0f, false, false),
          Rmsprop("rmsprop_momentum", 1e-4f, 0.8f, 0.5f, false, true),
          Rmsprop("rmsprop_centered", 1e-6f, 0.85f, 0.3f, true, true)};
}

// Initial state of `spec` in `dtype`: Param in [-1, 1), the others in their ranges.
std::map<std::string, TestTensor> InitialState(const Spec& spec, TideDataType dtype) {
  std::map<std::string, TestTensor> s;
  unsigned seed = 11;
  for (const auto& [in, out] : spec.state) {
    auto range = spec.init.count(in) ? spec.init.at(in) : std::make_pair(-1.0, 1.0);
    s[in] = Random(kDims, dtype, range.first, range.second, seed++);
  }
  return s;
}

TestTensor Scalar(double v, TideDataType dtype) { return Values({1}, {Round(v, dtype)}, dtype); }

// The variable bound to output `out` (of input `in`): the input's own variable when in place.
std::string OutVar(const std::string& in, const std::string& out, bool in_place) {
  return in_place ? in : out;
}

// Runs kSteps steps of `spec`, feeding each step's outputs back, and checks every step's state
// against the float64 reference advanced from the same start. Returns each step's outputs.
std::vector<std::map<std::string, TestTensor>> CheckSteps(const Spec& spec, TideDataType dtype,
                                                          bool in_place) {
  std::map<std::string, TestTensor> state = InitialState(spec, dtype);
  State ref;
  for (const auto& [in, t] : state) ref[in] = t.data;
  std::vector<std::map<std::string, TestTensor>> history;
  for (int t = 1; t <= kSteps; ++t) {
    SCOPED_TRACE(spec.name + " step " + std::to_string(t) + (in_place ? " in place" : ""));
    TestTensor grad = Random(kDims, dtype, -1, 1, 100 + t);
    Scalars scalars = spec.scalars(t);
    for (auto& [name, v] : scalars) v = Round(v, dtype);
    OpTester op(spec.op);
    for (const auto& [in, out] : spec.state)
      op.Input(in, in, state.at(in)).Output(out, OutVar(in, out, in_place));
    op.Input("Grad", "grad", grad);
    for (const auto& [name, v] : scalars) op.Input(name, name, Scalar(v, dtype));
    for (const auto& [name, value] : spec.attrs) op.Attr(name, value);
    std::map<std::string, TestTensor> got = op.Run();

    spec.step(ref, grad.data, scalars);
    for (const auto& [in, out] : spec.state) {
      SCOPED_TRACE(out);
      const TestTensor& o = got.at(OutVar(in, out, in_place));
      EXPECT_EQ(o.dims, kDims);
      EXPECT_EQ(o.dtype, dtype);
      // The update must have moved the state: a no-op kernel cannot pass.
      EXPECT_NE(o.data, state.at(in).data);
      ExpectNear(o, ref.at(in), Tol(dtype), dtype == TIDE_FP64 ? 1e-12 : 1e-6);
      state[in] = o;
    }
    history.push_back(got);
  }
  return history;
}

struct Case {
  Spec spec;
  TideDataType dtype;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.spec.name << " " << core::DataTypeName(c.dtype);
}

class OptimizerStepsTest : public ::testing::TestWithParam<Case> {};

TEST_P(OptimizerStepsTest, ThreeStepsMatchFloat64Reference) {
  CheckSteps(GetParam().spec, GetParam().dtype, /*in_place=*/false);
}

TEST_P(OptimizerStepsTest, InPlaceGivesTheSameResult) {
  const Spec& spec = GetParam().spec;
  auto separate = CheckSteps(spec, GetParam().dtype, /*in_place=*/false);
  auto in_place = CheckSteps(spec, GetParam().dtype, /*in_place=*/true);
  ASSERT_EQ(separate.size(), in_place.size());
  for (size_t t = 0; t < separate.size(); ++t)
    for (const auto& [in, out] : spec.state)
      EXPECT_EQ(in_place[t].at(in).data, separate[t].at(out).data)
          << spec.name << " step " << t + 1 << ": " << out << " in place vs separate";
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (TideDataType dtype : {TIDE_FP32, TIDE_FP64})
    for (const Spec& s : AllSpecs()) cases.push_back({s, dtype});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Optimizers, OptimizerStepsTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.spec.name +
                                  (info.param.dtype == TIDE_FP32 ? "_fp32" : "_fp64");
                         });

// Fluid's optimizers make the learning rate (and Adam's beta powers may be) float32 even for
// float64 parameters; the kernels read either.
TEST(OptimizerMixedDtypes, Float64ParamsTakeFloat32Scalars) {
  for (const Spec& spec : {Sgd(), Adam("adam", 0.8, 0.95, 1e-4, true)}) {
    SCOPED_TRACE(spec.name);
    std::map<std::string, TestTensor> state = InitialState(spec, TIDE_FP64);
    TestTensor grad = Random(kDims, TIDE_FP64, -1, 1, 5);
    Scalars scalars = spec.scalars(2);
    for (auto& [name, v] : scalars) v = Round(v, TIDE_FP32);
    OpTester op(spec.op);
    for (const auto& [in, out] : spec.state) op.Input(in, in, state.at(in)).Output(out, out);
    op.Input("Grad", "grad", grad);
    for (const auto& [name, v] : scalars) op.Input(name, name, Scalar(v, TIDE_FP32));
    for (const auto& [name, value] : spec.attrs) op.Attr(name, value);
    auto got = op.Run();
    State ref;
    for (const auto& [in, t] : state) ref[in] = t.data;
    spec.step(ref, grad.data, scalars);
    for (const auto& [in, out] : spec.state) {
      EXPECT_EQ(got.at(out).dtype, TIDE_FP64) << out;
      ExpectNear(got.at(out), ref.at(in), 1e-10, 1e-12);
    }
  }
}

// Tensors large enough for the kernels to run on the CPU pool, updated in place.
TEST(OptimizerLargeTensors, PooledUpdatesMatchReference) {
  const std::vector<int64_t> dims = {256, 160};  // 40960 elements
  for (const Spec& spec : AllSpecs()) {
    SCOPED_TRACE(spec.name);
    OpTester op(spec.op);
    State ref;
    unsigned seed = 51;
    for (const auto& [in, out] : spec.state) {
      auto range = spec.init.count(in) ? spec.init.at(in) : std::make_pair(-1.0, 1.0);
      TestTensor t = Random(dims, TIDE_FP64, range.first, range.second, seed++);
      ref[in] = t.data;
      op.Input(in, in, t).Output(out, in);
    }
    TestTensor grad = Random(dims, TIDE_FP64, -1, 1, 52);
    op.Input("Grad", "grad", grad);
    Scalars scalars = spec.scalars(1);
    for (const auto& [name, v] : scalars) op.Input(name, name, Scalar(v, TIDE_FP64));
    for (const auto& [name, value] : spec.attrs) op.Attr(name, value);
    auto got = op.Run();
    spec.step(ref, grad.data, scalars);
    for (const auto& [in, out] : spec.state) ExpectNear(got.at(in), ref.at(in), 1e-10, 1e-12);
  }
}

// ---------------------------------------------------------------------------------------------
// SelectedRows gradients.

class SparseGradTest : public ::testing::TestWithParam<TideDataType> {};

// Param [5, 3]; Grad lists rows 3, 0, 3 (row 3 twice) of height 5.
SparseGrad MakeSparseGrad(TideDataType dtype) {
  SparseGrad g;
  g.height = 5;
  g.rows = {3, 0, 3};
  g.value = Random({3, 3}, dtype, -1, 1, 21);
  return g;
}

// The dense gradient a SelectedRows stands for: listed rows summed, the others 0.
std::vector<double> Densify(const SparseGrad& g, int64_t row_size) {
  std::vector<double> dense(static_cast<size_t>(g.height * row_size), 0.0);
  for (size_t i = 0; i < g.rows.size(); ++i)
    for (int64_t j = 0; j < row_size; ++j)
      dense[g.rows[i] * row_size + j] += g.value.data[i * row_size + j];
  return dense;
}

TEST_P(SparseGradTest, SgdUpdatesListedRowsAndAccumulatesRepeats) {
  const TideDataType dtype = GetParam();
  TestTensor param = Random({5, 3}, dtype, -1, 1, 20);
  const double lr = Round(0.1, dtype);
  SparseGrad g = MakeSparseGrad(dtype);
  std::vector<double> want = param.data;
  for (int64_t j = 0; j < 3; ++j) {
    want[0 * 3 + j] -= lr * g.value.data[1 * 3 + j];
    want[3 * 3 + j] -= lr * (g.value.data[0 * 3 + j] + g.value.data[2 * 3 + j]);
  }
  for (bool in_place : {false, true}) {
    SCOPED_TRACE(in_place ? "in place" : "separate output");
    const std::string out = in_place ? "Param" : "param_out";
    auto got = RunWithSparseGrad("sgd", {{"Param", param}, {"LearningRate", Scalar(lr, dtype)}}, g,
                                 {{"ParamOut", out}});
    const TestTensor& p = got.at(out);
    EXPECT_EQ(p.dims, (std::vector<int64_t>{5, 3}));
    ExpectNear(p, want, Tol(dtype), 1e-7);
    // Rows 1, 2 and 4 are not listed: exactly as they were (copied through when not in place).
    for (int64_t r : {1, 2, 4})
      for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(p.data[r * 3 + j], param.data[r * 3 + j]);
  }
}

TEST_P(SparseGradTest, SgdRejectsRowsOutsideTheHeight) {
  const TideDataType dtype = GetParam();
  TestTensor param = Random({5, 3}, dtype, -1, 1, 20);
  SparseGrad g = MakeSparseGrad(dtype);
  g.rows = {1, 5, 2};
  ExpectError(
      [&] {
        RunWithSparseGrad("sgd", {{"Param", param}, {"LearningRate", Scalar(0.1, dtype)}}, g,
                          {{"ParamOut", "Param"}});
      },
      {"sgd", "Grad ('grad')", "row 5", "height 5"});
  g.rows = {1, -1, 2};
  ExpectError(
      [&] {
        RunWithSparseGrad("sgd", {{"Param", param}, {"LearningRate", Scalar(0.1, dtype)}}, g,
                          {{"ParamOut", "Param"}});
      },
      {"sgd", "Grad ('grad')", "row -1"});
}

TEST_P(SparseGradTest, SgdRejectsAHeightOtherThanParamRows) {
  const TideDataType dtype = GetParam();
  TestTensor param = Random({5, 3}, dtype, -1, 1, 20);
  SparseGrad g = MakeSparseGrad(dtype);
  g.height = 6;
  ExpectError(
      [&] {
        RunWithSparseGrad("sgd", {{"Param", param}, {"LearningRate", Scalar(0.1, dtype)}}, g,
                          {{"ParamOut", "Param"}});
      },
      {"sgd", "height 6", "5 rows"});
  g.height = 5;
  g.value = Random({3, 2}, dtype, -1, 1, 21);  // rows of 2, Param's hold 3
  ExpectError(
      [&] {
        RunWithSparseGrad("sgd", {{"Param", param}, {"LearningRate", Scalar(0.1, dtype)}}, g,
                          {{"ParamOut", "Param"}});
      },
      {"sgd", "[3, 2]", "3 elements"});
}

// Non-lazy sparse updates equal the dense update with the densified gradient (for Adam,
// momentum and RMSProp the unlisted rows' state still decays; Adagrad leaves them as they are,
// which the zero gradient reproduces).
TEST_P(SparseGradTest, SparseGradEqualsDenseUpdateOfItsDenseForm) {
  const TideDataType dtype = GetParam();
  for (const Spec& spec : {Momentum(0.9f, false), Momentum(0.8f, true),
                           Adam("adam", 0.8, 0.95, 1e-4, true), Adagrad("adagrad", 0.1f, true),
                           Rmsprop("rmsprop_centered", 1e-6f, 0.85f, 0.3f, true, true)}) {
    SCOPED_TRACE(spec.name);
    std::map<std::string, TestTensor> inputs;
    unsigned seed = 31;
    for (const auto& [in, out] : spec.state) {
      auto range = spec.init.count(in) ? spec.init.at(in) : std::make_pair(-1.0, 1.0);
      inputs[in] = Random({5, 3}, dtype, range.first, range.second, seed++);
    }
    Scalars scalars = spec.scalars(2);
    for (auto& [name, v] : scalars) {
      v = Round(v, dtype);
      inputs[name] = Scalar(v, dtype);
    }
    SparseGrad g = MakeSparseGrad(dtype);
    std::vector<std::pair<std::string, std::string>> outs;
    for (const auto& [in, out] : spec.state) outs.push_back({out, in});  // in place
    auto got = RunWithSparseGrad(spec.op, inputs, g, outs, spec.attrs);
    State ref;
    for (const auto& [in, out] : spec.state) ref[in] = inputs.at(in).data;
    spec.step(ref, Densify(g, 3), scalars);
    for (const auto& [in, out] : spec.state) {
      SCOPED_TRACE(out);
      ExpectNear(got.at(in), ref.at(in), Tol(dtype), dtype == TIDE_FP64 ? 1e-12 : 1e-6);
    }
    if (spec.op == "adagrad")  // unlisted rows untouched, bit for bit
      for (int64_t r : {1, 2, 4})
        for (int64_t j = 0; j < 3; ++j)
          EXPECT_EQ(got.at("Param").data[r * 3 + j], inputs.at("Param").data[r * 3 + j]);
    if (spec.op == "adam")  // unlisted rows still move: their moments decay
      EXPECT_NE(got.at("Param").data[1 * 3], inputs.at("Param").data[1 * 3]);
  }
}

// Fluid's sparse Adagrad touches only the listed rows: an unlisted row with a zero moment stays
// as it is even with epsilon = 0 (a zero gradient there would give 0 / 0).
TEST_P(SparseGradTest, SparseAdagradLeavesUnlistedRowsAlone) {
  const TideDataType dtype = GetParam();
  Spec spec = Adagrad("adagrad", 0.0f, true);
  TestTensor param = Random({5, 3}, dtype, -1, 1, 61);
  TestTensor moment = Random({5, 3}, dtype, 0.1, 1, 62);
  for (int64_t j = 0; j < 3; ++j) moment.data[1 * 3 + j] = 0;  // row 1 is not listed
  const double lr = Round(0.05, dtype);
  SparseGrad g = MakeSparseGrad(dtype);
  auto got = RunWithSparseGrad(
      "adagrad", {{"Param", param}, {"Moment", moment}, {"LearningRate", Scalar(lr, dtype)}}, g,
      {{"ParamOut", "Param"}, {"MomentOut", "Moment"}}, spec.attrs);
  State ref = {{"Param", param.data}, {"Moment", moment.data}};
  spec.step(ref, Densify(g, 3), {{"LearningRate", lr}});
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t j = 0; j < 3; ++j) {
      const size_t k = static_cast<size_t>(r * 3 + j);
      if (r == 0 || r == 3) {
        EXPECT_NEAR(got.at("Param").data[k], ref["Param"][k], 1e-5 * std::fabs(ref["Param"][k]));
        EXPECT_NEAR(got.at("Moment").data[k], ref["Moment"][k], 1e-5 * ref["Moment"][k]);
      } else {
        EXPECT_EQ(got.at("Param").data[k], param.data[k]) << "row " << r;
        EXPECT_EQ(got.at("Moment").data[k], moment.data[k]) << "row " << r;
      }
    }
}

TEST_P(SparseGradTest, LazyAdamUpdatesOnlyListedRows) {
  const TideDataType dtype = GetParam();
  Spec spec = Adam("adam", 0.8, 0.95, 1e-4, true);
  spec.attrs["lazy_mode"] = true;
  std::map<std::string, TestTensor> inputs;
  unsigned seed = 41;
  for (const auto& [in, out] : spec.state) {
    auto range = spec.init.count(in) ? spec.init.at(in) : std::make_pair(-1.0, 1.0);
    inputs[in] = Random({5, 3}, dtype, range.first, range.second, seed++);
  }
  Scalars scalars = spec.scalars(1);
  for (auto& [name, v] : scalars) {
    v = Round(v, dtype);
    inputs[name] = Scalar(v, dtype);
  }
  SparseGrad g = MakeSparseGrad(dtype);
  for (bool in_place : {false, true}) {
    SCOPED_TRACE(in_place ? "in place" : "separate outputs");
    std::vector<std::pair<std::string, std::string>> outs;
    for (const auto& [in, out] : spec.state) outs.push_back({out, in_place ? in : out});
    auto got = RunWithSparseGrad("adam", inputs, g, outs, spec.attrs);
    State ref;
    for (const auto& [in, out] : spec.state) ref[in] = inputs.at(in).data;
    spec.step(ref, Densify(g, 3), scalars);
    for (const auto& [in, out] : spec.state) {
      SCOPED_TRACE(out);
      const TestTensor& o = got.at(in_place ? in : out);
      for (int64_t r = 0; r < 5; ++r)
        for (int64_t j = 0; j < 3; ++j) {
          const size_t k = static_cast<size_t>(r * 3 + j);
          if (r == 0 || r == 3)
            EXPECT_NEAR(o.data[k], ref.at(in)[k], Tol(dtype) * std::fabs(ref.at(in)[k]) + 1e-7)
                << "row " << r;
          else
            EXPECT_EQ(o.data[k], inputs.at(in).data[k]) << "row " << r << " is not listed";
        }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, SparseGradTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParamName);

// ---------------------------------------------------------------------------------------------
// Errors: the op and the variables are named.

TEST(OptimizerErrors, LearningRateMustHoldOneElement) {
  ExpectError(
      [] {
        OpTester("sgd")
            .Input("Param", "p", Random(kDims, TIDE_FP32))
            .Input("Grad", "g", Random(kDims, TIDE_FP32))
            .Input("LearningRate", "lr", Values({2}, {0.1, 0.2}))
            .Output("ParamOut", "p")
            .Run();
      },
      {"sgd", "LearningRate ('lr')", "1 element", "[2]"});
}

TEST(OptimizerErrors, StateDimsMustMatchParam) {
  ExpectError(
      [] {
        OpTester("adam")
            .Input("Param", "p", Random({4, 3}, TIDE_FP32))
            .Input("Grad", "g", Random({4, 3}, TIDE_FP32))
            .Input("Moment1", "m1", Random({3, 4}, TIDE_FP32))
            .Input("Moment2", "m2", Random({4, 3}, TIDE_FP32))
            .Input("LearningRate", "lr", Values({1}, {0.1}))
            .Input("Beta1Pow", "b1", Values({1}, {0.9}))
            .Input("Beta2Pow", "b2", Values({1}, {0.999}))
            .Output("ParamOut", "p")
            .Output("Moment1Out", "m1")
            .Output("Moment2Out", "m2")
            .Run();
      },
      {"adam", "Moment1 ('m1')", "[3, 4]", "Param ('p')", "[4, 3]"});
  ExpectError(
      [] {
        OpTester("momentum")
            .Input("Param", "p", Random({4, 3}, TIDE_FP32))
            .Input("Grad", "g", Random({12}, TIDE_FP32))
            .Input("Velocity", "v", Random({4, 3}, TIDE_FP32))
            .Input("LearningRate", "lr", Values({1}, {0.1}))
            .Output("ParamOut", "p")
            .Output("VelocityOut", "v")
            .Attr("mu", 0.9f)
            .Run();
      },
      {"momentum", "Grad ('g')", "[12]", "[4, 3]"});
}

TEST(OptimizerErrors, GradDtypeMustMatchParam) {
  ExpectError(
      [] {
        OpTester("adagrad")
            .Input("Param", "p", Random(kDims, TIDE_FP32))
            .Input("Grad", "g", Random(kDims, TIDE_FP64))
            .Input("Moment", "m", Random(kDims, TIDE_FP32, 0.1, 1))
            .Input("LearningRate", "lr", Values({1}, {0.1}))
            .Output("ParamOut", "p")
            .Output("MomentOut", "m")
            .Run();
      },
      {"adagrad", "Grad ('g')", "float64", "float32"});
}

TEST(OptimizerErrors, MomentumNeedsMu) {
  ExpectError(
      [] {
        OpTester("momentum")
            .Input("Param", "p", Random(kDims, TIDE_FP32))
            .Input("Grad", "g", Random(kDims, TIDE_FP32))
            .Input("Velocity", "v", Random(kDims, TIDE_FP32))
            .Input("LearningRate", "lr", Values({1}, {0.1}))
            .Output("ParamOut", "p")
            .Output("VelocityOut", "v")
            .Run();
      },
      {"momentum", "mu"});
}

TEST(OptimizerErrors, CenteredRmspropNeedsMeanGrad) {
  ExpectError(
      [] {
        OpTester("rmsprop")
            .Input("Param", "p", Random(kDims, TIDE_FP32))
            .Input("Grad", "g", Random(kDims, TIDE_FP32))
            .Input("MeanSquare", "ms", Random(kDims, TIDE_FP32, 0.5, 1.5))
            .Input("Moment", "mom", Random(kDims, TIDE_FP32))
            .Input("LearningRate", "lr", Values({1}, {0.1}))
            .Output("ParamOut", "p")
            .Output("MomentOut", "mom")
            .Output("MeanSquareOut", "ms")
            .Attr("centered", true)
            .Run();
      },
      {"rmsprop", "centered", "MeanGrad"});
}

TEST(OptimizerErrors, AdamRejectsBeta1PowOfOne) {
  ExpectError(
      [] {
        OpTester("adam")
            .Input("Param", "p", Random(kDims, TIDE_FP32))
            .Input("Grad", "g", Random(kDims, TIDE_FP32))
            .Input("Moment1", "m1", Random(kDims, TIDE_FP32))
            .Input("Moment2", "m2", Random(kDims, TIDE_FP32, 0.1, 1))
            .Input("LearningRate", "lr", Values({1}, {0.1}))
            .Input("Beta1Pow", "b1", Values({1}, {1.0}))
            .Input("Beta2Pow", "b2", Values({1}, {0.999}))
            .Output("ParamOut", "p")
            .Output("Moment1Out", "m1")
            .Output("Moment2Out", "m2")
            .Run();
      },
      {"adam", "Beta1Pow ('b1')", "is 1"});
}

}  // namespace
}  // namespace tide::test
