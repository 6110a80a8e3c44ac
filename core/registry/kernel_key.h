// kernel_key.h: OpKernelType, as in Fluid: the key a kernel is registered under and chosen by:
// place kind, data type, layout, library.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/platform/data_type.h"

namespace tide::core {

constexpr const char* kPlainLibrary = "plain";

// Library names ("plain" and the libraries plugins register) interned to ids; "plain" is always 0.
int32_t LibraryId(const std::string& name);
const std::string& LibraryName(int32_t id);

struct OpKernelType {
  int32_t place_kind = -1;
  DataType dtype = TIDE_UNDEFINED;
  TideLayout layout = TIDE_LAYOUT_ANY;
  int32_t library = 0;

  bool operator==(const OpKernelType& o) const {
    return place_kind == o.place_kind && dtype == o.dtype && layout == o.layout &&
           library == o.library;
  }
  bool operator!=(const OpKernelType& o) const { return !(*this == o); }
  std::string ToString() const;  // "{cpu, float32, ANY, plain}"
};

struct OpKernelTypeHash {
  size_t operator()(const OpKernelType& k) const {
    return std::hash<uint64_t>()((uint64_t(uint32_t(k.place_kind)) << 40) ^
                                 (uint64_t(uint32_t(k.dtype)) << 24) ^ (uint64_t(k.layout) << 16) ^
                                 uint64_t(uint32_t(k.library)));
  }
};

}  // namespace tide::core
