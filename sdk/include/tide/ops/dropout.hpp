// tide/ops/dropout.hpp: dropout and its grad as every kernel reads their inputs: X, the attributes,
// the seed a kernel's generator starts from (Paddle 2.x's Seed input, else `seed` with fix_seed,
// else a fresh one of the kernel's choosing), Mask against Out@GRAD; outputs allocated on the
// kernel's place. Each device has its own generator: the same seed repeats a device's mask, not
// another device's.
#ifndef TIDE_OPS_DROPOUT_HPP_
#define TIDE_OPS_DROPOUT_HPP_

#include <cstdint>
#include <string>
#include <tide/ops/int_inputs.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// `fixed`: the mask repeats from run to run, from `value`.
struct DropoutSeed {
  bool fixed;
  uint32_t value;
};

template <typename Read = ReadOnHost>
DropoutSeed GetDropoutSeed(const KernelContext& ctx, Read read = {}) {
  if (ctx.HasInput("Seed")) return {true, static_cast<uint32_t>(IntScalar(ctx, "Seed", 0, read))};
  if (ctx.Attr<bool>("fix_seed")) return {true, static_cast<uint32_t>(ctx.Attr<int32_t>("seed"))};
  return {false, 0};
}

// dropout: X; Out and Mask (where the op has it) allocated with X's dims. `upscale`:
// upscale_in_train (kept values divided by 1 - p in training, untouched in test), else
// downgrade_in_infer (kept values as they are in training, times 1 - p in test).
template <typename T>
struct DropoutArgs {
  int64_t n;
  float p;
  bool upscale, is_test;
  DropoutSeed seed;
  const T* x;
  T* out;
  T* mask;
};

template <typename T, typename Read = ReadOnHost>
DropoutArgs<T> GetDropoutArgs(const KernelContext& ctx, Read read = {}) {
  Tensor x = ctx.Input("X");
  DropoutArgs<T> a;
  a.n = x.numel();
  a.p = ctx.Attr<float>("dropout_prob");
  a.upscale = ctx.Attr<std::string>("dropout_implementation") == "upscale_in_train";
  a.is_test = ctx.Attr<bool>("is_test");
  // A mask is drawn only in training, and only when some values are kept.
  a.seed = a.is_test || a.p == 1.0f ? DropoutSeed{false, 0} : GetDropoutSeed(ctx, read);
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  Tensor mask = ctx.OptionalOutput("Mask");
  a.mask = mask ? mask.mutable_data<T>(x.dims(), ctx.place()) : nullptr;
  return a;
}

// dropout_grad: X@GRAD = Out@GRAD * Mask (of Out@GRAD's dims), allocated.
template <typename T>
struct DropoutGradArgs {
  int64_t n;
  const T* mask;
  const T* dout;
  T* dx;
};

template <typename T>
DropoutGradArgs<T> GetDropoutGradArgs(const KernelContext& ctx) {
  Tensor mask = ctx.Input("Mask"), dout = ctx.Input(GradVarName("Out").c_str());
  TIDE_CHECK(mask.dims() == dout.dims(), "op '", ctx.op_type(), "': Mask ", ToString(mask.dims()),
             " and Out@GRAD ", ToString(dout.dims()), " differ");
  DropoutGradArgs<T> a;
  a.n = dout.numel();
  a.mask = mask.data<T>();
  a.dout = dout.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(dout.dims(), ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_DROPOUT_HPP_
