// tide/kernels/conv_winograd_row.hpp: Winograd F(2x2, 3x3)'s transforms for one row of tiles, a
// vector of tiles at a time (conv_winograd.hpp runs them; the 16 GEMMs between them are
// tide/gemm.hpp's).
//
// No include guard: conv_direct_isa.hpp includes it once per instruction set, inside that set's
// namespace, after defining `Vec` (with the loads, stores and lane shuffles below) and
// TIDE_KERNELS_CONV_TARGET, as it does conv_direct_tile.hpp. It includes nothing.

// WinogradInputRow: tiles [0, tiles) of one tile row of one channel. rows[i] is the tile row's
// input row i, zero-bordered, from the first tile's first column; each tile reads 4 columns from
// 2 tx. Down the columns B^T d (4 combinations of the 4 rows), then across them d B from the even
// and odd columns: element (i, j) of tile tx at v[(i * 4 + j) * stride + tx]. Writes whole
// vectors of tiles (past `tiles` too: the caller leaves room).
TIDE_KERNELS_CONV_TARGET inline void WinogradInputRow(const float* const* rows, int64_t tiles,
                                                      float* v, int64_t stride) {
  constexpr int64_t L = Vec::kLanes;
  using V = typename Vec::T;
  for (int64_t t = 0; t < tiles; t += L) {
    // Columns 2t .. 2t + 2L (a) and 2t + 2 .. 2t + 2L + 2 (b) of each row, two vectors each.
    V a[4][2], b[4][2];
    for (int i = 0; i < 4; ++i)
      for (int h = 0; h < 2; ++h) {
        a[i][h] = Vec::LoadU(rows[i] + 2 * t + h * L);
        b[i][h] = Vec::LoadU(rows[i] + 2 * t + 2 + h * L);
      }
    V ca[4][2], cb[4][2];  // B^T d: rows 0 - 2, 1 + 2, 2 - 1, 1 - 3
    for (int h = 0; h < 2; ++h) {
      ca[0][h] = Vec::Sub(a[0][h], a[2][h]);
      ca[1][h] = Vec::Add(a[1][h], a[2][h]);
      ca[2][h] = Vec::Sub(a[2][h], a[1][h]);
      ca[3][h] = Vec::Sub(a[1][h], a[3][h]);
      cb[0][h] = Vec::Sub(b[0][h], b[2][h]);
      cb[1][h] = Vec::Add(b[1][h], b[2][h]);
      cb[2][h] = Vec::Sub(b[2][h], b[1][h]);
      cb[3][h] = Vec::Sub(b[1][h], b[3][h]);
    }
    for (int i = 0; i < 4; ++i) {
      // Tile tx's columns: 2tx (e0), 2tx + 1 (o0), 2tx + 2 (e1), 2tx + 3 (o1).
      const V e0 = Vec::Even(ca[i][0], ca[i][1]), o0 = Vec::Odd(ca[i][0], ca[i][1]);
      const V e1 = Vec::Even(cb[i][0], cb[i][1]), o1 = Vec::Odd(cb[i][0], cb[i][1]);
      float* vi = v + i * 4 * stride + t;
      Vec::StoreU(vi, Vec::Sub(e0, e1));
      Vec::StoreU(vi + stride, Vec::Add(o0, e1));
      Vec::StoreU(vi + 2 * stride, Vec::Sub(e1, o0));
      Vec::StoreU(vi + 3 * stride, Vec::Sub(o0, o1));
    }
  }
}

// WinogradOutputRow: one output channel of tiles [0, tiles) of one tile row from the products
// m[(i * 4 + j) * stride + tx]: Y = A^T M A, then + bias (+ the residual's rows) (relu), stored
// to output row 2 ty (out0) and 2 ty + 1 (out1; null past the output), `cols` columns from the
// first tile's (an odd output width ends in half a tile). res0 / res1 may be out0 / out1.
TIDE_KERNELS_CONV_TARGET inline void WinogradOutputRow(const float* m, int64_t stride,
                                                       int64_t tiles, float bias, const float* res0,
                                                       const float* res1, bool relu, float* out0,
                                                       float* out1, int64_t cols) {
  constexpr int64_t L = Vec::kLanes;
  using V = typename Vec::T;
  const V bv = Vec::Set1(bias);
  for (int64_t t = 0; t < tiles; t += L) {
    const int64_t n = tiles - t;  // tiles left, the last vector partial when < L
    V s[2][4];                    // A^T M: rows 0 + 1 + 2 and 1 - 2 - 3 of each column
    for (int j = 0; j < 4; ++j) {
      const V m0 = Vec::LoadN(m + j * stride + t, n), m1 = Vec::LoadN(m + (4 + j) * stride + t, n);
      const V m2 = Vec::LoadN(m + (8 + j) * stride + t, n);
      const V m3 = Vec::LoadN(m + (12 + j) * stride + t, n);
      s[0][j] = Vec::Add(Vec::Add(m0, m1), m2);
      s[1][j] = Vec::Sub(Vec::Sub(m1, m2), m3);
    }
    for (int a = 0; a < 2; ++a) {
      float* out = a ? out1 : out0;
      if (!out) break;
      const float* res = a ? res1 : res0;
      const V y0 = Vec::Add(Vec::Add(s[a][0], s[a][1]), s[a][2]);  // column 2 tx
      const V y1 = Vec::Sub(Vec::Sub(s[a][1], s[a][2]), s[a][3]);  // column 2 tx + 1
      V half[2] = {Vec::InterleaveLo(y0, y1), Vec::InterleaveHi(y0, y1)};
      for (int h = 0; h < 2; ++h) {
        const int64_t col = 2 * t + h * L, left = cols - col;
        if (left <= 0) break;
        V y = Vec::Add(half[h], bv);
        if (res) y = Vec::Add(y, Vec::LoadN(res + col, left));
        if (relu) y = Vec::Relu(y);
        Vec::StoreN(out + col, y, left);
      }
    }
  }
}
