// cpu_transforms.cc: the data transforms of host memory: data-type casts between the float and
// integer types (float16/bfloat16 through Eigen's conversions) and NCHW <-> NHWC for 4-D data.
#include <Eigen/Core>
#include <cstdint>
#include <cstring>
#include <tide/plugin.hpp>

namespace {

// A plain static_cast per element.
template <typename From, typename To>
void CastWide(const tide::Tensor& in, tide::Tensor& out, TideDeviceContext*) {
  const From* src = static_cast<const From*>(in.raw_data());
  To* dst = static_cast<To*>(out.mutable_data(tide::DataTypeOf<To>(), in.place()));
  for (int64_t i = 0, n = in.numel(); i < n; ++i) dst[i] = static_cast<To>(src[i]);
  out.set_layout(in.layout());
}

// float16 and bfloat16 have no tide::DataTypeOf; their casts name the dtype directly.
template <typename Half, TideDataType kHalf>
void ToHalf(const tide::Tensor& in, tide::Tensor& out, TideDeviceContext*) {
  auto* dst = static_cast<Half*>(out.mutable_data(kHalf, in.place()));
  if (in.dtype() == TIDE_FP64) {
    const double* src = in.data<double>();
    for (int64_t i = 0, n = in.numel(); i < n; ++i) dst[i] = Half(static_cast<float>(src[i]));
  } else {
    const float* src = in.data<float>();
    for (int64_t i = 0, n = in.numel(); i < n; ++i) dst[i] = Half(src[i]);
  }
  out.set_layout(in.layout());
}

template <typename Half, typename To>
void FromHalf(const tide::Tensor& in, tide::Tensor& out, TideDeviceContext*) {
  const auto* src = static_cast<const Half*>(in.raw_data());
  To* dst = out.mutable_data<To>(in.place());
  for (int64_t i = 0, n = in.numel(); i < n; ++i)
    dst[i] = static_cast<To>(static_cast<float>(src[i]));
  out.set_layout(in.layout());
}

// 4-D transposes between NCHW and NHWC (element size only matters).
template <bool kToNhwc>
void Transpose4D(const tide::Tensor& in, tide::Tensor& out, TideDeviceContext*) {
  tide::Dims d = in.dims();
  TIDE_CHECK(d.size() == 4, "NCHW <-> NHWC needs a 4-D tensor, got ", tide::ToString(d));
  // Logical dims follow the layout: NCHW data has dims [N, C, H, W]; NHWC data [N, H, W, C].
  int64_t n = d[0], c = kToNhwc ? d[1] : d[3], h = kToNhwc ? d[2] : d[1], w = kToNhwc ? d[3] : d[2];
  out.Resize(kToNhwc ? tide::Dims{n, h, w, c} : tide::Dims{n, c, h, w});
  size_t es = tide::DataTypeSize(in.dtype());
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(out.mutable_data(in.dtype(), in.place()));
  for (int64_t a = 0; a < n; ++a)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          int64_t nchw = ((a * c + ch) * h + y) * w + x, nhwc = ((a * h + y) * w + x) * c + ch;
          int64_t from = kToNhwc ? nchw : nhwc, to = kToNhwc ? nhwc : nchw;
          std::memcpy(dst + to * es, src + from * es, es);
        }
  out.set_layout(kToNhwc ? TIDE_LAYOUT_NHWC : TIDE_LAYOUT_NCHW);
}

template <typename A, typename B>
void Pair(tide::Registrar& r) {
  r.DataTypeCast("cpu", tide::DataTypeOf<A>(), tide::DataTypeOf<B>(), &CastWide<A, B>);
  r.DataTypeCast("cpu", tide::DataTypeOf<B>(), tide::DataTypeOf<A>(), &CastWide<B, A>);
}

}  // namespace

TIDE_ON_REGISTER([](tide::Registrar& r) {
  Pair<float, double>(r);
  Pair<float, int32_t>(r);
  Pair<float, int64_t>(r);
  Pair<double, int32_t>(r);
  Pair<double, int64_t>(r);
  Pair<int32_t, int64_t>(r);
  r.DataTypeCast("cpu", TIDE_FP32, TIDE_FP16, &ToHalf<Eigen::half, TIDE_FP16>);
  r.DataTypeCast("cpu", TIDE_FP64, TIDE_FP16, &ToHalf<Eigen::half, TIDE_FP16>);
  r.DataTypeCast("cpu", TIDE_FP32, TIDE_BF16, &ToHalf<Eigen::bfloat16, TIDE_BF16>);
  r.DataTypeCast("cpu", TIDE_FP64, TIDE_BF16, &ToHalf<Eigen::bfloat16, TIDE_BF16>);
  r.DataTypeCast("cpu", TIDE_FP16, TIDE_FP32, &FromHalf<Eigen::half, float>);
  r.DataTypeCast("cpu", TIDE_FP16, TIDE_FP64, &FromHalf<Eigen::half, double>);
  r.DataTypeCast("cpu", TIDE_BF16, TIDE_FP32, &FromHalf<Eigen::bfloat16, float>);
  r.DataTypeCast("cpu", TIDE_BF16, TIDE_FP64, &FromHalf<Eigen::bfloat16, double>);
  r.LayoutTransform("cpu", TIDE_LAYOUT_NCHW, TIDE_LAYOUT_NHWC, &Transpose4D<true>);
  r.LayoutTransform("cpu", TIDE_LAYOUT_NHWC, TIDE_LAYOUT_NCHW, &Transpose4D<false>);
});
