// contract_probe.cc: the device-contract checks. Each keeps the device's stream busy with large
// device-to-device copies, then does what the contract lets the core do at once (change a host
// buffer right after `copy` returns; free a block a queued copy still reads), then reads back
// what the device got. Through the core's own paths (DeviceContext::Copy, FreeDeviceMemory), so
// a device declaring contract 1 is checked with the synchronisation the core adds for it.
#include "core/device/contract_probe.h"

#include <cstring>
#include <memory>

#include "core/device/device_context.h"
#include "core/platform/status.h"

namespace tide::core {
namespace {

constexpr size_t kBusyBytes = size_t(32) << 20;  // per busy copy: milliseconds on any device
constexpr int kBusyCopies = 4;
constexpr size_t kProbeBytes = size_t(1) << 20;

// A block of the place's device memory, given back (through the core's free path) when dropped.
class DeviceBlock {
 public:
  DeviceBlock(const DeviceInfo& dev, const Place& place, size_t size) : dev_(dev), place_(place), size_(size) {
    CallPlugin([&] { return dev.def.alloc(dev.def.self, place.device, size, &ptr_); },
               [&] { return StrCat("allocating ", size, " bytes on ", place.ToString()); }, dev.plugin_file);
    TIDE_ENFORCE(ptr_, "device plugin ", dev.plugin_file, " returned no memory for ", size, " bytes");
  }
  ~DeviceBlock() { Free(); }
  void Free() {
    if (ptr_) FreeDeviceMemory(dev_, place_, ptr_, size_);
    ptr_ = nullptr;
  }
  void* get() const { return ptr_; }

 private:
  const DeviceInfo& dev_;
  Place place_;
  size_t size_;
  void* ptr_ = nullptr;
};

std::vector<unsigned char> Pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed) % 251);
  return v;
}

// Queues large copies so that what is queued next waits behind them.
void MakeBusy(DeviceContext* ctx, const DeviceBlock& a, const DeviceBlock& b) {
  for (int i = 0; i < kBusyCopies; ++i) ctx->Copy(TIDE_COPY_DEVICE_TO_DEVICE, b.get(), a.get(), kBusyBytes);
}

std::string FirstMismatch(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return StrCat("byte ", i, " of ", want.size(), " is ", int(got[i]), ", want ", int(want[i]));
  return "";
}

std::vector<unsigned char> ReadBack(DeviceContext* ctx, const DeviceBlock& block, size_t n) {
  std::vector<unsigned char> out(n);
  ctx->Synchronize();
  ctx->Copy(TIDE_COPY_DEVICE_TO_HOST, out.data(), block.get(), n);
  ctx->Synchronize();
  return out;
}

ContractCheck CheckCopy(DeviceContext* ctx, const DeviceInfo& dev, const Place& place) {
  ContractCheck c{"copy", "a host-to-device copy from ordinary host memory has taken the source's bytes "
                  "when copy returns (the core may change or free them right after)", false, ""};
  DeviceBlock busy_a(dev, place, kBusyBytes), busy_b(dev, place, kBusyBytes);
  DeviceBlock block(dev, place, kProbeBytes);
  const std::vector<unsigned char> want = Pattern(kProbeBytes, 1);
  auto host = std::make_unique<std::vector<unsigned char>>(want);  // ordinary (pageable) memory
  MakeBusy(ctx, busy_a, busy_b);
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, block.get(), host->data(), kProbeBytes);
  std::memset(host->data(), 0xEE, kProbeBytes);  // the core reuses the buffer at once
  const std::string bad = FirstMismatch(ReadBack(ctx, block, kProbeBytes), want);
  c.passed = bad.empty();
  if (!c.passed)
    c.message = StrCat("a host buffer changed right after copy (HOST_TO_DEVICE) returned changed what "
                       "arrived on ", place.ToString(), ": ", bad, " (the copy read the host bytes later)");
  return c;
}

ContractCheck CheckFree(DeviceContext* ctx, const DeviceInfo& dev, const Place& place) {
  ContractCheck c{"free", "free releases a block in stream order: work queued before the free still "
                  "reads the block's bytes", false, ""};
  DeviceBlock busy_a(dev, place, kBusyBytes), busy_b(dev, place, kBusyBytes);
  DeviceBlock dst(dev, place, kProbeBytes);
  auto src = std::make_unique<DeviceBlock>(dev, place, kProbeBytes);
  const std::vector<unsigned char> want = Pattern(kProbeBytes, 2);
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, src->get(), want.data(), kProbeBytes);
  ctx->Synchronize();
  MakeBusy(ctx, busy_a, busy_b);
  ctx->Copy(TIDE_COPY_DEVICE_TO_DEVICE, dst.get(), src->get(), kProbeBytes);  // runs late
  src->Free();  // while that copy still waits to read it
  // The next user of the memory writes it at once, as another allocation would.
  DeviceBlock next(dev, place, kProbeBytes);
  const std::vector<unsigned char> other = Pattern(kProbeBytes, 3);
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, next.get(), other.data(), kProbeBytes);
  const std::string bad = FirstMismatch(ReadBack(ctx, dst, kProbeBytes), want);
  c.passed = bad.empty();
  if (!c.passed)
    c.message = StrCat("a block freed while the stream of ", place.ToString(), " was busy was released "
                       "before the copy queued to read it ran: ", bad, " of the copy's result");
  return c;
}

}  // namespace

std::vector<ContractCheck> CheckDeviceContracts(const Place& place) {
  const DeviceInfo& dev = CheckedDevice(place);
  DeviceContext* ctx = DeviceContextPool::Global().Get(place);
  std::vector<ContractCheck> out;
  for (auto check : {&CheckCopy, &CheckFree}) {
    try {
      out.push_back(check(ctx, dev, place));
    } catch (const std::exception& e) {
      ContractCheck c{check == &CheckCopy ? "copy" : "free", "", false, e.what()};
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace tide::core
