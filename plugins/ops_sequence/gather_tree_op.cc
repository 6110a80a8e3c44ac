// gather_tree_op.cc: gather_tree (F.gather_tree, the backtrace of a beam search): from the ids
// chosen at each step and the beam each came from, the full sequence that ends in each final
// beam, following Parents back from the last step.
#include <string>

#include "common.h"

namespace ops_sequence {
namespace {

void GatherTreeShape(tide::InferShapeContext& c) {
  const Dims ids = c.InputDims("Ids"), parents = c.InputDims("Parents");
  TIDE_CHECK(ids.size() == 3, "op 'gather_tree': Ids ('", c.InputName("Ids"),
             "') must be [max_time, batch, beam], got ", tide::ToString(ids));
  bool same = parents.size() == 3;
  for (size_t i = 0; same && i < 3; ++i)
    same = ids[i] < 0 || parents[i] < 0 || ids[i] == parents[i];
  TIDE_CHECK(same, "op 'gather_tree': Parents ('", c.InputName("Parents"),
             "') must have Ids' dims ", tide::ToString(ids), ", got ", tide::ToString(parents));
  const TideDataType it = c.InputDataType("Ids"), pt = c.InputDataType("Parents");
  TIDE_CHECK(it == pt || it == TIDE_UNDEFINED || pt == TIDE_UNDEFINED,
             "op 'gather_tree': Parents ('", c.InputName("Parents"), "') must be ",
             tide::DataTypeName(it), " as Ids is, got ", tide::DataTypeName(pt));
  c.SetOutputDims("Out", ids);
  c.SetOutputDataType("Out", it);
}

template <typename T>
void GatherTreeKernel(KernelContext& ctx) {
  Tensor ids = ctx.Input("Ids"), parents = ctx.Input("Parents");
  const Dims& d = ids.dims();
  TIDE_CHECK(d.size() == 3 && parents.dims() == d && parents.dtype() == ids.dtype(),
             "op 'gather_tree': Ids and Parents must be [max_time, batch, beam] of one type; got ",
             tide::ToString(d), " and ", tide::ToString(parents.dims()));
  const int64_t steps = d[0], batch = d[1], beam = d[2];
  const T* id = ids.data<T>();
  const T* par = parents.data<T>();
  T* out = ctx.Output("Out").mutable_data<T>(d, ctx.place());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t k = 0; k < beam; ++k) {
      int64_t from = k;  // the beam followed at step t
      for (int64_t t = steps - 1; t >= 0; --t) {
        const int64_t at = (t * batch + b) * beam;
        out[at + k] = id[at + from];
        const int64_t p = static_cast<int64_t>(par[at + from]);
        TIDE_CHECK(t == 0 || (p >= 0 && p < beam), "op 'gather_tree': Parents ('",
                   ctx.InputName("Parents"), "')[", t, ", ", b, ", ", from, "] = ", p,
                   " is not a beam of [0, ", beam, ")");
        from = p;
      }
    }
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("gather_tree")
        .NoGradient()
        .Comment("Out[T-1, b, k] = Ids[T-1, b, k]; going back, Out[t, b, k] = Ids[t, b, p] where "
                 "p is the parent beam the path came from (Parents[t+1, b, ...]).")
        .Input("Ids", "int32 or int64 [max_time, batch, beam]: the id chosen at each step")
        .Input("Parents", "Ids' dims and type: the beam each id came from")
        .Output("Out", "Ids' dims: the sequence ending in each final beam")
        .KernelDataTypeFrom("Ids")
        .InferShape(GatherTreeShape));
TIDE_REGISTER_KERNEL("gather_tree", "cpu", GatherTreeKernel, int32_t, int64_t);
