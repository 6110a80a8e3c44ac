// fit_a_line_forward.cc: Fluid's linear-regression forward pass (data x[13], fc as mul +
// elementwise_add, square_error_cost, mean) built as a ProgramDesc in C++ and run on random
// data through the plugins found on the plugin path. Prints the cost and the plugins used.
#include <cstdio>
#include <map>
#include <random>
#include <set>

#include "core/executor/executor.h"
#include "core/host/initialize.h"
#include "core/host/loader.h"
#include "core/memory/memory.h"
#include "core/passes/compile_infer_shape.h"
#include "core/platform/flags.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"

using namespace tide::core;  // NOLINT: an example

namespace {

VarDesc* Var(BlockDesc* b, const std::string& name, std::vector<int64_t> shape,
             bool persistable = false) {
  VarDesc* v = b->Var(name);
  v->set_dtype(TIDE_FP32);
  v->set_shape(std::move(shape));
  v->set_persistable(persistable);
  return v;
}

// Appends an op, checks it against its registered proto and infers output shapes, as a
// program builder does.
void Op(BlockDesc* b, const std::string& type, VariableNameMap in, VariableNameMap out,
        AttributeMap attrs = {}) {
  OpDesc* op = b->AppendOp();
  *op = OpDesc(type, std::move(in), std::move(out), std::move(attrs));
  op->set_block(b);
  const OpInfo& info = Registry::Global().GetOp(type);
  CheckOpDesc(info, op);
  InferShapeAtCompileTime(info, *op, b);
}

LoDTensor HostTensor(const Place& cpu, std::vector<int64_t> dims, std::mt19937& rng) {
  LoDTensor t;
  t.Resize(DDim(dims));
  float* p = t.mutable_data<float>(cpu);
  std::normal_distribution<float> dist;
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  InitFromArgs(&argc, &argv);
  Initialize();  // loads the plugins on the plugin path
  const Place cpu("cpu", 0);
  const int64_t batch = 20;

  ProgramDesc startup, main_prog;
  BlockDesc* s = startup.MutableBlock(0);
  BlockDesc* m = main_prog.MutableBlock(0);
  for (BlockDesc* b : {s, m}) {
    Var(b, "fc_0.w_0", {13, 1}, true);
    Var(b, "fc_0.b_0", {1}, true);
  }
  Op(s, "uniform_random", {}, {{"Out", {"fc_0.w_0"}}},
     {{"shape", std::vector<int64_t>{13, 1}}, {"min", -0.5f}, {"max", 0.5f}, {"seed", 7}});
  Op(s, "fill_constant", {}, {{"Out", {"fc_0.b_0"}}},
     {{"shape", std::vector<int64_t>{1}}, {"value", 0.0f}});

  Var(m, "x", {-1, 13});
  Var(m, "y", {-1, 1});
  for (const char* t : {"fc_0.tmp_0", "fc_0.tmp_1", "cost.tmp_0", "cost", "avg_cost"})
    Var(m, t, {});
  Op(m, "mul", {{"X", {"x"}}, {"Y", {"fc_0.w_0"}}}, {{"Out", {"fc_0.tmp_0"}}});
  Op(m, "elementwise_add", {{"X", {"fc_0.tmp_0"}}, {"Y", {"fc_0.b_0"}}}, {{"Out", {"fc_0.tmp_1"}}});
  Op(m, "elementwise_sub", {{"X", {"fc_0.tmp_1"}}, {"Y", {"y"}}}, {{"Out", {"cost.tmp_0"}}});
  Op(m, "square", {{"X", {"cost.tmp_0"}}}, {{"Out", {"cost"}}});
  Op(m, "mean", {{"X", {"cost"}}}, {{"Out", {"avg_cost"}}});
  std::printf("%s", main_prog.ToString().c_str());

  Executor exe(cpu);
  Scope scope;
  exe.Run(startup, &scope, {}, {});
  std::mt19937 rng(1);
  auto prepared = exe.Prepare(main_prog, 0, {"x", "y"}, {"avg_cost"});
  for (int step = 0; step < 3; ++step) {
    auto out = exe.Run(*prepared, &scope,
                       {HostTensor(cpu, {batch, 13}, rng), HostTensor(cpu, {batch, 1}, rng)});
    std::printf("step %d: avg_cost = %.6f\n", step, out.at(0).data<float>()[0]);
  }

  std::set<std::string> used;
  for (size_t i = 0; i < prepared->num_ops(); ++i) used.insert(prepared->op(i).info().plugin);
  std::printf("plugins used:\n");
  for (const auto& r : PluginManager::Global().Records())
    if (used.count(r.name) || !r.devices.empty())
      std::printf("  %s %s (%s)\n", r.name.c_str(), r.version.c_str(), r.path.c_str());
  std::printf("host memory in use: %zu bytes\n", memory::Used(cpu));
  return 0;
}
