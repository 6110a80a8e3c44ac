// tide/ops/rnn.hpp: Paddle 2.x's rnn op (what nn.LSTM, nn.GRU and nn.SimpleRNN save) as every
// implementation reads it: the mode and its gates, the layout of WeightList (all weights, then all
// biases, per layer and direction), the dims of Input, PreState, WeightList and SequenceLength,
// with errors naming the op, the input, its variable and what is wrong, and Out's and State's dims.
// Time major: Input [T, N, I], Out [T, N, D * H], each state [L * D, N, H] (D = 2 when
// bidirectional). The gates are Paddle's: i, f, c, o (LSTM), r, z, c (GRU), each H wide.
#ifndef TIDE_OPS_RNN_HPP_
#define TIDE_OPS_RNN_HPP_

#include <cstdint>
#include <string>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

enum class RnnMode { kLstm, kGru, kRnnTanh, kRnnRelu };

// The four parameters of one layer and direction, in WeightList's order within their half.
enum class RnnParam { kWeightIh = 0, kWeightHh = 1, kBiasIh = 2, kBiasHh = 3 };

struct RnnSpec {
  RnnMode mode;
  int64_t layers, dirs, hidden;
  float dropout;
  bool is_test;
  int32_t seed;

  int64_t gates() const { return mode == RnnMode::kLstm ? 4 : mode == RnnMode::kGru ? 3 : 1; }
  int64_t gate_width() const { return gates() * hidden; }
  // PreState / State: h, and c for LSTM.
  size_t states() const { return mode == RnnMode::kLstm ? 2 : 1; }
  int64_t cells() const { return layers * dirs; }
  size_t weights() const { return static_cast<size_t>(4 * cells()); }
  // Layer l's input width: Input's for the first, the previous layer's output (D * H) after.
  int64_t LayerInput(int64_t layer, int64_t input_size) const {
    return layer == 0 ? input_size : dirs * hidden;
  }
  // Index in WeightList of one parameter: Paddle's flat list holds, per layer and direction
  // (layer-major), weight_ih and weight_hh, then the biases the same way after all the weights.
  size_t WeightIndex(int64_t layer, int64_t dir, RnnParam p) const {
    const int64_t k = static_cast<int64_t>(p);
    const int64_t cell = layer * dirs + dir;
    return static_cast<size_t>((k >= 2 ? 2 * cells() : 0) + 2 * cell + k % 2);
  }
};

inline RnnMode RnnModeOf(const char* op, const std::string& mode) {
  if (mode == "LSTM") return RnnMode::kLstm;
  if (mode == "GRU") return RnnMode::kGru;
  if (mode == "RNN_TANH") return RnnMode::kRnnTanh;
  if (mode == "RNN_RELU") return RnnMode::kRnnRelu;
  TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op, "': mode '", mode,
             "' is not one of LSTM, GRU, RNN_TANH, RNN_RELU");
}

// The attributes (kernel or shape inference), checked.
template <typename Ctx>
RnnSpec GetRnnSpec(const Ctx& ctx) {
  const char* op = ctx.op_type();
  RnnSpec s;
  s.mode = RnnModeOf(op, ctx.template Attr<std::string>("mode"));
  s.layers = ctx.template Attr<int32_t>("num_layers");
  s.dirs = ctx.template Attr<bool>("is_bidirec") ? 2 : 1;
  s.hidden = ctx.template Attr<int32_t>("hidden_size");
  s.dropout = ctx.template Attr<float>("dropout_prob");
  s.is_test = ctx.template Attr<bool>("is_test");
  s.seed = ctx.template Attr<int32_t>("seed");
  TIDE_CHECK(s.layers >= 1, "op '", op, "': num_layers must be >= 1, got ", s.layers);
  TIDE_CHECK(s.hidden >= 1, "op '", op, "': hidden_size must be >= 1, got ", s.hidden);
  TIDE_CHECK(s.dropout >= 0.0f && s.dropout <= 1.0f, "op '", op,
             "': dropout_prob must be in [0, 1], got ", s.dropout);
  return s;
}

inline const char* RnnParamName(RnnParam p) {
  switch (p) {
    case RnnParam::kWeightIh:
      return "weight_ih";
    case RnnParam::kWeightHh:
      return "weight_hh";
    case RnnParam::kBiasIh:
      return "bias_ih";
    case RnnParam::kBiasHh:
      return "bias_hh";
  }
  return "";
}

// One parameter's dims: weight_ih [G * H, layer input], weight_hh [G * H, H], biases [G * H].
inline Dims RnnParamDims(const RnnSpec& s, int64_t layer, RnnParam p, int64_t input_size) {
  const int64_t g = s.gate_width();
  switch (p) {
    case RnnParam::kWeightIh:
      return {g, s.LayerInput(layer, input_size)};
    case RnnParam::kWeightHh:
      return {g, s.hidden};
    default:
      return {g};
  }
}

namespace detail {
// Same rank, each dim equal or unknown (< 0) on either side.
inline bool RnnDimsFit(const Dims& got, const Dims& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (!DimsCompatible(got[i], want[i])) return false;
  return true;
}
inline Dims RnnInputDims(const KernelContext& c, const char* p, size_t i) {
  return c.Input(p, i).dims();
}
inline Dims RnnInputDims(const InferShapeContext& c, const char* p, size_t i) {
  return c.InputDims(p, i);
}
}  // namespace detail

// Checks Input [T, N, I], PreState (h, and c for LSTM; each [L * D, N, H]), WeightList (4 * L * D
// parameters of RnnParamDims) and SequenceLength ([N], when given); dims unknown at build time
// (-1) match anything. Returns Input's dims.
template <typename Ctx>
Dims CheckRnnInputs(const Ctx& ctx, const RnnSpec& s) {
  const char* op = ctx.op_type();
  const Dims x = detail::RnnInputDims(ctx, "Input", 0);
  TIDE_CHECK(x.size() == 3, "op '", op, "': Input ('", ctx.InputName("Input"), "') has dims ",
             ToString(x), " but must be 3-D [T, N, I] (time major)");
  const std::string mode = ctx.template Attr<std::string>("mode");
  const size_t n_states = ctx.InputCount("PreState");
  TIDE_CHECK(n_states == s.states(), "op '", op, "': PreState has ", n_states, " tensor(s) but ",
             mode, " needs ", s.states(), s.states() == 2 ? " (h and c)" : " (h)");
  const Dims state{s.cells(), x[1], s.hidden};
  for (size_t i = 0; i < n_states; ++i) {
    const Dims d = detail::RnnInputDims(ctx, "PreState", i);
    TIDE_CHECK(detail::RnnDimsFit(d, state), "op '", op, "': PreState[", i, "] ('",
               ctx.InputName("PreState", i), "') has dims ", ToString(d), " but must be ",
               ToString(state), " ([num_layers * directions, N, hidden_size])");
  }
  const size_t n_weights = ctx.InputCount("WeightList");
  TIDE_CHECK(n_weights == s.weights(), "op '", op, "': WeightList has ", n_weights, " tensors but ",
             mode, " with ", s.layers, " layer(s) and ", s.dirs, " direction(s) needs ",
             s.weights(), " (weight_ih and weight_hh per layer and direction, then their biases)");
  for (int64_t l = 0; l < s.layers; ++l)
    for (int64_t d = 0; d < s.dirs; ++d)
      for (RnnParam p :
           {RnnParam::kWeightIh, RnnParam::kWeightHh, RnnParam::kBiasIh, RnnParam::kBiasHh}) {
        const size_t i = s.WeightIndex(l, d, p);
        const Dims got = detail::RnnInputDims(ctx, "WeightList", i);
        const Dims want = RnnParamDims(s, l, p, x[2]);
        TIDE_CHECK(detail::RnnDimsFit(got, want), "op '", op, "': WeightList[", i, "] ('",
                   ctx.InputName("WeightList", i), "', ", RnnParamName(p), " of layer ", l,
                   d ? " backward" : (s.dirs == 2 ? " forward" : ""), ") has dims ", ToString(got),
                   " but must be ", ToString(want), " (", mode, ": ", s.gates(),
                   " gates of hidden_size ", s.hidden, ")");
      }
  if (ctx.HasInput("SequenceLength")) {
    const Dims d = detail::RnnInputDims(ctx, "SequenceLength", 0);
    TIDE_CHECK(detail::RnnDimsFit(d, {x[1]}), "op '", op, "': SequenceLength ('",
               ctx.InputName("SequenceLength"), "') has dims ", ToString(d), " but must be [N] = [",
               x[1], "], one length per sequence of Input");
  }
  return x;
}

inline Dims RnnOutDims(const RnnSpec& s, const Dims& x) { return {x[0], x[1], s.dirs * s.hidden}; }
inline Dims RnnStateDims(const RnnSpec& s, const Dims& x) { return {s.cells(), x[1], s.hidden}; }

// The sequence lengths (int32 or int64, as Paddle takes either), each in [0, T]; empty when
// SequenceLength is absent (every sequence runs all T steps). Read on the host.
inline std::vector<int64_t> RnnSequenceLengths(const KernelContext& ctx, int64_t steps) {
  std::vector<int64_t> out;
  Tensor t = ctx.OptionalInput("SequenceLength");
  if (!t) return out;
  if (t.dtype() == TIDE_INT32) {
    const int32_t* p = t.data<int32_t>();
    out.assign(p, p + t.numel());
  } else {
    TIDE_CHECK(t.dtype() == TIDE_INT64, "op '", ctx.op_type(), "': SequenceLength ('",
               ctx.InputName("SequenceLength"), "') must be int32 or int64, got ",
               DataTypeName(t.dtype()));
    const int64_t* p = t.data<int64_t>();
    out.assign(p, p + t.numel());
  }
  for (size_t i = 0; i < out.size(); ++i)
    TIDE_CHECK(out[i] >= 0 && out[i] <= steps, "op '", ctx.op_type(), "': SequenceLength ('",
               ctx.InputName("SequenceLength"), "')[", i, "] = ", out[i],
               " is outside [0, T] = [0, ", steps, "]");
  return out;
}

// The op's inputs as a kernel reads them (checked; data on the kernel's place, the lengths on the
// host). `masks` (the dropout masks between layers, [L - 1, T, N, D * H]) is the kernel's to set.
template <typename T>
struct RnnArgs {
  RnnSpec s;
  int64_t steps, batch, input;
  const T* x;
  std::vector<const T*> w;  // WeightList
  const T* h0;              // [L * D, N, H]
  const T* c0;              // LSTM's, else null
  std::vector<int64_t> lengths;
  const T* masks = nullptr;

  bool Valid(int64_t t, int64_t n) const { return lengths.empty() || t < lengths[n]; }
  const T* Param(int64_t layer, int64_t dir, RnnParam p) const {
    return w[s.WeightIndex(layer, dir, p)];
  }
  int64_t rows() const { return steps * batch; }
  int64_t out_width() const { return s.dirs * s.hidden; }
};

template <typename T>
RnnArgs<T> GetRnnArgs(const KernelContext& ctx) {
  RnnArgs<T> a;
  a.s = GetRnnSpec(ctx);
  const Dims x = CheckRnnInputs(ctx, a.s);
  a.steps = x[0];
  a.batch = x[1];
  a.input = x[2];
  a.x = ctx.Input("Input").data<T>();
  for (size_t i = 0; i < a.s.weights(); ++i) a.w.push_back(ctx.Input("WeightList", i).data<T>());
  a.h0 = ctx.Input("PreState", 0).data<T>();
  a.c0 = a.s.mode == RnnMode::kLstm ? ctx.Input("PreState", 1).data<T>() : nullptr;
  a.lengths = RnnSequenceLengths(ctx, a.steps);
  return a;
}

// Whether the op drops elements between layers (training with dropout_prob > 0 and more than one
// layer): the masks then go to Reserve, for the grad.
inline bool RnnDropsOut(const RnnSpec& s) { return !s.is_test && s.dropout > 0.0f && s.layers > 1; }

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_RNN_HPP_
