// Tests what Registrar_AddDevice refuses in a device table, naming the device and the entry:
// entries that only work together (host_alloc/host_free, the six event functions, event timing
// and the events it times, a tracer's four functions) given in part, and a tracer table older
// than ABI 1.0's. A table with the required entries only registers, and so does a 1.0-sized one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/platform/status.h"
#include "core/plugin/registrar.h"

namespace tide::core {
namespace {

using ::testing::HasSubstr;

// Never called: registration only looks at which entries are there.
TideStatus* NoStatus(void*) { return nullptr; }
TideStatus* NoEmit(void*, TideTraceEmitFn, void*) { return nullptr; }
TideStatus* NoClock(void*, uint64_t*) { return nullptr; }

TideDeviceDef Required() {
  TideDeviceDef d{};
  d.struct_size = sizeof(TideDeviceDef);
  d.kind = "regtest";
  d.contract = TIDE_DEVICE_CONTRACT;
  d.device_count = [](void*) -> int32_t { return 1; };
  d.alloc = [](void*, int32_t, size_t, void**) -> TideStatus* { return nullptr; };
  d.free = [](void*, int32_t, void*, size_t) {};
  d.context_create = [](void*, int32_t, void**) -> TideStatus* { return nullptr; };
  d.context_destroy = [](void*, void*) {};
  d.synchronize = [](void*, void*) -> TideStatus* { return nullptr; };
  d.copy = [](void*, void*, TideCopyKind, void*, const void*, size_t) -> TideStatus* {
    return nullptr;
  };
  return d;
}

void AddEvents(TideDeviceDef* d) {
  d->event_create = [](void*, void*, void**) -> TideStatus* { return nullptr; };
  d->event_destroy = [](void*, void*) {};
  d->event_record = [](void*, void*, void*) -> TideStatus* { return nullptr; };
  d->event_query = [](void*, void*, int32_t*) -> TideStatus* { return nullptr; };
  d->event_synchronize = [](void*, void*) -> TideStatus* { return nullptr; };
  d->context_wait_event = [](void*, void*, void*) -> TideStatus* { return nullptr; };
}

// The message of the status Registrar_AddDevice returned; "" when it registered.
std::string Register(const TideDeviceDef& d) {
  TideRegistrar r;
  r.plugin = "regtest";
  r.plugin_file = "libregtest.so";
  std::unique_ptr<TideStatus> s(RegistrarAddDevice(&r, &d));
  return s ? s->message : "";
}

TEST(DeviceRegistration, TheRequiredEntriesAloneRegister) {
  EXPECT_EQ(Register(Required()), "");
  TideDeviceDef d = Required();
  AddEvents(&d);
  d.event_elapsed_ms = [](void*, void*, void*, float*) -> TideStatus* { return nullptr; };
  EXPECT_EQ(Register(d), "");
}

TEST(DeviceRegistration, AMissingRequiredEntryIsNamed) {
  TideDeviceDef d = Required();
  d.copy = nullptr;
  EXPECT_THAT(Register(d), HasSubstr("device 'regtest' has no copy function"));
}

TEST(DeviceRegistration, HostAllocWithoutHostFreeIsRefused) {
  TideDeviceDef d = Required();
  d.host_alloc = [](void*, size_t, void**) -> TideStatus* { return nullptr; };
  EXPECT_THAT(Register(d), HasSubstr("has only one of host_alloc and host_free"));
}

TEST(DeviceRegistration, PartOfTheEventFunctionsIsRefused) {
  TideDeviceDef d = Required();
  AddEvents(&d);
  d.event_query = nullptr;
  EXPECT_THAT(Register(d), HasSubstr("device 'regtest' has 5 of the 6 event functions"));
}

TEST(DeviceRegistration, EventTimingWithoutEventsIsRefused) {
  TideDeviceDef d = Required();
  d.event_elapsed_ms = [](void*, void*, void*, float*) -> TideStatus* { return nullptr; };
  EXPECT_THAT(Register(d),
              HasSubstr("device 'regtest' has event_elapsed_ms but not the 6 event functions"));
}

TEST(DeviceRegistration, ATracerWithoutAllFourFunctionsIsRefused) {
  TideDeviceTracer t{sizeof(TideDeviceTracer), NoStatus, NoStatus, NoEmit, NoClock};
  TideDeviceDef d = Required();
  d.tracer = &t;
  EXPECT_EQ(Register(d), "");
  t.collect = nullptr;
  EXPECT_THAT(Register(d), HasSubstr("device 'regtest' has a tracer without all of start, "
                                     "stop, collect and now_ns"));
}

TEST(DeviceRegistration, ATracerTableOlderThanTheAbiIsRefused) {
  TideDeviceTracer t{sizeof(TideDeviceTracer), NoStatus, NoStatus, NoEmit, NoClock};
  t.struct_size = TIDE_STRUCT_SIZE(TideDeviceTracer, collect);
  TideDeviceDef d = Required();
  d.tracer = &t;
  EXPECT_THAT(Register(d), HasSubstr("TideDeviceTracer.struct_size"));
  EXPECT_THAT(Register(d), HasSubstr("is smaller than ABI 1.0's"));
}

// ABI 1.1 appended unavailable_reason; a 1.0 plugin's table ends at launch_host_func. It registers,
// and the core reads no field past its struct_size (what lies there is not the plugin's).
TEST(DeviceRegistration, AnAbi10TableRegistersAndItsMissingReasonIsNotRead) {
  TideDeviceDef d = Required();
  d.unavailable_reason = [](void*) -> const char* { return "no regtest card"; };
  d.struct_size = TIDE_STRUCT_SIZE(TideDeviceDef, launch_host_func);
  TideRegistrar r;
  r.plugin = "regtest";
  r.plugin_file = "libregtest.so";
  std::unique_ptr<TideStatus> s(RegistrarAddDevice(&r, &d));
  ASSERT_EQ(s, nullptr) << s->message;
  ASSERT_EQ(r.staged.devices.size(), 1u);
  EXPECT_EQ(r.staged.devices[0]->def.unavailable_reason, nullptr);

  d.struct_size = sizeof(TideDeviceDef);  // a 1.1 table's reason is kept
  TideRegistrar r11;
  r11.plugin = "regtest";
  r11.plugin_file = "libregtest.so";
  s.reset(RegistrarAddDevice(&r11, &d));
  ASSERT_EQ(s, nullptr) << s->message;
  ASSERT_NE(r11.staged.devices[0]->def.unavailable_reason, nullptr);
  EXPECT_STREQ(r11.staged.devices[0]->def.unavailable_reason(nullptr), "no regtest card");
}

}  // namespace
}  // namespace tide::core
