// tide/kernels/layout.hpp: Paddle 2.x's data_format attribute of conv2d / pool2d ("NCHW",
// "AnyLayout" = NCHW, "NHWC"): the header-only NCHW kernels (conv.hpp, pool.hpp) and the op
// packs' grads run an NHWC op on transposed copies of its tensors.
#ifndef TIDE_KERNELS_LAYOUT_HPP_
#define TIDE_KERNELS_LAYOUT_HPP_

#include <cstdint>
#include <string>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

// True when the op's data_format is NHWC (channels last); checks the value.
template <typename Ctx>
bool ChannelLast(const Ctx& ctx) {
  if (!ctx.HasAttr("data_format")) return false;
  const std::string f = ctx.template Attr<std::string>("data_format");
  TIDE_CHECK(f == "NCHW" || f == "NHWC" || f == "AnyLayout", "op '", ctx.op_type(),
             "': data_format must be NCHW, NHWC or AnyLayout, got '", f, "'");
  return f == "NHWC";
}

// [N, H, W, C] -> [N, C, H, W] and back; other ranks are left alone (the geometry checks them).
inline Dims NhwcToNchwDims(const Dims& d) {
  return d.size() == 4 ? Dims{d[0], d[3], d[1], d[2]} : d;
}
inline Dims NchwToNhwcDims(const Dims& d) {
  return d.size() == 4 ? Dims{d[0], d[2], d[3], d[1]} : d;
}

// dst [n, c, h, w] <- src [n, h, w, c].
template <typename T>
void NhwcToNchw(const T* src, T* dst, int64_t n, int64_t c, int64_t h, int64_t w) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        const T* s = src + ((b * h + y) * w + x) * c;
        for (int64_t k = 0; k < c; ++k) dst[((b * c + k) * h + y) * w + x] = s[k];
      }
}

// dst [n, h, w, c] <- src [n, c, h, w].
template <typename T>
void NchwToNhwc(const T* src, T* dst, int64_t n, int64_t c, int64_t h, int64_t w) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        T* d = dst + ((b * h + y) * w + x) * c;
        for (int64_t k = 0; k < c; ++k) d[k] = src[((b * c + k) * h + y) * w + x];
      }
}

// `t`'s data as NCHW: the data itself, or (NHWC) a transposed copy in scratch memory.
template <typename T>
const T* AsNchw(const KernelContext& ctx, const Tensor& t, bool nhwc) {
  if (!nhwc) return t.data<T>();
  const Dims d = t.dims();
  T* tmp = ctx.TempBuffer<T>(static_cast<size_t>(t.numel()));
  NhwcToNchw(t.data<T>(), tmp, d[0], d[3], d[1], d[2]);
  return tmp;
}

// Where an NCHW kernel writes an output of NCHW dims `nchw`: `out` itself (allocated with those
// dims), or (NHWC) scratch memory that StoreNhwc then copies into `out` as [N, H, W, C].
template <typename T>
T* NchwOutput(const KernelContext& ctx, Tensor& out, const Dims& nchw, bool nhwc) {
  if (!nhwc) return out.mutable_data<T>(nchw, ctx.place());
  out.mutable_data<T>(NchwToNhwcDims(nchw), ctx.place());
  return ctx.TempBuffer<T>(static_cast<size_t>(ops::DimsProduct(nchw)));
}
template <typename T>
void StoreNhwc(const KernelContext& ctx, const T* nchw_data, Tensor& out, const Dims& nchw,
               bool nhwc) {
  if (!nhwc) return;
  NchwToNhwc(nchw_data, out.mutable_data<T>(NchwToNhwcDims(nchw), ctx.place()), nchw[0], nchw[1],
             nchw[2], nchw[3]);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_LAYOUT_HPP_
