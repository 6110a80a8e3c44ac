// no_device.cc: a device plugin that finds no device and says why (tests only): place kind
// "nodev", 0 devices, TideDeviceDef.unavailable_reason through tide::Device::UnavailableReason.
// Using a nodev place fails naming the kind, this file and the reason.
#include <tide/plugin.hpp>

namespace {

class NoDevice : public tide::Device {
 public:
  const char* kind() const override { return "nodev"; }
  int32_t Count() override { return 0; }
  const char* UnavailableReason() const override {
    return "no nodev card on the PCI bus (is the nodev driver loaded?)";
  }
  void* Alloc(int32_t, size_t) override { TIDE_THROW(TIDE_UNAVAILABLE, "nodev: no device"); }
  void Free(int32_t, void*, size_t) override {}
  void MemoryInfo(int32_t, size_t* total, size_t* available) override { *total = *available = 0; }
  void* CreateContext(int32_t) override { TIDE_THROW(TIDE_UNAVAILABLE, "nodev: no device"); }
  void DestroyContext(void*) override {}
  void Synchronize(void*) override {}
  void Copy(void*, TideCopyKind, void*, const void*, size_t) override {
    TIDE_THROW(TIDE_UNAVAILABLE, "nodev: no device");
  }
};

}  // namespace

TIDE_ON_REGISTER([](tide::Registrar& r) { r.AddDevice(std::make_unique<NoDevice>()); });
TIDE_PLUGIN("no_device", "0.0.1", "a device plugin that finds no device and says why, for tests");
