// plain_as.h: a tensor's plain (dense row-major) data seen through another plain descriptor of
// the same element count: layer_norm's X as [left, right], prelu's Alpha as weights of X's rank,
// a reduction's Out with its reduced dims kept as 1s.
#pragma once

#include "mkldnn_context.h"

namespace tide_mkldnn {

// Input `t` (reordered first when blocked) seen as `md`.
inline memory PlainInputAs(Exec& e, const Tensor& t, const memory::desc& md, const char* op,
                           const char* what) {
  const size_t size = memory::data_type_size(md.data_type());
  TIDE_CHECK(md.get_size() == static_cast<size_t>(t.numel()) * size, "op '", op, "': ", what, " ",
             tide::ToString(t.dims()), " does not hold the ", md.get_size() / size,
             " values expected");
  TIDE_CHECK(ToDnnlType(t.dtype()) == md.data_type(), "op '", op, "': ", what, " holds ",
             tide::DataTypeName(t.dtype()), ", not the kernel's ",
             tide::DataTypeName(FromDnnlType(md.data_type())));
  return e.View(md, PlainViewAnyType(e, t, op, what).get_data_handle());
}

// Output `t`, allocated plain with `dims`, seen as `md`.
inline memory PlainOutputAs(Exec& e, Tensor& t, const Dims& dims, const memory::desc& md,
                            const tide::Place& place) {
  t.Resize(dims);
  void* data = t.mutable_data(FromDnnlType(md.data_type()), place);
  t.set_layout(TIDE_LAYOUT_ANY);
  t.set_format(0);
  return e.View(md, data);
}

}  // namespace tide_mkldnn
