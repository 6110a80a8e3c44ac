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
  DeviceBlock(const DeviceInfo& dev, const Place& place, size_t size)
      : dev_(dev), place_(place), size_(size) {
    CallPlugin([&] { return dev.def.alloc(dev.def.self, place.device, size, &ptr_); },
               [&] { return StrCat("allocating ", size, " bytes on ", place.ToString()); },
               dev.plugin_file);
    TIDE_ENFORCE(ptr_, "device plugin ", dev.plugin_file, " returned no memory for ", size,
                 " bytes");
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

// Large copies between two blocks, queued so that what is queued next waits behind them.
class BusyStream {
 public:
  BusyStream(const DeviceInfo& dev, const Place& place)
      : a_(dev, place, kBusyBytes), b_(dev, place, kBusyBytes) {}
  void Queue(DeviceContext* ctx) {
    for (int i = 0; i < kBusyCopies; ++i)
      ctx->Copy(TIDE_COPY_DEVICE_TO_DEVICE, b_.get(), a_.get(), kBusyBytes);
  }

 private:
  DeviceBlock a_, b_;
};

std::string FirstMismatch(const std::vector<unsigned char>& got,
                          const std::vector<unsigned char>& want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return StrCat("byte ", i, " of ", want.size(), " is ", int(got[i]), ", want ", int(want[i]));
  return "";
}

// Reads `block` back once the queued work is done and compares it with `want`: empty when equal.
std::string Compare(DeviceContext* ctx, const DeviceBlock& block,
                    const std::vector<unsigned char>& want) {
  std::vector<unsigned char> got(want.size());
  ctx->Synchronize();
  ctx->Copy(TIDE_COPY_DEVICE_TO_HOST, got.data(), block.get(), want.size());
  ctx->Synchronize();
  return FirstMismatch(got, want);
}

constexpr const char* kCopyRule =
    "a host-to-device copy from ordinary host memory has taken the source's bytes when copy "
    "returns "
    "(the core may change or free them right after)";
constexpr const char* kFreeRule =
    "free releases a block in stream order: work queued before the free still reads the block's "
    "bytes";

// What the copy check sees: empty, or what arrived wrong.
std::string CheckCopy(DeviceContext* ctx, const DeviceInfo& dev, const Place& place) {
  BusyStream busy(dev, place);
  DeviceBlock block(dev, place, kProbeBytes);
  const std::vector<unsigned char> want = Pattern(kProbeBytes, 1);
  auto host = std::make_unique<std::vector<unsigned char>>(want);  // ordinary (pageable) memory
  busy.Queue(ctx);
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, block.get(), host->data(), kProbeBytes);
  std::memset(host->data(), 0xEE, kProbeBytes);  // the core reuses the buffer at once
  const std::string bad = Compare(ctx, block, want);
  if (bad.empty()) return "";
  return StrCat(
      "a host buffer changed right after copy (HOST_TO_DEVICE) returned changed what arrived on ",
      place.ToString(), ": ", bad, " (the copy read the host bytes later)");
}

std::string CheckFree(DeviceContext* ctx, const DeviceInfo& dev, const Place& place) {
  BusyStream busy(dev, place);
  DeviceBlock dst(dev, place, kProbeBytes);
  auto src = std::make_unique<DeviceBlock>(dev, place, kProbeBytes);
  const std::vector<unsigned char> want = Pattern(kProbeBytes, 2);
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, src->get(), want.data(), kProbeBytes);
  ctx->Synchronize();
  busy.Queue(ctx);
  ctx->Copy(TIDE_COPY_DEVICE_TO_DEVICE, dst.get(), src->get(), kProbeBytes);  // runs late
  src->Free();  // while that copy still waits to read it
  // The next user of the memory writes it at once, as another allocation would.
  DeviceBlock next(dev, place, kProbeBytes);
  const std::vector<unsigned char> other = Pattern(kProbeBytes, 3);
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, next.get(), other.data(), kProbeBytes);
  const std::string bad = Compare(ctx, dst, want);
  if (bad.empty()) return "";
  return StrCat("a block freed while the stream of ", place.ToString(),
                " was busy was released before the "
                "copy queued to read it ran: ",
                bad, " of the copy's result");
}

}  // namespace

std::vector<ContractCheck> CheckDeviceContracts(const Place& place) {
  const DeviceInfo& dev = CheckedDevice(place);
  DeviceContext* ctx = DeviceContextPool::Global().Get(place);
  struct Check {
    const char* name;
    const char* rule;
    std::string (*run)(DeviceContext*, const DeviceInfo&, const Place&);
  };
  std::vector<ContractCheck> out;
  for (const Check& check :
       {Check{"copy", kCopyRule, &CheckCopy}, Check{"free", kFreeRule, &CheckFree}}) {
    ContractCheck c{check.name, check.rule, false, ""};
    try {
      c.message = check.run(ctx, dev, place);
      c.passed = c.message.empty();
    } catch (const std::exception& e) {
      c.message = e.what();
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace tide::core
