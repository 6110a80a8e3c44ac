// dlpack_check.h: what a DLPack producer hands over, checked before any of it is used (data type,
// rank, shape, sizes, device, data pointer). No Python here: the DLPack fuzz target uses it too.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/platform/data_type.h"
#include "core/platform/ddim.h"
#include "core/platform/enforce.h"

namespace tide::python {

using core::CheckDims;
using core::DataType;
using core::DDim;
using core::SizeOf;

constexpr uint8_t kDLBoolCode = 6;  // kDLBool, added in DLPack 0.8

inline DataType FromDL(DLDataType d) {
  TIDE_ENFORCE(d.lanes == 1, "DLPack tensors with vector lanes (", int(d.lanes),
               ") are not supported");
  switch (d.code) {
    case kDLFloat:
      if (d.bits == 32) return TIDE_FP32;
      if (d.bits == 64) return TIDE_FP64;
      if (d.bits == 16) return TIDE_FP16;
      break;
    case kDLBfloat:
      if (d.bits == 16) return TIDE_BF16;
      break;
    case kDLInt:
      if (d.bits == 8) return TIDE_INT8;
      if (d.bits == 16) return TIDE_INT16;
      if (d.bits == 32) return TIDE_INT32;
      if (d.bits == 64) return TIDE_INT64;
      break;
    case kDLUInt:
      if (d.bits == 8) return TIDE_UINT8;
      break;
    case kDLBoolCode:
      if (d.bits == 8) return TIDE_BOOL;
      break;
    case kDLComplex:
      if (d.bits == 64) return TIDE_COMPLEX64;
      if (d.bits == 128) return TIDE_COMPLEX128;
      break;
  }
  TIDE_FAIL(TIDE_UNIMPLEMENTED, "DLPack data type (code ", int(d.code), ", ", int(d.bits),
            " bits) has no Tide type");
}

// A producer's DLTensor is checked field by field before any is used: a bad one is refused with
// what is wrong, never read past its arrays or dereferenced.
inline void CheckDLTensor(const DLTensor& d, DataType dt) {
  TIDE_ENFORCE(d.ndim >= 0 && d.ndim <= DDim::kMaxRank, "from_dlpack: ndim ", d.ndim,
               " is outside [0, ", DDim::kMaxRank, "]");
  TIDE_ENFORCE(d.device.device_id >= 0, "from_dlpack: negative device id ", d.device.device_id);
  TIDE_ENFORCE(d.ndim == 0 || d.shape, "from_dlpack: a rank-", d.ndim,
               " tensor without a shape array");
  std::vector<int64_t> shape(d.shape, d.shape + d.ndim);
  for (int i = 0; i < d.ndim; ++i)
    TIDE_ENFORCE(shape[i] >= 0, "from_dlpack: negative dim ", shape[i], " in shape ",
                 DDim(shape).ToString());
  std::string bad = CheckDims(DDim(shape), SizeOf(dt));
  TIDE_ENFORCE(bad.empty(), "from_dlpack: ", bad);
  const int64_t n = DDim(shape).product();
  TIDE_ENFORCE(n == 0 || d.data, "from_dlpack: null data for ", n, " element(s) of shape ",
               DDim(shape).ToString());
  TIDE_ENFORCE(d.byte_offset <= uint64_t(PTRDIFF_MAX) &&
                   reinterpret_cast<uintptr_t>(d.data) <= UINTPTR_MAX - d.byte_offset,
               "from_dlpack: byte_offset ", d.byte_offset, " overflows the address space");
}

}  // namespace tide::python
