// grad_util.h: what the control-flow grad ops do with gradient tensors: zeros shaped like a
// forward variable, and sums across iterations. The arithmetic runs on the host (staged through
// it for another place): these are per-iteration glue, not kernels.
#pragma once

#include <cstring>
#include <tide/low_precision.hpp>
#include <tide/plugin/data_type_visit.hpp>

#include "control_util.h"

namespace ops_control {

// out = zeros with `like`'s dims, dtype and LoD, on the op's place.
inline void ZerosLike(tide::OpRunContext& ctx, const tide::Tensor& like, tide::Tensor out) {
  tide::OwnedTensor host;
  host.Resize(like.dims());
  TideDataType dt = like.initialized() ? like.dtype() : TIDE_FP32;
  void* p = host.mutable_data(dt, tide::Place("cpu", 0));
  std::memset(p, 0, host.numel() * tide::DataTypeSize(dt));
  host.set_lod(like.lod());
  out.CopyFrom(host, ctx.place(), ctx.device_context());
}

template <typename T>
void AddHost(tide::Tensor& acc, const tide::Tensor& part) {
  T* a = acc.mutable_data<T>(tide::Place("cpu", 0));
  const T* b = part.data<T>();
  for (int64_t i = 0, n = acc.numel(); i < n; ++i) a[i] += b[i];
}

// acc += part (acc takes a copy of part when it holds nothing yet).
inline void Accumulate(tide::OpRunContext& ctx, tide::OwnedTensor& acc, const tide::Tensor& part,
                       const std::string& what) {
  if (!acc.initialized()) {
    acc.CopyFrom(part, ctx.place(), ctx.device_context());
    return;
  }
  TIDE_CHECK(acc.dims() == part.dims() && acc.dtype() == part.dtype(), "op '", ctx.op_type(),
             "': the gradient of '", what, "' changes from ", tide::ToString(acc.dims()), " to ",
             tide::ToString(part.dims()), " between iterations");
  tide::OwnedTensor ha, hp;
  const bool on_host = acc.place().kind_name() == "cpu";
  if (!on_host) ha.CopyFrom(acc, tide::Place("cpu", 0));
  tide::Tensor a(on_host ? acc.c() : ha.c());
  tide::Tensor b = OnHost(part, hp);
  tide::VisitDataType<float, double, tide::float16, tide::bfloat16>(
      acc.dtype(), std::string("op '") + ctx.op_type() + "': the gradients of '" + what + "'",
      [&](auto tag) { AddHost<typename decltype(tag)::type>(a, b); });
  if (a.c() != acc.c()) acc.CopyFrom(a, ctx.place(), ctx.device_context());
}

// The gradient a block run left in `scope` itself for variable `name`; an empty Tensor when
// the block produced none.
inline tide::Tensor LocalGrad(const tide::Scope& scope, const std::string& name) {
  tide::Variable v = scope.FindLocalVar(name + "@GRAD");
  if (!v || !v.IsTensor()) return tide::Tensor();
  tide::Tensor t = v.GetTensor();
  return t.initialized() ? t : tide::Tensor();
}

}  // namespace ops_control
