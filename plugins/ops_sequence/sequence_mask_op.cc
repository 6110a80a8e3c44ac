// sequence_mask_op.cc: sequence_mask (Y[..., j] = 1 where j < X[...] (a length), else 0; Y's last
// dim is maxlen (or MaxLenTensor's value), or max(X) when it is -1; Y's type is out_dtype). No
// gradient.
#include <tide/ops/dtype_attr.hpp>

#include "common.h"

namespace ops_sequence {
namespace {

template <typename O, typename L>
void FillMask(const L* len, int64_t n, int64_t maxlen, O* y) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < maxlen; ++j) y[i * maxlen + j] = static_cast<O>(j < len[i] ? 1 : 0);
}

// MaxLenTensor's one value (int32 or int64), which replaces the maxlen attribute.
int64_t MaxLenOf(KernelContext& ctx) {
  Tensor m = ctx.Input("MaxLenTensor");
  TIDE_CHECK(m.numel() == 1, "op '", ctx.op_type(), "': MaxLenTensor ('",
             ctx.InputName("MaxLenTensor"), "') must hold one value, but has dims ",
             tide::ToString(m.dims()));
  if (m.dtype() == TIDE_INT32) return *m.data<int32_t>();
  TIDE_CHECK(m.dtype() == TIDE_INT64, "op '", ctx.op_type(), "': MaxLenTensor ('",
             ctx.InputName("MaxLenTensor"), "') must be int32 or int64, got ",
             tide::DataTypeName(m.dtype()));
  return *m.data<int64_t>();
}

template <typename L>
void SequenceMaskKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), y = ctx.Output("Y");
  const L* len = x.data<L>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i)
    TIDE_CHECK(len[i] >= 0, "op '", op, "': X ('", ctx.InputName("X"), "')[", i,
               "] = ", static_cast<int64_t>(len[i]), " is not a length (must be >= 0)");
  int64_t maxlen = ctx.Attr<int32_t>("maxlen");
  if (ctx.HasInput("MaxLenTensor")) maxlen = MaxLenOf(ctx);
  TIDE_CHECK(maxlen == -1 || maxlen >= 0, "op '", op, "': maxlen must be -1 or >= 0, got ", maxlen);
  if (maxlen == -1) {
    maxlen = 0;
    for (int64_t i = 0; i < n; ++i) maxlen = std::max<int64_t>(maxlen, len[i]);
  }
  Dims yd = x.dims();
  yd.push_back(maxlen);
  y.Resize(yd);
  const auto dt = tide::ops::DataTypeAttr(ctx, "out_dtype");
  void* p = y.mutable_data(dt, ctx.place());
  switch (dt) {
    case TIDE_BOOL:
      FillMask(len, n, maxlen, static_cast<bool*>(p));
      break;
    case TIDE_UINT8:
      FillMask(len, n, maxlen, static_cast<uint8_t*>(p));
      break;
    case TIDE_INT32:
      FillMask(len, n, maxlen, static_cast<int32_t*>(p));
      break;
    case TIDE_INT64:
      FillMask(len, n, maxlen, static_cast<int64_t*>(p));
      break;
    case TIDE_FP32:
      FillMask(len, n, maxlen, static_cast<float*>(p));
      break;
    case TIDE_FP64:
      FillMask(len, n, maxlen, static_cast<double*>(p));
      break;
    default:
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op, "': out_dtype ", static_cast<int>(dt), " (",
                 tide::DataTypeName(dt), ") is not bool, uint8, int32, int64, float32 or float64");
  }
  y.set_lod(x.lod());
}

void CheckOutDtype(const TideAttrValue& v) {
  const auto dt = static_cast<TideDataType>(v.i);
  TIDE_CHECK(dt == TIDE_BOOL || dt == TIDE_UINT8 || dt == TIDE_INT32 || dt == TIDE_INT64 ||
                 dt == TIDE_FP32 || dt == TIDE_FP64,
             "attribute 'out_dtype' must be the code of bool, uint8, int32, int64, float32 or "
             "float64, got ",
             v.i);
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("sequence_mask")
        .NoGradient()
        .Comment("Y[..., j] = (j < X[...]), of type out_dtype; Y = X's dims + [maxlen].")
        .Input("X", "int64 (or int32) lengths")
        .Input("MaxLenTensor", "Y's last dim as a 1-element int tensor (optional; replaces maxlen)")
        .AsDispensable()
        .Output("Y", "the mask")
        .Attr("maxlen", int32_t(-1), "Y's last dim; -1: max(X)")
        .Attr("out_dtype", int32_t(TIDE_INT64), "Y's type (TideDataType)")
        .Check(CheckOutDtype)
        .KernelDataTypeFrom("X")
        .InferShape([](tide::InferShapeContext& c) {
          TideDataType t = c.InputDataType("X");
          TIDE_CHECK(t == TIDE_INT64 || t == TIDE_INT32 || t == TIDE_UNDEFINED, "op '", c.op_type(),
                     "': X ('", c.InputName("X"), "') must hold int64 (or int32) lengths, got ",
                     tide::DataTypeName(t));
          const int32_t maxlen = c.Attr<int32_t>("maxlen");
          TIDE_CHECK(maxlen >= -1, "op '", c.op_type(), "': maxlen must be -1 or >= 0, got ",
                     maxlen);
          if (c.IsRuntime()) return;  // the kernel sizes Y
          Dims y = c.InputDims("X");
          y.push_back(c.HasInput("MaxLenTensor") ? -1 : maxlen);
          c.SetOutputDims("Y", y);
          c.SetOutputDataType("Y", tide::ops::DataTypeAttr(c, "out_dtype"));
          c.ShareLoD("X", "Y");
        }));
TIDE_REGISTER_KERNEL("sequence_mask", "cpu", SequenceMaskKernel, int64_t, int32_t);
