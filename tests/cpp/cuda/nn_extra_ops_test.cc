// nn_extra_ops_test.cc: the CUDA kernels of prelu, label_smooth, pad2d, bilinear_interp /
// nearest_interp (outputs and grads), lars_momentum and fill_constant_batch_size_like against the
// same ops on the CPU, float32 and float64 (and every type the fill takes), every mode and
// attribute variant.
#include <string>
#include <vector>

#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

using Ints = std::vector<int32_t>;

class GpuNnExtraTest : public GpuDtypeTest {};

TEST_P(GpuNnExtraTest, PreluAndLabelSmoothMatchCpu) {
  TIDE_REQUIRE_OP("prelu");
  struct Case {
    const char* mode;
    std::vector<int64_t> alpha;
  };
  for (const Case& k : {Case{"all", {1}}, Case{"channel", {3}}, Case{"element", {3, 4, 5}}}) {
    SCOPED_TRACE(k.mode);
    OpCase c("prelu");
    c.In("X", "x", R({2, 3, 4, 5}, 1))
        .In("Alpha", "alpha", R(k.alpha, 2, 0.05, 0.5))
        .Out("Out", "out")
        .Attr("mode", std::string(k.mode));
    Both(c, {"x", "alpha"}, {"out"});
    ExpectGpuGradsMatchCpu(c, {"alpha"}, {"out"}, Loose());
  }
  for (bool prior : {false, true}) {
    SCOPED_TRACE(prior ? "label_smooth with PriorDist" : "label_smooth");
    OpCase c("label_smooth");
    c.In("X", "x", R({4, 5}, 3, 0, 1)).Out("Out", "out").Attr("epsilon", 0.1f);
    if (prior) c.In("PriorDist", "prior", R({5}, 4, 0, 0.4));
    Both(c, {"x"}, {"out"});
  }
}

TEST_P(GpuNnExtraTest, Pad2dAndGradMatchCpu) {
  TIDE_REQUIRE_OP("pad2d");
  for (const char* mode : {"constant", "reflect", "edge"})
    for (const char* format : {"NCHW", "NHWC"})
      for (Ints pads : {Ints{1, 2, 0, 3}, Ints{0, 0, 0, 0}, Ints{2, 1, 3, 2}}) {
        SCOPED_TRACE(std::string(mode) + " " + format);
        OpCase c("pad2d");
        c.In("X", "x", R({2, 3, 4, 5}, 5))
            .Out("Out", "out")
            .Attr("paddings", pads)
            .Attr("mode", std::string(mode))
            .Attr("pad_value", 0.5f)
            .Attr("data_format", std::string(format));
        Both(c, {"x"}, {"out"});
      }
  OpCase tensor("pad2d");  // the Paddings input overrides the attribute
  tensor.In("X", "x", R({1, 2, 3, 3}, 6))
      .In("Paddings", "p", Values({4}, {1, 0, 2, 1}, TIDE_INT32))
      .Out("Out", "out")
      .Attr("mode", std::string("reflect"));
  Both(tensor, {"x"}, {"out"});
}

TEST_P(GpuNnExtraTest, InterpolationsAndGradsMatchCpu) {
  TIDE_REQUIRE_OP("bilinear_interp");
  struct Size {
    int32_t h, w;
    float scale;
  };
  for (const char* op : {"bilinear_interp", "nearest_interp"})
    for (Size s : {Size{7, 9, 0}, Size{2, 3, 0}, Size{1, 1, 0}, Size{-1, -1, 1.5f}})
      for (bool corners : {true, false})
        for (int32_t mode : {0, 1}) {
          SCOPED_TRACE(std::string(op) + " " + std::to_string(s.h) + "x" + std::to_string(s.w) +
                       (corners ? " align_corners" : "") + " align_mode " + std::to_string(mode));
          OpCase c(op);
          c.In("X", "x", R({2, 3, 4, 5}, 7))
              .Out("Out", "out")
              .Attr("out_h", s.h)
              .Attr("out_w", s.w)
              .Attr("scale", s.scale)
              .Attr("align_corners", corners)
              .Attr("align_mode", mode);
          Both(c, {"x"}, {"out"});
        }
  OpCase sized("bilinear_interp");  // OutSize overrides out_h / out_w
  sized.In("X", "x", R({1, 2, 3, 4}, 8))
      .In("OutSize", "size", Values({2}, {5, 2}, TIDE_INT32))
      .Out("Out", "out")
      .Attr("out_h", int32_t(9))
      .Attr("out_w", int32_t(9));
  Both(sized, {"x"}, {"out"});
}

TEST_P(GpuNnExtraTest, LarsMomentumMatchesCpu) {
  TIDE_REQUIRE_OP("lars_momentum");
  for (bool in_place : {true, false})
    for (TideDataType lr_dt : {TIDE_FP32, TIDE_FP64})
      for (bool zero_grad : {false, true}) {  // a zero norm: the plain learning rate
        SCOPED_TRACE(std::string(in_place ? "in place" : "") + " lr " + core::DataTypeName(lr_dt) +
                     (zero_grad ? " zero Grad" : ""));
        OpCase c("lars_momentum");
        TestTensor grad = R({30, 7}, 2);
        if (zero_grad) grad.data.assign(grad.data.size(), 0);
        c.In("Param", "Param", R({30, 7}, 1))
            .In("Grad", "Grad", grad)
            .In("Velocity", "Velocity", R({30, 7}, 3))
            .In("LearningRate", "LearningRate", Values({1}, {0.1}, lr_dt))
            .Out("ParamOut", in_place ? "Param" : "p_out")
            .Out("VelocityOut", in_place ? "Velocity" : "v_out")
            .Attr("mu", 0.9f)
            .Attr("lars_coeff", 0.01f)
            .Attr("lars_weight_decay", 0.001f);
        ExpectGpuMatchesCpu(c, Loose());
      }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuNnExtraTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParam);

// Every type of the CPU kernel; a LoD Input's batch is its number of sequences.
TEST(GpuFillBatchSizeLike, MatchesCpu) {
  TIDE_REQUIRE_GPU();
  TIDE_REQUIRE_OP("fill_constant_batch_size_like");
  for (TideDataType dt : {TIDE_FP32, TIDE_FP64, TIDE_INT32, TIDE_INT64, TIDE_BOOL})
    for (bool lod : {false, true})
      for (int32_t in_idx : {0, 1}) {
        SCOPED_TRACE(std::string(core::DataTypeName(dt)) + (lod ? " LoD" : "") + " input_dim_idx " +
                     std::to_string(in_idx));
        TestTensor in = Random({5, 3}, TIDE_FP32, -1, 1, 1);
        if (lod) in.lod = {{0, 2, 5}};
        OpCase c("fill_constant_batch_size_like");
        c.In("Input", "in", in)
            .Out("Out", "out")
            .Attr("shape", std::vector<int64_t>{-1, 4})
            .Attr("value", 3.0f)
            .Attr("dtype", int32_t(dt))
            .Attr("input_dim_idx", in_idx)
            .Attr("output_dim_idx", int32_t(0));
        ExpectGpuMatchesCpu(c, {0, 0});
      }
}

}  // namespace
}  // namespace tide::test::cuda
