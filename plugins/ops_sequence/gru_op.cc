// gru_op.cc: gru (Fluid's dynamic_gru kernel) and its grad over the sequences of a 1-level LoD,
// in SequenceToBatch layout: per time step, GEMMs over the sequences still running. Gate columns
// follow Fluid: [update u, reset r, candidate c~], each D wide. Weight [D, 3D] holds, as Fluid
// stores it, W_ur [D, 2D] in its first 2D*D elements and W_c [D, D] in the last D*D.
//   u = act_gate(x_u + h W_u)   r = act_gate(x_r + h W_r)   c~ = act(x_c + (r h) W_c)
//   h' = (1 - u) h + u c~   (origin_mode: h' = u h + (1 - u) c~)
#include <tide/gemm.hpp>

#include "gru_common.h"
#include "rnn_common.h"
#include "sequence2batch.h"

namespace ops_sequence {
namespace {

// Checks Input [T, 3D], Weight [D, 3D], Bias [1, 3D], H0 [num_seqs, D]; returns D.
template <typename Ctx>
int64_t CheckGruInputs(const Ctx& ctx, int64_t num_seqs) {
  const Dims w = Matrix(ctx, "Weight", "[D, 3D]: the hidden-to-gates weights");
  const int64_t d = w[0];
  const int64_t g = d < 0 ? -1 : 3 * d;
  ExpectInputDims(ctx, "Weight", {d, g}, "[D, 3D]: the hidden-to-gates weights");
  Matrix(ctx, "Input", "[T, 3D]: the projected input of every step");
  ExpectInputDims(ctx, "Input", {-1, g}, "[T, 3D] with D = Weight's rows");
  if (Given(ctx, "Bias")) ExpectInputDims(ctx, "Bias", {1, g}, "[1, 3D]: the gate biases");
  if (Given(ctx, "H0")) ExpectInputDims(ctx, "H0", {num_seqs, d}, "[number of sequences, D]");
  return d;
}

template <typename Ctx>
GruActs GruActsOf(const Ctx& ctx) {
  const char* op = ctx.op_type();
  return {ActOf(op, "gate_activation", ctx.template Attr<std::string>("gate_activation")),
          ActOf(op, "activation", ctx.template Attr<std::string>("activation")),
          ctx.template Attr<bool>("origin_mode")};
}

template <typename T>
T* OrderedH0(const KernelContext& ctx, const BatchLayout& b, int64_t d) {
  Tensor t = ctx.OptionalInput("H0");
  if (!t) return nullptr;
  T* out = ctx.TempBuffer<T>(b.order.size() * d);
  ReorderInitState(b, t.data<T>(), out, d);
  return out;
}

template <typename T>
void GruKernel(KernelContext& ctx) {
  const LoD lod = InputLoD(ctx, "Input", 1);
  const BatchLayout b = MakeBatchLayout(lod[0], ctx.Attr<bool>("is_reverse"));
  const int64_t d = CheckGruInputs(ctx, static_cast<int64_t>(b.order.size()));
  const int64_t g = 3 * d, rows = b.total();
  const GruActs acts = GruActsOf(ctx);
  const T* w = ctx.Input("Weight").data<T>();
  Tensor batch_gate = ctx.Output("BatchGate"), batch_rhp = ctx.Output("BatchResetHiddenPrev");
  Tensor batch_hidden = ctx.Output("BatchHidden"), hidden = ctx.Output("Hidden");
  T* gate = batch_gate.mutable_data<T>({rows, g}, ctx.place());
  T* rhp = batch_rhp.mutable_data<T>({rows, d}, ctx.place());
  T* bh = batch_hidden.mutable_data<T>({rows, d}, ctx.place());
  ToBatch(b, ctx.Input("Input").data<T>(), gate, g);
  if (Tensor bias = ctx.OptionalInput("Bias")) AddBiasRows(gate, bias.data<T>(), rows, g);
  const T* h_init = OrderedH0<T>(ctx, b, d);
  const int64_t widest = b.steps() ? b.rows(0) : 0;
  T* hw_ur = ctx.TempBuffer<T>(std::max<int64_t>(widest, 1) * 2 * d);  // h W_ur of a step
  T* hw_c = ctx.TempBuffer<T>(std::max<int64_t>(widest, 1) * d);       // (r h) W_c of a step
  for (int64_t t = 0; t < b.steps(); ++t) {
    const int64_t r0 = b.starts[t], n = b.rows(t);
    const T* ph = t ? bh + b.starts[t - 1] * d : h_init;
    if (ph) tide::Gemm<T>(ctx, false, false, n, 2 * d, d, T(1), ph, w, T(0), hw_ur);
    for (int64_t i = 0; i < n; ++i)
      GruGatesForward(acts, d, gate + (r0 + i) * g, ph ? hw_ur + i * 2 * d : nullptr,
                      ph ? ph + i * d : nullptr, rhp + (r0 + i) * d);
    if (ph)
      tide::Gemm<T>(ctx, false, false, n, d, d, T(1), rhp + r0 * d, w + 2 * d * d, T(0), hw_c);
    for (int64_t i = 0; i < n; ++i)
      GruOutputForward(acts, d, gate + (r0 + i) * g, ph ? hw_c + i * d : nullptr,
                       ph ? ph + i * d : nullptr, bh + (r0 + i) * d);
  }
  ToSeq(b, bh, hidden.mutable_data<T>({rows, d}, ctx.place()), d);
  hidden.set_lod(lod);
}

void ExpectSize(const KernelContext& ctx, const char* param, int64_t rows, int64_t width) {
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.numel() == rows * width, "op '", ctx.op_type(), "': ", param, " ('",
             ctx.InputName(param), "') has dims ", tide::ToString(t.dims()), " but must hold ",
             rows, " x ", width, " elements");
}

template <typename T>
void GruGradKernel(KernelContext& ctx) {
  const LoD lod = InputLoD(ctx, "Input", 1);
  const BatchLayout b = MakeBatchLayout(lod[0], ctx.Attr<bool>("is_reverse"));
  const int64_t d = CheckGruInputs(ctx, static_cast<int64_t>(b.order.size()));
  const int64_t g = 3 * d, rows = b.total(), steps = b.steps();
  const int64_t seqs = static_cast<int64_t>(b.order.size());
  const GruActs acts = GruActsOf(ctx);
  const std::string dhidden_name = GradVarName("Hidden");
  for (const char* p : {"BatchResetHiddenPrev", "BatchHidden", dhidden_name.c_str()})
    ExpectSize(ctx, p, rows, d);
  ExpectSize(ctx, "BatchGate", rows, g);
  const T* w = ctx.Input("Weight").data<T>();
  const T* gate = ctx.Input("BatchGate").data<T>();
  const T* rhp = ctx.Input("BatchResetHiddenPrev").data<T>();
  const T* bh = ctx.Input("BatchHidden").data<T>();
  T* bdh = ctx.TempBuffer<T>(rows * d);
  ToBatch(b, ctx.Input(dhidden_name.c_str()).data<T>(), bdh, d);
  // Gate gradients (pre-activation), u and r apart from c~ so each is a contiguous matrix.
  T* dur = ctx.TempBuffer<T>(rows * 2 * d);
  T* dc = ctx.TempBuffer<T>(rows * d);
  const T* h_init = OrderedH0<T>(ctx, b, d);
  T* dh_init = h_init ? ctx.TempBuffer<T>(seqs * d) : nullptr;
  if (dh_init) std::fill(dh_init, dh_init + seqs * d, T(0));
  const int64_t widest = steps ? b.rows(0) : 0;
  T* drhp = ctx.TempBuffer<T>(std::max<int64_t>(widest, 1) * d);  // (r h)'s gradient of a step
  // W_ur^T [2D, D] and W_c^T [D, D] once: the steps' products with them are then plain ones
  // (oneDNN packs a transposed operand more slowly, and repacks the weights on every call).
  T* wt_ur = ctx.TempBuffer<T>(3 * d * d);
  T* wt_c = wt_ur + 2 * d * d;
  MatrixMap<T>(wt_ur, 2 * d, d) = ConstMatrixMap<T>(w, d, 2 * d).transpose();
  MatrixMap<T>(wt_c, d, d) = ConstMatrixMap<T>(w + 2 * d * d, d, d).transpose();
  for (int64_t t = steps - 1; t >= 0; --t) {
    const int64_t r0 = b.starts[t], n = b.rows(t);
    const T* ph = t ? bh + b.starts[t - 1] * d : h_init;
    T* dph = t ? bdh + b.starts[t - 1] * d : dh_init;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = r0 + i;
      GruOutputBackward(acts, d, gate + r * g, ph ? ph + i * d : nullptr, bdh + r * d,
                        dur + r * 2 * d, dc + r * d, dph ? dph + i * d : nullptr);
    }
    if (!ph) {  // step 0 from a zero state: r did not matter
      for (int64_t i = 0; i < n; ++i)
        std::fill(dur + (r0 + i) * 2 * d + d, dur + (r0 + i + 1) * 2 * d, T(0));
      continue;
    }
    tide::Gemm<T>(ctx, false, false, n, d, d, T(1), dc + r0 * d, wt_c, T(0), drhp);
    for (int64_t i = 0; i < n; ++i)
      GruResetBackward(acts, d, gate + (r0 + i) * g, ph + i * d, drhp + i * d,
                       dur + (r0 + i) * 2 * d, dph + i * d);
    tide::Gemm<T>(ctx, false, false, n, d, 2 * d, T(1), dur + r0 * 2 * d, wt_ur, T(1), dph);
  }
  if (Tensor din = ctx.OptionalOutput(GradVarName("Input").c_str())) {
    T* out = din.mutable_data<T>({rows, g}, ctx.place());
    for (int64_t r = 0; r < rows; ++r) {
      T* row = out + b.seq_rows[r] * g;
      std::copy(dur + r * 2 * d, dur + (r + 1) * 2 * d, row);
      std::copy(dc + r * d, dc + (r + 1) * d, row + 2 * d);
    }
    din.set_lod(lod);
  }
  // Step t's rows start from step t-1's hidden rows (or H0): gathered once, each weight's
  // gradient is one product over all rows rather than one per step.
  if (Tensor dw = ctx.OptionalOutput(GradVarName("Weight").c_str())) {
    T* dwd = dw.mutable_data<T>({d, g}, ctx.place());
    const int64_t first = h_init ? 0 : 1;
    const int64_t k = first < steps ? rows - b.starts[first] : 0;
    T* prev_h = ctx.TempBuffer<T>(std::max<int64_t>(k, 1) * d);
    if (k) GatherPrevStates(b, bh, h_init, prev_h, d, first);
    const int64_t from = rows - k;
    tide::Gemm<T>(ctx, true, false, d, 2 * d, k, T(1), prev_h, dur + from * 2 * d, T(0), dwd);
    tide::Gemm<T>(ctx, true, false, d, d, k, T(1), rhp + from * d, dc + from * d, T(0),
                  dwd + 2 * d * d);
  }
  if (Tensor dbias = ctx.OptionalOutput(GradVarName("Bias").c_str())) {
    T* db = dbias.mutable_data<T>({1, g}, ctx.place());
    std::fill(db, db + g, T(0));
    AddColumnSums(dur, rows, 2 * d, db);
    AddColumnSums(dc, rows, d, db + 2 * d);
  }
  if (Tensor dh0 = ctx.OptionalOutput(GradVarName("H0").c_str()))
    RestoreInitStateOrder(b, dh_init, dh0.mutable_data<T>({seqs, d}, ctx.place()), d);
}

void GruShape(tide::InferShapeContext& ctx) {
  GruActsOf(ctx);
  const int64_t d = CheckGruInputs(ctx, -1);
  if (ctx.IsRuntime()) return;  // the kernel sizes the outputs from the LoD
  const int64_t rows = ctx.InputDims("Input")[0];
  const TideDataType dtype = ctx.InputDataType("Input");
  for (const char* out : {"Hidden", "BatchResetHiddenPrev", "BatchHidden", "BatchGate"}) {
    if (!ctx.HasOutput(out)) continue;
    const bool gates = std::string(out) == "BatchGate";
    ctx.SetOutputDims(out, {rows, d < 0 ? -1 : (gates ? 3 * d : d)});
    ctx.SetOutputDataType(out, dtype);
  }
  ctx.ShareLoD("Input", "Hidden");
}

tide::OpSchema GruAttrs(tide::OpSchema s) {
  return s.Attr("activation", std::string("tanh"), "of the candidate c~")
      .InSet({"sigmoid", "tanh", "relu", "identity"})
      .Attr("gate_activation", std::string("sigmoid"), "of the update and reset gates")
      .InSet({"sigmoid", "tanh", "relu", "identity"})
      .Attr("is_reverse", false, "run each sequence from its last step to its first")
      .Attr("origin_mode", false, "h' = u h + (1 - u) c~ (Cho et al.) instead of (1 - u) h + u c~");
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    GruAttrs(tide::OpSchema("gru"))
        .Comment("Fluid's dynamic GRU over the sequences of Input's 1-level LoD, batched by "
                 "SequenceToBatch. Gate columns [u, r, c~].")
        .Input("Input", "[T, 3D]: x W_x of every step (LoD level 1)")
        .Input("H0", "[number of sequences, D]: initial hidden states (zero if absent)")
        .AsDispensable()
        .Input("Weight", "[D, 3D]: W_ur [D, 2D] then W_c [D, D], stored one after the other")
        .Input("Bias", "[1, 3D]: gate biases")
        .AsDispensable()
        .Output("BatchGate", "[T, 3D]: activated gates in batch order (for the grad)")
        .AsIntermediate()
        .Output("BatchResetHiddenPrev", "[T, D]: r h in batch order (for the grad)")
        .AsIntermediate()
        .Output("BatchHidden", "[T, D]: h in batch order (for the grad)")
        .AsIntermediate()
        .Output("Hidden", "[T, D], Input's LoD")
        .InferShape(GruShape)
        .Grad([](tide::GradMaker& g) {
          auto op = g.NewOp("gru_grad");
          for (const char* p : {"Input", "H0", "Weight", "Bias"}) op.Input(p, g.Input(p));
          for (const char* p : {"BatchGate", "BatchResetHiddenPrev", "BatchHidden", "Hidden"})
            op.Input(p, g.Output(p));
          op.Input(GradVarName("Hidden"), g.OutputGrad("Hidden"));
          for (const char* p : {"Input", "H0", "Weight", "Bias"})
            op.Output(GradVarName(p), g.InputGrad(p));
          op.CopyAttrs();
        }));
TIDE_REGISTER_OP(GruAttrs(tide::OpSchema("gru_grad"))
                     .Input("Input")
                     .Input("H0")
                     .AsDispensable()
                     .Input("Weight")
                     .Input("Bias")
                     .AsDispensable()
                     .Input("BatchGate")
                     .Input("BatchResetHiddenPrev")
                     .Input("BatchHidden")
                     .Input("Hidden")
                     .Input(GradVarName("Hidden"))
                     .Output(GradVarName("Input"))
                     .AsDispensable()
                     .Output(GradVarName("H0"))
                     .AsDispensable()
                     .Output(GradVarName("Weight"))
                     .AsDispensable()
                     .Output(GradVarName("Bias"))
                     .AsDispensable()
                     .InferShape([](tide::InferShapeContext& c) {
                       GradLikeInputs(c, {"Input", "H0", "Weight", "Bias"});
                     }));
TIDE_REGISTER_KERNEL("gru", "cpu", GruKernel, OPS_SEQUENCE_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("gru_grad", "cpu", GruGradKernel, OPS_SEQUENCE_FLOAT_TYPES);
