// tide/ops/batch_size_like.hpp: the shape rule of Fluid's fill_constant_batch_size_like, with its
// errors, for every implementation: `shape` with shape[output_dim_idx] = Input.dims[input_dim_idx]
// (at run time, for a LoD Input and input_dim_idx 0, its number of sequences).
#ifndef TIDE_OPS_BATCH_SIZE_LIKE_HPP_
#define TIDE_OPS_BATCH_SIZE_LIKE_HPP_

#include <algorithm>
#include <cstdint>
#include <string>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// Compile time (and the run time checks): `in_name` names the Input variable.
inline Dims BatchSizeLikeDims(const char* op, const std::string& in_name, const Dims& in,
                              std::vector<int64_t> shape, int32_t in_idx, int32_t out_idx) {
  TIDE_CHECK(!shape.empty(), "op '", op, "': attribute 'shape' is empty");
  TIDE_CHECK(in_idx >= 0 && in_idx < static_cast<int32_t>(in.size()), "op '", op,
             "': input_dim_idx ", in_idx, " is not a dim of Input ('", in_name, "') ",
             ToString(in));
  TIDE_CHECK(out_idx >= 0 && out_idx < static_cast<int32_t>(shape.size()), "op '", op,
             "': output_dim_idx ", out_idx, " is not a dim of shape ", ToString(shape));
  shape[out_idx] = in[in_idx];
  return shape;
}

// Run time: as in Fluid, a LoD Input's batch is its number of sequences, not its number of rows;
// every dim of Out must then be known.
inline Dims BatchSizeLikeRunDims(const char* op, const std::string& in_name, const Dims& in,
                                 const LoD& lod, std::vector<int64_t> shape, int32_t in_idx,
                                 int32_t out_idx) {
  Dims dims = BatchSizeLikeDims(op, in_name, in, std::move(shape), in_idx, out_idx);
  if (!lod.empty() && in_idx == 0) dims[out_idx] = static_cast<int64_t>(lod.back().size()) - 1;
  TIDE_CHECK(std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; }), "op '", op,
             "': Out's dims ", ToString(dims), " have an unknown (-1) dim besides output_dim_idx ",
             out_idx);
  return dims;
}

// fill_constant_batch_size_like as every kernel reads it: Out's dims from Input at run time, and
// Out allocated on the kernel's place (the kernel fills it with `value`).
template <typename T>
struct BatchSizeLikeArgs {
  int64_t n;
  T* out;
};

template <typename T>
BatchSizeLikeArgs<T> GetBatchSizeLikeArgs(const KernelContext& ctx) {
  Tensor in = ctx.Input("Input");
  const Dims dims =
      BatchSizeLikeRunDims(ctx.op_type(), ctx.InputName("Input"), in.dims(), in.lod(),
                           ctx.Attr<std::vector<int64_t>>("shape"),
                           ctx.Attr<int32_t>("input_dim_idx"), ctx.Attr<int32_t>("output_dim_idx"));
  BatchSizeLikeArgs<T> a;
  a.n = DimsProduct(dims);
  a.out = ctx.Output("Out").mutable_data<T>(dims, ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_BATCH_SIZE_LIKE_HPP_
