// sdk_host_fn_test.cc: TIDE_HOST_FN in plugin.hpp calls a host function only when the host that
// loaded the plugin has it: against a host table of an older minor (a smaller struct_size) it is
// an UNIMPLEMENTED error naming the function, never a call through a missing pointer.
#include <gtest/gtest.h>
#include <tide/plugin.hpp>

#include "core/plugin/host_api.h"

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
  older.struct_size = TIDE_STRUCT_SIZE(TideHostApi, Tensor_AdoptData);  // before the step scopes
  HostSwap swap(&older);
  try {
    TIDE_HOST_FN(Scope_FindLocalVar);
    FAIL() << "no error";
  } catch (const tide::Error& e) {
    EXPECT_EQ(e.code(), TIDE_UNIMPLEMENTED);
    EXPECT_NE(std::string(e.what()).find("Scope_FindLocalVar"), std::string::npos) << e.what();
  }
  EXPECT_NE(TIDE_HOST_FN(Tensor_AdoptData), nullptr);  // what the older host has still works
}

}  // namespace
