// rnn_op.cc: Paddle 2.x's rnn op (nn.LSTM, nn.GRU, nn.SimpleRNN: LSTM, GRU, RNN_TANH, RNN_RELU),
// multi-layer, bidirectional, time major, with per-sequence lengths, and its grad. The rules
// (attributes, WeightList's layout, dims) are tide/ops/rnn.hpp's; one row's cell is
// rnn_cells.h's. Per layer and direction: one GEMM projects every step's input (x W_ih^T, the
// biases added), then one GEMM per step adds h_prev W_hh^T. A step at or past a sequence's length
// outputs 0 and keeps the state, so the backward direction starts at each sequence's last step.
// Training with dropout_prob > 0 drops the inputs of layers after the first (upscale_in_train);
// the masks go to Reserve. The grad runs the forward again, keeping every step's gates and
// states, then goes back through the steps and layers.
#include <random>
#include <tide/gemm.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/ops/rnn.hpp>

#include "rnn_cells.h"
#include "rnn_common.h"

namespace ops_sequence {
namespace {

using tide::ops::RnnArgs;
using tide::ops::RnnMode;
using tide::ops::RnnParam;
using tide::ops::RnnSpec;

// The simple RNN's activation.
inline Act RnnAct(const RnnSpec& s) {
  return s.mode == RnnMode::kRnnRelu ? Act::kRelu : Act::kTanh;
}

// One layer and direction's steps, in time order (the backward direction runs them from the
// last): activated gates [T, N, G * H], the state each step started from [T, N, H] (h, and c for
// LSTM), GRU's candidate product hc [T, N, H].
template <typename T>
struct CellRun {
  T *gates, *h_prev, *c_prev, *hc;
};

template <typename T>
CellRun<T> NewCellRun(const KernelContext& ctx, const RnnArgs<T>& a) {
  const int64_t rows = a.rows(), h = a.s.hidden;
  CellRun<T> c{ctx.TempBuffer<T>(std::max<int64_t>(rows * a.s.gate_width(), 1)),
               ctx.TempBuffer<T>(std::max<int64_t>(rows * h, 1)), nullptr, nullptr};
  if (a.s.mode == RnnMode::kLstm) c.c_prev = ctx.TempBuffer<T>(std::max<int64_t>(rows * h, 1));
  if (a.s.mode == RnnMode::kGru) c.hc = ctx.TempBuffer<T>(std::max<int64_t>(rows * h, 1));
  return c;
}

// Runs one layer and direction over x [T, N, in_w]: its outputs go to y's columns [dir * H, (dir
// + 1) * H) (rows of D * H), its final states to hn / cn [N, H].
template <typename T>
void CellForward(const KernelContext& ctx, const RnnArgs<T>& a, int64_t layer, int64_t dir,
                 const T* x, int64_t in_w, const CellRun<T>& c, T* y, T* hn, T* cn) {
  const RnnSpec& s = a.s;
  const int64_t hd = s.hidden, g = s.gate_width(), n_rows = a.batch, yw = a.out_width();
  const int64_t cell = layer * s.dirs + dir;
  // Every step's x W_ih^T + b_ih + b_hh at once (GRU: b_hh's candidate part goes to hc).
  tide::Gemm<T>(ctx, false, true, a.rows(), g, in_w, T(1), x,
                a.Param(layer, dir, RnnParam::kWeightIh), T(0), c.gates);
  const T* b_hh = a.Param(layer, dir, RnnParam::kBiasHh);
  T* bias = ctx.TempBuffer<T>(g);
  ArrayMap<T>(bias, g) =
      ConstArrayMap<T>(a.Param(layer, dir, RnnParam::kBiasIh), g) + ConstArrayMap<T>(b_hh, g);
  if (s.mode == RnnMode::kGru)
    ArrayMap<T>(bias + 2 * hd, hd) -= ConstArrayMap<T>(b_hh + 2 * hd, hd);
  AddBiasRows(c.gates, bias, a.rows(), g);
  // W_hh^T [H, G] once: each step's product is then a plain one.
  T* wt = ctx.TempBuffer<T>(hd * g);
  MatrixMap<T>(wt, hd, g) =
      ConstMatrixMap<T>(a.Param(layer, dir, RnnParam::kWeightHh), g, hd).transpose();
  T* rec = ctx.TempBuffer<T>(std::max<int64_t>(n_rows, 1) * g);
  std::copy(a.h0 + cell * n_rows * hd, a.h0 + (cell + 1) * n_rows * hd, hn);
  if (cn) std::copy(a.c0 + cell * n_rows * hd, a.c0 + (cell + 1) * n_rows * hd, cn);
  for (int64_t step = 0; step < a.steps; ++step) {
    const int64_t t = dir ? a.steps - 1 - step : step;
    T* hp = c.h_prev + t * n_rows * hd;
    std::copy(hn, hn + n_rows * hd, hp);
    T* cp = cn ? c.c_prev + t * n_rows * hd : nullptr;
    if (cp) std::copy(cn, cn + n_rows * hd, cp);
    tide::Gemm<T>(ctx, false, false, n_rows, g, hd, T(1), hp, wt, T(0), rec);
    for (int64_t n = 0; n < n_rows; ++n) {
      T* yr = y + (t * n_rows + n) * yw + dir * hd;
      if (!a.Valid(t, n)) {  // past the sequence: output 0, the state kept
        std::fill(yr, yr + hd, T(0));
        continue;
      }
      const int64_t r = t * n_rows + n;
      T* gr = c.gates + r * g;
      const T* recr = rec + n * g;
      switch (s.mode) {
        case RnnMode::kLstm:
          ArrayMap<T>(gr, g) += ConstArrayMap<T>(recr, g);
          LstmRowForward(hd, gr, cp + n * hd, cn + n * hd, hn + n * hd);
          break;
        case RnnMode::kGru: {
          ArrayMap<T>(gr, 2 * hd) += ConstArrayMap<T>(recr, 2 * hd);
          T* hc = c.hc + r * hd;
          ArrayMap<T>(hc, hd) =
              ConstArrayMap<T>(recr + 2 * hd, hd) + ConstArrayMap<T>(b_hh + 2 * hd, hd);
          GruRowForward(hd, gr, hc, hp + n * hd, hn + n * hd);
          break;
        }
        default:
          ArrayMap<T>(gr, g) += ConstArrayMap<T>(recr, g);
          SimpleRowForward(RnnAct(s), hd, gr, hn + n * hd);
      }
      std::copy(hn + n * hd, hn + (n + 1) * hd, yr);
    }
  }
}

// What a forward run keeps: each layer's input, and each layer and direction's steps.
template <typename T>
struct RnnRun {
  std::vector<const T*> inputs;
  std::vector<CellRun<T>> cells;  // layer-major; one reused when the grad does not need them
};

// The layers in turn: ys[l] receives layer l's output [T, N, D * H]; last_h / last_c the final
// states [L * D, N, H]. With masks, layer l > 0 reads layer l - 1's output times its mask.
template <typename T>
RnnRun<T> RnnForward(const KernelContext& ctx, const RnnArgs<T>& a, bool keep,
                     const std::vector<T*>& ys, T* last_h, T* last_c) {
  const RnnSpec& s = a.s;
  const int64_t state = a.batch * s.hidden, out_elems = a.rows() * a.out_width();
  RnnRun<T> run;
  const T* x = a.x;
  for (int64_t l = 0; l < s.layers; ++l) {
    if (l > 0 && a.masks) {
      T* dropped = ctx.TempBuffer<T>(std::max<int64_t>(out_elems, 1));
      ArrayMap<T>(dropped, out_elems) = ConstArrayMap<T>(ys[l - 1], out_elems) *
                                        ConstArrayMap<T>(a.masks + (l - 1) * out_elems, out_elems);
      x = dropped;
    }
    run.inputs.push_back(x);
    for (int64_t d = 0; d < s.dirs; ++d) {
      if (keep || run.cells.empty()) run.cells.push_back(NewCellRun(ctx, a));
      const int64_t cell = l * s.dirs + d;
      CellForward(ctx, a, l, d, x, s.LayerInput(l, a.input), run.cells.back(), ys[l],
                  last_h + cell * state, last_c ? last_c + cell * state : nullptr);
    }
    x = ys[l];
  }
  return run;
}

// Layer outputs: temporary ones, Out's buffer for the last when given.
template <typename T>
std::vector<T*> LayerOutputs(const KernelContext& ctx, const RnnArgs<T>& a, T* last) {
  std::vector<T*> ys;
  for (int64_t l = 0; l < a.s.layers; ++l)
    ys.push_back(l + 1 == a.s.layers && last
                     ? last
                     : ctx.TempBuffer<T>(std::max<int64_t>(a.rows() * a.out_width(), 1)));
  return ys;
}

template <typename T>
void RnnKernel(KernelContext& ctx) {
  RnnArgs<T> a = tide::ops::GetRnnArgs<T>(ctx);
  const RnnSpec& s = a.s;
  const Dims x{a.steps, a.batch, a.input};
  const int64_t out_elems = a.rows() * a.out_width();
  Tensor reserve = ctx.OptionalOutput("Reserve");
  if (tide::ops::RnnDropsOut(s)) {
    TIDE_CHECK(reserve, "op '", ctx.op_type(),
               "': training with dropout_prob > 0 needs the Reserve output (the dropout masks)");
    T* m = reserve.mutable_data<T>({s.layers - 1, a.steps, a.batch, a.out_width()}, ctx.place());
    // Fluid's dropout generator: minstd_rand from the op's seed, a random one when 0.
    std::minstd_rand engine(s.seed ? static_cast<uint32_t>(s.seed) : std::random_device()());
    std::uniform_real_distribution<float> dist(0, 1);
    const T keep = s.dropout < 1.0f ? T(1) / (T(1) - static_cast<T>(s.dropout)) : T(0);
    for (int64_t i = 0; i < (s.layers - 1) * out_elems; ++i)
      m[i] = dist(engine) < s.dropout ? T(0) : keep;
    a.masks = m;
  } else if (reserve) {
    reserve.mutable_data<T>({0}, ctx.place());
  }
  T* out = ctx.Output("Out").mutable_data<T>(tide::ops::RnnOutDims(s, x), ctx.place());
  const Dims sd = tide::ops::RnnStateDims(s, x);
  T* last_h = ctx.Output("State", 0).mutable_data<T>(sd, ctx.place());
  T* last_c = s.states() == 2 ? ctx.Output("State", 1).mutable_data<T>(sd, ctx.place()) : nullptr;
  RnnForward(ctx, a, false, LayerOutputs(ctx, a, out), last_h, last_c);
  // Paddle's CPU kernel: the last layer's keep mask (all 1 without dropout), uint8 of Out's dims.
  if (Tensor ds = ctx.OptionalOutput("DropoutState")) {
    uint8_t* p = ds.mutable_data<uint8_t>(tide::ops::RnnOutDims(s, x), ctx.place());
    const T* m = a.masks ? a.masks + (s.layers - 2) * out_elems : nullptr;
    for (int64_t i = 0; i < out_elems; ++i) p[i] = m && m[i] == T(0) ? 0 : 1;
  }
}

// Where one layer and direction's parameter gradients go (null: not wanted).
template <typename T>
struct ParamGrads {
  T *w_ih, *w_hh, *b_ih, *b_hh;
};

// Back through one layer and direction: dy [T, N, D * H] (its columns of this direction) is the
// layer output's gradient; dh / dc [N, H] hold the final states' gradients on entry and the
// initial states' on return; dx [T, N, in_w] (when given) receives (accumulate: adds) x's.
template <typename T>
void CellBackward(const KernelContext& ctx, const RnnArgs<T>& a, int64_t layer, int64_t dir,
                  const T* x, int64_t in_w, const CellRun<T>& c, const T* dy, T* dh, T* dc, T* dx,
                  bool accumulate, const ParamGrads<T>& pg) {
  const RnnSpec& s = a.s;
  const int64_t hd = s.hidden, g = s.gate_width(), n_rows = a.batch, yw = a.out_width();
  const int64_t rows = a.rows();
  T* da_in = ctx.TempBuffer<T>(std::max<int64_t>(rows * g, 1));
  T* da_rec = s.mode == RnnMode::kGru ? ctx.TempBuffer<T>(std::max<int64_t>(rows * g, 1)) : da_in;
  T* dht = ctx.TempBuffer<T>(hd);
  const T* w_hh = a.Param(layer, dir, RnnParam::kWeightHh);
  for (int64_t step = a.steps - 1; step >= 0; --step) {
    const int64_t t = dir ? a.steps - 1 - step : step;
    for (int64_t n = 0; n < n_rows; ++n) {
      const int64_t r = t * n_rows + n;
      if (!a.Valid(t, n)) {  // the state passed through untouched
        std::fill(da_in + r * g, da_in + (r + 1) * g, T(0));
        if (da_rec != da_in) std::fill(da_rec + r * g, da_rec + (r + 1) * g, T(0));
        continue;
      }
      ArrayMap<T>(dht, hd) =
          ConstArrayMap<T>(dh + n * hd, hd) + ConstArrayMap<T>(dy + r * yw + dir * hd, hd);
      const T* gr = c.gates + r * g;
      switch (s.mode) {
        case RnnMode::kLstm:
          LstmRowBackward(hd, gr, c.c_prev + r * hd, dht, dc + n * hd, da_in + r * g);
          std::fill(dh + n * hd, dh + (n + 1) * hd, T(0));
          break;
        case RnnMode::kGru:
          GruRowBackward(hd, gr, c.hc + r * hd, c.h_prev + r * hd, dht, da_in + r * g,
                         da_rec + r * g, dh + n * hd);
          break;
        default:
          SimpleRowBackward(RnnAct(s), hd, gr, dht, da_in + r * g);
          std::fill(dh + n * hd, dh + (n + 1) * hd, T(0));
      }
    }
    tide::Gemm<T>(ctx, false, false, n_rows, hd, g, T(1), da_rec + t * n_rows * g, w_hh, T(1), dh);
  }
  if (pg.w_ih) tide::Gemm<T>(ctx, true, false, g, in_w, rows, T(1), da_in, x, T(0), pg.w_ih);
  if (pg.w_hh) tide::Gemm<T>(ctx, true, false, g, hd, rows, T(1), da_rec, c.h_prev, T(0), pg.w_hh);
  if (pg.b_ih) {
    std::fill(pg.b_ih, pg.b_ih + g, T(0));
    AddColumnSums(da_in, rows, g, pg.b_ih);
  }
  if (pg.b_hh) {
    std::fill(pg.b_hh, pg.b_hh + g, T(0));
    AddColumnSums(da_rec, rows, g, pg.b_hh);
  }
  if (dx)
    tide::Gemm<T>(ctx, false, false, rows, in_w, g, T(1), da_in,
                  a.Param(layer, dir, RnnParam::kWeightIh), accumulate ? T(1) : T(0), dx);
}

// An optional input gradient's data ([n] values), or null.
template <typename T>
const T* OptionalGradInput(const KernelContext& ctx, const char* param, size_t i, int64_t n) {
  const std::string name = GradVarName(param);
  if (ctx.InputCount(name.c_str()) <= i) return nullptr;
  Tensor t = ctx.OptionalInput(name.c_str(), i);
  if (!t || !t.initialized()) return nullptr;
  TIDE_CHECK(t.numel() == n, "op '", ctx.op_type(), "': ", name, "[", i, "] ('",
             ctx.InputName(name.c_str(), i), "') has dims ", tide::ToString(t.dims()), ", ", n,
             " elements expected");
  return t.data<T>();
}

template <typename T>
void RnnGradKernel(KernelContext& ctx) {
  RnnArgs<T> a = tide::ops::GetRnnArgs<T>(ctx);
  const RnnSpec& s = a.s;
  const char* op = ctx.op_type();
  const int64_t out_elems = a.rows() * a.out_width(), state = a.batch * s.hidden;
  const int64_t all_states = s.cells() * state;
  if (tide::ops::RnnDropsOut(s)) {
    Tensor reserve = ctx.OptionalInput("Reserve");
    TIDE_CHECK(reserve && reserve.numel() == (s.layers - 1) * out_elems, "op '", op,
               "': Reserve ('", ctx.InputName("Reserve"),
               "') must hold the forward's dropout masks, [num_layers - 1, T, N, D * H]");
    a.masks = reserve.data<T>();
  }
  // The forward again, keeping every step.
  const std::vector<T*> ys = LayerOutputs<T>(ctx, a, nullptr);
  T* last = ctx.TempBuffer<T>(std::max<int64_t>(2 * all_states, 1));
  const RnnRun<T> run =
      RnnForward(ctx, a, true, ys, last, s.states() == 2 ? last + all_states : nullptr);
  // Gradients of the final states (zero when the loss does not read them), becoming those of
  // the initial ones.
  Tensor dpre_h = ctx.OptionalOutput(GradVarName("PreState").c_str(), 0);
  Tensor dpre_c =
      s.states() == 2 ? ctx.OptionalOutput(GradVarName("PreState").c_str(), 1) : Tensor();
  const Dims sd{s.cells(), a.batch, s.hidden};
  T* dh = dpre_h ? dpre_h.mutable_data<T>(sd, ctx.place())
                 : ctx.TempBuffer<T>(std::max<int64_t>(all_states, 1));
  T* dc = s.states() == 2 ? (dpre_c ? dpre_c.mutable_data<T>(sd, ctx.place())
                                    : ctx.TempBuffer<T>(std::max<int64_t>(all_states, 1)))
                          : nullptr;
  for (size_t k = 0; k < s.states(); ++k) {
    T* to = k ? dc : dh;
    const T* from = OptionalGradInput<T>(ctx, "State", k, all_states);
    if (from)
      std::copy(from, from + all_states, to);
    else
      std::fill(to, to + all_states, T(0));
  }
  // Out's gradient, then each layer's input's, from the top layer down.
  T* dy = ctx.TempBuffer<T>(std::max<int64_t>(out_elems, 1));
  if (const T* dout = OptionalGradInput<T>(ctx, "Out", 0, out_elems))
    std::copy(dout, dout + out_elems, dy);
  else
    std::fill(dy, dy + out_elems, T(0));
  Tensor dinput = ctx.OptionalOutput(GradVarName("Input").c_str());
  for (int64_t l = s.layers - 1; l >= 0; --l) {
    const int64_t in_w = s.LayerInput(l, a.input);
    T* dx = l > 0    ? ctx.TempBuffer<T>(std::max<int64_t>(a.rows() * in_w, 1))
            : dinput ? dinput.mutable_data<T>({a.steps, a.batch, a.input}, ctx.place())
                     : nullptr;
    for (int64_t d = 0; d < s.dirs; ++d) {
      const int64_t cell = l * s.dirs + d;
      auto grad = [&](RnnParam p) {
        return tide::ops::OptionalGrad<T>(
            ctx, "WeightList", tide::ops::RnnParamDims(s, l, p, a.input), s.WeightIndex(l, d, p));
      };
      const ParamGrads<T> pg{grad(RnnParam::kWeightIh), grad(RnnParam::kWeightHh),
                             grad(RnnParam::kBiasIh), grad(RnnParam::kBiasHh)};
      CellBackward(ctx, a, l, d, run.inputs[l], in_w, run.cells[cell], dy, dh + cell * state,
                   dc ? dc + cell * state : nullptr, dx, d > 0, pg);
    }
    if (l == 0) break;
    if (a.masks)
      ArrayMap<T>(dx, out_elems) *= ConstArrayMap<T>(a.masks + (l - 1) * out_elems, out_elems);
    dy = dx;
  }
}

void RnnInferShape(tide::InferShapeContext& ctx) {
  const RnnSpec s = tide::ops::GetRnnSpec(ctx);
  const Dims x = tide::ops::CheckRnnInputs(ctx, s);
  const TideDataType dtype = ctx.InputDataType("Input");
  ctx.SetOutputDims("Out", tide::ops::RnnOutDims(s, x));
  ctx.SetOutputDataType("Out", dtype);
  const size_t states = ctx.OutputCount("State");
  TIDE_CHECK(states == s.states(), "op '", ctx.op_type(), "': State has ", states,
             " output(s) but ", ctx.Attr<std::string>("mode"), " gives ", s.states());
  for (size_t i = 0; i < states; ++i) {
    ctx.SetOutputDims("State", tide::ops::RnnStateDims(s, x), i);
    ctx.SetOutputDataType("State", dtype, i);
  }
  if (ctx.HasOutput("Reserve")) {
    ctx.SetOutputDims("Reserve", tide::ops::RnnDropsOut(s)
                                     ? Dims{s.layers - 1, x[0], x[1], s.dirs * s.hidden}
                                     : Dims{0});
    ctx.SetOutputDataType("Reserve", dtype);
  }
  if (ctx.HasOutput("DropoutState")) {
    ctx.SetOutputDims("DropoutState", tide::ops::RnnOutDims(s, x));
    ctx.SetOutputDataType("DropoutState", TIDE_UINT8);
  }
}

tide::OpSchema RnnAttrs(tide::OpSchema s) {
  return s.Attr("mode", std::string("RNN_TANH"), "LSTM, GRU, RNN_TANH or RNN_RELU")
      .InSet({"LSTM", "GRU", "RNN_TANH", "RNN_RELU"})
      .Attr("is_bidirec", false, "a backward direction too; Out concatenates both")
      .Attr("num_layers", int32_t(1), "stacked layers, each reading the one below's Out")
      .Attr("hidden_size", int32_t(100), "H, the width of each direction's state")
      .Attr("input_size", int32_t(10),
            "I as Paddle records it (the dims come from Input and WeightList)")
      .Attr("dropout_prob", 0.0f, "dropout on the inputs of layers after the first, in training")
      .Attr("is_test", false, "inference: no dropout")
      .Attr("seed", int32_t(0), "the dropout generator's seed (0: a random one)");
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    RnnAttrs(tide::OpSchema("rnn"))
        .Comment("Paddle 2.x's multi-layer, optionally bidirectional LSTM / GRU / simple RNN "
                 "(nn.LSTM, nn.GRU, nn.SimpleRNN), time major, with per-sequence lengths.")
        .Input("Input", "[T, N, I]: the sequences, time major")
        .Input("PreState", "the initial h (and c for LSTM), each [num_layers * D, N, H]")
        .AsDuplicable()
        .Input("WeightList",
               "weight_ih [G*H, I or D*H] and weight_hh [G*H, H] per layer and direction, then "
               "bias_ih and bias_hh [G*H] in the same order")
        .AsDuplicable()
        .Input("SequenceLength", "[N] int32 or int64: steps at or past a length output 0")
        .AsDispensable()
        .Output("Out", "[T, N, D*H]: the last layer's h at every step, directions concatenated")
        .Output("State", "the final h (and c), each [num_layers * D, N, H]")
        .AsDuplicable()
        .Output("Reserve", "training with dropout: the masks between layers, for the grad")
        .AsIntermediate()
        .AsDispensable()
        .Output("DropoutState", "uint8 of Out's dims: the last dropout's keep mask (1: kept)")
        .AsDispensable()
        .KernelDataTypeFrom("Input")
        .InferShape(RnnInferShape)
        .Grad([](tide::GradMaker& g) {
          auto op = g.NewOp("rnn_grad");
          for (const char* p : {"Input", "PreState", "WeightList", "SequenceLength"})
            op.Input(p, g.Input(p));
          op.Input("Reserve", g.Output("Reserve"));
          op.Input(GradVarName("Out"), g.OutputGrad("Out"));
          op.Input(GradVarName("State"), g.OutputGrad("State"));
          for (const char* p : {"Input", "PreState", "WeightList"})
            op.Output(GradVarName(p), g.InputGrad(p));
          op.CopyAttrs();
        }));
TIDE_REGISTER_OP(RnnAttrs(tide::OpSchema("rnn_grad"))
                     .Input("Input")
                     .Input("PreState")
                     .AsDuplicable()
                     .Input("WeightList")
                     .AsDuplicable()
                     .Input("SequenceLength")
                     .AsDispensable()
                     .Input("Reserve")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .AsDispensable()
                     .Input(GradVarName("State"))
                     .AsDuplicable()
                     .AsDispensable()
                     .Output(GradVarName("Input"))
                     .AsDispensable()
                     .Output(GradVarName("PreState"))
                     .AsDuplicable()
                     .AsDispensable()
                     .Output(GradVarName("WeightList"))
                     .AsDuplicable()
                     .AsDispensable()
                     .KernelDataTypeFrom("Input")
                     .InferShape([](tide::InferShapeContext& c) {
                       GradLikeInputs(c, {"Input", "PreState", "WeightList"});
                     }));
TIDE_REGISTER_KERNEL("rnn", "cpu", RnnKernel, OPS_SEQUENCE_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("rnn_grad", "cpu", RnnGradKernel, OPS_SEQUENCE_FLOAT_TYPES);
