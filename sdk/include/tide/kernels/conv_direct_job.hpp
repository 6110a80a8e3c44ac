// tide/kernels/conv_direct_job.hpp: what the direct convolution's instruction-set kernels
// (conv_direct_isa.hpp) read and how they are called: plain structs and function pointers, so the
// code built for one instruction set (functions with its target attribute) calls nothing else
// of the SDK.
#ifndef TIDE_KERNELS_CONV_DIRECT_JOB_HPP_
#define TIDE_KERNELS_CONV_DIRECT_JOB_HPP_

#include <cstdint>

namespace tide {
namespace kernels {

// One float32 convolution, groups 1: Output [n, m, oh, ow] (NCHW) from an input whose padding is
// already in place (x with the strides below, any layout; every window the output reads lies
// inside it) and a filter packed by output-channel blocks: filter[mb][ky][kx][c][block], the
// channels past m zero. Output = act(conv + bias + residual) with act none or relu.
struct DirectConvJob {
  const float* x;
  int64_t x_image, x_chan, x_row, x_col;  // element strides of the (padded) input
  int64_t c, kh, kw, sh, sw, dh, dw;
  int64_t m, oh, ow;
  const float* filter;    // packed, 64-byte aligned
  float* out;             // [n, m, oh, ow]
  const float* bias;      // [m_blocks * block] (zeros past m), 64-byte aligned, or null
  const float* residual;  // Output's dims, or null; may be `out` itself (read before written)
  bool relu;
  int64_t m_blocks, tiles;  // output-channel blocks, and tiles of output positions per image
  // Taps per chunk where a channel block's tiles take the filter a chunk at a time (0: whole),
  // and room for the sums of `tiles` tiles between chunks (64-byte aligned).
  int64_t tap_chunk;
  float* partial;
};

// The work items of a job: n * m_blocks * tiles, one tile of positions of one channel block of
// one image each; a kernel runs items [begin, end).
using DirectConvRange = void (*)(const DirectConvJob& job, int64_t begin, int64_t end);

// Stages one row of the input as NHWC: dst[x][ch] = src[ch * chan_stride + x] for x < cols,
// ch < c.
using DirectConvStageRow = void (*)(const float* src, int64_t chan_stride, int64_t cols, int64_t c,
                                    float* dst);

// Winograd F(2x2, 3x3)'s transforms of one row of tiles (conv_winograd_row.hpp): the input's
// (rows: the tile row's 4 input rows) and the output's (m: the products of one output channel).
using WinogradInputRowFn = void (*)(const float* const* rows, int64_t tiles, float* v,
                                    int64_t stride);
using WinogradOutputRowFn = void (*)(const float* m, int64_t stride, int64_t tiles, float bias,
                                     const float* res0, const float* res1, bool relu, float* out0,
                                     float* out1, int64_t cols);

// A row of n outputs: o = act(o + bias + r), act relu or none, r null for none (it may be o).
using DirectConvEpilogueRow = void (*)(float* o, const float* r, int64_t n, float bias, bool relu);

// The kernels for one instruction set: its vector's lanes, its tile of output positions, and
// run[f - 1] for output-channel blocks of f vectors (f <= max_vectors; a conv with few output
// channels takes a smaller block, computing fewer zero channels).
struct DirectConvIsa {
  const char* name;
  int64_t lanes, tile, max_vectors;
  DirectConvRange run[4];
  DirectConvStageRow stage_row;
  WinogradInputRowFn winograd_input_row;
  WinogradOutputRowFn winograd_output_row;
  DirectConvEpilogueRow epilogue_row;
};

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_CONV_DIRECT_JOB_HPP_
