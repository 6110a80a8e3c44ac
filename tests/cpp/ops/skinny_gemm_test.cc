// skinny_gemm_test.cc: tide/gemm_skinny.hpp's kernels (products of 1-8 rows of A, which
// tide::Gemm sends there) against a float64 triple loop, on every ISA version this CPU can run:
// every row count, B untransposed and transposed, column counts that leave every kind of
// remainder (whole strips, single vectors, single columns), k from 1 up past a panel, sub-matrix
// strides, alpha and beta (beta 0 never reading C), and column ranges that start mid-matrix; B in
// float32 and in bfloat16 (widened as it is read).
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <tide/gemm_skinny.hpp>
#include <vector>

#include "gtest/gtest.h"

namespace tide::test {
namespace {

struct Isa {
  const char* name;
  skinny::RowsFn<float> nn, nt;
  skinny::RowsFn<uint16_t> nn16, nt16;
  bool runs;
};

std::vector<Isa> Isas() {
  std::vector<Isa> isas;
#ifdef TIDE_SKINNY_ISAS
  __builtin_cpu_init();
  isas.push_back({"avx512", skinny::RowsAvx512<float, false>, skinny::RowsAvx512<float, true>,
                  skinny::RowsAvx512<uint16_t, false>, skinny::RowsAvx512<uint16_t, true>,
                  bool(__builtin_cpu_supports("avx512f"))});
  isas.push_back({"avx2", skinny::RowsAvx2<float, false>, skinny::RowsAvx2<float, true>,
                  skinny::RowsAvx2<uint16_t, false>, skinny::RowsAvx2<uint16_t, true>,
                  __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")});
#endif
  isas.push_back({"baseline", skinny::RowsBaseline<float, false>, skinny::RowsBaseline<float, true>,
                  skinny::RowsBaseline<uint16_t, false>, skinny::RowsBaseline<uint16_t, true>,
                  true});
  return isas;
}

struct Case {
  int64_t m, n, k;
  bool trans_b;
  float alpha, beta;
  int64_t pad = 0;    // extra elements at the end of every row of A, B and C
  int64_t n0 = 0;     // the first column computed (the rest of C must stay untouched)
  bool bf16 = false;  // B in bfloat16
};

std::string Name(const Isa& isa, const Case& c) {
  return std::string(isa.name) + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
         " k=" + std::to_string(c.k) + (c.trans_b ? " B^T" : " B") +
         " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta) +
         " pad=" + std::to_string(c.pad) + " n0=" + std::to_string(c.n0) + (c.bf16 ? " bf16" : "");
}

void Check(const Isa& isa, const Case& c) {
  SCOPED_TRACE(Name(isa, c));
  std::mt19937 gen(static_cast<uint32_t>(c.m * 1000003 + c.n * 101 + c.k));
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t lda = c.k + c.pad, ldc = c.n + c.pad;
  const int64_t ldb = (c.trans_b ? c.k : c.n) + c.pad, b_rows = c.trans_b ? c.n : c.k;
  std::vector<float> a(c.m * lda), b(b_rows * ldb), c0(c.m * ldc);
  for (auto* v : {&a, &b, &c0})
    for (float& x : *v) x = dist(gen);
  // bfloat16 B: its bits, and the reference reads the same values widened.
  std::vector<uint16_t> b16(b.size());
  for (size_t i = 0; i < b.size(); ++i) {
    uint32_t w;
    std::memcpy(&w, &b[i], sizeof w);
    b16[i] = static_cast<uint16_t>(w >> 16);
    w = uint32_t(b16[i]) << 16;
    if (c.bf16) std::memcpy(&b[i], &w, sizeof w);
  }
  // beta 0: C is never read, so NaN there must not reach the result.
  if (c.beta == 0)
    for (float& x : c0) x = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> out = c0;
  if (c.bf16)
    (c.trans_b ? isa.nt16 : isa.nn16)(skinny::Args<uint16_t>{
        c.m, c.n0, c.n, c.k, c.alpha, a.data(), lda, b16.data(), ldb, c.beta, out.data(), ldc});
  else
    (c.trans_b ? isa.nt : isa.nn)(skinny::Args<float>{c.m, c.n0, c.n, c.k, c.alpha, a.data(), lda,
                                                      b.data(), ldb, c.beta, out.data(), ldc});
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = out[i * ldc + j];
      if (j < c.n0 || j >= c.n) {  // outside the range: untouched (NaN stays NaN)
        const float before = c0[i * ldc + j];
        ASSERT_TRUE(got == before || (std::isnan(got) && std::isnan(before))) << i << "," << j;
        continue;
      }
      double want = 0, scale = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        const double bp = c.trans_b ? b[j * ldb + p] : b[p * ldb + j];
        want += double(a[i * lda + p]) * bp;
        scale += std::fabs(double(a[i * lda + p]) * bp);
      }
      want *= c.alpha;
      if (c.beta != 0) want += double(c.beta) * c0[i * ldc + j];
      // float32 sums in another order: a few ulps of the sum of magnitudes per term.
      const double tol =
          4e-7 * (std::fabs(c.alpha) * scale + std::fabs(c.beta) + 1) * (1 + c.k / 64.0);
      ASSERT_NEAR(got, want, tol) << "C[" << i << ", " << j << "]";
    }
}

TEST(SkinnyGemmTest, EveryRowCountAndRemainder) {
  for (const Isa& isa : Isas()) {
    if (!isa.runs) {
      std::cout << "[ SKIP ] " << isa.name << ": this CPU lacks it\n";
      continue;
    }
    for (int64_t m = 1; m <= skinny::kMaxRows; ++m)
      for (int64_t n : {1, 5, 8, 16, 33, 130, 300})
        for (int64_t k : {1, 7, 16, 37})
          for (bool trans_b : {false, true})
            for (bool bf16 : {false, true}) Check(isa, {m, n, k, trans_b, 1.0f, 0.0f, 0, 0, bf16});
  }
}

TEST(SkinnyGemmTest, AlphaBetaStridesAndColumnRanges) {
  for (const Isa& isa : Isas()) {
    if (!isa.runs) continue;
    for (bool trans_b : {false, true})
      for (int64_t m : {1, 3, 4, 8}) {
        Check(isa, {m, 260, 50, trans_b, 0.5f, 0.0f});
        Check(isa, {m, 260, 50, trans_b, 1.0f, 1.0f});
        Check(isa, {m, 260, 50, trans_b, -2.0f, 0.25f});
        Check(isa, {m, 200, 19, trans_b, 1.0f, 0.0f, /*pad=*/3});
        Check(isa, {m, 300, 40, trans_b, 1.0f, 0.5f, /*pad=*/5, /*n0=*/128});
        Check(isa, {m, 300, 40, trans_b, 1.0f, 0.0f, /*pad=*/0, /*n0=*/37});
        Check(isa, {m, 300, 40, trans_b, -1.0f, 0.5f, /*pad=*/5, /*n0=*/128, /*bf16=*/true});
      }
  }
}

// Long sums: k across many panels, a weight-sized B.
TEST(SkinnyGemmTest, LongSumsAcrossPanels) {
  for (const Isa& isa : Isas()) {
    if (!isa.runs) continue;
    for (bool trans_b : {false, true})
      for (int64_t m : {1, 2, 4, 5, 8})
        for (bool bf16 : {false, true}) Check(isa, {m, 384, 1027, trans_b, 1.0f, 0.0f, 0, 0, bf16});
  }
}

}  // namespace
}  // namespace tide::test
