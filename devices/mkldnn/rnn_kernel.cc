// rnn_kernel.cc: Paddle 2.x's rnn op (plugins/ops_sequence/rnn_op.cc; its rules in
// tide/ops/rnn.hpp) for inference on oneDNN's RNN primitives: lstm_forward (LSTM),
// lbr_gru_forward (GRU: Paddle applies the reset gate after the hidden product, oneDNN's
// "linear before reset"), vanilla_rnn_forward with tanh / relu (RNN_TANH / RNN_RELU). One
// primitive per layer (the first reads Input's width, the others D * H), both directions in it
// (bidirectional_concat); a layer's slice of PreState and State, [D, N, H] of [L * D, N, H], is
// oneDNN's ldnc as it lies, so the states are read and written in place. WeightList is gathered
// per layer into oneDNN's gate order (GRU's two biases into lbr_gru's four), reordered into the
// formats the primitive picks and kept while its bytes do not change. SequenceLength: the rows of
// one length run as their own sub-batch with T = that length, so each row's backward direction
// starts at its last step and its final states are those of its last step, and the steps past it
// output 0 (Paddle's rule). Training with dropout between layers is declined (the plain kernel
// draws the masks its grad reads), and so are small (sub-)batches, which the plain kernel runs
// faster (kMinRowsPerRun).
#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <tide/ops/rnn.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
using dnnl::rnn_direction;
using tide::ops::RnnMode;
using tide::ops::RnnParam;
using tide::ops::RnnSpec;
constexpr auto f32 = memory::data_type::f32;

// The Paddle gate behind oneDNN's gate g: LSTM's orders agree (i, f, c~, o); Paddle's GRU is
// [r, z, c~], oneDNN's [u, r, c~] with u Paddle's z (h = u h_prev + (1 - u) c~ in both).
int64_t PaddleGate(RnnMode mode, int64_t g) { return mode == RnnMode::kGru && g < 2 ? 1 - g : g; }

// lbr_gru has a fourth bias, the candidate's hidden one (b_hh's c~ part), inside the reset.
int64_t BiasGates(const RnnSpec& s) { return s.mode == RnnMode::kGru ? 4 : s.gates(); }

// The op as this kernel reads it.
struct RnnOp {
  const KernelContext& ctx;
  RnnSpec s;
  int64_t input;  // I
  const char* name() const { return ctx.op_type(); }
  Tensor Param(int64_t layer, int64_t dir, RnnParam p) const {
    return ctx.Input("WeightList", s.WeightIndex(layer, dir, p));
  }
};

struct RnnPrim {
  dnnl::rnn_primitive_desc_base pd;
  dnnl::primitive prim;
};

// Rows per primitive run (a sub-batch of one sequence length) below which the plain kernel is
// faster (README.md, "Speed"; 1 thread, 50 steps, bidirectional): an LSTM of batch 1 took
// 2.0-2.6x the plain kernel's time at hidden 256 and 1.15-1.4x at 512 (batch 64: 0.81-0.89);
// LSTM h256 b64 with 50 distinct lengths (sub-batches of ~1 row) 2.05x, with 16 (4 rows each)
// 0.92x, with 4 0.58x. A GRU of batch 1 is faster on oneDNN (0.68x), so a GRU is declined only
// when lengths split its batch into small sub-batches; the simple RNN (not measured) as a GRU.
constexpr int64_t kMinRowsPerRun = 4;

// Declines (before anything is written) the runs the plain kernel does faster: `groups` maps each
// sequence length to its rows.
void DeclineSlowRuns(const KernelContext& ctx, const RnnSpec& s,
                     const std::map<int64_t, std::vector<int64_t>>& groups) {
  int64_t runs = 0, rows = 0;
  for (const auto& [len, r] : groups) {
    if (len == 0) continue;  // rows that run no step
    ++runs;
    rows += static_cast<int64_t>(r.size());
  }
  if (runs == 0 || rows >= kMinRowsPerRun * runs || (s.mode != RnnMode::kLstm && runs == 1)) return;
  const std::string mode = ctx.Attr<std::string>("mode");
  if (runs == 1)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", ctx.op_type(), "' (oneDNN kernel): ", mode, " of ", rows,
               " sequence(s) (Input '", ctx.InputName("Input"), "'): fewer than ", kMinRowsPerRun,
               " rows, which the plain kernel runs faster");
  TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", ctx.op_type(), "' (oneDNN kernel): ", mode, " of ", rows,
             " sequence(s) of ", runs, " distinct lengths (SequenceLength '",
             ctx.InputName("SequenceLength"), "'): sub-batches of fewer than ", kMinRowsPerRun,
             " rows on average, which the plain kernel runs faster as one batch");
}

// One layer's primitive over [steps, batch, in_w] (both directions), cached by shape.
std::shared_ptr<RnnPrim> LayerPrimitive(Exec& e, const RnnSpec& s, int64_t steps, int64_t batch,
                                        int64_t in_w) {
  Key key("rnn");
  key(int64_t(s.mode))(s.dirs)(s.hidden)(steps)(batch)(in_w);
  return e.cache().GetOrCreate<RnnPrim>(key.str(), [&] {
    const int64_t d = s.dirs, h = s.hidden, g = s.gates();
    const memory::desc src({steps, batch, in_w}, f32, Tag::tnc);
    const memory::desc dst({steps, batch, d * h}, f32, Tag::tnc);
    const memory::desc iter({1, d, batch, h}, f32, Tag::ldnc);
    const memory::desc w_layer({1, d, in_w, g, h}, f32, Tag::any);
    const memory::desc w_iter({1, d, h, g, h}, f32, Tag::any);
    const memory::desc bias({1, d, BiasGates(s), h}, f32, Tag::ldgo);
    const rnn_direction dir =
        d == 2 ? rnn_direction::bidirectional_concat : rnn_direction::unidirectional_left2right;
    const prop_kind kind = prop_kind::forward_inference;
    const dnnl::primitive_attr attr = DefaultAttr();
    switch (s.mode) {
      case RnnMode::kLstm: {
        dnnl::lstm_forward::primitive_desc pd(
            dnnl::lstm_forward::desc(kind, dir, src, iter, iter, w_layer, w_iter, bias, dst, iter,
                                     iter),
            attr, e.engine());
        return RnnPrim{pd, dnnl::lstm_forward(pd)};
      }
      case RnnMode::kGru: {
        dnnl::lbr_gru_forward::primitive_desc pd(
            dnnl::lbr_gru_forward::desc(kind, dir, src, iter, w_layer, w_iter, bias, dst, iter),
            attr, e.engine());
        return RnnPrim{pd, dnnl::lbr_gru_forward(pd)};
      }
      default: {
        const algorithm act =
            s.mode == RnnMode::kRnnRelu ? algorithm::eltwise_relu : algorithm::eltwise_tanh;
        dnnl::vanilla_rnn_forward::primitive_desc pd(
            dnnl::vanilla_rnn_forward::desc(kind, act, dir, src, iter, w_layer, w_iter, bias, dst,
                                            iter),
            attr, e.engine());
        return RnnPrim{pd, dnnl::vanilla_rnn_forward(pd)};
      }
    }
  });
}

// A layer's parameters in the primitive's descriptor `want`: `gather` writes them in `user`
// (oneDNN's order, plain) from `sources`, a reorder makes `want`, and the result is kept in the
// place's ConvertedCache while the sources' bytes stay the same. Content versions are
// process-wide and renewed by every write, so their maximum changes whenever any source changes;
// a source whose writes go unseen (version 0) is gathered on every run.
memory KeptParams(Exec& e, const RnnOp& op, const char* what, const std::vector<Tensor>& sources,
                  const memory::desc& user, const memory::desc& want,
                  const std::function<void(const std::vector<const float*>&, float*)>& gather) {
  uint64_t version = 0;
  bool keep = true;
  std::string key("rnn ");
  key += what;
  for (const Tensor& t : sources) {
    const uint64_t v = t.content_version();
    keep = keep && v != 0;
    version = std::max(version, v);
    const void* p = t.raw_data();
    key.append(reinterpret_cast<const char*>(&p), sizeof(p));
  }
  key.append(reinterpret_cast<const char*>(&want.data), sizeof(want.data));
  if (keep)
    if (auto copy = e.FindKept(e.context().converted, key, version))
      return memory(want, e.engine(), copy->data);
  std::vector<const float*> data;
  for (const Tensor& t : sources)
    data.push_back(
        static_cast<const float*>(PlainView(e, t, op.name(), "WeightList").get_data_handle()));
  memory gathered = e.TempMemory(user);
  gather(data, static_cast<float*>(gathered.get_data_handle()));
  if (!keep) return e.Convert(gathered, want);
  std::shared_ptr<ConvertedCopy> copy = e.NewKept(want, version);
  memory out(want, e.engine(), copy->data);
  e.Reorder(gathered, out);
  e.Wait();  // complete before another thread may read it
  e.context().converted.Put(key, copy);
  return out;
}

// weight_ih or weight_hh of both directions, [G * H, in_w] each, as oneDNN's ldgoi
// [1, D, in_w, G, H] (gate blocks of H rows of in_w: Paddle's rows, gates reordered).
memory Weights(Exec& e, const RnnOp& op, int64_t layer, RnnParam p, int64_t in_w,
               const memory::desc& want) {
  const RnnSpec& s = op.s;
  std::vector<Tensor> src;
  for (int64_t d = 0; d < s.dirs; ++d) src.push_back(op.Param(layer, d, p));
  const memory::desc user({1, s.dirs, in_w, s.gates(), s.hidden}, f32, Tag::ldgoi);
  const int64_t block = s.hidden * in_w;
  return KeptParams(e, op, p == RnnParam::kWeightIh ? "w_ih" : "w_hh", src, user, want,
                    [&](const std::vector<const float*>& w, float* to) {
                      for (int64_t d = 0; d < s.dirs; ++d)
                        for (int64_t g = 0; g < s.gates(); ++g, to += block)
                          std::memcpy(to, w[d] + PaddleGate(s.mode, g) * block,
                                      block * sizeof(float));
                    });
}

// b_ih + b_hh per gate, both directions, as oneDNN's ldgo [1, D, G, H]; GRU's candidate keeps
// them apart (lbr_gru's gates 2 and 3: b_ih's inside the tanh, b_hh's times the reset gate).
memory Bias(Exec& e, const RnnOp& op, int64_t layer, const memory::desc& want) {
  const RnnSpec& s = op.s;
  std::vector<Tensor> src;
  for (int64_t d = 0; d < s.dirs; ++d)
    for (RnnParam p : {RnnParam::kBiasIh, RnnParam::kBiasHh}) src.push_back(op.Param(layer, d, p));
  const int64_t h = s.hidden, gb = BiasGates(s);
  const memory::desc user({1, s.dirs, gb, h}, f32, Tag::ldgo);
  return KeptParams(e, op, "bias", src, user, want,
                    [&](const std::vector<const float*>& b, float* to) {
                      for (int64_t d = 0; d < s.dirs; ++d) {
                        const float *b_ih = b[2 * d], *b_hh = b[2 * d + 1];
                        for (int64_t g = 0; g < gb; ++g, to += h) {
                          if (s.mode == RnnMode::kGru && g >= 2) {
                            std::memcpy(to, (g == 2 ? b_ih : b_hh) + 2 * h, h * sizeof(float));
                            continue;
                          }
                          const int64_t pg = PaddleGate(s.mode, g) * h;
                          for (int64_t k = 0; k < h; ++k) to[k] = b_ih[pg + k] + b_hh[pg + k];
                        }
                      }
                    });
}

// The layers over x [steps, batch, I] from h0 / c0 to out [steps, batch, D * H] and hn / cn
// (states [L * D, batch, H]; c0 and cn null but for LSTM), all plain.
void RunLayers(Exec& e, const RnnOp& op, int64_t steps, int64_t batch, const float* x,
               const float* h0, const float* c0, float* out, float* hn, float* cn) {
  const RnnSpec& s = op.s;
  const int64_t state = s.dirs * batch * s.hidden, width = s.dirs * s.hidden;
  const size_t layer_bytes = static_cast<size_t>(steps * batch * width) * sizeof(float);
  const float* in = x;
  for (int64_t l = 0; l < s.layers; ++l) {
    const int64_t in_w = s.LayerInput(l, op.input);
    float* y = l + 1 == s.layers ? out : static_cast<float*>(e.Temp(layer_bytes));
    std::shared_ptr<RnnPrim> p = LayerPrimitive(e, s, steps, batch, in_w);
    const dnnl::rnn_primitive_desc_base& pd = p->pd;
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC_LAYER] = e.View(pd.src_layer_desc(), in);
    args[DNNL_ARG_SRC_ITER] = e.View(pd.src_iter_desc(), h0 + l * state);
    args[DNNL_ARG_DST_LAYER] = e.View(pd.dst_layer_desc(), y);
    args[DNNL_ARG_DST_ITER] = e.View(pd.dst_iter_desc(), hn + l * state);
    if (c0) {
      args[DNNL_ARG_SRC_ITER_C] = e.View(pd.src_iter_c_desc(), c0 + l * state);
      args[DNNL_ARG_DST_ITER_C] = e.View(pd.dst_iter_c_desc(), cn + l * state);
    }
    args[DNNL_ARG_WEIGHTS_LAYER] =
        Weights(e, op, l, RnnParam::kWeightIh, in_w, pd.weights_layer_desc());
    args[DNNL_ARG_WEIGHTS_ITER] =
        Weights(e, op, l, RnnParam::kWeightHh, s.hidden, pd.weights_iter_desc());
    args[DNNL_ARG_BIAS] = Bias(e, op, l, pd.bias_desc());
    e.Run(p->prim, pd, std::move(args));
    in = y;
  }
  e.Wait();
}

// Rows `rows` of [outer, n, inner] (plain) gathered into [outer, rows, inner], or scattered back.
void GatherRows(const float* from, int64_t outer, int64_t n, int64_t inner,
                const std::vector<int64_t>& rows, float* to) {
  const size_t bytes = static_cast<size_t>(inner) * sizeof(float);
  for (int64_t o = 0; o < outer; ++o)
    for (size_t j = 0; j < rows.size(); ++j)
      std::memcpy(to + (o * rows.size() + j) * inner, from + (o * n + rows[j]) * inner, bytes);
}
void ScatterRows(const float* from, int64_t outer, int64_t n, int64_t inner,
                 const std::vector<int64_t>& rows, float* to) {
  const size_t bytes = static_cast<size_t>(inner) * sizeof(float);
  for (int64_t o = 0; o < outer; ++o)
    for (size_t j = 0; j < rows.size(); ++j)
      std::memcpy(to + (o * n + rows[j]) * inner, from + (o * rows.size() + j) * inner, bytes);
}

float* PlainOutput(Tensor t, const Dims& dims, const tide::Place& place) {
  t.Resize(dims);
  float* p = t.mutable_data<float>(place);
  t.set_layout(TIDE_LAYOUT_ANY);
  t.set_format(0);
  return p;
}

void RnnKernel(KernelContext& ctx) {
  const char* name = ctx.op_type();
  Guarded(name, [&] {
    RnnOp op{ctx, tide::ops::GetRnnSpec(ctx), 0};
    const RnnSpec& s = op.s;
    const Dims x = tide::ops::CheckRnnInputs(ctx, s);
    const int64_t steps = x[0], batch = x[1];
    op.input = x[2];
    if (tide::ops::RnnDropsOut(s))
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", name, "' (oneDNN kernel): training (is_test false) ",
                 "with dropout_prob ", s.dropout, " between its ", s.layers,
                 " layers: the plain kernel draws the dropout masks its grad reads (Reserve ",
                 ctx.OptionalOutput("Reserve") ? "'" + ctx.OutputName("Reserve") + "'" : "absent",
                 ")");
    // Empty Input is the plain kernel's to judge.
    if (steps == 0 || batch == 0 || op.input == 0)
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", name, "' (oneDNN kernel): Input ('",
                 ctx.InputName("Input"), "') ", tide::ToString(x), " is empty");
    const std::vector<int64_t> lengths = tide::ops::RnnSequenceLengths(ctx, steps);
    // The rows of each length (every row runs all steps without SequenceLength).
    std::map<int64_t, std::vector<int64_t>> groups;
    for (int64_t n = 0; n < batch; ++n) groups[lengths.empty() ? steps : lengths[n]].push_back(n);
    DeclineSlowRuns(ctx, s, groups);
    Exec e(ctx);
    const auto data = [&](const char* param, size_t i) {
      return static_cast<const float*>(
          PlainView(e, ctx.Input(param, i), name, param).get_data_handle());
    };
    const float* xs = data("Input", 0);
    const float* h0 = data("PreState", 0);
    const float* c0 = s.states() == 2 ? data("PreState", 1) : nullptr;
    const Dims od = tide::ops::RnnOutDims(s, x), sd = tide::ops::RnnStateDims(s, x);
    float* out = PlainOutput(ctx.Output("Out"), od, ctx.place());
    float* hn = PlainOutput(ctx.Output("State", 0), sd, ctx.place());
    float* cn = c0 ? PlainOutput(ctx.Output("State", 1), sd, ctx.place()) : nullptr;
    if (Tensor reserve = ctx.OptionalOutput("Reserve")) PlainOutput(reserve, {0}, ctx.place());
    if (Tensor ds = ctx.OptionalOutput("DropoutState")) {  // no dropout: every element kept
      ds.Resize(od);
      uint8_t* p = ds.mutable_data<uint8_t>(ctx.place());
      std::fill(p, p + DimsProduct(od), uint8_t(1));
    }
    if (groups.begin()->first < steps)  // steps past a length output 0
      std::fill(out, out + DimsProduct(od), 0.0f);
    const int64_t h = s.hidden, width = s.dirs * h, cells = s.cells();
    for (const auto& [len, rows] : groups) {
      const int64_t m = static_cast<int64_t>(rows.size());
      if (m == batch && len > 0) {  // every row: Input's and Out's first len steps as they lie
        RunLayers(e, op, len, batch, xs, h0, c0, out, hn, cn);
        continue;
      }
      float* sub_h0 = static_cast<float*>(e.Temp(cells * m * h * sizeof(float)));
      float* sub_c0 = c0 ? static_cast<float*>(e.Temp(cells * m * h * sizeof(float))) : nullptr;
      GatherRows(h0, cells, batch, h, rows, sub_h0);
      if (c0) GatherRows(c0, cells, batch, h, rows, sub_c0);
      if (len == 0) {  // no step: the initial states are the final ones
        ScatterRows(sub_h0, cells, batch, h, rows, hn);
        if (cn) ScatterRows(sub_c0, cells, batch, h, rows, cn);
        continue;
      }
      float* sub_x = static_cast<float*>(e.Temp(len * m * op.input * sizeof(float)));
      float* sub_out = static_cast<float*>(e.Temp(len * m * width * sizeof(float)));
      float* sub_hn = static_cast<float*>(e.Temp(cells * m * h * sizeof(float)));
      float* sub_cn = c0 ? static_cast<float*>(e.Temp(cells * m * h * sizeof(float))) : nullptr;
      GatherRows(xs, len, batch, op.input, rows, sub_x);
      RunLayers(e, op, len, m, sub_x, sub_h0, sub_c0, sub_out, sub_hn, sub_cn);
      ScatterRows(sub_out, len, batch, width, rows, out);
      ScatterRows(sub_hn, cells, batch, h, rows, hn);
      if (cn) ScatterRows(sub_cn, cells, batch, h, rows, cn);
    }
  });
}

}  // namespace
}  // namespace tide_mkldnn

// float32 only: float64 runs the plain kernel; rnn_grad is the plain one (it runs the forward
// again itself).
TIDE_ON_REGISTER([](tide::Registrar& r) {
  r.Kernel("rnn", "cpu", TIDE_FP32, &::tide_mkldnn::RnnKernel, TIDE_LAYOUT_ONEDNN, "mkldnn", 0);
});
