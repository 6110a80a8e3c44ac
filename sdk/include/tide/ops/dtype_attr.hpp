// tide/ops/dtype_attr.hpp: an int attribute that names a data type (cast's out_dtype,
// fill_constant's dtype, ...), read checked: a value that is no TideDataType is an error naming
// the op and the attribute, never an out-of-range enum (undefined behaviour, a fuzzer finding).
#ifndef TIDE_OPS_DTYPE_ATTR_HPP_
#define TIDE_OPS_DTYPE_ATTR_HPP_

#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// Ctx: tide::KernelContext or tide::InferShapeContext.
template <typename Ctx>
TideDataType DataTypeAttr(const Ctx& ctx, const char* name) {
  const int32_t v = ctx.template Attr<int32_t>(name);
  switch (v) {
    case TIDE_BOOL:
    case TIDE_INT16:
    case TIDE_INT32:
    case TIDE_INT64:
    case TIDE_FP16:
    case TIDE_FP32:
    case TIDE_FP64:
    case TIDE_UINT8:
    case TIDE_INT8:
    case TIDE_BF16:
    case TIDE_COMPLEX64:
    case TIDE_COMPLEX128:
      return static_cast<TideDataType>(v);
    default:
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", ctx.op_type(), "': attribute '", name, "' is ", v,
                 ", which is not a data type");
  }
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_DTYPE_ATTR_HPP_
