// tide/kernels/conv_direct_tile.hpp: the direct convolution's inner kernel (the scheme of ONNX
// Runtime's MLAS NCHWc kernels, on an NHWC-staged input): a register tile of F vectors of output
// channels by W output positions, accumulated over every input channel and filter tap with one
// broadcast input value per position and F filter vectors per tap, then stored with the epilogue.
//
// No include guard: conv_direct_isa.hpp includes it once per instruction set, inside that set's
// namespace, after defining `Vec` (the vector, its lane count, load / broadcast / fma / store) and
// TIDE_KERNELS_CONV_TARGET (the set's target attribute, on every function here, so a file built
// for any x86-64, a compiled model's at plain -O2 too, holds the set's code; it runs only where
// the CPU has the set). It includes nothing: everything it uses is included before.

// 8 rows of 8 floats transposed in registers (AVX, which both instruction sets have).
TIDE_KERNELS_CONV_TARGET inline void Transpose8x8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}

// Output positions p of an image, flattened over (oy, ox), are cut into tiles of W; a tile's
// positions may span rows, so each keeps its own input pointer.
// Taps (ky, kx, c), flattened in the packed filter's order, [t0, t1) of them: all for a whole
// tile; a part with `partial` (the tile's F x W vectors) holding the sums of the taps before t0
// (none when t0 is 0), where the sums are left again unless t1 is the last tap.
template <int F, int W>
TIDE_KERNELS_CONV_TARGET void DirectConvTile(const DirectConvJob& j, int64_t n, int64_t mb,
                                             int64_t tile, int64_t t0 = 0, int64_t t1 = -1,
                                             float* partial = nullptr) {
  constexpr int64_t kBlock = F * Vec::kLanes;
  const int64_t ohw = j.oh * j.ow, p0 = tile * W;
  const int64_t valid = ohw - p0 < W ? ohw - p0 : W;
  const float* base[W];
  for (int w = 0; w < W; ++w) {  // past the image's last position: recompute the last one
    const int64_t p = p0 + (w < valid ? w : valid - 1);
    const int64_t oy = p / j.ow, ox = p - oy * j.ow;
    base[w] = j.x + n * j.x_image + oy * j.sh * j.x_row + ox * j.sw * j.x_col;
  }
  const int64_t taps = j.c * j.kh * j.kw;
  if (t1 < 0) t1 = taps;
  typename Vec::T acc[F][W];
#pragma GCC unroll 8
  for (int f = 0; f < F; ++f)
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w)
      acc[f][w] = t0 > 0 ? Vec::Load(partial + (f * W + w) * Vec::kLanes) : Vec::Zero();
  const float* fp = j.filter + (mb * taps + t0) * kBlock;
  for (int64_t t = t0; t < t1;) {  // one filter tap (ky, kx) a pass, its channels [c0, c1)
    const int64_t k = t / j.c, c0 = t - k * j.c, c1 = j.c < c0 + t1 - t ? j.c : c0 + t1 - t;
    const int64_t ky = k / j.kw, kx = k - ky * j.kw;
    t += c1 - c0;
    {
      int64_t off = ky * j.dh * j.x_row + kx * j.dw * j.x_col + c0 * j.x_chan;
      for (int64_t c = c0; c < c1; ++c, off += j.x_chan, fp += kBlock) {
        typename Vec::T fv[F];
#pragma GCC unroll 8
        for (int f = 0; f < F; ++f) fv[f] = Vec::Load(fp + f * Vec::kLanes);
#pragma GCC unroll 8
        for (int w = 0; w < W; ++w) {
          const typename Vec::T b = Vec::Broadcast(base[w] + off);
#pragma GCC unroll 8
          for (int f = 0; f < F; ++f) acc[f][w] = Vec::Fma(fv[f], b, acc[f][w]);
        }
      }
    }
  }
  if (t1 < taps) {
#pragma GCC unroll 8
    for (int f = 0; f < F; ++f)
#pragma GCC unroll 8
      for (int w = 0; w < W; ++w) Vec::Store(partial + (f * W + w) * Vec::kLanes, acc[f][w]);
    return;
  }
  const int64_t m0 = mb * kBlock;
  const int64_t mc = j.m - m0 < kBlock ? j.m - m0 : kBlock;
  float* o = j.out + (n * j.m + m0) * ohw + p0;
  if (!j.residual) {
    // Bias and relu in the registers (the bias padded to whole blocks, 64-byte aligned:
    // DirectConvJob); the stores below only put each channel's positions in place.
#pragma GCC unroll 8
    for (int f = 0; f < F; ++f) {
      const typename Vec::T bv = j.bias ? Vec::Load(j.bias + m0 + f * Vec::kLanes) : Vec::Zero();
#pragma GCC unroll 8
      for (int w = 0; w < W; ++w) {
        acc[f][w] = Vec::Add(acc[f][w], bv);
        if (j.relu) acc[f][w] = Vec::Relu(acc[f][w]);
      }
    }
  }
  // Each 8 channels' W positions transposed in registers (W <= 8 rows, the rest zero) and stored
  // as one masked vector per channel, the `valid` positions: 8x8 transposes and 8 stores where
  // element-wise copies took ~20% of a stem's or a strided 3x3's time. With a residual, bias,
  // residual and relu on the transposed vectors.
  static_assert(W <= 8, "a tile's positions fit one 8-lane vector");
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(valid)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const float* r = j.residual ? j.residual + (n * j.m + m0) * ohw + p0 : nullptr;
#pragma GCC unroll 8
  for (int f = 0; f < F; ++f) {
#pragma GCC unroll 2
    for (int h = 0; h < Vec::kLanes / 8; ++h) {
      const int64_t c0 = f * Vec::kLanes + h * 8;
      if (c0 >= mc) break;  // the block's channels past m
      __m256 rows[8];
#pragma GCC unroll 8
      for (int w = 0; w < 8; ++w) rows[w] = w < W ? Vec::Half(acc[f][w], h) : _mm256_setzero_ps();
      Transpose8x8(rows);
      const int64_t cn = mc - c0 < 8 ? mc - c0 : 8;
      for (int64_t c = 0; c < cn; ++c) {
        __m256 v = rows[c];
        if (r) {
          const float b = j.bias ? j.bias[m0 + c0 + c] : 0.0f;
          v = _mm256_add_ps(_mm256_add_ps(v, _mm256_set1_ps(b)),
                            _mm256_maskload_ps(r + (c0 + c) * ohw, mask));
          if (j.relu) v = _mm256_max_ps(v, _mm256_setzero_ps());
        }
        _mm256_maskstore_ps(o + (c0 + c) * ohw, mask, v);
      }
    }
  }
}

// DirectConvEpilogueRow: o[i] = o[i] + bias (+ r[i]) (relu) over a row of n outputs.
TIDE_KERNELS_CONV_TARGET inline void DirectConvEpilogue(float* o, const float* r, int64_t n,
                                                        float bias, bool relu) {
  const typename Vec::T bv = Vec::Set1(bias);
  for (int64_t i = 0; i < n; i += Vec::kLanes) {
    typename Vec::T v = Vec::Add(Vec::LoadN(o + i, n - i), bv);
    if (r) v = Vec::Add(v, Vec::LoadN(r + i, n - i));
    if (relu) v = Vec::Relu(v);
    Vec::StoreN(o + i, v, n - i);
  }
}

// DirectConvStageRow: 8x8 blocks through registers, the rest element by element.
TIDE_KERNELS_CONV_TARGET inline void DirectConvStage(const float* src, int64_t chan_stride,
                                                     int64_t cols, int64_t c, float* dst) {
  int64_t x = 0;
  for (; x + 8 <= cols; x += 8) {
    int64_t ch = 0;
    for (; ch + 8 <= c; ch += 8) {
      __m256 r[8];
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + (ch + i) * chan_stride + x);
      Transpose8x8(r);
      for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + (x + i) * c + ch, r[i]);
    }
    for (; ch < c; ++ch)
      for (int i = 0; i < 8; ++i) dst[(x + i) * c + ch] = src[ch * chan_stride + x + i];
  }
  for (; x < cols; ++x)
    for (int64_t ch = 0; ch < c; ++ch) dst[x * c + ch] = src[ch * chan_stride + x];
}

// Items [begin, end). With j.tap_chunk, each channel block's tiles in the range take the filter
// a chunk of taps at a time, all of them per chunk (their sums kept in j.partial between
// chunks): the chunk is read from memory once and used by every tile while in cache, so a
// large filter streams at the pace of the arithmetic instead of stalling the first tile.
template <int F, int W>
TIDE_KERNELS_CONV_TARGET void DirectConvRun(const DirectConvJob& j, int64_t begin, int64_t end) {
  if (j.tap_chunk <= 0) {
    for (int64_t it = begin; it < end; ++it) {
      const int64_t tile = it % j.tiles, nm = it / j.tiles;
      DirectConvTile<F, W>(j, nm / j.m_blocks, nm % j.m_blocks, tile);
    }
    return;
  }
  constexpr int64_t kTileFloats = F * W * Vec::kLanes;
  const int64_t taps = j.c * j.kh * j.kw;
  for (int64_t it = begin; it < end;) {
    const int64_t nm = it / j.tiles, ta = it % j.tiles;
    const int64_t tb = j.tiles < ta + end - it ? j.tiles : ta + end - it;
    for (int64_t t0 = 0; t0 < taps; t0 += j.tap_chunk) {
      const int64_t t1 = taps < t0 + j.tap_chunk ? taps : t0 + j.tap_chunk;
      for (int64_t tile = ta; tile < tb; ++tile)
        DirectConvTile<F, W>(j, nm / j.m_blocks, nm % j.m_blocks, tile, t0, t1,
                             j.partial + (tile - ta) * kTileFloats);
    }
    it += tb - ta;
  }
}
