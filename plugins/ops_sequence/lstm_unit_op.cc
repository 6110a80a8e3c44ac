// lstm_unit_op.cc: lstm_unit (one LSTM step, Fluid's lstm_unit_op) and its grad. X [N, 4D] holds
// the pre-activation gates in Fluid's lstm_unit order [i, f, o, g]:
//   i = sigmoid(x_i)  f = sigmoid(x_f + forget_bias)  o = sigmoid(x_o)  g = tanh(x_g)
//   C = f C_prev + i g   H = o tanh(C)
#include <cmath>

#include "rnn_activations.h"
#include "rnn_common.h"

namespace ops_sequence {
namespace {

// Checks X [N, 4D] and C_prev [N, D]; returns {N, D}.
template <typename Ctx>
std::pair<int64_t, int64_t> CheckLstmUnitInputs(const Ctx& ctx) {
  const Dims c = Matrix(ctx, "C_prev", "[N, D]: the previous cell state");
  const Dims x = Matrix(ctx, "X", "[N, 4D]: the gates i, f, o, g before activation");
  ExpectInputDims(ctx, "X", {c[0], c[1] < 0 ? -1 : 4 * c[1]}, "[N, 4D] with C_prev [N, D]");
  return {x[0] >= 0 ? x[0] : c[0], c[1]};
}

// The four activated gates of one row (x: 4d pre-activations) into i, f, o, g [d] each.
template <typename T>
void Gates(const T* x, int64_t d, T forget_bias, T* ifog) {
  std::copy(x, x + 4 * d, ifog);
  ArrayMap<T>(ifog + d, d) += forget_bias;
  Activate(Act::kSigmoid, ifog, 3 * d);
  Activate(Act::kTanh, ifog + 3 * d, d);
}

template <typename T>
void LstmUnitKernel(KernelContext& ctx) {
  const auto [n, d] = CheckLstmUnitInputs(ctx);
  const T forget_bias = static_cast<T>(ctx.Attr<float>("forget_bias"));
  const T* x = ctx.Input("X").data<T>();
  const T* cp = ctx.Input("C_prev").data<T>();
  Tensor c_out = ctx.Output("C"), h_out = ctx.Output("H");
  T* c = c_out.mutable_data<T>({n, d}, ctx.place());
  T* h = h_out.mutable_data<T>({n, d}, ctx.place());
  T* ifog = ctx.TempBuffer<T>(4 * d);
  for (int64_t r = 0; r < n; ++r) {
    Gates(x + r * 4 * d, d, forget_bias, ifog);
    ConstArrayMap<T> i(ifog, d), f(ifog + d, d), o(ifog + 2 * d, d), g(ifog + 3 * d, d);
    ArrayMap<T> cv(c + r * d, d);
    cv = f * ConstArrayMap<T>(cp + r * d, d) + i * g;
    ArrayMap<T>(h + r * d, d) = o * cv.tanh();
  }
}

template <typename T>
void LstmUnitGradKernel(KernelContext& ctx) {
  const auto [n, d] = CheckLstmUnitInputs(ctx);
  const char* op = ctx.op_type();
  const T forget_bias = static_cast<T>(ctx.Attr<float>("forget_bias"));
  const std::string dc_name = GradVarName("C"), dh_name = GradVarName("H");
  Tensor c_t = ctx.Input("C");
  TIDE_CHECK(c_t.numel() == n * d, "op '", op, "': C ('", ctx.InputName("C"), "') has dims ",
             tide::ToString(c_t.dims()), ", not C_prev's [", n, ", ", d, "]");
  for (const std::string& p : {dc_name, dh_name}) {
    Tensor t = ctx.OptionalInput(p.c_str());
    TIDE_CHECK(!t || t.numel() == n * d, "op '", op, "': ", p, " has dims ",
               tide::ToString(t ? t.dims() : Dims{}), ", not C's [", n, ", ", d, "]");
  }
  const T* x = ctx.Input("X").data<T>();
  const T* cp = ctx.Input("C_prev").data<T>();
  const T* c = c_t.data<T>();
  Tensor dc_t = ctx.OptionalInput(dc_name.c_str()), dh_t = ctx.OptionalInput(dh_name.c_str());
  Tensor dx_t = ctx.OptionalOutput(GradVarName("X").c_str());
  Tensor dcp_t = ctx.OptionalOutput(GradVarName("C_prev").c_str());
  T* dx = dx_t ? dx_t.mutable_data<T>({n, 4 * d}, ctx.place()) : ctx.TempBuffer<T>(4 * d);
  T* dcp = dcp_t ? dcp_t.mutable_data<T>({n, d}, ctx.place()) : nullptr;
  T* ifog = ctx.TempBuffer<T>(4 * d);
  T* dct = ctx.TempBuffer<T>(2 * d);  // C's whole gradient, then tanh(C)
  T* tc = dct + d;
  for (int64_t r = 0; r < n; ++r) {
    Gates(x + r * 4 * d, d, forget_bias, ifog);
    ConstArrayMap<T> i(ifog, d), f(ifog + d, d), o(ifog + 2 * d, d), g(ifog + 3 * d, d);
    ArrayMap<T> tcv(tc, d), dcv(dct, d);
    tcv = ConstArrayMap<T>(c + r * d, d).tanh();
    T* dxr = dx_t ? dx + r * 4 * d : dx;
    ArrayMap<T> di(dxr, d), df(dxr + d, d), dov(dxr + 2 * d, d), dg(dxr + 3 * d, d);
    if (dc_t)
      dcv = ConstArrayMap<T>(dc_t.data<T>() + r * d, d);
    else
      dcv.setZero();
    if (dh_t) {
      ConstArrayMap<T> dh(dh_t.data<T>() + r * d, d);
      dcv += dh * o * (T(1) - tcv.square());
      dov = dh * tcv * o * (T(1) - o);
    } else {
      dov.setZero();
    }
    ConstArrayMap<T> cpr(cp + r * d, d);
    di = dcv * g * i * (T(1) - i);
    df = dcv * cpr * f * (T(1) - f);
    dg = dcv * i * (T(1) - g.square());
    if (dcp) ArrayMap<T>(dcp + r * d, d) = dcv * f;
  }
}

void LstmUnitShape(tide::InferShapeContext& ctx) {
  const auto [n, d] = CheckLstmUnitInputs(ctx);
  for (const char* out : {"C", "H"}) {
    ctx.SetOutputDims(out, {n, d});
    ctx.SetOutputDataType(out, ctx.InputDataType("X"));
  }
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("lstm_unit")
                     .Comment("One LSTM step: X [N, 4D] = gates [i, f, o, g] before activation; "
                              "C = f C_prev + i g, H = o tanh(C).")
                     .Input("X", "[N, 4D]: the gates before activation")
                     .Input("C_prev", "[N, D]: the previous cell state")
                     .Output("C", "[N, D]: the new cell state")
                     .Output("H", "[N, D]: the new hidden state")
                     .Attr("forget_bias", 0.0f, "added to the forget gate before its sigmoid")
                     .InferShape(LstmUnitShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("lstm_unit_grad")
                           .Input("X", g.Input("X"))
                           .Input("C_prev", g.Input("C_prev"))
                           .Input("C", g.Output("C"))
                           .Input("H", g.Output("H"))
                           .Input(GradVarName("C"), g.OutputGrad("C"))
                           .Input(GradVarName("H"), g.OutputGrad("H"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("C_prev"), g.InputGrad("C_prev"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("lstm_unit_grad")
                     .Input("X")
                     .Input("C_prev")
                     .Input("C")
                     .Input("H")
                     .Input(GradVarName("C"))
                     .AsDispensable()
                     .Input(GradVarName("H"))
                     .AsDispensable()
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("C_prev"))
                     .AsDispensable()
                     .Attr("forget_bias", 0.0f)
                     .InferShape([](tide::InferShapeContext& c) {
                       GradLikeInputs(c, {"X", "C_prev"});
                     }));
TIDE_REGISTER_KERNEL("lstm_unit", "cpu", LstmUnitKernel, OPS_SEQUENCE_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lstm_unit_grad", "cpu", LstmUnitGradKernel, OPS_SEQUENCE_FLOAT_TYPES);
