// run_checks.cc: see run_checks.h.
#include "core/executor/run_checks.h"

#include <algorithm>
#include <cmath>

#include "core/framework/tensor_util.h"

namespace tide::core {
namespace {

template <typename T>
int64_t FirstNonFinite(const LoDTensor& t) {
  const T* d = t.data<T>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    if (!std::isfinite(d[i])) return i;
  return -1;
}

}  // namespace

void CheckInputsReady(const OpInstance& op) {
  for (const auto& b : op.inputs()) {
    for (size_t i = 0; i < b.vars.size(); ++i) {
      const Variable* v = b.vars[i];
      if (!v) continue;
      bool empty =
          !v->IsInitialized() || (v->IsType<LoDTensor>() && !v->Get<LoDTensor>().initialized() &&
                                  v->Get<LoDTensor>().dims().size() == 0);
      if (empty)
        TIDE_FAIL(TIDE_FAILED_PRECONDITION, op.label(), " input '", b.param, "': variable '",
                  b.names[i],
                  "' holds no data (it is not fed, not set by the startup program, "
                  "and no earlier op writes it)");
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
      if (!t.initialized() || (t.dtype() != TIDE_FP32 && t.dtype() != TIDE_FP64)) continue;
      if (t.layout() == TIDE_LAYOUT_OPAQUE) continue;  // a library's own format: not plain values
      // The kernel's device was synchronised after it ran; other memory is copied back.
      LoDTensor host;
      const LoDTensor* at = &t;
      if (!DeviceContextPool::Global().Get(t.place())->host_accessible()) {
        TensorCopySync(t, HostPlace(), &host);
        at = &host;
      }
      const int64_t bad =
          t.dtype() == TIDE_FP32 ? FirstNonFinite<float>(*at) : FirstNonFinite<double>(*at);
      if (bad < 0) continue;
      const double value =
          t.dtype() == TIDE_FP32 ? at->data<float>()[bad] : at->data<double>()[bad];
      TIDE_FAIL(TIDE_FAILED_PRECONDITION, "check_nan_inf: ", op.label(), " kernel ",
                k.key.ToString(), " wrote ", std::isnan(value) ? "NaN" : "Inf", " into output ",
                b.param, " ('", b.names[i], "') at element ", bad, " of ", t.dims().ToString());
    }
}

}  // namespace tide::core
