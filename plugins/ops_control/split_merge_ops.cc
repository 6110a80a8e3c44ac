// split_merge_ops.cc: IfElse's batch split and merge (Fluid's split_lod_tensor and
// merge_lod_tensor). Mask holds one bool per item: a row of X without LoD, else a sequence at
// LoD level `level`. split sends the true items to OutTrue and the others to OutFalse, in order;
// merge puts InTrue's and InFalse's items back in Mask's order. Each is the other's gradient.
// The data moves on the host (staged through it for another place), row ranges at a time.
#include <cstring>

#include "control_util.h"

namespace ops_control {
namespace {

using tide::LoD;

// The rows [begin, end) of item `i` at LoD level `level`, and the lengths of its sub-sequences
// at that level and below (Fluid's GetSubLoDAndAbsoluteOffset for one item).
struct Item {
  uint64_t begin = 0, end = 0;
  std::vector<std::vector<uint64_t>> lengths;
};
Item ItemOf(const LoD& lod, size_t level, size_t i) {
  Item it;
  if (lod.empty()) {
    it.begin = i;
    it.end = i + 1;
    return it;
  }
  uint64_t s = i, e = i + 1;
  for (size_t k = level; k < lod.size(); ++k) {
    std::vector<uint64_t> lens;
    for (uint64_t j = s; j < e; ++j) lens.push_back(lod[k][j + 1] - lod[k][j]);
    it.lengths.push_back(std::move(lens));
    s = lod[k][s];
    e = lod[k][e];
  }
  it.begin = s;
  it.end = e;
  return it;
}

size_t ItemCount(const tide::Tensor& t, size_t level, const char* op, const std::string& name) {
  LoD lod = t.lod();
  if (lod.empty()) return t.rank() ? static_cast<size_t>(t.dim(0)) : 1;
  TIDE_CHECK(level < lod.size(), "op '", op, "': level ", level, " but '", name, "' has ",
             lod.size(), " LoD level(s)");
  return lod[level].size() - 1;
}

// The mask as host bools, checked to hold one value per item.
std::vector<bool> ReadMask(tide::OpRunContext& ctx, size_t items) {
  const std::string name = OnlyInput(ctx, "Mask");
  tide::Tensor m = InputTensor(ctx, name);
  TIDE_CHECK(m.dtype() == TIDE_BOOL, "op '", ctx.op_type(), "': Mask '", name,
             "' must be bool, got ", tide::DataTypeName(m.dtype()));
  TIDE_CHECK(static_cast<size_t>(m.numel()) == items, "op '", ctx.op_type(), "': Mask '", name,
             "' has ", m.numel(), " value(s) for ", items, " item(s)");
  tide::OwnedTensor tmp;
  const bool* p = OnHost(m, tmp).data<bool>();
  return std::vector<bool>(p, p + items);
}

// Gathers items into a tensor (rows and LoD), then places it on the op's place.
class Gather {
 public:
  Gather(const tide::Tensor& like, size_t levels) : levels_(levels) {
    dims_ = like.dims();
    dtype_ = like.dtype();
    row_bytes_ = tide::DataTypeSize(dtype_);
    for (size_t d = 1; d < dims_.size(); ++d) row_bytes_ *= dims_[d];
    for (size_t k = 0; k < levels; ++k) lod_.push_back({0});
  }
  void Add(const tide::Tensor& host_src, const Item& it) {
    const char* p = static_cast<const char*>(host_src.raw_data());
    bytes_.insert(bytes_.end(), p + it.begin * row_bytes_, p + it.end * row_bytes_);
    rows_ += it.end - it.begin;
    for (size_t k = 0; k < levels_; ++k)
      for (uint64_t len : it.lengths[k]) lod_[k].push_back(lod_[k].back() + len);
  }
  void WriteTo(tide::OpRunContext& ctx, tide::Tensor out) {
    tide::Dims d = dims_;
    if (!d.empty()) d[0] = static_cast<int64_t>(rows_);
    tide::OwnedTensor host;
    host.Resize(d);
    void* dst = host.mutable_data(dtype_, tide::Place("cpu", 0));
    if (!bytes_.empty()) std::memcpy(dst, bytes_.data(), bytes_.size());
    host.set_lod(lod_);
    out.CopyFrom(host, ctx.place(), ctx.device_context());
  }

 private:
  size_t levels_;
  tide::Dims dims_;
  TideDataType dtype_;
  size_t row_bytes_ = 0, rows_ = 0;
  std::vector<char> bytes_;
  LoD lod_;
};

void SplitRun(tide::OpRunContext& ctx) {
  const std::string x_name = OnlyInput(ctx, "X");
  tide::Tensor x = InputTensor(ctx, x_name);
  TIDE_CHECK(x.rank() >= 1, "op 'split_lod_tensor': X '", x_name, "' must have a batch dim");
  const size_t level = static_cast<size_t>(ctx.Attr<int32_t>("level"));
  const size_t items = ItemCount(x, level, "split_lod_tensor", x_name);
  std::vector<bool> mask = ReadMask(ctx, items);
  tide::OwnedTensor tmp;
  tide::Tensor hx = OnHost(x, tmp);
  const LoD lod = x.lod();
  const size_t levels = lod.empty() ? 0 : lod.size() - level;
  Gather yes(x, levels), no(x, levels);
  for (size_t i = 0; i < items; ++i) (mask[i] ? yes : no).Add(hx, ItemOf(lod, level, i));
  yes.WriteTo(ctx, Lookup(ctx, OnlyOutput(ctx, "OutTrue")).GetTensor());
  no.WriteTo(ctx, Lookup(ctx, OnlyOutput(ctx, "OutFalse")).GetTensor());
}

void MergeRun(tide::OpRunContext& ctx) {
  const size_t level = static_cast<size_t>(ctx.Attr<int32_t>("level"));
  const std::string t_name = OnlyInput(ctx, "InTrue"), f_name = OnlyInput(ctx, "InFalse");
  tide::Variable tv = Lookup(ctx, t_name), fv = Lookup(ctx, f_name);
  tide::Tensor in_true = tv.GetTensor(), in_false = fv.GetTensor();
  const bool have_true = in_true.initialized() && in_true.numel() > 0;
  const bool have_false = in_false.initialized() && in_false.numel() > 0;
  // Mask's item count is X's (the tensor that was split).
  const std::string x_name = OnlyInput(ctx, "X");
  tide::Tensor x = InputTensor(ctx, x_name);
  std::vector<bool> mask = ReadMask(ctx, ItemCount(x, level, "merge_lod_tensor", x_name));
  TIDE_CHECK(have_true || have_false, "op 'merge_lod_tensor': both InTrue '", t_name,
             "' and InFalse '", f_name, "' are empty");
  const tide::Tensor& like = have_true ? in_true : in_false;
  if (have_true && have_false) {
    const tide::Dims dt = in_true.dims(), df = in_false.dims();
    TIDE_CHECK(in_true.dtype() == in_false.dtype() &&
                   tide::Dims(dt.begin() + 1, dt.end()) == tide::Dims(df.begin() + 1, df.end()),
               "op 'merge_lod_tensor': InTrue '", t_name, "' ", tide::ToString(dt),
               " and InFalse '", f_name, "' ", tide::ToString(df), " differ in dtype or row dims");
  }
  tide::OwnedTensor tmp_t, tmp_f;
  tide::Tensor ht = have_true ? OnHost(in_true, tmp_t) : in_true;
  tide::Tensor hf = have_false ? OnHost(in_false, tmp_f) : in_false;
  const LoD lod_t = have_true ? in_true.lod() : LoD(), lod_f = have_false ? in_false.lod() : LoD();
  const size_t levels = like.lod().size();
  Gather out(like, levels);
  size_t next_t = 0, next_f = 0;
  const size_t n_t = have_true ? ItemCount(in_true, 0, "merge_lod_tensor", t_name) : 0;
  const size_t n_f = have_false ? ItemCount(in_false, 0, "merge_lod_tensor", f_name) : 0;
  for (bool m : mask) {
    if (m) {
      TIDE_CHECK(next_t < n_t, "op 'merge_lod_tensor': Mask has more true items than InTrue '",
                 t_name, "' holds (", n_t, ")");
      out.Add(ht, ItemOf(lod_t, 0, next_t++));
    } else {
      TIDE_CHECK(next_f < n_f, "op 'merge_lod_tensor': Mask has more false items than InFalse '",
                 f_name, "' holds (", n_f, ")");
      out.Add(hf, ItemOf(lod_f, 0, next_f++));
    }
  }
  out.WriteTo(ctx, Lookup(ctx, OnlyOutput(ctx, "Out")).GetTensor());
}

}  // namespace
}  // namespace ops_control

TIDE_REGISTER_OP(tide::OpSchema("split_lod_tensor")
                     .Comment("Splits X's items (rows, or sequences at LoD level `level`) by Mask.")
                     .Input("X", "the batch")
                     .Input("Mask", "one bool per item")
                     .Output("OutTrue", "the items whose mask is true, in order")
                     .Output("OutFalse", "the others, in order")
                     .Attr("level", int32_t(0), "the LoD level whose sequences are the items")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       if (ctx.IsRuntime()) return;
                       for (const char* out : {"OutTrue", "OutFalse"}) {
                         ctx.SetOutputDims(out, ctx.InputDims("X"));
                         ctx.SetOutputDataType(out, ctx.InputDataType("X"));
                         ctx.ShareLoD("X", out);
                       }
                     })
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("merge_lod_tensor")
                           .Input("X", g.Input("X"))
                           .Input("Mask", g.Input("Mask"))
                           .Input("InTrue", g.OutputGrad("OutTrue"))
                           .Input("InFalse", g.OutputGrad("OutFalse"))
                           .Output("Out", g.InputGrad("X"))
                           .Attr("level", g.Attr<int32_t>("level"));
                     })
                     .Run(ops_control::SplitRun));

TIDE_REGISTER_OP(tide::OpSchema("merge_lod_tensor")
                     .Comment("Merges InTrue's and InFalse's items back in Mask's order.")
                     .Input("X", "the batch that was split (its item count)")
                     .Input("Mask", "one bool per item")
                     .Input("InTrue", "the true items")
                     .Input("InFalse", "the false items")
                     .Output("Out", "the merged batch")
                     .Attr("level", int32_t(0), "the LoD level whose sequences are the items")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       if (ctx.IsRuntime()) return;
                       ctx.SetOutputDims("Out", ctx.InputDims("InTrue"));
                       ctx.SetOutputDataType("Out", ctx.InputDataType("InTrue"));
                       ctx.ShareLoD("X", "Out");
                     })
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("split_lod_tensor")
                           .Input("X", g.OutputGrad("Out"))
                           .Input("Mask", g.Input("Mask"))
                           .Output("OutTrue", g.InputGrad("InTrue"))
                           .Output("OutFalse", g.InputGrad("InFalse"))
                           .Attr("level", g.Attr<int32_t>("level"));
                     })
                     .Run(ops_control::MergeRun));
