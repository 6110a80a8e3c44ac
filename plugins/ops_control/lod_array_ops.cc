// lod_array_ops.cc: lod_tensor_to_array and array_to_lod_tensor (Fluid 1.x), each the other's
// gradient. lod_tensor_to_array splits X's sequences (at the rank table's level) by time step:
// element t holds, for every sequence longer than t in the table's order (longest first), its
// t-th part (one row, or a sub-sequence with its LoD when X has deeper levels). That is what
// DynamicRNN's step t reads. array_to_lod_tensor puts such an array back into one LoDTensor,
// sequences in index order, with the table's coarse LoD above them.
#include "array_views.h"
#include "control_util.h"
#include "rank_table.h"

namespace ops_control {
namespace {

struct Range {
  size_t begin, end;
};

void LoDTensorToArrayRun(tide::OpRunContext& ctx) {
  const char* op = ctx.op_type();
  const RankTable table = ReadRankTable(ctx);
  const std::string x_name = OnlyInput(ctx, "X");
  tide::Tensor x = InputTensor(ctx, x_name);
  TIDE_CHECK(x.rank() >= 1, "op '", op, "': X ('", x_name, "') must have rank >= 1");
  const tide::LoD lod = RankedLoD(ctx, "X", x_name, x, table);
  const size_t level = table.level();
  const int64_t max_len = table.max_len();
  tide::OwnedTensor staged;
  tide::Tensor host = OnHost(x, staged);
  tide::Variable outv = Lookup(ctx, OnlyOutput(ctx, "Out"));
  MaterializeView(outv);  // a while_grad step's gradient array: written whole
  tide::TensorArray out = outv.GetTensorArray();
  out.resize(static_cast<size_t>(max_len));
  for (int64_t t = 0; t < max_len; ++t) {
    tide::LoD step_lod;
    std::vector<Range> ranges;
    size_t rows = 0;
    for (const auto& item : table.items) {
      if (t >= item.length) break;
      const size_t start = lod[level][item.index] + t;
      TIDE_CHECK(start < lod[level][item.index + 1], "op '", op, "': sequence ", item.index,
                 " of X ('", x_name, "') is shorter than the rank table says (", item.length, ")");
      auto sub = SubLoDAndOffset(lod, start, start + 1, level + 1);
      AppendLoD(&step_lod, sub.first);
      ranges.push_back({sub.second.first, sub.second.second});
      rows += sub.second.second - sub.second.first;
    }
    HostRows elem(WithRows(x.dims(), static_cast<int64_t>(rows)), x.dtype());
    size_t at = 0;
    for (const auto& r : ranges) {
      elem.PutRange(at, host, r.begin, r.end - r.begin);
      at += r.end - r.begin;
    }
    elem.set_lod(step_lod);
    elem.CopyTo(ctx, out.at(t));
  }
}

void ArrayToLoDTensorRun(tide::OpRunContext& ctx) {
  const char* op = ctx.op_type();
  const RankTable table = ReadRankTable(ctx);
  const std::string x_name = OnlyInput(ctx, "X");
  tide::Variable xv = Lookup(ctx, x_name);
  TIDE_CHECK(xv.IsTensorArray(), "op '", op, "': X ('", x_name, "') does not hold a tensor array");
  MaterializeView(xv);  // a while_grad step's gradient array: read whole
  tide::TensorArray arr = xv.GetTensorArray();
  TIDE_CHECK(static_cast<int64_t>(arr.size()) >= table.max_len(), "op '", op, "': array '", x_name,
             "' has ", arr.size(), " element(s), the longest sequence of the rank table has ",
             table.max_len());
  // The elements on the host, checked alike.
  std::vector<tide::OwnedTensor> staged(arr.size());
  std::vector<tide::Tensor> elems;
  tide::Dims row_dims;
  TideDataType dtype = TIDE_FP32;
  for (size_t t = 0; t < static_cast<size_t>(table.max_len()); ++t) {
    tide::Tensor e = arr.at(t);
    TIDE_CHECK(e.initialized(), "op '", op, "': element ", t, " of array '", x_name,
               "' was never written");
    TIDE_CHECK(e.rank() >= 1, "op '", op, "': element ", t, " of array '", x_name,
               "' must have rank >= 1");
    const tide::Dims ed = e.dims();
    const tide::Dims d(ed.begin() + 1, ed.end());
    if (t == 0) {
      row_dims = d;
      dtype = e.dtype();
    }
    TIDE_CHECK(d == row_dims && e.dtype() == dtype, "op '", op, "': element ", t, " of array '",
               x_name, "' is ", tide::DataTypeName(e.dtype()), " ", tide::ToString(e.dims()),
               ", element 0 has rows ", tide::ToString(row_dims), " of ",
               tide::DataTypeName(dtype));
    const int64_t running = table.LongerThan(static_cast<int64_t>(t));
    const tide::LoD elod = e.lod();
    const int64_t seqs = elod.empty() ? e.dim(0) : static_cast<int64_t>(elod[0].size()) - 1;
    TIDE_CHECK(seqs >= running, "op '", op, "': element ", t, " of array '", x_name, "' holds ",
               seqs, " sequence(s), but ", running, " are longer than ", t);
    elems.push_back(OnHost(e, staged[t]));
  }
  // Positions in the table, in sequence-index order.
  std::vector<size_t> order(table.items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return table.items[a].index < table.items[b].index; });
  Level level{0};
  tide::LoD below;
  struct Copy {
    size_t elem, begin, end;
  };
  std::vector<Copy> copies;
  size_t rows = 0;
  for (size_t pos : order) {
    const int64_t len = table.items[pos].length;
    level.push_back(level.back() + len);
    for (int64_t t = 0; t < len; ++t) {
      auto sub = SubLoDAndOffset(elems[t].lod(), pos, pos + 1, 0);
      AppendLoD(&below, sub.first);
      copies.push_back({static_cast<size_t>(t), sub.second.first, sub.second.second});
      rows += sub.second.second - sub.second.first;
    }
  }
  tide::Dims dims = row_dims;
  dims.insert(dims.begin(), static_cast<int64_t>(rows));
  HostRows out(dims, dtype);
  size_t at = 0;
  for (const auto& c : copies) {
    out.PutRange(at, elems[c.elem], c.begin, c.end - c.begin);
    at += c.end - c.begin;
  }
  tide::LoD lod = table.coarse;
  lod.push_back(level);
  for (const auto& l : below) lod.push_back(l);
  out.set_lod(lod);
  out.CopyTo(ctx, Lookup(ctx, OnlyOutput(ctx, "Out")).GetTensor());
}

}  // namespace
}  // namespace ops_control

TIDE_REGISTER_OP(tide::OpSchema("lod_tensor_to_array")
                     .Comment("Out[t] = the t-th part of every sequence longer than t, in the rank "
                              "table's order.")
                     .Input("X", "a LoDTensor of sequences")
                     .Input("RankTable", "the LoD rank table of X")
                     .Output("Out", "a tensor array, one element per time step")
                     .InferShape(ops_control::ArrayOfXShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("array_to_lod_tensor")
                           .Input("X", g.OutputGrad("Out"))
                           .Input("RankTable", g.Input("RankTable"))
                           .Output("Out", g.InputGrad("X"));
                     })
                     .Run(ops_control::LoDTensorToArrayRun));

TIDE_REGISTER_OP(tide::OpSchema("array_to_lod_tensor")
                     .Comment("Out = the time steps of array X put back into sequences, in index "
                              "order (the inverse of lod_tensor_to_array).")
                     .Input("X", "a tensor array, one element per time step")
                     .Input("RankTable", "the LoD rank table")
                     .Output("Out", "a LoDTensor of sequences")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       if (ctx.IsRuntime()) return;
                       ctx.SetOutputDims("Out", ctx.InputDims("X"));
                       ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
                     })
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("lod_tensor_to_array")
                           .Input("X", g.OutputGrad("Out"))
                           .Input("RankTable", g.Input("RankTable"))
                           .Output("Out", g.InputGrad("X"));
                     })
                     .Run(ops_control::ArrayToLoDTensorRun));
