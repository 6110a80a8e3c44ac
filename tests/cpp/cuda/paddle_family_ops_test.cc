// paddle_family_ops_test.cc: the CUDA kernels of the ops PaddleOCR's DB models save (issue 31)
// against the same ops on the CPU, float32 and float64, outputs and grads: conv2d_transpose
// (strides, asymmetric paddings, dilations, groups, output_padding, NHWC) and the v2 interps
// (a scale list and its 1 / scale step).
#include <string>
#include <vector>

#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

class GpuPaddleFamilyOpsTest : public GpuDtypeTest {};

TEST_P(GpuPaddleFamilyOpsTest, ConvTransposeMatchesCpu) {
  TIDE_REQUIRE_OP("conv2d_transpose");
  struct Case {
    std::vector<int32_t> strides, paddings, dilations;
    int32_t groups;
    std::vector<int32_t> output_padding;
    const char* format;
  };
  for (const Case& k : {Case{{2, 2}, {0, 0}, {1, 1}, 1, {}, "NCHW"},
                        Case{{2, 1}, {1, 0, 0, 1}, {1, 2}, 2, {}, "NCHW"},
                        Case{{2, 2}, {1, 1}, {1, 1}, 1, {1, 0}, "NCHW"},
                        Case{{2, 2}, {0, 0}, {1, 1}, 1, {}, "NHWC"}}) {
    SCOPED_TRACE(std::string(k.format) + " groups " + std::to_string(k.groups));
    const bool nhwc = std::string(k.format) == "NHWC";
    OpCase c("conv2d_transpose");
    c.In("Input", "x",
         R(nhwc ? std::vector<int64_t>{2, 5, 6, 4} : std::vector<int64_t>{2, 4, 5, 6}, 3))
        .In("Filter", "f", R({4, 3, 3, 2}, 4))
        .Out("Output", "out")
        .Attr("strides", k.strides)
        .Attr("paddings", k.paddings)
        .Attr("dilations", k.dilations)
        .Attr("groups", k.groups)
        .Attr("output_padding", k.output_padding)
        .Attr("data_format", std::string(k.format));
    Both(c, {"x", "f"}, {"out"});
  }
}

TEST_P(GpuPaddleFamilyOpsTest, InterpV2MatchesCpu) {
  TIDE_REQUIRE_OP("nearest_interp_v2");
  for (const char* op : {"nearest_interp_v2", "bilinear_interp_v2"})
    for (const std::vector<float>& scale :
         {std::vector<float>{2, 2}, std::vector<float>{1.5f, 2.5f}}) {
      SCOPED_TRACE(std::string(op) + " scale " + std::to_string(scale[0]));
      OpCase c(op);
      c.In("X", "x", R({2, 3, 5, 3}, 7))
          .Out("Out", "out")
          .Attr("scale", scale)
          .Attr("align_corners", false)
          .Attr("align_mode", int32_t(std::string(op) == "bilinear_interp_v2" ? 0 : 1));
      Both(c, {"x"}, {"out"});
    }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuPaddleFamilyOpsTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParam);

}  // namespace
}  // namespace tide::test::cuda
