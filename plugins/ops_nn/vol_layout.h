// vol_layout.h: the data_format of the volumetric ops (conv3d, conv3d_transpose, pool3d,
// max_pool3d_with_index): NCDHW, or NDHWC run on transposed copies, as layout.h does for the 2-D
// ops. A channel-last tensor [N, D, H, W, C] is [N, D * H, W, C] to the 2-D transposes, which
// they reuse.
#pragma once

#include <string>
#include <tide/kernels/layout.hpp>

#include "common.h"

namespace ops_nn {

// True when data_format is channel last (Paddle's kernels take NDHWC and NHWC as that); checks
// the value.
template <typename Ctx>
bool VolChannelLast(const Ctx& ctx) {
  if (!ctx.HasAttr("data_format")) return false;
  const std::string f = ctx.template Attr<std::string>("data_format");
  TIDE_CHECK(f == "NCDHW" || f == "NDHWC" || f == "AnyLayout" || f == "NCHW" || f == "NHWC", "op '",
             ctx.op_type(), "': data_format must be NCDHW or NDHWC, got '", f, "'");
  return f == "NDHWC" || f == "NHWC";
}

// [N, D, H, W, C] -> [N, C, D, H, W] and back; other ranks are left alone (the geometry checks
// them).
inline Dims NdhwcToNcdhwDims(const Dims& d) {
  return d.size() == 5 ? Dims{d[0], d[4], d[1], d[2], d[3]} : d;
}
inline Dims NcdhwToNdhwcDims(const Dims& d) {
  return d.size() == 5 ? Dims{d[0], d[2], d[3], d[4], d[1]} : d;
}

// `t`'s data as NCDHW: the data itself, or (channel last) a transposed copy in scratch memory.
template <typename T>
const T* AsNcdhw(const KernelContext& ctx, const Tensor& t, bool channel_last) {
  if (!channel_last) return t.data<T>();
  const Dims d = t.dims();
  T* tmp = ctx.TempBuffer<T>(static_cast<size_t>(t.numel()));
  tide::kernels::NhwcToNchw(t.data<T>(), tmp, d[0], d[4], d[1] * d[2], d[3]);
  return tmp;
}

// Where an NCDHW kernel writes an output of NCDHW dims `ncdhw`: `out` itself, or (channel last)
// scratch memory that StoreNdhwc then copies into `out` as [N, D, H, W, C].
template <typename T>
T* NcdhwOutput(const KernelContext& ctx, Tensor& out, const Dims& ncdhw, bool channel_last) {
  if (!channel_last) return out.mutable_data<T>(ncdhw, ctx.place());
  out.mutable_data<T>(NcdhwToNdhwcDims(ncdhw), ctx.place());
  return ctx.TempBuffer<T>(static_cast<size_t>(DimsProduct(ncdhw)));
}
template <typename T>
void StoreNdhwc(const KernelContext& ctx, const T* ncdhw_data, Tensor& out, const Dims& ncdhw,
                bool channel_last) {
  if (!channel_last) return;
  tide::kernels::NchwToNhwc(ncdhw_data, out.mutable_data<T>(NcdhwToNdhwcDims(ncdhw), ctx.place()),
                            ncdhw[0], ncdhw[1], ncdhw[2] * ncdhw[3], ncdhw[4]);
}

}  // namespace ops_nn
