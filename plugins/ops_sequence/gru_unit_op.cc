// gru_unit_op.cc: gru_unit (one GRU step, Fluid's gru_unit_op) and its grad. Input [N, 3D] holds
// x W_x for the gates [u, r, c~]; Weight [D, 3D] stores W_ur [D, 2D] then W_c [D, D] (Fluid's
// layout, as gru); the activations are Fluid's enum ints (0 identity, 1 sigmoid, 2 tanh, 3 relu).
#include <tide/gemm.hpp>

#include "gru_common.h"
#include "rnn_common.h"

namespace ops_sequence {
namespace {

// Checks Input [N, 3D], HiddenPrev [N, D], Weight [D, 3D], Bias [1, 3D]; returns {N, D}.
template <typename Ctx>
std::pair<int64_t, int64_t> CheckGruUnitInputs(const Ctx& ctx) {
  const Dims hp = Matrix(ctx, "HiddenPrev", "[N, D]: the previous hidden state");
  const int64_t d = hp[1], g = d < 0 ? -1 : 3 * d;
  Matrix(ctx, "Input", "[N, 3D]: x W_x for the gates u, r, c~");
  ExpectInputDims(ctx, "Input", {hp[0], g}, "[N, 3D] with HiddenPrev [N, D]");
  ExpectInputDims(ctx, "Weight", {d, g}, "[D, 3D] with HiddenPrev [N, D]");
  if (Given(ctx, "Bias")) ExpectInputDims(ctx, "Bias", {1, g}, "[1, 3D]: the gate biases");
  return {hp[0], d};
}

template <typename Ctx>
GruActs GruUnitActs(const Ctx& ctx) {
  const char* op = ctx.op_type();
  return {ActOfCode(op, "gate_activation", ctx.template Attr<int32_t>("gate_activation")),
          ActOfCode(op, "activation", ctx.template Attr<int32_t>("activation")),
          ctx.template Attr<bool>("origin_mode")};
}

template <typename T>
void GruUnitKernel(KernelContext& ctx) {
  const auto [n, d] = CheckGruUnitInputs(ctx);
  const int64_t g = 3 * d;
  const GruActs acts = GruUnitActs(ctx);
  const T* w = ctx.Input("Weight").data<T>();
  const T* hp = ctx.Input("HiddenPrev").data<T>();
  Tensor gate_t = ctx.Output("Gate"), rhp_t = ctx.Output("ResetHiddenPrev");
  Tensor hidden_t = ctx.Output("Hidden");
  T* gate = gate_t.mutable_data<T>({n, g}, ctx.place());
  T* rhp = rhp_t.mutable_data<T>({n, d}, ctx.place());
  T* h = hidden_t.mutable_data<T>({n, d}, ctx.place());
  const T* x = ctx.Input("Input").data<T>();
  std::copy(x, x + n * g, gate);
  if (Tensor bias = ctx.OptionalInput("Bias")) AddBiasRows(gate, bias.data<T>(), n, g);
  T* hw_ur = ctx.TempBuffer<T>(std::max<int64_t>(n, 1) * 2 * d);
  T* hw_c = ctx.TempBuffer<T>(std::max<int64_t>(n, 1) * d);
  tide::Gemm<T>(ctx, false, false, n, 2 * d, d, T(1), hp, w, T(0), hw_ur);
  for (int64_t i = 0; i < n; ++i)
    GruGatesForward(acts, d, gate + i * g, hw_ur + i * 2 * d, hp + i * d, rhp + i * d);
  tide::Gemm<T>(ctx, false, false, n, d, d, T(1), rhp, w + 2 * d * d, T(0), hw_c);
  for (int64_t i = 0; i < n; ++i)
    GruOutputForward(acts, d, gate + i * g, hw_c + i * d, hp + i * d, h + i * d);
}

template <typename T>
void GruUnitGradKernel(KernelContext& ctx) {
  const auto [n, d] = CheckGruUnitInputs(ctx);
  const char* op = ctx.op_type();
  const int64_t g = 3 * d;
  const GruActs acts = GruUnitActs(ctx);
  const std::string dh_name = GradVarName("Hidden");
  for (const char* p : {"Gate", "ResetHiddenPrev", dh_name.c_str()}) {
    Tensor t = ctx.Input(p);
    const int64_t want = std::string(p) == "Gate" ? n * g : n * d;
    TIDE_CHECK(t.numel() == want, "op '", op, "': ", p, " ('", ctx.InputName(p), "') has dims ",
               tide::ToString(t.dims()), " but must hold ", want, " elements");
  }
  const T* w = ctx.Input("Weight").data<T>();
  const T* hp = ctx.Input("HiddenPrev").data<T>();
  const T* gate = ctx.Input("Gate").data<T>();
  const T* rhp = ctx.Input("ResetHiddenPrev").data<T>();
  const T* dh = ctx.Input(dh_name.c_str()).data<T>();
  T* dur = ctx.TempBuffer<T>(std::max<int64_t>(n, 1) * 2 * d);
  T* dc = ctx.TempBuffer<T>(std::max<int64_t>(n, 1) * d);
  T* drhp = ctx.TempBuffer<T>(std::max<int64_t>(n, 1) * d);
  Tensor dhp_t = ctx.OptionalOutput(GradVarName("HiddenPrev").c_str());
  T* dhp = dhp_t ? dhp_t.mutable_data<T>({n, d}, ctx.place())
                 : ctx.TempBuffer<T>(std::max<int64_t>(n, 1) * d);
  std::fill(dhp, dhp + n * d, T(0));
  for (int64_t i = 0; i < n; ++i)
    GruOutputBackward(acts, d, gate + i * g, hp + i * d, dh + i * d, dur + i * 2 * d, dc + i * d,
                      dhp + i * d);
  tide::Gemm<T>(ctx, false, true, n, d, d, T(1), dc, w + 2 * d * d, T(0), drhp);
  for (int64_t i = 0; i < n; ++i)
    GruResetBackward(acts, d, gate + i * g, hp + i * d, drhp + i * d, dur + i * 2 * d, dhp + i * d);
  tide::Gemm<T>(ctx, false, true, n, d, 2 * d, T(1), dur, w, T(1), dhp);
  if (Tensor din = ctx.OptionalOutput(GradVarName("Input").c_str())) {
    T* out = din.mutable_data<T>({n, g}, ctx.place());
    for (int64_t i = 0; i < n; ++i) {
      std::copy(dur + i * 2 * d, dur + (i + 1) * 2 * d, out + i * g);
      std::copy(dc + i * d, dc + (i + 1) * d, out + i * g + 2 * d);
    }
  }
  if (Tensor dw = ctx.OptionalOutput(GradVarName("Weight").c_str())) {
    T* dwd = dw.mutable_data<T>({d, g}, ctx.place());
    tide::Gemm<T>(ctx, true, false, d, 2 * d, n, T(1), hp, dur, T(0), dwd);
    tide::Gemm<T>(ctx, true, false, d, d, n, T(1), rhp, dc, T(0), dwd + 2 * d * d);
  }
  if (Tensor dbias = ctx.OptionalOutput(GradVarName("Bias").c_str())) {
    T* db = dbias.mutable_data<T>({1, g}, ctx.place());
    std::fill(db, db + g, T(0));
    AddColumnSums(dur, n, 2 * d, db);
    AddColumnSums(dc, n, d, db + 2 * d);
  }
}

void GruUnitShape(tide::InferShapeContext& ctx) {
  GruUnitActs(ctx);
  const auto [n, d] = CheckGruUnitInputs(ctx);
  const TideDataType dtype = ctx.InputDataType("Input");
  for (const char* out : {"Gate", "ResetHiddenPrev", "Hidden"}) {
    ctx.SetOutputDims(out, {n, std::string(out) == "Gate" && d >= 0 ? 3 * d : d});
    ctx.SetOutputDataType(out, dtype);
  }
}

tide::OpSchema GruUnitAttrs(tide::OpSchema s) {
  return s.Attr("activation", int32_t(2), "of c~: 0 identity, 1 sigmoid, 2 tanh, 3 relu")
      .Attr("gate_activation", int32_t(1), "of u and r: 0 identity, 1 sigmoid, 2 tanh, 3 relu")
      .Attr("origin_mode", false, "h = u h_prev + (1 - u) c~ instead of (1 - u) h_prev + u c~");
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(GruUnitAttrs(tide::OpSchema("gru_unit"))
                     .Comment("One GRU step (Fluid's gru_unit); gates [u, r, c~].")
                     .Input("Input", "[N, 3D]: x W_x for the gates")
                     .Input("HiddenPrev", "[N, D]: the previous hidden state")
                     .Input("Weight", "[D, 3D]: W_ur [D, 2D] then W_c [D, D]")
                     .Input("Bias", "[1, 3D]: gate biases")
                     .AsDispensable()
                     .Output("Gate", "[N, 3D]: the activated gates")
                     .AsIntermediate()
                     .Output("ResetHiddenPrev", "[N, D]: r * HiddenPrev")
                     .AsIntermediate()
                     .Output("Hidden", "[N, D]: the new hidden state")
                     .InferShape(GruUnitShape)
                     .Grad([](tide::GradMaker& g) {
                       auto op = g.NewOp("gru_unit_grad");
                       for (const char* p : {"Input", "HiddenPrev", "Weight", "Bias"})
                         op.Input(p, g.Input(p));
                       for (const char* p : {"Gate", "ResetHiddenPrev", "Hidden"})
                         op.Input(p, g.Output(p));
                       op.Input(GradVarName("Hidden"), g.OutputGrad("Hidden"));
                       for (const char* p : {"Input", "HiddenPrev", "Weight", "Bias"})
                         op.Output(GradVarName(p), g.InputGrad(p));
                       op.CopyAttrs();
                     }));
TIDE_REGISTER_OP(GruUnitAttrs(tide::OpSchema("gru_unit_grad"))
                     .Input("Input")
                     .Input("HiddenPrev")
                     .Input("Weight")
                     .Input("Bias")
                     .AsDispensable()
                     .Input("Gate")
                     .Input("ResetHiddenPrev")
                     .Input("Hidden")
                     .Input(GradVarName("Hidden"))
                     .Output(GradVarName("Input"))
                     .AsDispensable()
                     .Output(GradVarName("HiddenPrev"))
                     .AsDispensable()
                     .Output(GradVarName("Weight"))
                     .AsDispensable()
                     .Output(GradVarName("Bias"))
                     .AsDispensable()
                     .InferShape([](tide::InferShapeContext& c) {
                       GradLikeInputs(c, {"Input", "HiddenPrev", "Weight", "Bias"});
                     }));
TIDE_REGISTER_KERNEL("gru_unit", "cpu", GruUnitKernel, OPS_SEQUENCE_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("gru_unit_grad", "cpu", GruUnitGradKernel, OPS_SEQUENCE_FLOAT_TYPES);
