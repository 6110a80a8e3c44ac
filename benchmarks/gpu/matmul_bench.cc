// matmul_bench.cc: Tide's mul/matmul kernels on gpu:0 (a prepared one-op program run by the
// executor, operands already on the device) against cuBLAS called directly with the same shapes,
// same math mode, in the same run. Prints `case | tide | cuBLAS | tide/cuBLAS` in TFLOP/s (higher
// is better), checks both computed the same thing, and with --json FILE writes the rows.
//
//   build/bin/tide_gpu_matmul_bench [--reps 7] [--json out.json]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/device/device_context.h"
#include "core/executor/executor.h"
#include "core/framework/tensor_util.h"
#include "core/host/initialize.h"

using namespace tide::core;  // NOLINT: a benchmark

namespace {

#define CUDA_OK(call)                                                                             \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                               \
    }                                                                                             \
  } while (0)
#define CUBLAS_OK(call)                                                  \
  do {                                                                   \
    cublasStatus_t s_ = (call);                                          \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                   cublasGetStatusString(s_));                           \
      std::exit(2);                                                      \
    }                                                                    \
  } while (0)

struct Case {
  std::string name, op;
  int64_t batch, m, n, k;
  bool trans_y;
  TideDataType dtype;
};

struct Stats {
  double median, min, max;  // TFLOP/s
};

Stats Summarize(std::vector<double> secs, double flops) {
  std::sort(secs.begin(), secs.end());
  return {flops / secs[secs.size() / 2] / 1e12, flops / secs.back() / 1e12,
          flops / secs.front() / 1e12};
}

template <typename T>
LoDTensor Filled(const std::vector<int64_t>& dims, unsigned seed) {
  LoDTensor host;
  host.Resize(DDim(dims));
  T* d = host.mutable_data<T>(Place("cpu", 0));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t i = 0; i < host.numel(); ++i) d[i] = static_cast<T>(u(rng));
  return host;
}

// Tide: the op in a prepared program over device-resident operands; `out` gets its result.
template <typename T>
std::vector<double> RunTide(const Case& c, const LoDTensor& x, const LoDTensor& y, int reps,
                            int inner, LoDTensor* out) {
  const Place gpu("gpu", 0);
  Scope scope;
  TensorCopySync(x, gpu, scope.Var("x")->GetMutable<LoDTensor>());
  TensorCopySync(y, gpu, scope.Var("y")->GetMutable<LoDTensor>());
  ProgramDesc prog;
  BlockDesc* b = prog.MutableBlock(0);
  for (const char* v : {"x", "y", "out"}) {
    VarDesc* d = b->Var(v);
    d->set_dtype(c.dtype);
    d->set_persistable(true);
  }
  AttributeMap attrs;
  if (c.op == "matmul") attrs["transpose_Y"] = c.trans_y;
  OpDesc* op = b->AppendOp();
  *op = OpDesc(c.op, {{"X", {"x"}}, {"Y", {"y"}}}, {{"Out", {"out"}}}, attrs);
  op->set_block(b);
  Executor exe(gpu);
  auto prepared = exe.Prepare(prog, 0, {}, {});
  DeviceContext* ctx = DeviceContextPool::Global().Get(gpu);
  for (int i = 0; i < 2; ++i) exe.Run(*prepared, &scope, {});  // warm up (and choose kernels)
  ctx->Synchronize();
  std::vector<double> secs;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) exe.Run(*prepared, &scope, {});
    ctx->Synchronize();
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                   inner);
  }
  TensorCopySync(scope.FindVar("out")->Get<LoDTensor>(), Place("cpu", 0), out);
  return secs;
}

// cuBLAS: the same product (row-major via the operand swap), on its own handle and stream.
template <typename T>
std::vector<double> RunCublas(const Case& c, const LoDTensor& x, const LoDTensor& y, int reps,
                              int inner, std::vector<T>* out) {
  cublasHandle_t h;
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUBLAS_OK(cublasCreate(&h));
  CUBLAS_OK(cublasSetStream(h, stream));
  const char* tf32 = std::getenv("TIDE_CUDA_ALLOW_TF32");
  CUBLAS_OK(cublasSetMathMode(
      h, tf32 && std::strcmp(tf32, "1") == 0 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  const size_t xb = sizeof(T) * x.numel(), yb = sizeof(T) * y.numel();
  const size_t ob = sizeof(T) * size_t(c.batch * c.m * c.n);
  T *dx, *dy, *dout;
  CUDA_OK(cudaMalloc(&dx, xb));
  CUDA_OK(cudaMalloc(&dy, yb));
  CUDA_OK(cudaMalloc(&dout, ob));
  CUDA_OK(cudaMemcpy(dx, x.data<T>(), xb, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dy, y.data<T>(), yb, cudaMemcpyHostToDevice));
  const T alpha = 1, beta = 0;
  const int m = int(c.m), n = int(c.n), k = int(c.k);
  const cublasOperation_t opy = c.trans_y ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldy = c.trans_y ? k : n;
  auto call = [&] {
    if (c.batch == 1) {
      if constexpr (sizeof(T) == 4)
        CUBLAS_OK(
            cublasSgemm(h, opy, CUBLAS_OP_N, n, m, k, &alpha, dy, ldy, dx, k, &beta, dout, n));
      else
        CUBLAS_OK(
            cublasDgemm(h, opy, CUBLAS_OP_N, n, m, k, &alpha, dy, ldy, dx, k, &beta, dout, n));
    } else {
      if constexpr (sizeof(T) == 4)
        CUBLAS_OK(cublasSgemmStridedBatched(h, opy, CUBLAS_OP_N, n, m, k, &alpha, dy, ldy,
                                            int64_t(k) * n, dx, k, int64_t(m) * k, &beta, dout, n,
                                            int64_t(m) * n, int(c.batch)));
      else
        CUBLAS_OK(cublasDgemmStridedBatched(h, opy, CUBLAS_OP_N, n, m, k, &alpha, dy, ldy,
                                            int64_t(k) * n, dx, k, int64_t(m) * k, &beta, dout, n,
                                            int64_t(m) * n, int(c.batch)));
    }
  };
  for (int i = 0; i < 2; ++i) call();
  CUDA_OK(cudaStreamSynchronize(stream));
  std::vector<double> secs;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) call();
    CUDA_OK(cudaStreamSynchronize(stream));
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                   inner);
  }
  out->resize(ob / sizeof(T));
  CUDA_OK(cudaMemcpy(out->data(), dout, ob, cudaMemcpyDeviceToHost));
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dout);
  cublasDestroy(h);
  cudaStreamDestroy(stream);
  return secs;
}

struct Row {
  Case c;
  Stats tide, peer;
  double max_rel_diff;
};

template <typename T>
Row Bench(const Case& c, int reps) {
  std::vector<int64_t> xd = {c.m, c.k}, yd = c.trans_y ? std::vector<int64_t>{c.n, c.k}
                                                       : std::vector<int64_t>{c.k, c.n};
  if (c.batch > 1) {
    xd.insert(xd.begin(), c.batch);
    yd.insert(yd.begin(), c.batch);
  }
  LoDTensor x = Filled<T>(xd, 1), y = Filled<T>(yd, 2);
  const double flops = 2.0 * c.batch * c.m * c.n * c.k;
  const int inner = std::max(1, int(2e11 / flops));  // about 0.2 TFLOP per rep
  LoDTensor tide_out;
  std::vector<T> peer_out;
  Row row{c, {}, {}, 0};
  row.tide = Summarize(RunTide<T>(c, x, y, reps, inner, &tide_out), flops);
  row.peer = Summarize(RunCublas<T>(c, x, y, reps, inner, &peer_out), flops);
  const T* a = tide_out.data<T>();
  double scale = 0;
  for (size_t i = 0; i < peer_out.size(); ++i)
    scale = std::max(scale, std::fabs(double(peer_out[i])));
  for (size_t i = 0; i < peer_out.size(); ++i)
    row.max_rel_diff = std::max(
        row.max_rel_diff, std::fabs(double(a[i]) - double(peer_out[i])) / std::max(scale, 1e-30));
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  std::string json;
  int reps = 7;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--json") json = argv[i + 1];
    if (std::string(argv[i]) == "--reps") reps = std::max(5, std::atoi(argv[i + 1]));
  }
  Initialize();
  if (DeviceCount("gpu") == 0) {
    std::fprintf(stderr, "no gpu place: the CUDA device plugin is not loaded or sees no GPU\n");
    return 1;
  }
  const std::vector<Case> cases = {
      {"mul 4096^3 fp32", "mul", 1, 4096, 4096, 4096, false, TIDE_FP32},
      {"matmul 4096^3 fp32", "matmul", 1, 4096, 4096, 4096, false, TIDE_FP32},
      {"matmul 4096^3 fp32, Y^T", "matmul", 1, 4096, 4096, 4096, true, TIDE_FP32},
      {"matmul 8 x 1024^3 fp32 (batched)", "matmul", 8, 1024, 1024, 1024, false, TIDE_FP32},
      {"mul 64x784x512 fp32 (fc)", "mul", 1, 64, 512, 784, false, TIDE_FP32},
      {"mul 4096^3 fp64", "mul", 1, 4096, 4096, 4096, false, TIDE_FP64},
  };
  std::vector<Row> rows;
  for (const Case& c : cases)
    rows.push_back(c.dtype == TIDE_FP32 ? Bench<float>(c, reps) : Bench<double>(c, reps));

  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  const char* tf32 = std::getenv("TIDE_CUDA_ALLOW_TF32");
  char machine[512];
  std::snprintf(machine, sizeof(machine),
                "machine: %s (sm_%d%d, %d SMs), CUDA runtime %d, cuBLAS %d, TF32 %s", prop.name,
                prop.major, prop.minor, prop.multiProcessorCount, runtime, CUBLAS_VERSION,
                tf32 && std::strcmp(tf32, "1") == 0 ? "on" : "off");
  std::printf(
      "\nmul/matmul on gpu:0: Tide's kernel vs cuBLAS (TFLOP/s, median of %d; higher is better)\n",
      reps);
  std::printf("%-36s | %18s | %18s | %11s | %9s\n", "case", "tide (min-max)", "cuBLAS (min-max)",
              "tide/cuBLAS", "max diff");
  std::printf("%s\n", std::string(104, '-').c_str());
  for (const Row& r : rows) {
    char t[64], p[64];
    std::snprintf(t, sizeof(t), "%.2f (%.2f-%.2f)", r.tide.median, r.tide.min, r.tide.max);
    std::snprintf(p, sizeof(p), "%.2f (%.2f-%.2f)", r.peer.median, r.peer.min, r.peer.max);
    std::printf("%-36s | %18s | %18s | %11.3f | %9.1e\n", r.c.name.c_str(), t, p,
                r.tide.median / r.peer.median, r.max_rel_diff);
  }
  std::printf("%s\n", machine);
  if (!json.empty()) {
    std::ofstream f(json);
    f << "{\"title\": \"mul/matmul on gpu:0 vs cuBLAS\", \"unit\": \"TFLOP/s\", \"machine\": \""
      << machine << "\", \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      f << (i ? ", " : "") << "{\"case\": \"" << r.c.name << "\", \"tide\": [" << r.tide.median
        << ", " << r.tide.min << ", " << r.tide.max << "], \"peers\": {\"cuBLAS\": ["
        << r.peer.median << ", " << r.peer.min << ", " << r.peer.max
        << "]}, \"max_rel_diff\": " << r.max_rel_diff << "}";
    }
    f << "]}\n";
  }
  bool ok = true;
  for (const Row& r : rows)
    if (!(r.max_rel_diff < (r.c.dtype == TIDE_FP32 ? 1e-3 : 1e-9))) {
      std::fprintf(stderr, "%s: Tide and cuBLAS differ by %.3g (relative to the largest value)\n",
                   r.c.name.c_str(), r.max_rel_diff);
      ok = false;
    }
  return ok ? 0 : 1;
}
