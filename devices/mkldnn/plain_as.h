// plain_as.h: a tensor's plain (dense row-major) data seen through another plain descriptor of
// the same element count: layer_norm's X as [left, right], prelu's Alpha as weights of X's rank,
// a reduction's Out with its reduced dims kept as 1s.
#pragma once

#include "mkldnn_context.h"

namespace tide_mkldnn {

// Input `t` (reordered first when blocked) seen as `md`.
inline memory PlainInputAs(Exec& e, const Tensor& t, const memory::desc& md, const char* op,
                           const char* what) {
  TIDE_CHECK(md.get_size() == static_cast<size_t>(t.numel()) * sizeof(float), "op '", op,
             "': ", what, " ", tide::ToString(t.dims()), " does not hold the ", md.get_size() / 4,
             " values expected");
  return e.View(md, PlainView(e, t, op, what).get_data_handle());
}

// Output `t`, allocated plain with `dims`, seen as `md`.
inline memory PlainOutputAs(Exec& e, Tensor& t, const Dims& dims, const memory::desc& md,
                            const tide::Place& place) {
  t.Resize(dims);
  float* data = t.mutable_data<float>(place);
  t.set_layout(TIDE_LAYOUT_ANY);
  t.set_format(0);
  return e.View(md, data);
}

}  // namespace tide_mkldnn
