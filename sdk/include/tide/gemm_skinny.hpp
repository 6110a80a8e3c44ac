// tide/gemm_skinny.hpp: float32 C = alpha * A * op(B) + beta * C where A has 1-8 rows (a decode
// step's tokens against a layer's weight; tide/gemm.hpp's Gemm sends such products here). With so
// few rows the product is bound by reading B from memory once, which these kernels do in B's own
// order: B [k, N] in panels of 16 rows, each row an ascending stream, the rows of C's partial
// sums in registers across a panel; B used transposed ([N, k]) a few rows at a time against every
// row of A. oneDNN's sgemm (2.6) packs B first: at 4-8 rows it read a LLaMA layer's weights at
// half the rate of 1 row (benchmarks/paddle_llm.py's decode at batch 4 took 2.5x batch 1).
//
// Each row's sums are a few vector registers, GCC's generic vectors (16 floats for AVX-512, 8 for
// AVX2 + FMA, 4 for SSE2), compiled once per ISA and picked at the first call, so that nothing
// requires an ISA; the row count is a template parameter so that the sums stay in registers and
// every load of B feeds every row.
#ifndef TIDE_GEMM_SKINNY_HPP_
#define TIDE_GEMM_SKINNY_HPP_

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TIDE_SKINNY_ISAS 1
#define TIDE_SKINNY_INLINE __attribute__((always_inline)) inline
#else
#define TIDE_SKINNY_INLINE inline
#endif

namespace tide {
namespace skinny {

// The most rows of A these kernels take.
constexpr int64_t kMaxRows = 8;
// Column ranges handed to SkinnyRows are best multiples of this (every strip width divides it):
// other columns take narrower strips and, below a vector, one column at a time.
constexpr int64_t kColumnQuantum = 128;

template <int L>
struct Lanes {
  typedef float Vec __attribute__((vector_size(L * sizeof(float))));
};
template <int L>
struct Bits {
  typedef uint16_t Half __attribute__((vector_size(L * sizeof(uint16_t))));
  typedef uint32_t Word __attribute__((vector_size(L * sizeof(uint32_t))));
};

// Vectors go by reference, never by value: a function taking or returning one would have an ABI
// that depends on the ISA (GCC's -Wpsabi).
template <typename Vec>
TIDE_SKINNY_INLINE void Load(Vec& v, const float* p) {
  std::memcpy(&v, p, sizeof v);
}

// B's elements: float32, or bfloat16 as its bits (uint16_t), widened exactly to float32 (the
// bits are float32's upper half).
template <typename Vec>
TIDE_SKINNY_INLINE void Load(Vec& v, const uint16_t* p) {
  using B = Bits<sizeof(Vec) / sizeof(float)>;
  typename B::Half h;
  std::memcpy(&h, p, sizeof h);
  const typename B::Word w = __builtin_convertvector(h, typename B::Word) << 16;
  std::memcpy(&v, &w, sizeof v);
}
TIDE_SKINNY_INLINE float ToFloat(float x) { return x; }
TIDE_SKINNY_INLINE float ToFloat(uint16_t h) {
  const uint32_t w = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &w, sizeof f);
  return f;
}

template <typename Vec>
TIDE_SKINNY_INLINE void Store(float* p, const Vec& v) {
  std::memcpy(p, &v, sizeof v);
}

template <typename Vec>
TIDE_SKINNY_INLINE float Sum(const Vec& v) {
  float s = 0.0f;
  for (size_t l = 0; l < sizeof(Vec) / sizeof(float); ++l) s += v[l];
  return s;
}

// C[i][j] = alpha * sum + beta * C[i][j], C never read when beta == 0.
TIDE_SKINNY_INLINE void Put(float* c, float sum, float alpha, float beta) {
  *c = beta == 0.0f ? alpha * sum : alpha * sum + beta * *c;
}

// B's rows taken together, at most: each is read as one ascending stream while the strips
// sweep across it, few enough streams for the hardware prefetchers to follow (reading down whole
// columns of B instead, rows a page or more apart, ran at half the rate), and the sums go to C
// and back once per panel, not once per row.
constexpr int64_t kPanelRows = 16;

// C[0, M)[j, j + NV * lanes) += alpha * A[:, p0, p0 + kp) * B[p0, p0 + kp)[strip], the sums in
// registers; the first panel (p0 == 0) starts from beta * C (from 0 where beta == 0).
template <typename Vec, int M, int NV, typename TB>
TIDE_SKINNY_INLINE void StripNN(int64_t p0, int64_t kp, float alpha, const float* a, int64_t lda,
                                const TB* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  constexpr int L = sizeof(Vec) / sizeof(float);
  Vec acc[M][NV];
  for (int i = 0; i < M; ++i)
    for (int q = 0; q < NV; ++q) {
      float* ci = c + i * ldc + q * L;
      acc[i][q] = Vec{};
      if (p0 > 0 || beta != 0.0f) Load(acc[i][q], ci);
      if (p0 == 0 && beta != 0.0f) acc[i][q] *= beta;
    }
  for (int64_t p = p0; p < p0 + kp; ++p) {
    const TB* bp = b + p * ldb;
    Vec bv[NV];
    for (int q = 0; q < NV; ++q) Load(bv[q], bp + q * L);
    for (int i = 0; i < M; ++i) {
      const Vec ai = Vec{} + alpha * a[i * lda + p];
      for (int q = 0; q < NV; ++q) acc[i][q] += ai * bv[q];
    }
  }
  for (int i = 0; i < M; ++i)
    for (int q = 0; q < NV; ++q) Store(c + i * ldc + q * L, acc[i][q]);
}

// The columns left over by the strips (fewer than a strip), one at a time.
template <int M, typename TB>
TIDE_SKINNY_INLINE void ColumnNN(int64_t k, float alpha, const float* a, int64_t lda, const TB* b,
                                 int64_t ldb, float beta, float* c, int64_t ldc) {
  float acc[M] = {};
  for (int64_t p = 0; p < k; ++p)
    for (int i = 0; i < M; ++i) acc[i] += a[i * lda + p] * ToFloat(b[p * ldb]);
  for (int i = 0; i < M; ++i) Put(c + i * ldc, acc[i], alpha, beta);
}

// Vectors per strip: M * NV sums, NV of B and one of A within the ISA's vector registers (32
// on AVX-512, 16 below), and at least 8 sums in flight to cover the FMA latency where M is small.
template <typename Vec, int M>
constexpr int StripVectors() {
  return sizeof(Vec) == 64 ? (M <= 1 ? 8 : M <= 4 ? 4 : 2) : (M <= 1 ? 4 : M <= 4 ? 2 : 1);
}

// Strips of NV vectors over columns [n0, n1), then the rest in single vectors, one panel of B's
// rows after the other; what is left (less than a vector) one column at a time.
template <typename Vec, int M, int NV, typename TB>
TIDE_SKINNY_INLINE int64_t StripsNN(int64_t n0, int64_t n1, int64_t k, float alpha, const float* a,
                                    int64_t lda, const TB* b, int64_t ldb, float beta, float* c,
                                    int64_t ldc) {
  constexpr int64_t W = NV * int64_t(sizeof(Vec) / sizeof(float));
  const int64_t end = n0 + (n1 - n0) / W * W;
  for (int64_t p0 = 0; p0 < k; p0 += kPanelRows)
    for (int64_t j = n0; j < end; j += W)
      StripNN<Vec, M, NV, TB>(p0, std::min(kPanelRows, k - p0), alpha, a, lda, b + j, ldb, beta,
                              c + j, ldc);
  return end;
}

template <typename Vec, int M, typename TB>
TIDE_SKINNY_INLINE void RowsNN(int64_t n0, int64_t n1, int64_t k, float alpha, const float* a,
                               int64_t lda, const TB* b, int64_t ldb, float beta, float* c,
                               int64_t ldc) {
  int64_t j =
      StripsNN<Vec, M, StripVectors<Vec, M>(), TB>(n0, n1, k, alpha, a, lda, b, ldb, beta, c, ldc);
  j = StripsNN<Vec, M, 1, TB>(j, n1, k, alpha, a, lda, b, ldb, beta, c, ldc);
  for (; j < n1; ++j) ColumnNN<M, TB>(k, alpha, a, lda, b + j, ldb, beta, c + j, ldc);
}

// C[0, M)[j0, j0 + J) = dot(A[i], B[j]) for J rows of B at a time, each row contiguous: J * M
// vector sums over k, then one horizontal sum each.
template <typename Vec, int M, int J, typename TB>
TIDE_SKINNY_INLINE void BlockNT(int64_t k, float alpha, const float* a, int64_t lda, const TB* b,
                                int64_t ldb, float beta, float* c, int64_t ldc) {
  constexpr int L = sizeof(Vec) / sizeof(float);
  const int64_t kv = k - k % L;
  Vec acc[M][J] = {};
  for (int64_t p = 0; p < kv; p += L) {
    Vec bv[J];
    for (int q = 0; q < J; ++q) Load(bv[q], b + q * ldb + p);
    for (int i = 0; i < M; ++i) {
      Vec ai;
      Load(ai, a + i * lda + p);
      for (int q = 0; q < J; ++q) acc[i][q] += ai * bv[q];
    }
  }
  for (int i = 0; i < M; ++i)
    for (int q = 0; q < J; ++q) {
      float s = Sum(acc[i][q]);
      for (int64_t p = kv; p < k; ++p) s += a[i * lda + p] * ToFloat(b[q * ldb + p]);
      Put(c + i * ldc + q, s, alpha, beta);
    }
}

template <typename Vec, int M, typename TB>
TIDE_SKINNY_INLINE void RowsNT(int64_t n0, int64_t n1, int64_t k, float alpha, const float* a,
                               int64_t lda, const TB* b, int64_t ldb, float beta, float* c,
                               int64_t ldc) {
  constexpr int J = sizeof(Vec) == 64 ? (M <= 4 ? 4 : 2) : (M <= 2 ? 4 : M <= 4 ? 2 : 1);
  int64_t j = n0;
  for (; j + J <= n1; j += J)
    BlockNT<Vec, M, J, TB>(k, alpha, a, lda, b + j * ldb, ldb, beta, c + j, ldc);
  for (; j < n1; ++j) BlockNT<Vec, M, 1, TB>(k, alpha, a, lda, b + j * ldb, ldb, beta, c + j, ldc);
}

template <typename TB>
struct Args {
  int64_t m, n0, n1, k;
  float alpha;
  const float* a;
  int64_t lda;
  const TB* b;
  int64_t ldb;
  float beta;
  float* c;
  int64_t ldc;
};

template <typename Vec, typename TB, bool kTransB>
TIDE_SKINNY_INLINE void Rows(const Args<TB>& g) {
#define TIDE_SKINNY_CASE(M)                                                                    \
  case M:                                                                                      \
    if constexpr (kTransB)                                                                     \
      return RowsNT<Vec, M, TB>(g.n0, g.n1, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, \
                                g.ldc);                                                        \
    else                                                                                       \
      return RowsNN<Vec, M, TB>(g.n0, g.n1, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, \
                                g.ldc);
  switch (g.m) {
    TIDE_SKINNY_CASE(1)
    TIDE_SKINNY_CASE(2)
    TIDE_SKINNY_CASE(3)
    TIDE_SKINNY_CASE(4)
    TIDE_SKINNY_CASE(5)
    TIDE_SKINNY_CASE(6)
    TIDE_SKINNY_CASE(7)
    default:
      TIDE_SKINNY_CASE(8)
  }
#undef TIDE_SKINNY_CASE
}

#ifdef TIDE_SKINNY_ISAS
template <typename TB, bool kTransB>
__attribute__((target("avx512f"))) inline void RowsAvx512(const Args<TB>& g) {
  Rows<Lanes<16>::Vec, TB, kTransB>(g);
}
template <typename TB, bool kTransB>
__attribute__((target("arch=x86-64-v3"))) inline void RowsAvx2(const Args<TB>& g) {
  Rows<Lanes<8>::Vec, TB, kTransB>(g);
}
#endif
template <typename TB, bool kTransB>
inline void RowsBaseline(const Args<TB>& g) {
  Rows<Lanes<4>::Vec, TB, kTransB>(g);
}

template <typename TB>
using RowsFn = void (*)(const Args<TB>&);

template <typename TB, bool kTransB>
inline RowsFn<TB> PickRows() {
#ifdef TIDE_SKINNY_ISAS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return RowsAvx512<TB, kTransB>;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return RowsAvx2<TB, kTransB>;
#endif
  return RowsBaseline<TB, kTransB>;
}

// Columns [n0, n1) of C[m, N] (rows ldc apart) = alpha * A[m, k] (rows lda apart) * op(B) + beta *
// C, C never read where beta == 0. B row-major: [k, N] (rows ldb apart), or with trans_b [N, k].
// 1 <= m <= skinny::kMaxRows, k >= 1. Single-threaded: the caller splits the columns.
template <typename TB>
void SkinnyColumns(bool trans_b, int64_t m, int64_t n0, int64_t n1, int64_t k, float alpha,
                   const float* a, int64_t lda, const TB* b, int64_t ldb, float beta, float* c,
                   int64_t ldc) {
  static const skinny::RowsFn<TB> nn = skinny::PickRows<TB, false>();
  static const skinny::RowsFn<TB> nt = skinny::PickRows<TB, true>();
  (trans_b ? nt : nn)(skinny::Args<TB>{m, n0, n1, k, alpha, a, lda, b, ldb, beta, c, ldc});
}

}  // namespace skinny

// Float32 B.
inline void SkinnyGemmColumns(bool trans_b, int64_t m, int64_t n0, int64_t n1, int64_t k,
                              float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                              float beta, float* c, int64_t ldc) {
  skinny::SkinnyColumns<float>(trans_b, m, n0, n1, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// B in bfloat16, given as its elements' bits (`b_bits`), widened exactly as it is read: half the
// bytes of a float32 B to read (a bfloat16 model's weights), the sums in float32.
inline void SkinnyGemmColumnsBf16(bool trans_b, int64_t m, int64_t n0, int64_t n1, int64_t k,
                                  float alpha, const float* a, int64_t lda, const uint16_t* b_bits,
                                  int64_t ldb, float beta, float* c, int64_t ldc) {
  skinny::SkinnyColumns<uint16_t>(trans_b, m, n0, n1, k, alpha, a, lda, b_bits, ldb, beta, c, ldc);
}

}  // namespace tide

#endif  // TIDE_GEMM_SKINNY_HPP_
