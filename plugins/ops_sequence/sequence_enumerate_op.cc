// sequence_enumerate_op.cc: sequence_enumerate (Fluid 1.x): each element of an int [N, 1]
// LoDTensor's sequences with the win_size - 1 that follow it in its sequence, pad_value past the
// sequence's end (n-gram ids for text models). Out [N, win_size] keeps X's LoD.
#include <vector>

#include "common.h"

namespace ops_sequence {
namespace {

template <typename T>
void SequenceEnumerateKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const Dims d = x.dims();
  TIDE_CHECK(d.size() == 1 || (d.size() == 2 && d[1] == 1), "op '", op, "': X ('",
             ctx.InputName("X"), "') must be [N, 1] with a LoD, got ", tide::ToString(d));
  const Level level = InputLoD(ctx, "X", 1)[0];
  const int64_t win = ctx.Attr<int32_t>("win_size");
  const T pad = static_cast<T>(ctx.Attr<int32_t>("pad_value"));
  const T* in = x.data<T>();
  T* o = out.mutable_data<T>(Dims{d[0], win}, ctx.place());
  for (size_t s = 0; s + 1 < level.size(); ++s) {
    const int64_t end = static_cast<int64_t>(level[s + 1]);
    for (int64_t i = static_cast<int64_t>(level[s]); i < end; ++i)
      for (int64_t k = 0; k < win; ++k) o[i * win + k] = i + k < end ? in[i + k] : pad;
  }
  out.set_lod(x.lod());
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("sequence_enumerate")
                     .NoGradient()
                     .Comment("Out[i] = X[i], X[i + 1], ..., X[i + win_size - 1] within i's "
                              "sequence, pad_value past its end; Out keeps X's LoD.")
                     .Input("X", "int32 or int64 [N, 1] with a one-level LoD")
                     .Output("Out", "[N, win_size]")
                     .Attr("win_size", int32_t(2), "the window's length (>= 2)")
                     .GreaterThan(1)
                     .Attr("pad_value", int32_t(0), "the value past a sequence's end")
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       const Dims x = c.InputDims("X");
                       TIDE_CHECK(!x.empty(), "op 'sequence_enumerate': X must be [N, 1]");
                       c.SetOutputDims("Out", Dims{x[0], c.Attr<int32_t>("win_size")});
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                       c.ShareLoD("X", "Out");
                     }));
TIDE_REGISTER_KERNEL("sequence_enumerate", "cpu", SequenceEnumerateKernel, int64_t, int32_t);
