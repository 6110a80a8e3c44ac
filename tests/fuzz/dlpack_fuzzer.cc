// dlpack_fuzzer.cc: the checks from_dlpack makes on a producer's DLTensor (python/src/
// dlpack_check.h). The input describes a DLTensor (dtype, device, ndim, shape, strides, whether
// data is null); when the checks accept it, its bytes (in a buffer of exactly the size the checks
// computed, up to 1 MiB) are all read, so an accepted tensor whose size was misjudged is found.
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/platform/ddim.h"
#include "fuzz_util.h"
#include "python/src/dlpack_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tide::fuzz::Bytes in(data, size);
  DLTensor d{};
  d.dtype.code = in.Take<uint8_t>();
  d.dtype.bits = in.Take<uint8_t>();
  d.dtype.lanes = in.Take<uint16_t>();
  d.device.device_type = static_cast<DLDeviceType>(in.Take<uint8_t>() % 16);
  d.device.device_id = in.Take<int8_t>();
  d.ndim = in.Take<int8_t>();
  const uint8_t flags = in.Take<uint8_t>();
  std::vector<int64_t> shape(16), strides(16);
  for (auto& s : shape) s = in.Take<int64_t>();
  for (auto& s : strides) s = in.Take<int64_t>();
  d.shape = (flags & 1) ? nullptr : shape.data();
  d.strides = (flags & 2) ? strides.data() : nullptr;
  d.byte_offset = (flags & 4) ? in.Take<uint64_t>() : 0;
  static char dummy[64];
  d.data = (flags & 8) ? nullptr : dummy;
  if (d.ndim > 16) return 0;  // the producer's arrays hold 16 dims: a longer claim is its lie
  try {
    tide::core::DataType dt = tide::python::FromDL(d.dtype);
    tide::python::CheckDLTensor(d, dt);
    const int64_t n = tide::core::DDim(d.shape, d.ndim).product();
    const size_t bytes = static_cast<size_t>(n) * tide::core::SizeOf(dt);
    if (bytes <= (1u << 20) && d.byte_offset == 0) {
      std::vector<char> buf(bytes), copy(bytes);
      if (bytes) {
        std::memcpy(copy.data(), buf.data(), bytes);  // what adopting the tensor reads
      }
    }
  } catch (const tide::core::Error&) {
  }
  return 0;
}
