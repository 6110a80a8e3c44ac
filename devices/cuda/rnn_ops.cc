// rnn_ops.cc: Paddle 2.x's rnn op (nn.LSTM, nn.GRU, nn.SimpleRNN: LSTM, GRU, RNN_TANH, RNN_RELU;
// multi-layer, bidirectional, time major, per-sequence lengths) and its grad on the GPU through
// cuDNN's RNN API (cudnnRNNForward, cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8), with
// the rules and messages of tide/ops/rnn.hpp and the results of ops_sequence's CPU kernel
// (plugins/ops_sequence/rnn_op.cc):
// - cuDNN's cells are Paddle's: the same gates in the same order (LSTM i, f, c~, o; GRU r, z, c~),
//   GRU's reset applied after the recurrent product (c~ = tanh(x W_ic^T + b_ic + r (h W_hc^T +
//   b_hc))), two biases (CUDNN_RNN_DOUBLE_BIAS). WeightList is copied into cuDNN's weight space
//   at the addresses cudnnGetRNNWeightParams gives for each gate's matrix and bias, and the weight
//   space's gradient back into WeightList@GRAD the same way: nothing assumes cuDNN's layout.
// - Data are padded, sequence major (CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, [T, N, width],
//   Paddle's time-major layout): a step at or past a sequence's length outputs 0 (the padding
//   fill) and keeps the state, so the final state is the one after the sequence's last step and
//   the backward direction starts there. cuDNN wants the lengths on the host (the data
//   descriptors) and on the device (the calls): SequenceLength is a host input, uploaded from the
//   kernel's own copy.
// - Dropout between layers (training with dropout_prob > 0 and more than one layer): cuDNN's own
//   dropout keeps its masks inside its reserve space, where the CPU grad cannot read them (nor
//   could this grad read the CPU forward's). So the kernel draws the masks itself, in the CPU
//   kernel's format, into Reserve ([L - 1, T, N, D * H], each 0 or 1 / (1 - p): upscale_in_train),
//   runs cuDNN one layer at a time and multiplies each later layer's input by its mask: a forward
//   on one device and its grad on the other agree. The masks' numbers differ from the CPU's
//   (philox.cuh's generator, not minstd_rand): same distribution.
// - The grad runs the forward again in training mode (cuDNN's reserve space is the call's
//   scratch memory, as the CPU grad recomputes its steps), then BackwardData and BackwardWeights
//   per run of layers, from the top down.
// - A sequence of length 0 (cuDNN takes lengths of at least 1) runs one step in cuDNN, whose
//   results are then discarded: its rows of Out become 0 and of State PreState's (sequences are
//   independent, so no other row depends on them); in the grad its rows of Out@GRAD and
//   State@GRAD are zeroed before cuDNN (so it adds nothing to any gradient: they are linear in
//   those), its rows of Input@GRAD are 0 and of PreState@GRAD State@GRAD's, as on the CPU.
// - Declined (the CPU kernel runs, with copies): an empty Input (T or N = 0), dims beyond cuDNN's
//   ints.
// float32 runs on FMA math (no TF32) unless TIDE_CUDA_ALLOW_TF32=1. Not yet run on a GPU.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <tide/ops/grad_outputs.hpp>
#include <tide/ops/rnn.hpp>
#include <type_traits>
#include <vector>

#include "dnn.h"
#include "host_ints.h"
#include "rnn_util.h"

namespace tide_cuda {
namespace {

using tide::ops::RnnArgs;
using tide::ops::RnnMode;
using tide::ops::RnnParam;
using tide::ops::RnnSpec;

cudnnRNNMode_t DnnCell(RnnMode m) {
  switch (m) {
    case RnnMode::kLstm:
      return CUDNN_LSTM;
    case RnnMode::kGru:
      return CUDNN_GRU;
    case RnnMode::kRnnRelu:
      return CUDNN_RNN_RELU;
    case RnnMode::kRnnTanh:
      break;
  }
  return CUDNN_RNN_TANH;
}

// Declines (TIDE_UNIMPLEMENTED) with `why`, naming the op.
[[noreturn]] void Decline(const KernelContext& ctx, const std::string& why) {
  TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", ctx.op_type(), "': the cuDNN kernel declines ", why,
             "; the CPU kernel runs it");
}

// The op's inputs, checked by tide/ops/rnn.hpp (SequenceLength read on the host, where the core
// hands it over), and what this kernel declines declined: before it writes or queues anything.
template <typename T>
RnnArgs<T> GetArgs(const KernelContext& ctx, const Gpu& g) {
  // A SequenceLength on the device would be a missing host-input declaration: refused by
  // host_ints.h's reader, naming the input, instead of being read on the host by rnn.hpp.
  if (ctx.HasInput("SequenceLength")) HostIntValues(ctx, g, "SequenceLength");
  RnnArgs<T> a = tide::ops::GetRnnArgs<T>(ctx);
  const RnnSpec& s = a.s;
  if (a.steps == 0 || a.batch == 0)
    Decline(ctx, "an empty Input (dims [" + std::to_string(a.steps) + ", " +
                     std::to_string(a.batch) + ", " + std::to_string(a.input) +
                     "]): cuDNN's RNN needs T >= 1 and N >= 1");
  for (int64_t v : {a.steps, a.batch, a.input, s.hidden, s.cells(), s.dirs * s.hidden,
                    a.batch * s.hidden, s.gate_width() * std::max(a.input, s.dirs * s.hidden)})
    if (v > INT32_MAX) Decline(ctx, "dim " + std::to_string(v) + ", beyond cuDNN's int range");
  return a;
}

// The sequence lengths as cuDNN takes them: int32 on the host (the data descriptors) and on the
// device (the calls), each at least 1; all T without SequenceLength. Where some length is 0,
// `empty` holds the op's lengths on the device, for RnnSetEmptyRows.
struct Lengths {
  std::vector<int32_t> host;
  int32_t* dev = nullptr;
  const int32_t* empty = nullptr;
};

template <typename T>
Lengths GetLengths(const Gpu& g, const RnnArgs<T>& a) {
  Lengths len;
  const size_t n = static_cast<size_t>(a.batch);
  len.host.assign(n, static_cast<int32_t>(a.steps));
  if (a.lengths.empty()) {
    len.dev = g.Temp<int32_t>(a.batch);
    FillInt32(g, len.dev, a.batch, static_cast<int32_t>(a.steps));
    return len;
  }
  // [cuDNN's lengths, the op's], uploaded at once.
  std::vector<int32_t> both(2 * n);
  bool empty = false;
  for (size_t i = 0; i < n; ++i) {
    both[n + i] = static_cast<int32_t>(a.lengths[i]);
    both[i] = len.host[i] = std::max<int32_t>(both[n + i], 1);
    empty = empty || both[n + i] == 0;
  }
  len.dev = g.Temp<int32_t>(2 * a.batch);
  // The upload reads the kernel's own vector, not the core's host copy of SequenceLength: a
  // pageable buffer, which cudaMemcpyAsync has taken (staged) by the time it returns
  // (Gpu::CopyFromHost), so nothing on the stream reads host memory after the kernel returns.
  g.CopyFromHost(len.dev, both.data(), sizeof(int32_t) * both.size());
  if (empty) len.empty = len.dev + n;
  return len;
}

// One parameter's block that cuDNN keeps apart: a gate's rows of weight_ih / weight_hh or its
// part of bias_ih / bias_hh (`count` elements from `offset` of WeightList[index]), at `space` in
// the weight space.
struct ParamBlock {
  size_t index;
  int64_t offset, count;
  char* space;
};

// cuDNN's description of layers [first, first + count) of the op, for a forward of `mode` and the
// backward after it: the RNN (its dropout empty: masks are the kernel's), the padded data of its
// input and output, its states. Destroyed with it.
template <typename T>
class DnnRnn {
 public:
  DnnRnn(const Gpu& g, const KernelContext& ctx, const RnnArgs<T>& a, const Lengths& len,
         int64_t first, int64_t count, cudnnForwardMode_t mode)
      : g_(g), a_(a), len_(len), first_(first), count_(count), mode_(mode) {
    try {
      Set(ctx);
    } catch (...) {
      Destroy();
      throw;
    }
  }
  ~DnnRnn() { Destroy(); }
  DnnRnn(const DnnRnn&) = delete;
  DnnRnn& operator=(const DnnRnn&) = delete;

  size_t weight_bytes = 0, work_bytes = 0, reserve_bytes = 0;
  int64_t in_width = 0;  // the first layer's input width

  // Where this run's states start in the op's [L * D, N, H] states (elements).
  int64_t state_offset() const { return first_ * a_.s.dirs * a_.batch * a_.s.hidden; }

  // WeightList -> the weight space.
  void LoadWeights(char* space) const {
    for (const ParamBlock& b : Blocks(space))
      g_.CopyD2D(b.space, a_.w[b.index] + b.offset, sizeof(T) * size_t(b.count));
  }
  // The weight space's gradient -> WeightList@GRAD (dw: by WeightList index; null: not wanted).
  void StoreWeightGrads(char* dspace, const std::vector<T*>& dw) const {
    for (const ParamBlock& b : Blocks(dspace))
      if (dw[b.index]) g_.CopyD2D(dw[b.index] + b.offset, b.space, sizeof(T) * size_t(b.count));
  }
  // Whether any of this run's parameters wants its gradient.
  bool WantsWeightGrads(const std::vector<T*>& dw) const {
    for (int64_t cell = first_ * a_.s.dirs; cell < (first_ + count_) * a_.s.dirs; ++cell)
      for (RnnParam p :
           {RnnParam::kWeightIh, RnnParam::kWeightHh, RnnParam::kBiasIh, RnnParam::kBiasHh})
        if (dw[a_.s.WeightIndex(cell / a_.s.dirs, cell % a_.s.dirs, p)]) return true;
    return false;
  }

  // States are this run's slices (state_offset()); null ones are zero (hx, cx) or not written.
  // `reserve`: training mode's reserve space (reserve_bytes), null in inference.
  void Forward(const T* x, T* y, const T* hx, T* hy, const T* cx, T* cy, const char* w, char* work,
               char* reserve) const {
    CheckDnn(g_,
             Cudnn().cudnnRNNForward(handle_, rnn_, mode_, len_.dev, x_, x, y_, y, h_, hx, hy, h_,
                                     cx, cy, weight_bytes, w, work_bytes, work,
                                     reserve ? reserve_bytes : 0, reserve),
             "cudnnRNNForward");
  }
  void BackwardData(const T* y, const T* dy, T* dx, const T* hx, const T* dhy, T* dhx, const T* cx,
                    const T* dcy, T* dcx, const char* w, char* work, char* reserve) const {
    CheckDnn(g_,
             Cudnn().cudnnRNNBackwardData_v8(handle_, rnn_, len_.dev, y_, y, dy, x_, dx, h_, hx,
                                             dhy, dhx, h_, cx, dcy, dcx, weight_bytes, w,
                                             work_bytes, work, reserve_bytes, reserve),
             "cudnnRNNBackwardData_v8");
  }
  // Adds the weights' gradient to dw (cuDNN only adds: zero it first).
  void BackwardWeights(const T* x, const T* hx, const T* y, char* dw, char* work,
                       char* reserve) const {
    CheckDnn(g_,
             Cudnn().cudnnRNNBackwardWeights_v8(handle_, rnn_, CUDNN_WGRAD_MODE_ADD, len_.dev, x_,
                                                x, h_, hx, y_, y, weight_bytes, dw, work_bytes,
                                                work, reserve_bytes, reserve),
             "cudnnRNNBackwardWeights_v8");
  }

 private:
  void Set(const KernelContext& ctx) {
    const CudnnApi& api = Cudnn();
    const RnnSpec& s = a_.s;
    const cudnnDataType_t dt = DnnType<T>();
    handle_ = DnnHandle(g_);
    in_width = s.LayerInput(first_, a_.input);
    const int hidden = AsInt(ctx, s.hidden);
    // No dropout inside cuDNN (the kernel's masks go between layers run one at a time). With
    // dropout 0 cuDNN keeps no random states, so none are given.
    CheckDnn(g_, api.cudnnCreateDropoutDescriptor(&drop_), "cudnnCreateDropoutDescriptor");
    CheckDnn(g_, api.cudnnSetDropoutDescriptor(drop_, handle_, 0.0f, nullptr, 0, 0),
             "cudnnSetDropoutDescriptor");
    CheckDnn(g_, api.cudnnCreateRNNDescriptor(&rnn_), "cudnnCreateRNNDescriptor");
    const cudnnMathType_t math =
        std::is_same_v<T, float> && !AllowTf32() ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
    CheckDnn(g_,
             api.cudnnSetRNNDescriptor_v8(
                 rnn_, CUDNN_RNN_ALGO_STANDARD, DnnCell(s.mode), CUDNN_RNN_DOUBLE_BIAS,
                 s.dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, dt,
                 dt, math, AsInt(ctx, in_width), hidden, hidden /* no projection */,
                 AsInt(ctx, count_), drop_, CUDNN_RNN_PADDED_IO_ENABLED),
             "cudnnSetRNNDescriptor_v8");
    // Input and output [T, N, width], padded: cuDNN writes padding_ (0) at the output's steps
    // past a sequence's length.
    CheckDnn(g_, api.cudnnCreateRNNDataDescriptor(&x_), "cudnnCreateRNNDataDescriptor");
    CheckDnn(g_, api.cudnnCreateRNNDataDescriptor(&y_), "cudnnCreateRNNDataDescriptor");
    const int steps = AsInt(ctx, a_.steps), batch = AsInt(ctx, a_.batch);
    CheckDnn(
        g_,
        api.cudnnSetRNNDataDescriptor(x_, dt, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, steps,
                                      batch, AsInt(ctx, in_width), len_.host.data(), &padding_),
        "cudnnSetRNNDataDescriptor (Input)");
    CheckDnn(g_,
             api.cudnnSetRNNDataDescriptor(y_, dt, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, steps,
                                           batch, AsInt(ctx, a_.out_width()), len_.host.data(),
                                           &padding_),
             "cudnnSetRNNDataDescriptor (Out)");
    // States [count * D, N, H] (h and c alike).
    CheckDnn(g_, api.cudnnCreateTensorDescriptor(&h_), "cudnnCreateTensorDescriptor");
    const int dims[3] = {AsInt(ctx, count_ * s.dirs), batch, hidden};
    const int strides[3] = {batch * hidden, hidden, 1};
    CheckDnn(g_, api.cudnnSetTensorNdDescriptor(h_, dt, 3, dims, strides),
             "cudnnSetTensorNdDescriptor (states)");
    CheckDnn(g_, api.cudnnGetRNNWeightSpaceSize(handle_, rnn_, &weight_bytes),
             "cudnnGetRNNWeightSpaceSize");
    CheckDnn(g_,
             api.cudnnGetRNNTempSpaceSizes(handle_, rnn_, mode_, x_, &work_bytes, &reserve_bytes),
             "cudnnGetRNNTempSpaceSizes");
    // For cudnnGetRNNWeightParams' answers.
    CheckDnn(g_, api.cudnnCreateTensorDescriptor(&m_), "cudnnCreateTensorDescriptor");
    CheckDnn(g_, api.cudnnCreateTensorDescriptor(&b_), "cudnnCreateTensorDescriptor");
  }

  // The elements a parameter descriptor from cudnnGetRNNWeightParams describes.
  int64_t Elements(cudnnTensorDescriptor_t d) const {
    cudnnDataType_t dt;
    int nb = 0, dims[8] = {0}, strides[8] = {0};
    CheckDnn(g_, Cudnn().cudnnGetTensorNdDescriptor(d, 8, &dt, &nb, dims, strides),
             "cudnnGetTensorNdDescriptor");
    int64_t n = 1;
    for (int i = 0; i < nb && i < 8; ++i) n *= dims[i];
    return nb > 0 ? n : 0;
  }

  // Every gate's matrix and bias of this run's layers and directions, where WeightList and the
  // weight space `space` keep them; adjacent blocks of one parameter (its gates, where cuDNN
  // keeps them contiguous too) merged into one copy. cuDNN's pseudo-layer p is layer first + p /
  // D, direction p % D; its linear layers 0 .. G - 1 multiply the layer's input (weight_ih's
  // gates, bias_ih), G .. 2G - 1 the recurrent state (weight_hh's, bias_hh), in Paddle's gate
  // order (LSTM i, f, c~, o; GRU r, z, c~); each matrix is H rows of the row-major [G * H, width]
  // parameter, row-major too.
  std::vector<ParamBlock> Blocks(char* space) const {
    const CudnnApi& api = Cudnn();
    const RnnSpec& s = a_.s;
    const int64_t h = s.hidden, gates = s.gates();
    std::vector<ParamBlock> out;
    auto add = [&](ParamBlock b) {
      if (!out.empty()) {
        ParamBlock& last = out.back();
        if (last.index == b.index && last.offset + last.count == b.offset &&
            last.space + sizeof(T) * size_t(last.count) == b.space) {
          last.count += b.count;
          return;
        }
      }
      out.push_back(b);
    };
    std::vector<ParamBlock> biases;
    for (int64_t p = 0; p < count_ * s.dirs; ++p) {
      const int64_t layer = first_ + p / s.dirs, dir = p % s.dirs;
      for (int64_t k = 0; k < 2 * gates; ++k) {
        const bool rec = k >= gates;
        const int64_t gate = rec ? k - gates : k;
        const int64_t width = rec ? h : s.LayerInput(layer, a_.input);
        void* m = nullptr;
        void* b = nullptr;
        CheckDnn(g_,
                 api.cudnnGetRNNWeightParams(handle_, rnn_, static_cast<int32_t>(p), weight_bytes,
                                             space, static_cast<int32_t>(k), m_, &m, b_, &b),
                 "cudnnGetRNNWeightParams");
        if (!m || !b || Elements(m_) != h * width || Elements(b_) != h)
          TIDE_THROW(TIDE_INTERNAL, "op '", g_.op(), "': cuDNN's weight space holds pseudo-layer ",
                     p, "'s linear layer ", k, " as ", m ? Elements(m_) : 0, " weights and ",
                     b ? Elements(b_) : 0, " biases, not ", h * width, " and ", h, " (", h,
                     " rows of width ", width, ")");
        add({s.WeightIndex(layer, dir, rec ? RnnParam::kWeightHh : RnnParam::kWeightIh),
             gate * h * width, h * width, static_cast<char*>(m)});
        biases.push_back({s.WeightIndex(layer, dir, rec ? RnnParam::kBiasHh : RnnParam::kBiasIh),
                          gate * h, h, static_cast<char*>(b)});
      }
    }
    for (const ParamBlock& b : biases) add(b);
    return out;
  }

  void Destroy() noexcept {
    if (!drop_ && !rnn_ && !x_ && !y_ && !h_ && !m_ && !b_) return;
    const CudnnApi& api = Cudnn();  // loaded, or no descriptor would exist
    if (b_) api.cudnnDestroyTensorDescriptor(b_);
    if (m_) api.cudnnDestroyTensorDescriptor(m_);
    if (h_) api.cudnnDestroyTensorDescriptor(h_);
    if (y_) api.cudnnDestroyRNNDataDescriptor(y_);
    if (x_) api.cudnnDestroyRNNDataDescriptor(x_);
    if (rnn_) api.cudnnDestroyRNNDescriptor(rnn_);
    if (drop_) api.cudnnDestroyDropoutDescriptor(drop_);
    b_ = m_ = h_ = nullptr;
    x_ = y_ = nullptr;
    rnn_ = nullptr;
    drop_ = nullptr;
  }

  const Gpu& g_;
  const RnnArgs<T>& a_;
  const Lengths& len_;
  const int64_t first_, count_;
  const cudnnForwardMode_t mode_;
  T padding_ = T(0);  // the output's padding fill, in the data's type (kept: cuDNN reads it)
  cudnnHandle_t handle_ = nullptr;
  cudnnDropoutDescriptor_t drop_ = nullptr;
  cudnnRNNDescriptor_t rnn_ = nullptr;
  cudnnRNNDataDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnTensorDescriptor_t h_ = nullptr, m_ = nullptr, b_ = nullptr;
};

// Layers run per cuDNN call: all at once, or one at a time when the kernel's dropout masks go
// between them.
int64_t LayersPerRun(const RnnSpec& s) { return tide::ops::RnnDropsOut(s) ? 1 : s.layers; }

// A state's slice from element n (null stays null: a state cuDNN takes as zero or does not write).
template <typename P>
P* Offset(P* p, int64_t n) {
  return p ? p + n : nullptr;
}

template <typename T>
void Rnn(KernelContext& ctx) {
  const Gpu g(ctx);
  const RnnArgs<T> a = GetArgs<T>(ctx, g);
  const RnnSpec& s = a.s;
  const tide::Place& place = ctx.place();
  const Dims xd{a.steps, a.batch, a.input};
  const int64_t out_elems = a.rows() * a.out_width();
  const bool drops = tide::ops::RnnDropsOut(s);
  Tensor reserve = ctx.OptionalOutput("Reserve");
  TIDE_CHECK(!drops || reserve, "op '", ctx.op_type(),
             "': training with dropout_prob > 0 needs the Reserve output (the dropout masks)");
  const Lengths len = GetLengths(g, a);
  T* masks = nullptr;
  if (drops) {
    masks = reserve.mutable_data<T>({s.layers - 1, a.steps, a.batch, a.out_width()}, place);
    RnnDropoutMasks(g, masks, (s.layers - 1) * out_elems, RnnDropoutSeed(s.seed), s.dropout);
  } else if (reserve) {
    reserve.mutable_data<T>({0}, place);
  }
  T* out = ctx.Output("Out").mutable_data<T>(tide::ops::RnnOutDims(s, xd), place);
  const Dims sd = tide::ops::RnnStateDims(s, xd);
  T* last_h = ctx.Output("State", 0).mutable_data<T>(sd, place);
  T* last_c = s.states() == 2 ? ctx.Output("State", 1).mutable_data<T>(sd, place) : nullptr;
  const int64_t per_run = LayersPerRun(s);
  const T* x = a.x;
  for (int64_t l = 0; l < s.layers; l += per_run) {
    if (l > 0 && masks) {  // layer l reads layer l - 1's output times its mask
      T* dropped = g.Temp<T>(out_elems);
      RnnApplyMask(g, x, masks + (l - 1) * out_elems, dropped, out_elems);
      x = dropped;
    }
    const DnnRnn<T> rnn(g, ctx, a, len, l, per_run, CUDNN_FWD_MODE_INFERENCE);
    T* y = l + per_run == s.layers ? out : g.Temp<T>(out_elems);
    // Padded steps: cuDNN writes its padding fill (0) there; zeroed first all the same, so that
    // Out's padding (the CPU kernel's 0) does not rest on it.
    if (!a.lengths.empty()) g.Zero(y, sizeof(T) * size_t(out_elems));
    char* w = g.Temp<char>(static_cast<int64_t>(rnn.weight_bytes));
    rnn.LoadWeights(w);
    const int64_t off = rnn.state_offset();
    rnn.Forward(x, y, a.h0 + off, last_h + off, Offset(a.c0, off), Offset(last_c, off), w,
                g.Temp<char>(static_cast<int64_t>(rnn.work_bytes)), nullptr);
    x = y;
  }
  if (len.empty) {  // sequences of length 0: Out 0, State PreState
    const int64_t states = s.cells(), n = a.batch, h = s.hidden;
    RnnSetEmptyRows<T>(g, out, nullptr, a.steps, n, a.out_width(), len.empty);
    RnnSetEmptyRows<T>(g, last_h, a.h0, states, n, h, len.empty);
    if (last_c) RnnSetEmptyRows<T>(g, last_c, a.c0, states, n, h, len.empty);
  }
  // The CPU kernel's: the last layer's keep mask (all 1 without dropout), uint8 of Out's dims.
  if (Tensor ds = ctx.OptionalOutput("DropoutState")) {
    uint8_t* p = ds.mutable_data<uint8_t>(tide::ops::RnnOutDims(s, xd), place);
    RnnKeepBytes<T>(g, masks ? masks + (s.layers - 2) * out_elems : nullptr, p, out_elems);
  }
}

// An optional input gradient's data on the device ([n] values), or null (the CPU kernel's rule).
template <typename T>
const T* GradInput(const KernelContext& ctx, const Gpu& g, const char* param, size_t i, int64_t n) {
  const std::string name = GradVarName(param);
  if (ctx.InputCount(name.c_str()) <= i) return nullptr;
  Tensor t = ctx.OptionalInput(name.c_str(), i);
  if (!t || !t.initialized()) return nullptr;
  TIDE_CHECK(t.numel() == n, "op '", ctx.op_type(), "': ", name, "[", i, "] ('",
             ctx.InputName(name.c_str(), i), "') has dims ", tide::ToString(t.dims()), ", ", n,
             " elements expected");
  return DeviceData<T>(g, t);
}

// An output's gradient d ([outer, N, inner]) as cuDNN takes it: d itself; where some sequence has
// length 0, a copy with its rows zeroed (so that the step cuDNN runs for it adds nothing); zeros
// for a null d when cuDNN `needs` one (Out's), else null (a state's: cuDNN takes it as zero).
template <typename T>
const T* GradForDnn(const Gpu& g, const T* d, int64_t outer, const Lengths& len, int64_t inner,
                    bool needs) {
  if (!d && !needs) return nullptr;
  if (d && !len.empty) return d;
  const int64_t batch = static_cast<int64_t>(len.host.size()), n = outer * batch * inner;
  T* copy = g.Temp<T>(n);
  if (!d) {
    g.Zero(copy, sizeof(T) * size_t(n));
    return copy;
  }
  g.CopyD2D(copy, d, sizeof(T) * size_t(n));
  RnnSetEmptyRows<T>(g, copy, nullptr, outer, batch, inner, len.empty);
  return copy;
}

// One cuDNN run of the grad's forward: its input and output, weights and spaces, kept for the
// backward.
template <typename T>
struct GradRun {
  std::unique_ptr<DnnRnn<T>> rnn;
  const T* x;
  T* y;
  char *w, *work, *reserve;
};

template <typename T>
void RnnGrad(KernelContext& ctx) {
  const Gpu g(ctx);
  const RnnArgs<T> a = GetArgs<T>(ctx, g);
  const RnnSpec& s = a.s;
  const char* op = ctx.op_type();
  const tide::Place& place = ctx.place();
  const int64_t out_elems = a.rows() * a.out_width();
  const int64_t all_states = s.cells() * a.batch * s.hidden;
  const T* masks = nullptr;
  if (tide::ops::RnnDropsOut(s)) {
    Tensor reserve = ctx.OptionalInput("Reserve");
    TIDE_CHECK(reserve && reserve.numel() == (s.layers - 1) * out_elems, "op '", op,
               "': Reserve ('", ctx.InputName("Reserve"),
               "') must hold the forward's dropout masks, [num_layers - 1, T, N, D * H]");
    masks = DeviceData<T>(g, reserve);
  }
  // The outputs' gradients (absent: zero; cuDNN takes null states' gradients as zero).
  const T* dout = GradInput<T>(ctx, g, "Out", 0, out_elems);
  const T* dhy = GradInput<T>(ctx, g, "State", 0, all_states);
  const T* dcy = s.states() == 2 ? GradInput<T>(ctx, g, "State", 1, all_states) : nullptr;
  // The gradients wanted (null: not).
  T* dinput = tide::ops::OptionalGrad<T>(ctx, "Input", {a.steps, a.batch, a.input});
  const Dims sd{s.cells(), a.batch, s.hidden};
  const std::string dpre = GradVarName("PreState");
  Tensor dpre_h = ctx.OptionalOutput(dpre.c_str(), 0);
  Tensor dpre_c = s.states() == 2 ? ctx.OptionalOutput(dpre.c_str(), 1) : Tensor();
  T* dhx = dpre_h ? dpre_h.mutable_data<T>(sd, place) : nullptr;
  T* dcx = dpre_c ? dpre_c.mutable_data<T>(sd, place) : nullptr;
  std::vector<T*> dw(s.weights(), nullptr);
  for (int64_t l = 0; l < s.layers; ++l)
    for (int64_t d = 0; d < s.dirs; ++d)
      for (RnnParam p :
           {RnnParam::kWeightIh, RnnParam::kWeightHh, RnnParam::kBiasIh, RnnParam::kBiasHh}) {
        const size_t i = s.WeightIndex(l, d, p);
        dw[i] = tide::ops::OptionalGrad<T>(ctx, "WeightList",
                                           tide::ops::RnnParamDims(s, l, p, a.input), i);
      }
  const Lengths len = GetLengths(g, a);
  // The forward again, in training mode, keeping each run's input, output and reserve space.
  const int64_t per_run = LayersPerRun(s);
  std::vector<GradRun<T>> runs;
  const T* x = a.x;
  for (int64_t l = 0; l < s.layers; l += per_run) {
    if (l > 0 && masks) {
      T* dropped = g.Temp<T>(out_elems);
      RnnApplyMask(g, x, masks + (l - 1) * out_elems, dropped, out_elems);
      x = dropped;
    }
    GradRun<T> r;
    r.rnn = std::make_unique<DnnRnn<T>>(g, ctx, a, len, l, per_run, CUDNN_FWD_MODE_TRAINING);
    r.x = x;
    r.y = g.Temp<T>(out_elems);
    r.w = g.Temp<char>(static_cast<int64_t>(r.rnn->weight_bytes));
    r.work = g.Temp<char>(static_cast<int64_t>(r.rnn->work_bytes));
    r.reserve = g.Temp<char>(static_cast<int64_t>(r.rnn->reserve_bytes));
    r.rnn->LoadWeights(r.w);
    const int64_t off = r.rnn->state_offset();
    r.rnn->Forward(r.x, r.y, a.h0 + off, nullptr, Offset(a.c0, off), nullptr, r.w, r.work,
                   r.reserve);
    x = r.y;
    runs.push_back(std::move(r));
  }
  // Back through the runs from the top: Out's gradient, then each run's input's.
  const T* dy = GradForDnn(g, dout, a.steps, len, a.out_width(), true);
  const T* dhy_dnn = GradForDnn(g, dhy, s.cells(), len, s.hidden, false);
  const T* dcy_dnn = GradForDnn(g, dcy, s.cells(), len, s.hidden, false);
  for (size_t i = runs.size(); i-- > 0;) {
    const GradRun<T>& r = runs[i];
    const int64_t first = static_cast<int64_t>(i) * per_run;
    const int64_t dx_elems = a.rows() * r.rnn->in_width;
    // cuDNN needs dx even where Input@GRAD is not wanted. Padded steps' gradients are 0, as on the
    // CPU: zeroed first, whether or not cuDNN writes them.
    T* dx = i == 0 && dinput ? dinput : g.Temp<T>(dx_elems);
    g.Zero(dx, sizeof(T) * size_t(dx_elems));
    const int64_t off = r.rnn->state_offset();
    r.rnn->BackwardData(r.y, dy, dx, a.h0 + off, Offset(dhy_dnn, off), Offset(dhx, off),
                        Offset(a.c0, off), Offset(dcy_dnn, off), Offset(dcx, off), r.w, r.work,
                        r.reserve);
    if (r.rnn->WantsWeightGrads(dw)) {
      char* dspace = g.Temp<char>(static_cast<int64_t>(r.rnn->weight_bytes));
      g.Zero(dspace, r.rnn->weight_bytes);
      r.rnn->BackwardWeights(r.x, a.h0 + off, r.y, dspace, r.work, r.reserve);
      r.rnn->StoreWeightGrads(dspace, dw);
    }
    if (i == 0) break;
    // The run below's output gradient: through the mask its output was multiplied by.
    if (masks) RnnApplyMask(g, dx, masks + (first - 1) * out_elems, dx, out_elems);
    dy = dx;
  }
  if (len.empty) {  // sequences of length 0: Input@GRAD 0, PreState@GRAD State@GRAD
    const int64_t states = s.cells(), n = a.batch, h = s.hidden;
    if (dinput) RnnSetEmptyRows<T>(g, dinput, nullptr, a.steps, n, a.input, len.empty);
    if (dhx) RnnSetEmptyRows<T>(g, dhx, dhy, states, n, h, len.empty);
    if (dcx) RnnSetEmptyRows<T>(g, dcx, dcy, states, n, h, len.empty);
  }
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

// SequenceLength: cuDNN's data descriptors take the lengths on the host.
TIDE_REGISTER_KERNEL_HOST_INPUTS("rnn", "gpu", TIDE_HOST_INPUTS("SequenceLength"), Rnn,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("rnn_grad", "gpu", TIDE_HOST_INPUTS("SequenceLength"), RnnGrad,
                                 TIDE_CUDA_FLOAT_TYPES);
