// rnn_test.cc: the rnn op's cuDNN kernels (devices/cuda/rnn_ops.cc) against ops_sequence's CPU
// kernel, float32 and float64: LSTM, GRU, RNN_TANH and RNN_RELU, 1 and 2 layers, one and two
// directions, with and without SequenceLength (shorter than T: padded steps output 0), in
// training (dropout 0) and inference; the grads of Input, PreState and WeightList. Dropout
// between layers: the masks cannot match the CPU's, so the forward is checked for their form
// (Reserve, DropoutState, a difference from is_test) and the grad, run on masks the test gives,
// against the CPU's. Sequences of length 0 too.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

struct RnnCase {
  const char* mode;
  int32_t layers;
  bool bidirec;
  bool lengths;
  bool is_test;
};

std::string Name(const RnnCase& k) {
  return std::string(k.mode) + " layers=" + std::to_string(k.layers) +
         (k.bidirec ? " bidirectional" : "") + (k.lengths ? " SequenceLength" : "") +
         (k.is_test ? " is_test" : "");
}

int64_t Gates(const std::string& mode) { return mode == "LSTM" ? 4 : mode == "GRU" ? 3 : 1; }

constexpr int64_t kSteps = 5, kBatch = 3, kInput = 4, kHidden = 3;

class GpuRnnTest : public GpuDtypeTest {
 protected:
  void SetUp() override {
    GpuDtypeTest::SetUp();
    if (!IsSkipped()) TIDE_REQUIRE_OP("rnn");
  }

  // WeightList's variables in its order (weight_ih and weight_hh per layer and direction, then
  // the biases the same way) with their dims.
  struct Param {
    std::string name;
    std::vector<int64_t> dims;
  };
  static std::vector<Param> Params(const RnnCase& k) {
    std::vector<Param> w, b;
    const int64_t dirs = k.bidirec ? 2 : 1, g = Gates(k.mode) * kHidden;
    for (int64_t l = 0; l < k.layers; ++l)
      for (int64_t d = 0; d < dirs; ++d) {
        const std::string cell = std::to_string(l) + "_" + std::to_string(d);
        w.push_back({"w_ih_" + cell, {g, l == 0 ? kInput : dirs * kHidden}});
        w.push_back({"w_hh_" + cell, {g, kHidden}});
        b.push_back({"b_ih_" + cell, {g}});
        b.push_back({"b_hh_" + cell, {g}});
      }
    w.insert(w.end(), b.begin(), b.end());
    return w;
  }

  // The inputs of rnn (and rnn_grad) for case k; `lengths` when SequenceLength is given.
  void AddInputs(OpCase& c, const RnnCase& k, const std::vector<double>& lengths,
                 TideDataType length_type = TIDE_INT64) const {
    const int64_t cells = k.layers * (k.bidirec ? 2 : 1);
    c.In("Input", "x", R({kSteps, kBatch, kInput}, 11));
    c.In("PreState", "h0", R({cells, kBatch, kHidden}, 12));
    if (Lstm(k)) c.In("PreState", "c0", R({cells, kBatch, kHidden}, 13));
    unsigned seed = 20;
    for (const Param& p : Params(k)) c.In("WeightList", p.name, R(p.dims, seed++, -0.5, 0.5));
    if (k.lengths) c.In("SequenceLength", "len", Values({kBatch}, lengths, length_type));
  }

  static bool Lstm(const RnnCase& k) { return std::string(k.mode) == "LSTM"; }

  static void AddAttrs(OpCase& c, const RnnCase& k, float dropout, int32_t seed = 0) {
    c.Attr("mode", std::string(k.mode))
        .Attr("num_layers", k.layers)
        .Attr("is_bidirec", k.bidirec)
        .Attr("hidden_size", int32_t(kHidden))
        .Attr("input_size", int32_t(kInput))
        .Attr("dropout_prob", dropout)
        .Attr("is_test", k.is_test)
        .Attr("seed", seed);
  }

  // The rnn op of case k: Out, State (h, and c for LSTM), DropoutState fetched (Reserve too when
  // `reserve`).
  OpCase Rnn(const RnnCase& k, float dropout = 0.0f, int32_t seed = 0,
             const std::vector<double>& lengths = {kSteps, 2, 4},
             TideDataType length_type = TIDE_INT64, bool reserve = false) const {
    OpCase c("rnn");
    AddInputs(c, k, lengths, length_type);
    c.Out("Out", "out").Out("State", "h_n");
    if (Lstm(k)) c.Out("State", "c_n");
    c.Out("Reserve", "reserve", reserve).Out("DropoutState", "dropout_state");
    AddAttrs(c, k, dropout, seed);
    return c;
  }

  // The variables whose grads are compared: Input, PreState and every WeightList entry.
  static std::vector<std::string> Wrt(const RnnCase& k) {
    std::vector<std::string> v{"x", "h0"};
    if (Lstm(k)) v.push_back("c0");
    for (const Param& p : Params(k)) v.push_back(p.name);
    return v;
  }
  static std::vector<std::string> Outs(const RnnCase& k) {
    std::vector<std::string> v{"out", "h_n"};
    if (Lstm(k)) v.push_back("c_n");
    return v;
  }
};

TEST_P(GpuRnnTest, ForwardAndGradsMatchCpu) {
  for (const char* mode : {"LSTM", "GRU", "RNN_TANH", "RNN_RELU"})
    for (int32_t layers : {1, 2})
      for (bool bidirec : {false, true})
        for (bool lengths : {false, true}) {
          const RnnCase k{mode, layers, bidirec, lengths, false};
          SCOPED_TRACE(Name(k));
          const OpCase c = Rnn(k);
          ExpectGpuMatchesCpu(c, Loose());
          ExpectGpuGradsMatchCpu(c, Wrt(k), Outs(k), Loose());
        }
}

TEST_P(GpuRnnTest, InferenceMatchesCpu) {
  for (const char* mode : {"LSTM", "GRU", "RNN_TANH", "RNN_RELU"})
    for (bool lengths : {false, true}) {
      const RnnCase k{mode, 2, true, lengths, true};
      SCOPED_TRACE(Name(k));
      ExpectGpuMatchesCpu(Rnn(k, 0.5f), Loose());  // is_test: no dropout
    }
}

TEST_P(GpuRnnTest, PaddedStepsAreZeroAndInt32LengthsWork) {
  const RnnCase k{"LSTM", 2, true, true, false};
  const std::vector<double> lengths{1, kSteps, 3};
  const OpCase c = Rnn(k, 0.0f, 0, lengths, TIDE_INT32);
  ExpectGpuMatchesCpu(c, Loose());
  ExpectGpuGradsMatchCpu(c, Wrt(k), Outs(k), Loose());
  auto got = c.Run(Gpu());
  const TestTensor& out = got["out"];
  const int64_t width = 2 * kHidden;
  for (int64_t t = 0; t < kSteps; ++t)
    for (int64_t n = 0; n < kBatch; ++n)
      if (t >= lengths[n])
        for (int64_t j = 0; j < width; ++j)
          EXPECT_EQ(out.data[(t * kBatch + n) * width + j], 0.0)
              << "step " << t << " of sequence " << n << " (length " << lengths[n] << ")";
}

// Training with dropout between layers: Reserve holds the masks (each 0 or 1 / (1 - p)),
// DropoutState the last one's keep bytes; the result differs from is_test's, and a fixed seed
// repeats it.
TEST_P(GpuRnnTest, DropoutMasksAreWellFormed) {
  const float p = 0.5f;
  for (const char* mode : {"LSTM", "GRU"}) {
    const RnnCase k{mode, 3, true, true, false};
    SCOPED_TRACE(Name(k));
    const OpCase c = Rnn(k, p, 7, {kSteps, 2, 4}, TIDE_INT64, true);
    auto a = c.Run(Gpu());
    auto again = c.Run(Gpu());
    const TestTensor& reserve = a["reserve"];
    const int64_t out_elems = kSteps * kBatch * 2 * kHidden;
    ASSERT_EQ(reserve.dims, (std::vector<int64_t>{2, kSteps, kBatch, 2 * kHidden}));
    int64_t zeros = 0;
    for (double m : reserve.data) {
      EXPECT_TRUE(m == 0.0 || std::fabs(m - 2.0) < 1e-6) << m;
      zeros += m == 0.0;
    }
    EXPECT_GT(zeros, int64_t(reserve.data.size()) / 5);
    EXPECT_LT(zeros, int64_t(reserve.data.size()) * 4 / 5);
    const TestTensor& ds = a["dropout_state"];
    ASSERT_EQ(ds.dims, (std::vector<int64_t>{kSteps, kBatch, 2 * kHidden}));
    for (int64_t i = 0; i < out_elems; ++i)
      EXPECT_EQ(ds.data[i], reserve.data[out_elems + i] == 0.0 ? 0.0 : 1.0) << i;
    ExpectClose(again["out"], a["out"], {0, 0}, "a fixed seed repeats the masks");
    const RnnCase test{mode, 3, true, true, true};
    auto inference = Rnn(test, p, 7).Run(Gpu());
    double diff = 0;
    for (size_t i = 0; i < inference["out"].data.size(); ++i)
      diff = std::max(diff, std::fabs(inference["out"].data[i] - a["out"].data[i]));
    EXPECT_GT(diff, 1e-3) << "dropout changed nothing";
  }
}

// The grad through dropout masks (fed as Reserve, so both places use the same ones) matches the
// CPU's.
TEST_P(GpuRnnTest, GradThroughGivenMasksMatchesCpu) {
  const float p = 0.5f;
  for (const char* mode : {"LSTM", "GRU", "RNN_TANH"})
    for (const std::vector<double>& lengths :
         {std::vector<double>{}, std::vector<double>{kSteps, 2, 4},
          std::vector<double>{kSteps, 0, 4}}) {
      const RnnCase k{mode, 3, true, !lengths.empty(), false};
      SCOPED_TRACE(Name(k) + (lengths.size() == 3 && lengths[1] == 0 ? " (a length 0)" : ""));
      const int64_t dirs = 2, width = dirs * kHidden;
      OpCase c("rnn_grad");
      AddInputs(c, k, lengths);
      TestTensor masks = R({k.layers - 1, kSteps, kBatch, width}, 40, 0, 1);
      for (double& m : masks.data) m = m < p ? 0.0 : 1.0 / (1.0 - p);
      c.In("Reserve", "reserve", masks);
      c.In(core::GradVarName("Out"), "dout", R({kSteps, kBatch, width}, 41));
      c.In(core::GradVarName("State"), "dh_n", R({k.layers * dirs, kBatch, kHidden}, 42));
      if (Lstm(k))
        c.In(core::GradVarName("State"), "dc_n", R({k.layers * dirs, kBatch, kHidden}, 43));
      c.Out(core::GradVarName("Input"), "dx").Out(core::GradVarName("PreState"), "dh0");
      if (Lstm(k)) c.Out(core::GradVarName("PreState"), "dc0");
      for (const Param& w : Params(k)) c.Out(core::GradVarName("WeightList"), "d" + w.name);
      AddAttrs(c, k, p, 7);
      ExpectGpuMatchesCpu(c, Loose());
    }
}

// Sequences of length 0 (cuDNN takes none: the kernel runs them one step and sets their rows
// after): Out 0, State PreState, Input@GRAD 0, PreState@GRAD State@GRAD, and nothing added to
// the weights' gradients, as on the CPU.
TEST_P(GpuRnnTest, ZeroLengthSequencesMatchCpu) {
  for (const char* mode : {"LSTM", "GRU", "RNN_TANH"})
    for (const std::vector<double>& lengths :
         {std::vector<double>{0, kSteps, 2}, std::vector<double>{3, 0, 0}}) {
      const RnnCase k{mode, 2, true, true, false};
      SCOPED_TRACE(Name(k) + " lengths " + std::to_string(int(lengths[0])) + "," +
                   std::to_string(int(lengths[1])) + "," + std::to_string(int(lengths[2])));
      const OpCase c = Rnn(k, 0.0f, 0, lengths);
      ExpectGpuMatchesCpu(c, Loose());
      ExpectGpuGradsMatchCpu(c, Wrt(k), Outs(k), Loose());
    }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuRnnTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeParam);

}  // namespace
}  // namespace tide::test::cuda
