// sdk_host_fn_test.cc: TIDE_HOST_FN in plugin.hpp calls a host function only when the host that
// loaded the plugin has it: against a host table of an older minor (a smaller struct_size) it is
// an UNIMPLEMENTED error naming the function, never a call through a missing pointer.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <tide/plugin.hpp>

#include "core/host/host_api.h"

namespace {

struct HostSwap {  // the plugin's host slot pointed at `table` for one test
  explicit HostSwap(const TideHostApi* table) : saved(tide::detail::HostSlot()) {
    tide::detail::HostSlot() = table;
  }
  ~HostSwap() { tide::detail::HostSlot() = saved; }
  const TideHostApi* saved;
};

TEST(SdkHostFn, CallsAFunctionTheHostHas) {
  HostSwap swap(tide::core::GetHostApi());
  auto fn = TIDE_HOST_FN(Scope_FindLocalVar);
  EXPECT_EQ(fn, tide::core::GetHostApi()->Scope_FindLocalVar);
}

TEST(SdkHostFn, AnOlderHostWithoutTheFunctionIsAnErrorNamingIt) {
  TideHostApi older = *tide::core::GetHostApi();
  older.struct_size = TIDE_STRUCT_SIZE(TideHostApi, Scope_DropKids);  // ends with the scopes
  HostSwap swap(&older);
  try {
    TIDE_HOST_FN(KernelContext_State);
    FAIL() << "no error";
  } catch (const tide::Error& e) {
    EXPECT_EQ(e.code(), TIDE_UNIMPLEMENTED);
    EXPECT_NE(std::string(e.what()).find("KernelContext_State"), std::string::npos) << e.what();
  }
  EXPECT_NE(TIDE_HOST_FN(Scope_FindLocalVar), nullptr);  // what the older host has still works
}

// The table is complete: every entry after the version fields is a function the core set (a
// field added to the header but not to host_api.cc would be NULL, and a plugin calling it would
// crash).
TEST(SdkHostFn, TheHostSetsEveryEntry) {
  const TideHostApi* host = tide::core::GetHostApi();
  EXPECT_EQ(host->struct_size, sizeof(TideHostApi));
  const size_t first = offsetof(TideHostApi, Status_Create);
  ASSERT_EQ((sizeof(TideHostApi) - first) % sizeof(void (*)()), 0u);
  const size_t n = (sizeof(TideHostApi) - first) / sizeof(void (*)());
  // The count the ABI was frozen with (115), plus those appended since, each saying so here:
  // Registrar_AddProgramPass, Buffer_Alloc, Buffer_Free (issue 33).
  EXPECT_EQ(n, 118u);
  for (size_t i = 0; i < n; ++i) {
    void (*fn)() = nullptr;
    std::memcpy(&fn, reinterpret_cast<const char*>(host) + first + i * sizeof(fn), sizeof(fn));
    EXPECT_NE(fn, nullptr) << "host table entry #" << i << " (after abi_minor) is not set";
  }
}

}  // namespace

// --- LoD rank tables and LoD levels in shape inference (DynamicRNN's needs) ---
#include "core/framework/variable.h"
#include "core/ir/program_desc.h"
#include "core/passes/compile_infer_shape.h"

namespace {

TEST(SdkRankTable, AVariableHoldsARankTableViewedAsAnInt64Tensor) {
  HostSwap swap(tide::core::GetHostApi());
  tide::core::Variable var;
  tide::Variable v(reinterpret_cast<TideVariable*>(&var));
  tide::Tensor table = v.GetRankTable();
  EXPECT_TRUE(v.IsRankTable());
  EXPECT_EQ(var.type(), TIDE_VAR_LOD_RANK_TABLE);
  // What a plugin writes is what the core holds (and what a second lookup sees).
  table.Resize({3, 2});
  const uint64_t coarse[] = {0, 2, 3};
  const uint64_t* levels[] = {coarse};
  const size_t lengths[] = {3};
  tide::ThrowIfError(tide::Host().Tensor_SetLoD(table.c(), levels, lengths, 1));
  const auto& held = var.Get<tide::core::LoDRankTable>().table;
  EXPECT_EQ(held.dims().ToVector(), (std::vector<int64_t>{3, 2}));
  ASSERT_EQ(held.lod().size(), 1u);
  EXPECT_EQ(held.lod()[0], (std::vector<uint64_t>{0, 2, 3}));
  EXPECT_EQ(v.GetRankTable().dims(), (tide::Dims{3, 2}));
}

TEST(SdkRankTable, ATensorVariableIsNotARankTable) {
  HostSwap swap(tide::core::GetHostApi());
  tide::core::Variable var;
  var.GetMutable<tide::core::LoDTensor>();
  tide::Variable v(reinterpret_cast<TideVariable*>(&var));
  try {
    v.GetRankTable();
    FAIL() << "no error";
  } catch (const tide::Error& e) {
    EXPECT_NE(std::string(e.what()).find("LOD_RANK_TABLE"), std::string::npos) << e.what();
  }
}

TEST(SdkInferShape, LoDLevelsAreReadAndSetAtCompileTime) {
  HostSwap swap(tide::core::GetHostApi());
  tide::core::ProgramDesc program;
  tide::core::BlockDesc* block = program.MutableBlock(0);
  block->Var("x")->set_lod_level(2);
  block->Var("y");
  block->Var("table")->set_type(TIDE_VAR_LOD_RANK_TABLE);
  tide::core::OpDesc op("any", {{"X", {"x"}}, {"T", {"table"}}}, {{"Out", {"y"}}}, {});
  tide::core::CompileTimeInferShapeContext c(op, block);
  tide::InferShapeContext ctx(&c);
  EXPECT_EQ(ctx.InputLoDLevel("X"), 2);
  EXPECT_EQ(ctx.InputLoDLevel("T"), -1);        // not a tensor
  EXPECT_EQ(ctx.InputLoDLevel("Missing"), -1);  // absent
  ctx.SetOutputLoDLevel("Out", 1);
  EXPECT_EQ(block->FindVar("y")->lod_level(), 1);
}

}  // namespace

// --- A kernel's inputs are read-only views ---
namespace {

TEST(SdkTensor, AViewOfAConstTensorRefusesEveryWrite) {
  HostSwap swap(tide::core::GetHostApi());
  tide::core::LoDTensor held;
  held.Resize(tide::core::DDim({2, 3}));
  const TideTensor* c = reinterpret_cast<const TideTensor*>(&held);
  tide::Tensor in(c);
  EXPECT_TRUE(in.read_only());
  EXPECT_EQ(in.dims(), (tide::Dims{2, 3}));  // reads work
  tide::Tensor copy = in;                    // and a copy stays read-only
  auto expect_refused = [](const std::function<void()>& f, const char* what) {
    try {
      f();
      ADD_FAILURE() << what << " was allowed";
    } catch (const tide::Error& e) {
      EXPECT_EQ(e.code(), TIDE_FAILED_PRECONDITION);
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_refused([&] { copy.Resize({4}); }, "Resize");
  expect_refused([&] { copy.set_layout(TIDE_LAYOUT_NCHW); }, "set_layout");
  expect_refused([&] { copy.set_lod({{0, 2}}); }, "set_lod");
  expect_refused([&] { copy.mutable_data<float>(tide::Place()); }, "mutable_data");
  EXPECT_EQ(held.dims().ToVector(), (std::vector<int64_t>{2, 3}));  // untouched
  tide::Tensor out(reinterpret_cast<TideTensor*>(&held));           // a non-const view writes
  EXPECT_FALSE(out.read_only());
  out.Resize({6});
  EXPECT_EQ(held.dims().ToVector(), (std::vector<int64_t>{6}));
}

}  // namespace
