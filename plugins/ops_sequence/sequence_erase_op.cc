// sequence_erase_op.cc: sequence_erase (Fluid 1.x): removes the given tokens from each sequence
// of an int [N, 1] LoDTensor and shrinks its LoD to match (edit_distance's ignored_tokens).
#include <set>
#include <vector>

#include "common.h"

namespace ops_sequence {
namespace {

template <typename T>
void SequenceEraseKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const Dims d = x.dims();
  TIDE_CHECK(d.size() == 1 || (d.size() == 2 && d[1] == 1), "op '", op, "': X ('",
             ctx.InputName("X"), "') must be [N, 1] with a LoD, got ", tide::ToString(d));
  const Level level = InputLoD(ctx, "X", 1)[0];
  std::set<T> tokens;
  for (int32_t t : ctx.Attr<std::vector<int32_t>>("tokens")) tokens.insert(static_cast<T>(t));
  const T* in = x.data<T>();
  std::vector<T> kept;
  Level out_level{0};
  for (size_t s = 0; s + 1 < level.size(); ++s) {
    for (uint64_t i = level[s]; i < level[s + 1]; ++i)
      if (!tokens.count(in[i])) kept.push_back(in[i]);
    out_level.push_back(kept.size());
  }
  const int64_t rows = static_cast<int64_t>(kept.size());
  T* o = out.mutable_data<T>(d.size() == 1 ? Dims{rows} : Dims{rows, 1}, ctx.place());
  std::copy(kept.begin(), kept.end(), o);
  out.set_lod(LoD{out_level});
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("sequence_erase")
                     .NoGradient()
                     .Comment("Out = X's sequences without the elements equal to one of tokens; "
                              "Out's LoD counts what is left of each sequence.")
                     .Input("X", "int32 or int64 [N, 1] with a one-level LoD")
                     .Output("Out", "the sequences without the tokens")
                     .Attr("tokens", std::vector<int32_t>{}, "the values to erase")
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       if (c.IsRuntime()) return;  // the kernel sizes Out
                       Dims d = c.InputDims("X");
                       if (!d.empty()) d[0] = -1;  // how many are left is known when it runs
                       c.SetOutputDims("Out", d);
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                       c.ShareLoD("X", "Out");
                     }));
TIDE_REGISTER_KERNEL("sequence_erase", "cpu", SequenceEraseKernel, int64_t, int32_t);
