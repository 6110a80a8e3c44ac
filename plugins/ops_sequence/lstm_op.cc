// lstm_op.cc: lstm (Fluid's dynamic_lstm kernel) and its grad over the sequences of a 1-level
// LoD, in SequenceToBatch layout: one GEMM per time step over the sequences still running.
// Gate columns follow Fluid: [candidate c~, input i, forget f, output o], each D wide; with
// peepholes Bias [1, 7D] = [gate biases (4D), W_ic, W_fc, W_oc].
//   i = act_gate(x_i + h W_i + c_prev W_ic)     f = act_gate(x_f + h W_f + c_prev W_fc)
//   c~ = act_cand(x_c + h W_c)                  c = f c_prev + i c~
//   o = act_gate(x_o + h W_o + c W_oc)          h = o act_cell(c)
#include <tide/gemm.hpp>
#include <type_traits>

#include "rnn_activations.h"
#include "rnn_common.h"
#include "sequence2batch.h"

namespace ops_sequence {
namespace {

struct LstmActs {
  Act gate, cell, cand;
};

template <typename Ctx>
LstmActs ActsOf(const Ctx& ctx) {
  const char* op = ctx.op_type();
  return {
      ActOf(op, "gate_activation", ctx.template Attr<std::string>("gate_activation")),
      ActOf(op, "cell_activation", ctx.template Attr<std::string>("cell_activation")),
      ActOf(op, "candidate_activation", ctx.template Attr<std::string>("candidate_activation"))};
}

// Checks Input [T, 4D], Weight [D, 4D], Bias [1, 4D or 7D], H0 / C0 [num_seqs, D] (num_seqs
// < 0: not known yet); returns D (< 0 when not known).
template <typename Ctx>
int64_t CheckLstmInputs(const Ctx& ctx, int64_t num_seqs) {
  const Dims w = Matrix(ctx, "Weight", "[D, 4D]: the hidden-to-gates weights");
  const int64_t d = w[0];
  const int64_t g = d < 0 ? -1 : 4 * d;
  ExpectInputDims(ctx, "Weight", {d, g}, "[D, 4D]: the hidden-to-gates weights");
  Matrix(ctx, "Input", "[T, 4D]: the projected input of every step");
  ExpectInputDims(ctx, "Input", {-1, g}, "[T, 4D] with D = Weight's rows");
  const bool peep = ctx.template Attr<bool>("use_peepholes");
  ExpectInputDims(ctx, "Bias", {1, d < 0 ? -1 : (peep ? 7 : 4) * d},
                  peep ? "[1, 7D]: gate biases and peephole weights (use_peepholes)"
                       : "[1, 4D]: gate biases (use_peepholes is off)");
  for (const char* init : {"H0", "C0"})
    if (Given(ctx, init)) ExpectInputDims(ctx, init, {num_seqs, d}, "[number of sequences, D]");
  return d;
}

// One row: activates gates g [4D] in place and computes c, act_cell(c) and h. pc: c_prev, or
// null (zero); peep: W_ic, W_fc, W_oc, or null.
template <typename T>
void CellForward(const LstmActs& a, int64_t d, T* g, const T* pc, const T* peep, T* c, T* pre,
                 T* h) {
  ArrayMap<T> cand(g, d), ig(g + d, d), fg(g + 2 * d, d), og(g + 3 * d, d), cv(c, d);
  Activate(a.cand, g, d);
  if (peep && pc) {
    ig += ConstArrayMap<T>(pc, d) * ConstArrayMap<T>(peep, d);
    fg += ConstArrayMap<T>(pc, d) * ConstArrayMap<T>(peep + d, d);
  }
  Activate(a.gate, g + d, 2 * d);  // i and f
  if (pc)
    cv = cand * ig + ConstArrayMap<T>(pc, d) * fg;
  else
    cv = cand * ig;
  if (peep) og += cv * ConstArrayMap<T>(peep + 2 * d, d);
  Activate(a.gate, g + 3 * d, d);
  ArrayMap<T>(pre, d) = cv;
  Activate(a.cell, pre, d);
  ArrayMap<T>(h, d) = og * ArrayMap<T>(pre, d);
}

// One row backward. g: activated gates; dc: on entry the gradient reaching c from outside the
// cell (Cell@GRAD and the next step), on exit c's whole gradient; dg: the pre-activation gate
// gradients; dpc (may be null): c_prev's gradient, accumulated.
template <typename T>
void CellBackward(const LstmActs& a, int64_t d, const T* g, const T* pre, const T* pc,
                  const T* peep, const T* dh, T* dc, T* dg, T* dpc) {
  ConstArrayMap<T> cand(g, d), ig(g + d, d), fg(g + 2 * d, d), og(g + 3 * d, d), dhv(dh, d);
  ArrayMap<T> dcand(dg, d), dig(dg + d, d), dfg(dg + 2 * d, d), dog(dg + 3 * d, d), dcv(dc, d);
  dog = dhv * ConstArrayMap<T>(pre, d);
  ScaleByDerivative(a.gate, g + 3 * d, dg + 3 * d, d);
  dcand = dhv * og;  // scratch: h's gradient reaching c
  ScaleByDerivative(a.cell, pre, dg, d);
  dcv += dcand;
  if (peep) dcv += dog * ConstArrayMap<T>(peep + 2 * d, d);
  dcand = dcv * ig;
  ScaleByDerivative(a.cand, g, dg, d);
  dig = dcv * cand;
  ScaleByDerivative(a.gate, g + d, dg + d, d);
  if (pc) {
    dfg = dcv * ConstArrayMap<T>(pc, d);
    ScaleByDerivative(a.gate, g + 2 * d, dg + 2 * d, d);
  } else {
    dfg.setZero();
  }
  if (dpc) {
    ArrayMap<T> dpcv(dpc, d);
    dpcv += dcv * fg;
    if (peep) dpcv += dig * ConstArrayMap<T>(peep, d) + dfg * ConstArrayMap<T>(peep + d, d);
  }
}

// Fluid's default activations: for float, one row runs fused in rnn_simd.cc's vectorized loops.
template <typename T>
bool FusedCell(const LstmActs& a) {
  return std::is_same_v<T, float> && a.gate == Act::kSigmoid && a.cell == Act::kTanh &&
         a.cand == Act::kTanh;
}

// A row of zeros standing for a missing c_prev or peephole in the fused loops (null if unfused).
template <typename T>
T* ZeroRows(const KernelContext& ctx, bool fused, int64_t n) {
  if (!fused) return nullptr;
  T* z = ctx.TempBuffer<T>(n);
  std::fill(z, z + n, T(0));
  return z;
}

// An initial state in batch-slot order (a scratch buffer), or null when not given.
template <typename T>
T* OrderedInit(const KernelContext& ctx, const char* param, const BatchLayout& b, int64_t d) {
  Tensor t = ctx.OptionalInput(param);
  if (!t) return nullptr;
  T* out = ctx.TempBuffer<T>(b.order.size() * d);
  ReorderInitState(b, t.data<T>(), out, d);
  return out;
}

template <typename T>
void LstmKernel(KernelContext& ctx) {
  const LoD lod = InputLoD(ctx, "Input", 1);
  const BatchLayout b = MakeBatchLayout(lod[0], ctx.Attr<bool>("is_reverse"));
  const int64_t d = CheckLstmInputs(ctx, static_cast<int64_t>(b.order.size()));
  const int64_t g = 4 * d, rows = b.total();
  const LstmActs acts = ActsOf(ctx);
  const T* w = ctx.Input("Weight").data<T>();
  const T* bias = ctx.Input("Bias").data<T>();
  const T* peep = ctx.Attr<bool>("use_peepholes") ? bias + g : nullptr;
  Tensor hidden = ctx.Output("Hidden"), cell = ctx.Output("Cell");
  Tensor batch_gate = ctx.Output("BatchGate"), batch_pre = ctx.Output("BatchCellPreAct");
  T* gate = batch_gate.mutable_data<T>({rows, g}, ctx.place());
  T* pre = batch_pre.mutable_data<T>({rows, d}, ctx.place());
  // The states go straight into Hidden and Cell in batch order, put in sequence order at the
  // end in place (no scratch copies: fresh memory costs page faults on every run).
  T* bh = hidden.mutable_data<T>({rows, d}, ctx.place());
  T* bc = cell.mutable_data<T>({rows, d}, ctx.place());
  const T* h_init = OrderedInit<T>(ctx, "H0", b, d);
  const T* c_init = OrderedInit<T>(ctx, "C0", b, d);
  ToBatch(b, ctx.Input("Input").data<T>(), gate, g);
  AddBiasRows(gate, bias, rows, g);
  const bool fused = FusedCell<T>(acts);
  const T* zeros = ZeroRows<T>(ctx, fused, d);
  for (int64_t t = 0; t < b.steps(); ++t) {
    const int64_t r0 = b.starts[t], n = b.rows(t);
    const T* ph = t ? bh + b.starts[t - 1] * d : h_init;
    const T* pc = t ? bc + b.starts[t - 1] * d : c_init;
    if (ph) tide::Gemm<T>(ctx, false, false, n, g, d, T(1), ph, w, T(1), gate + r0 * g);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = r0 + i;
      if constexpr (std::is_same_v<T, float>) {
        if (fused) {
          LstmCellForwardSigmoidTanh(d, gate + r * g, pc ? pc + i * d : zeros, peep ? peep : zeros,
                                     peep ? peep + d : zeros, peep ? peep + 2 * d : zeros,
                                     bc + r * d, pre + r * d, bh + r * d);
          continue;
        }
      }
      CellForward(acts, d, gate + r * g, pc ? pc + i * d : nullptr, peep, bc + r * d, pre + r * d,
                  bh + r * d);
    }
  }
  T* row = ctx.TempBuffer<T>(std::max<int64_t>(d, 1));
  BatchToSeqInPlace(b, bh, d, row);
  BatchToSeqInPlace(b, bc, d, row);
  hidden.set_lod(lod);
  cell.set_lod(lod);
}

// A forward output the grad reads: rows x width elements.
void ExpectSize(const KernelContext& ctx, const char* param, int64_t rows, int64_t width) {
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.numel() == rows * width, "op '", ctx.op_type(), "': ", param, " ('",
             ctx.InputName(param), "') has dims ", tide::ToString(t.dims()), " but must hold ",
             rows, " x ", width, " elements");
}

// The cell state row i of step t starts from: Cell (sequence order) at step t-1, or C0's
// reordered row, or null (zero).
template <typename T>
const T* PrevCell(const BatchLayout& b, const T* cell, const T* c_init, int64_t t, int64_t i,
                  int64_t d) {
  if (t) return cell + b.seq_rows[b.starts[t - 1] + i] * d;
  return c_init ? c_init + i * d : nullptr;
}

template <typename T>
void LstmGradKernel(KernelContext& ctx) {
  const LoD lod = InputLoD(ctx, "Input", 1);
  const BatchLayout b = MakeBatchLayout(lod[0], ctx.Attr<bool>("is_reverse"));
  const int64_t d = CheckLstmInputs(ctx, static_cast<int64_t>(b.order.size()));
  const int64_t g = 4 * d, rows = b.total(), steps = b.steps();
  const LstmActs acts = ActsOf(ctx);
  const std::string dhidden_name = GradVarName("Hidden"), dcell_name = GradVarName("Cell");
  for (const char* p : {"Hidden", "Cell", "BatchCellPreAct", dhidden_name.c_str()})
    ExpectSize(ctx, p, rows, d);
  ExpectSize(ctx, "BatchGate", rows, g);
  const T* w = ctx.Input("Weight").data<T>();
  const T* peep = ctx.Attr<bool>("use_peepholes") ? ctx.Input("Bias").data<T>() + g : nullptr;
  const T* gate = ctx.Input("BatchGate").data<T>();
  const T* pre = ctx.Input("BatchCellPreAct").data<T>();
  const T* cell = ctx.Input("Cell").data<T>();  // sequence order: row r of step t is seq_rows[r]
  T* bdh = ctx.TempBuffer<T>(rows * d);
  ToBatch(b, ctx.Input(dhidden_name.c_str()).data<T>(), bdh, d);
  T* bdc = ctx.TempBuffer<T>(rows * d);
  if (Tensor dcell = ctx.OptionalInput(dcell_name.c_str())) {
    ExpectSize(ctx, dcell_name.c_str(), rows, d);
    ToBatch(b, dcell.data<T>(), bdc, d);
  } else {
    std::fill(bdc, bdc + rows * d, T(0));
  }
  // The gate gradients in batch order, in Input@GRAD's memory when it is wanted (permuted to
  // sequence order in place at the end).
  Tensor din = ctx.OptionalOutput(GradVarName("Input").c_str());
  T* dgate = din ? din.mutable_data<T>({rows, g}, ctx.place()) : ctx.TempBuffer<T>(rows * g);
  const T* h_init = OrderedInit<T>(ctx, "H0", b, d);
  const T* c_init = OrderedInit<T>(ctx, "C0", b, d);
  const int64_t seqs = static_cast<int64_t>(b.order.size());
  T* dh_init = h_init ? ctx.TempBuffer<T>(seqs * d) : nullptr;
  T* dc_init = c_init ? ctx.TempBuffer<T>(seqs * d) : nullptr;
  if (dh_init) std::fill(dh_init, dh_init + seqs * d, T(0));
  if (dc_init) std::fill(dc_init, dc_init + seqs * d, T(0));
  // W^T [4D, D] once, so each step's dh_prev += dgate W^T is a plain product (oneDNN packs a
  // transposed operand more slowly, and it repacks the weights on every call).
  T* wt = ctx.TempBuffer<T>(g * d);
  MatrixMap<T>(wt, g, d) = ConstMatrixMap<T>(w, d, g).transpose();
  const bool fused = FusedCell<T>(acts);
  const T* zeros = ZeroRows<T>(ctx, fused, d);
  T* scratch = fused ? ctx.TempBuffer<T>(d) : nullptr;  // c_prev's gradient nobody wants
  for (int64_t t = steps - 1; t >= 0; --t) {
    const int64_t r0 = b.starts[t], n = b.rows(t);
    T* dpc = t ? bdc + b.starts[t - 1] * d : dc_init;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = r0 + i;
      const T* pc = PrevCell(b, cell, c_init, t, i, d);
      if constexpr (std::is_same_v<T, float>) {
        if (fused) {
          LstmCellBackwardSigmoidTanh(d, gate + r * g, pre + r * d, pc ? pc : zeros,
                                      peep ? peep : zeros, peep ? peep + d : zeros,
                                      peep ? peep + 2 * d : zeros, bdh + r * d, bdc + r * d,
                                      dgate + r * g, dpc ? dpc + i * d : scratch);
          continue;
        }
      }
      CellBackward(acts, d, gate + r * g, pre + r * d, pc, peep, bdh + r * d, bdc + r * d,
                   dgate + r * g, dpc ? dpc + i * d : nullptr);
    }
    T* dph = t ? bdh + b.starts[t - 1] * d : dh_init;
    if (dph) tide::Gemm<T>(ctx, false, false, n, d, g, T(1), dgate + r0 * g, wt, T(1), dph);
  }
  // Step t's rows start from step t-1's states (or the initial ones): gathered once, the weight
  // and peephole gradients are single products over all rows rather than one per step.
  if (Tensor dw = ctx.OptionalOutput(GradVarName("Weight").c_str())) {
    T* dwd = dw.mutable_data<T>({d, g}, ctx.place());
    const int64_t first = h_init ? 0 : 1;
    const int64_t k = first < steps ? rows - b.starts[first] : 0;
    T* prev_h = bdc;  // free now: c's gradients are spent
    if (k) GatherPrevSeqStates(b, ctx.Input("Hidden").data<T>(), h_init, prev_h, d, first);
    tide::Gemm<T>(ctx, true, false, d, g, k, T(1), prev_h, dgate + (rows - k) * g, T(0), dwd);
  }
  if (Tensor dbias = ctx.OptionalOutput(GradVarName("Bias").c_str())) {
    const int64_t width = peep ? 7 * d : g;
    T* db = dbias.mutable_data<T>({1, width}, ctx.place());
    std::fill(db, db + width, T(0));
    AddColumnSums(dgate, rows, g, db);
    if (peep) {  // W_ic, W_fc: dgate_i, dgate_f times c_prev; W_oc: dgate_o times c
      RowVectorMap<T> dic(db + g, d), dfc(db + g + d, d), doc(db + g + 2 * d, d);
      for (int64_t t = 0; t < steps; ++t)
        for (int64_t i = 0; i < b.rows(t); ++i) {
          const T* dg = dgate + (b.starts[t] + i) * g;
          doc += ConstRowVectorMap<T>(dg + 3 * d, d)
                     .cwiseProduct(ConstRowVectorMap<T>(cell + b.seq_rows[b.starts[t] + i] * d, d));
          const T* pc = PrevCell(b, cell, c_init, t, i, d);
          if (!pc) continue;
          dic += ConstRowVectorMap<T>(dg + d, d).cwiseProduct(ConstRowVectorMap<T>(pc, d));
          dfc += ConstRowVectorMap<T>(dg + 2 * d, d).cwiseProduct(ConstRowVectorMap<T>(pc, d));
        }
    }
  }
  if (din) {
    BatchToSeqInPlace(b, dgate, g, ctx.TempBuffer<T>(g));
    din.set_lod(lod);
  }
  if (Tensor dh0 = ctx.OptionalOutput(GradVarName("H0").c_str()))
    RestoreInitStateOrder(b, dh_init, dh0.mutable_data<T>({seqs, d}, ctx.place()), d);
  if (Tensor dc0 = ctx.OptionalOutput(GradVarName("C0").c_str()))
    RestoreInitStateOrder(b, dc_init, dc0.mutable_data<T>({seqs, d}, ctx.place()), d);
}

void LstmShape(tide::InferShapeContext& ctx) {
  ActsOf(ctx);
  const int64_t d = CheckLstmInputs(ctx, -1);
  if (ctx.IsRuntime()) return;  // the kernel sizes the outputs from the LoD
  const int64_t rows = ctx.InputDims("Input")[0];
  const TideDataType dtype = ctx.InputDataType("Input");
  for (const char* out : {"Hidden", "Cell", "BatchCellPreAct", "BatchGate"}) {
    if (!ctx.HasOutput(out)) continue;
    const bool gates = std::string(out) == "BatchGate";
    ctx.SetOutputDims(out, {rows, d < 0 ? -1 : (gates ? 4 * d : d)});
    ctx.SetOutputDataType(out, dtype);
  }
  ctx.ShareLoD("Input", "Hidden");
  ctx.ShareLoD("Input", "Cell");
}

tide::OpSchema LstmAttrs(tide::OpSchema s) {
  return s.Attr("use_peepholes", true, "peephole connections W_ic, W_fc, W_oc (Bias [1, 7D])")
      .Attr("is_reverse", false, "run each sequence from its last step to its first")
      .Attr("gate_activation", std::string("sigmoid"), "of the input, forget and output gates")
      .InSet({"sigmoid", "tanh", "relu", "identity"})
      .Attr("cell_activation", std::string("tanh"), "of the cell state, before the output gate")
      .InSet({"sigmoid", "tanh", "relu", "identity"})
      .Attr("candidate_activation", std::string("tanh"), "of the candidate c~")
      .InSet({"sigmoid", "tanh", "relu", "identity"});
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    LstmAttrs(tide::OpSchema("lstm"))
        .Comment("Fluid's dynamic LSTM over the sequences of Input's 1-level LoD, batched by "
                 "SequenceToBatch. Gate columns [c~, i, f, o].")
        .Input("Input", "[T, 4D]: x W_x of every step (LoD level 1)")
        .Input("H0", "[number of sequences, D]: initial hidden states (zero if absent)")
        .AsDispensable()
        .Input("C0", "[number of sequences, D]: initial cell states (zero if absent)")
        .AsDispensable()
        .Input("Weight", "[D, 4D]: hidden-to-gates weights")
        .Input("Bias", "[1, 4D] gate biases, or [1, 7D] with peepholes W_ic, W_fc, W_oc")
        .Output("Hidden", "[T, D], Input's LoD")
        .Output("Cell", "[T, D], Input's LoD")
        .Output("BatchGate", "[T, 4D]: activated gates in batch order (for the grad)")
        .AsIntermediate()
        .Output("BatchCellPreAct", "[T, D]: act_cell(c) in batch order (for the grad)")
        .AsIntermediate()
        .InferShape(LstmShape)
        .Grad([](tide::GradMaker& g) {
          auto op = g.NewOp("lstm_grad");
          for (const char* p : {"Input", "H0", "C0", "Weight", "Bias"}) op.Input(p, g.Input(p));
          for (const char* p : {"Hidden", "Cell", "BatchGate", "BatchCellPreAct"})
            op.Input(p, g.Output(p));
          op.Input(GradVarName("Hidden"), g.OutputGrad("Hidden"))
              .Input(GradVarName("Cell"), g.OutputGrad("Cell"));
          for (const char* p : {"Input", "H0", "C0", "Weight", "Bias"})
            op.Output(GradVarName(p), g.InputGrad(p));
          op.CopyAttrs();
        }));
TIDE_REGISTER_OP(LstmAttrs(tide::OpSchema("lstm_grad"))
                     .Input("Input")
                     .Input("H0")
                     .AsDispensable()
                     .Input("C0")
                     .AsDispensable()
                     .Input("Weight")
                     .Input("Bias")
                     .Input("Hidden")
                     .Input("Cell")
                     .Input("BatchGate")
                     .Input("BatchCellPreAct")
                     .Input(GradVarName("Hidden"))
                     .Input(GradVarName("Cell"))
                     .AsDispensable()
                     .Output(GradVarName("Input"))
                     .AsDispensable()
                     .Output(GradVarName("H0"))
                     .AsDispensable()
                     .Output(GradVarName("C0"))
                     .AsDispensable()
                     .Output(GradVarName("Weight"))
                     .AsDispensable()
                     .Output(GradVarName("Bias"))
                     .AsDispensable()
                     .InferShape([](tide::InferShapeContext& c) {
                       GradLikeInputs(c, {"Input", "H0", "C0", "Weight", "Bias"});
                     }));
TIDE_REGISTER_KERNEL("lstm", "cpu", LstmKernel, OPS_SEQUENCE_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lstm_grad", "cpu", LstmGradKernel, OPS_SEQUENCE_FLOAT_TYPES);
