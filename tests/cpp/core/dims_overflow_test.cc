// Tests that dims which cannot describe a tensor in memory are refused where they enter the core
// (DDim::product, CheckDims, Tensor::Resize), with an error naming the dims, and that flags are
// validated when set.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "core/framework/tensor.h"
#include "core/platform/ddim.h"
#include "core/platform/enforce.h"
#include "core/platform/flags.h"

namespace tide::core {
namespace {

using ::testing::HasSubstr;

constexpr int64_t k2e40 = int64_t(1) << 40;

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DimsOverflowTest, ProductThatOverflowsThrowsNamingTheDims) {
  DDim d({k2e40, k2e40});
  EXPECT_THAT(ErrorOf([&] { d.product(); }),
              HasSubstr("[1099511627776, 1099511627776] hold more than 2^63"));
  // Every prefix product of a wrapping shape may look harmless: [2^32, 2^32] wraps to exactly 0.
  EXPECT_THAT(ErrorOf([] {
                DDim({int64_t(1) << 32, int64_t(1) << 32}).product();
              }),
              HasSubstr("2^63"));
  EXPECT_EQ(DDim({int64_t(1) << 31, int64_t(1) << 31}).product(), int64_t(1) << 62);
}

TEST(DimsOverflowTest, AZeroDimMakesAnyShapeEmpty) {
  EXPECT_EQ(DDim({k2e40, k2e40, 0}).product(), 0);
  EXPECT_EQ(CheckDims(DDim({k2e40, k2e40, 0}), 8), "");
}

TEST(DimsOverflowTest, UnknownDimsStayUnknown) {
  EXPECT_EQ(DDim({-1, k2e40, k2e40}).product(), -1);
  EXPECT_EQ(CheckDims(DDim({-1, 3})), "");
}

TEST(DimsOverflowTest, CheckDimsNamesNegativeDimsCountsAndBytes) {
  EXPECT_THAT(CheckDims(DDim({2, -5})), HasSubstr("[2, -5] have a negative dim -5"));
  EXPECT_THAT(CheckDims(DDim({k2e40, k2e40})), HasSubstr("more than 2^63 elements"));
  // 2^62 elements fit in int64; at 4 bytes each their size does not.
  EXPECT_EQ(CheckDims(DDim({int64_t(1) << 31, int64_t(1) << 31}), 1), "");
  EXPECT_THAT(CheckDims(DDim({int64_t(1) << 31, int64_t(1) << 31}), 4),
              HasSubstr("of 4-byte elements need more than 2^63 bytes"));
}

TEST(DimsOverflowTest, TensorResizeRefusesImpossibleDimsAndKeepsTheOldOnes) {
  Tensor t;
  t.Resize(DDim({2, 3}));
  EXPECT_THAT(ErrorOf([&] {
                t.Resize(DDim({k2e40, k2e40}));
              }),
              HasSubstr("cannot resize a tensor"));
  EXPECT_THAT(ErrorOf([&] { t.Resize(DDim({3, -2})); }), HasSubstr("negative dim -2"));
  EXPECT_EQ(t.dims(), DDim({2, 3}));
  EXPECT_EQ(t.numel(), 6);
  t.Resize(DDim({-1, 3}));  // unknown until run time is fine
  EXPECT_EQ(t.numel(), -1);
}

TEST(DimsOverflowTest, AllocationSizeThatOverflowsIsRefusedBeforeAllocating) {
  Tensor t;
  t.Resize(DDim({int64_t(1) << 31, int64_t(1) << 31}));
  EXPECT_THAT(
      ErrorOf([&] { t.mutable_data(Place("nowhere", 0), TIDE_FP32); }),
      HasSubstr(
          "cannot allocate a float32 tensor: dims [2147483648, 2147483648] of 4-byte elements"));
}

TEST(FlagValidationTest, OutOfRangeValuesAreRefusedNamingTheFlag) {
  EXPECT_THAT(ErrorOf([] { SetFlag("cpu_threads", "-5"); }), HasSubstr("flag 'cpu_threads'"));
  EXPECT_THAT(ErrorOf([] { SetFlag("cpu_threads", "two"); }), HasSubstr("not an integer"));
  EXPECT_THAT(ErrorOf([] { SetFlag("initial_cpu_memory_in_mb", "17592186044416"); }),
              HasSubstr("does not fit in the address space"));
  EXPECT_THAT(ErrorOf([] { SetFlag("fraction_of_cpu_memory_to_use", "0"); }),
              HasSubstr("outside (0, 1]"));
  EXPECT_EQ(CheckFlagValue("cpu_threads", "4"), "");
  EXPECT_EQ(CheckFlagValue("log_kernels", "true"), "");  // flags without a range: gflags' parse
}

TEST(FlagValidationTest, AConsumedFlagCanNoLongerChange) {
  DefineDeviceKindFlags("testkind");  // as a device plugin's registration does
  MarkFlagConsumed("initial_testkind_memory_in_mb", "a test");
  std::string current;
  ASSERT_TRUE(GetFlag("initial_testkind_memory_in_mb", &current));
  EXPECT_EQ(current, "64");
  EXPECT_THAT(ErrorOf([] { SetFlag("initial_testkind_memory_in_mb", "12345"); }),
              HasSubstr("was already read by a test"));
  SetFlag("initial_testkind_memory_in_mb", current);  // setting the value it has is harmless
}

TEST(FlagValidationTest, OnlyAChangedPreparationFlagCounts) {
  const uint64_t start = PrepareFlagsVersion();
  SetFlag("fuse_weight_updates", "false");
  SetFlag("fuse_weight_updates", "false");  // the value it has: prepared programs stay valid
  SetFlag("profile_ops", "true");           // read by each run, not by preparing
  SetFlag("profile_ops", "false");
  EXPECT_EQ(PrepareFlagsVersion(), start + 1);
  SetFlag("fuse_weight_updates", "true");
  EXPECT_EQ(PrepareFlagsVersion(), start + 2);
  EXPECT_THAT(ErrorOf([] { SetFlag("free_temporaries", "maybe"); }), HasSubstr("free_temporaries"));
  EXPECT_EQ(PrepareFlagsVersion(), start + 2);  // a refused value changes nothing
}

}  // namespace
}  // namespace tide::core
