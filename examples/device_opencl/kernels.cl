// kernels.cl: the OpenCL C kernels of the "opencl" place, built twice per device at its first
// use: with -DT=float and (where the device has cl_khr_fp64) -DT=double. Every 1-D kernel runs
// on a global size rounded up to the work-group size, so each checks its bound. Broadcasts are
// Fluid's [pre, n, post] view: Y holds n elements, repeated over X's leading `pre` and trailing
// `post` ones (pre = post = 1 when X and Y have the same dims).
#ifdef TIDE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

// op: 0 add, 1 sub, 2 mul.
inline T Binary(int op, T a, T b) { return op == 0 ? a + b : op == 1 ? a - b : a * b; }

__kernel void binary(int op, long total, long n, long post, __global const T* x,
                     __global const T* y, __global T* out) {
  const long i = get_global_id(0);
  if (i >= total) return;
  out[i] = Binary(op, x[i], y[(i / post) % n]);
}

// dX of add / sub / mul: dOut, dOut, dOut * Y.
__kernel void binary_grad_x(int op, long total, long n, long post, __global const T* y,
                            __global const T* dout, __global T* dx) {
  const long i = get_global_id(0);
  if (i >= total) return;
  dx[i] = op == 2 ? dout[i] * y[(i / post) % n] : dout[i];
}

// dY of add / sub / mul: dOut, -dOut, dOut * X, summed over the `pre` x `post` elements each Y
// element was paired with (one work item per Y element).
__kernel void binary_grad_y(int op, long pre, long n, long post, __global const T* x,
                            __global const T* dout, __global T* dy) {
  const long j = get_global_id(0);
  if (j >= n) return;
  T acc = 0;
  for (long i = 0; i < pre; ++i)
    for (long p = 0; p < post; ++p) {
      const long e = (i * n + j) * post + p;
      acc += op == 2 ? dout[e] * x[e] : dout[e];
    }
  dy[j] = op == 1 ? -acc : acc;
}

__kernel void relu(long n, __global const T* x, __global T* out) {
  const long i = get_global_id(0);
  if (i < n) out[i] = x[i] > 0 ? x[i] : (T)0;
}

__kernel void relu_grad(long n, __global const T* out, __global const T* dout,
                        __global T* dx) {
  const long i = get_global_id(0);
  if (i < n) dx[i] = out[i] > 0 ? dout[i] : (T)0;
}

__kernel void square(long n, __global const T* x, __global T* out) {
  const long i = get_global_id(0);
  if (i < n) out[i] = x[i] * x[i];
}

__kernel void square_grad(long n, __global const T* x, __global const T* dout,
                          __global T* dx) {
  const long i = get_global_id(0);
  if (i < n) dx[i] = dout[i] * (T)2 * x[i];
}

__kernel void scale(long n, T s, T b, __global const T* x, __global T* out) {
  const long i = get_global_id(0);
  if (i < n) out[i] = x[i] * s + b;
}

// C[M, N] = op(A) op(B), op(A) [M, K], op(B) [K, N]; ta: A is stored [K, M], tb: B is [N, K].
// 16 x 16 tiles through local memory; a 2-D range of (N, M) rounded up to 16.
#define TILE 16
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1))) void gemm(
    int ta, int tb, long m, long n, long k, __global const T* a, __global const T* b,
    __global T* c) {
  __local T as[TILE][TILE];
  __local T bs[TILE][TILE];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const long col = get_global_id(0), row = get_global_id(1);
  T acc = 0;
  for (long t = 0; t < k; t += TILE) {
    const long ak = t + tx, bk = t + ty;
    as[ty][tx] = (row < m && ak < k) ? (ta ? a[ak * m + row] : a[row * k + ak]) : (T)0;
    bs[ty][tx] = (col < n && bk < k) ? (tb ? b[col * k + bk] : b[bk * n + col]) : (T)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int p = 0; p < TILE; ++p) acc += as[ty][p] * bs[p][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

// out[0] = mean of x: one work group of MEAN_LOCAL items, each summing a strided share.
#define MEAN_LOCAL 64
__kernel __attribute__((reqd_work_group_size(MEAN_LOCAL, 1, 1))) void mean(
    long n, __global const T* x, __global T* out) {
  __local T part[MEAN_LOCAL];
  const int l = get_local_id(0);
  T acc = 0;
  for (long i = l; i < n; i += MEAN_LOCAL) acc += x[i];
  part[l] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = MEAN_LOCAL / 2; s > 0; s /= 2) {
    if (l < s) part[l] += part[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[0] = n ? part[0] / (T)n : (T)0;
}

__kernel void mean_grad(long n, __global const T* dout, __global T* dx) {
  const long i = get_global_id(0);
  if (i < n) dx[i] = dout[0] / (T)n;
}

// softmax_with_cross_entropy, hard labels (int64, one per row) or soft ones (Logits' dims):
// Logits as [pre, K, post], one work item per row (pre * post of them).
__kernel void softmax_xent(long rows, long k, long post, int soft, long ignore,
                           __global const T* x, __global const long* hard,
                           __global const T* soft_label, __global T* sm, __global T* loss) {
  const long r = get_global_id(0);
  if (r >= rows) return;
  const long base = (r / post) * k * post + r % post;
  T mx = x[base];
  for (long c = 1; c < k; ++c) mx = fmax(mx, x[base + c * post]);
  T sum = 0;
  for (long c = 0; c < k; ++c) sum += exp(x[base + c * post] - mx);
  const T lse = log(sum) + mx;
  for (long c = 0; c < k; ++c) sm[base + c * post] = exp(x[base + c * post] - lse);
  if (soft) {
    T l = 0;
    for (long c = 0; c < k; ++c) l -= soft_label[base + c * post] * (x[base + c * post] - lse);
    loss[r] = l;
    return;
  }
  const long cls = hard[r];
  // The host checked the labels (they are a host input): cls is a class or ignore_index.
  loss[r] = cls == ignore ? (T)0 : lse - x[base + cls * post];
}

__kernel void softmax_xent_grad(long rows, long k, long post, int soft, long ignore,
                                __global const T* sm, __global const long* hard,
                                __global const T* soft_label, __global const T* dloss,
                                __global T* dx) {
  const long r = get_global_id(0);
  if (r >= rows) return;
  const long base = (r / post) * k * post + r % post;
  T total = 0;  // a soft label's mass (Fluid scales the softmax by it)
  if (soft)
    for (long c = 0; c < k; ++c) total += soft_label[base + c * post];
  for (long c = 0; c < k; ++c) {
    const long e = base + c * post;
    if (soft)
      dx[e] = (sm[e] * total - soft_label[e]) * dloss[r];
    else
      dx[e] = hard[r] == ignore ? (T)0 : (sm[e] - (c == hard[r] ? (T)1 : (T)0)) * dloss[r];
  }
}

// ParamOut = Param - LearningRate * Grad; the learning rate float32 (sgd) or of T (sgd_lr_t).
__kernel void sgd(long n, __global const T* p, __global const T* g, __global const float* lr,
                  __global T* out) {
  const long i = get_global_id(0);
  if (i < n) out[i] = p[i] - (T)lr[0] * g[i];
}

__kernel void sgd_lr_t(long n, __global const T* p, __global const T* g, __global const T* lr,
                       __global T* out) {
  const long i = get_global_id(0);
  if (i < n) out[i] = p[i] - lr[0] * g[i];
}
