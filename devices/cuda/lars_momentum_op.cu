// lars_momentum_op.cu: momentum with LARS's layer-wise learning rate on the GPU, as ops_optimizers
// computes it: |Param| and |Grad| summed in double (two ReduceMids into device scratch), then
//   local_lr = lr * lars_coeff * |Param| / (|Grad| + lars_weight_decay * |Param|)
//   (lr itself when either norm is 0), VelocityOut = mu * Velocity + local_lr * (Grad +
//   lars_weight_decay * Param), ParamOut = Param - VelocityOut.
// The learning rate and the norms stay on the device: the update never waits for the host. Each
// element reads its inputs before it writes, so the outputs may be Param's and Velocity's
// variables.
#include <tide/ops/optimizer.hpp>
#include <tide/ops/optimizer_update.hpp>

#include "reduce.cuh"

namespace tide_cuda {
namespace {

using tide::ops::OptimizerStateInput;

struct StoreNorm {  // out = sqrt(sum)
  double* out;
  __device__ void operator()(int64_t, double s) const { *out = sqrt(s); }
};

template <typename T>
__global__ void LarsUpdateKernel(const T* p, const T* g, const T* v, Scalar lr_s,
                                 const double* norms, T mu, T coeff, T decay, T* p_out, T* v_out,
                                 int64_t n) {
  const T lr = ReadScalar<T>(lr_s);
  const double pn = norms[0], gn = norms[1];
  const T local_lr = (pn > 0 && gn > 0) ? static_cast<T>(lr * coeff * pn / (gn + decay * pn)) : lr;
  TIDE_CUDA_LOOP(i, n) {
    const T vi = mu * v[i] + local_lr * (g[i] + decay * p[i]);
    v_out[i] = vi;
    p_out[i] = p[i] - vi;
  }
}

template <typename T>
void LarsMomentum(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor param = ctx.Input("Param");
  tide::ops::CheckDenseGrad(ctx, ctx.InputVar("Grad").IsSelectedRows());
  const Scalar lr = ScalarInput(ctx, g, "LearningRate");
  const T mu = static_cast<T>(ctx.Attr<float>("mu"));
  const T coeff = static_cast<T>(ctx.Attr<float>("lars_coeff"));
  const T decay = static_cast<T>(ctx.Attr<float>("lars_weight_decay"));
  const T* gd = OptimizerStateInput<T>(ctx, "Grad", param);
  const T* v = OptimizerStateInput<T>(ctx, "Velocity", param);
  const T* p = param.data<T>();
  const int64_t n = param.numel();
  double* norms = g.Temp<double>(2);
  ReduceMid<double>(g, "lars_momentum (|Param|)", 1, 1, n, SquareTerm<T, double>{p},
                    StoreNorm{norms});
  ReduceMid<double>(g, "lars_momentum (|Grad|)", 1, 1, n, SquareTerm<T, double>{gd},
                    StoreNorm{norms + 1});
  T* v_out = ctx.Output("VelocityOut").mutable_data<T>(param.dims(), g.place());
  T* p_out = ctx.Output("ParamOut").mutable_data<T>(param.dims(), g.place());
  Launch(g, "LarsUpdateKernel", n, LarsUpdateKernel<T>, p, gd, v, lr,
         static_cast<const double*>(norms), mu, coeff, decay, p_out, v_out, n);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("lars_momentum", "gpu", LarsMomentum, TIDE_CUDA_FLOAT_TYPES);
