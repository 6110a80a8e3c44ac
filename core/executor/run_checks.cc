// run_checks.cc: see run_checks.h.
#include "core/executor/run_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/framework/tensor_util.h"

namespace tide::core {
namespace {

// The first Inf or NaN of a tensor on the host: its index (-1: none) and whether it is NaN.
struct NonFinite {
  int64_t index = -1;
  bool nan = false;
};

// `parts` reals per element: 2 for a complex type (its real and imaginary parts).
template <typename T>
NonFinite FirstNonFinite(const LoDTensor& t, int parts = 1) {
  const T* d = static_cast<const T*>(t.data());
  for (int64_t i = 0, n = t.numel() * parts; i < n; ++i)
    if (!std::isfinite(d[i])) return {i / parts, std::isnan(d[i])};
  return {};
}

// float16 and bfloat16 by their bits (the core has no arithmetic type for them): Inf or NaN
// where the exponent bits are all ones, NaN where the mantissa bits are not zero too.
NonFinite FirstNonFiniteBits(const LoDTensor& t, uint16_t exponent, uint16_t mantissa) {
  const uint16_t* d = static_cast<const uint16_t*>(t.data());
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    if ((d[i] & exponent) == exponent) return {i, (d[i] & mantissa) != 0};
  return {};
}

NonFinite FindNonFinite(const LoDTensor& t) {
  switch (t.dtype()) {
    case TIDE_FP32:
      return FirstNonFinite<float>(t);
    case TIDE_FP64:
      return FirstNonFinite<double>(t);
    case TIDE_COMPLEX64:
      return FirstNonFinite<float>(t, 2);
    case TIDE_COMPLEX128:
      return FirstNonFinite<double>(t, 2);
    case TIDE_FP16:
      return FirstNonFiniteBits(t, 0x7C00, 0x03FF);
    case TIDE_BF16:
      return FirstNonFiniteBits(t, 0x7F80, 0x007F);
    default:
      return {};
  }
}

}  // namespace

void CheckInputsReady(const OpInstance& op) {
  for (const auto& b : op.inputs()) {
    for (size_t i = 0; i < b.vars.size(); ++i) {
      const Variable* v = b.vars[i];
      if (!v) continue;
      if (!v->IsInitialized() || (v->IsType<LoDTensor>() && !v->Get<LoDTensor>().initialized() &&
                                  v->Get<LoDTensor>().dims().size() == 0))
        TIDE_FAIL(TIDE_FAILED_PRECONDITION, op.label(), " input '", b.param, "': variable '",
                  b.names[i],
                  "' holds no data (it is not fed, not set by the startup program, "
                  "and no earlier op writes it; a startup program run in another Scope set it "
                  "there: run it in this one)");
      // Dims with elements but no memory: a delete_var op (or a release) freed it before.
      if (v->IsType<LoDTensor>() && !v->Get<LoDTensor>().initialized() &&
          v->Get<LoDTensor>().numel() > 0)
        TIDE_FAIL(TIDE_FAILED_PRECONDITION, op.label(), " input '", b.param, "': variable '",
                  b.names[i], "' ", v->Get<LoDTensor>().dims().ToString(),
                  " holds no data: its memory was freed earlier in the run (a delete_var op "
                  "before this reader, as a program edited after memory_optimize can have)");
    }
  }
}

void CheckOutputsWritten(OpInstance& op) {
  const KernelEntry& k = *op.kernel();
  for (const auto& b : op.outputs()) {
    const auto& specs = op.info().proto.outputs();
    auto spec = std::find_if(specs.begin(), specs.end(),
                             [&](const auto& v) { return v.name() == b.param; });
    if (spec != specs.end() && (spec->dispensable() || spec->intermediate())) continue;
    for (size_t i = 0; i < b.vars.size(); ++i) {
      const Variable* v = b.vars[i];
      if (v &&
          (!v->IsInitialized() || (v->IsType<LoDTensor>() && !v->Get<LoDTensor>().initialized())))
        TIDE_FAIL(TIDE_INTERNAL, op.label(), " kernel ", k.key.ToString(),
                  " did not write its output '", b.param, "' (variable '", b.names[i],
                  "'): a bug in plugin ", k.plugin_file);
    }
  }
  op.outputs_checked_ = true;
}

void WaitForKernel(const OpInstance& op) {
  try {
    op.kernel_dctx()->Synchronize();
  } catch (const Error& e) {
    const KernelEntry& k = *op.kernel();
    TIDE_FAIL(e.code(), op.label(), " kernel ", k.key.ToString(), " (", k.plugin_file,
              ") failed on the device: ", e.what());
  }
}

void CheckOutputsFinite(const OpInstance& op) {
  const KernelEntry& k = *op.kernel();
  for (const auto& b : op.outputs())
    for (size_t i = 0; i < b.vars.size(); ++i) {
      const Variable* v = b.vars[i];
      if (!v || !v->IsType<LoDTensor>()) continue;
      const LoDTensor& t = v->Get<LoDTensor>();
      if (!t.initialized() || !(IsFloatType(t.dtype()) || IsComplexType(t.dtype()))) continue;
      if (t.layout() == TIDE_LAYOUT_OPAQUE) continue;  // a library's own format: not plain values
      // The kernel's device was synchronised after it ran; other memory is copied back.
      LoDTensor host;
      const LoDTensor* at = &t;
      if (!DeviceContextPool::Global().Get(t.place())->host_accessible()) {
        TensorCopySync(t, HostPlace(), &host);
        at = &host;
      }
      const NonFinite bad = FindNonFinite(*at);
      if (bad.index < 0) continue;
      TIDE_FAIL(TIDE_FAILED_PRECONDITION, "check_nan_inf: ", op.label(), " kernel ",
                k.key.ToString(), " wrote ", bad.nan ? "NaN" : "Inf", " into output ", b.param,
                " ('", b.names[i], "') at element ", bad.index, " of ", t.dims().ToString());
    }
}

}  // namespace tide::core
