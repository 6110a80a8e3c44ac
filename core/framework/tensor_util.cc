// tensor_util.cc: host <-> device and device <-> device tensor copies.
#include "core/framework/tensor_util.h"

#include <vector>

#include "core/memory/copy_pool.h"

namespace tide::core {
namespace {
DeviceContext* ContextFor(const Place& p, DeviceContext* given) {
  return given && given->place() == p ? given : DeviceContextPool::Global().Get(p);
}
// What a copy carries besides the bytes and dims.
void CopyMetadata(const LoDTensor& src, LoDTensor* dst) {
  dst->set_layout(src.layout());
  dst->set_format(src.format());
  dst->set_lod(src.lod());
}
}  // namespace

void TensorCopySync(const LoDTensor& src, const Place& place, LoDTensor* dst, DeviceContext* ctx) {
  TIDE_ENFORCE(src.initialized(), "cannot copy a tensor that holds no data");
  if (dst == &src) {  // copying onto itself: go through a temporary
    LoDTensor tmp;
    TensorCopySync(src, place, &tmp, ctx);
    *dst = tmp;
    return;
  }
  const Place from = src.place();
  size_t bytes = static_cast<size_t>(src.numel()) * SizeOf(src.dtype());
  dst->Resize(src.dims());
  void* out = dst->mutable_data(place, src.dtype());
  CopyMetadata(src, dst);
  const void* in = src.data();
  if (bytes == 0) return;

  DeviceContext* src_ctx = ContextFor(from, ctx);
  DeviceContext* dst_ctx = ContextFor(place, ctx);
  bool src_host = src_ctx->host_accessible(), dst_host = dst_ctx->host_accessible();
  if (from.kind == place.kind && from.device == place.device) {
    dst_ctx->Copy(TIDE_COPY_DEVICE_TO_DEVICE, out, in, bytes);
    if (dst_host) dst_ctx->Synchronize();
  } else if (src_host && !dst_host) {
    // To a device: queued behind the work on dst_ctx, which is all that reads `out` from now on
    // (the host synchronises before it reads device data). The plugin has taken the source's
    // bytes when the copy returns (pageable semantics), or CopyFromHost staged them.
    if (src_ctx != dst_ctx) src_ctx->Synchronize();  // an async kernel may still write `in`
    dst_ctx->CopyFromHost(out, in, bytes);
  } else if (src_host) {
    // Between two host-accessible places (the CPU and a host-accessible device): the source is
    // memory the host reads, not the destination device's, so a host-to-device copy there.
    if (src_ctx != dst_ctx) src_ctx->Synchronize();
    dst_ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, out, in, bytes);
    dst_ctx->Synchronize();
  } else if (dst_host) {
    dst_ctx->Synchronize();  // its queued work may still read what `out` held before
    src_ctx->Copy(TIDE_COPY_DEVICE_TO_HOST, out, in, bytes);
    src_ctx->Synchronize();
  } else if (from.kind == place.kind && dst_ctx->has_peer_copy()) {  // e.g. npu:0 -> npu:1
    dst_ctx->WaitFor(*src_ctx);  // an event when the device has them: the host does not wait
    dst_ctx->CopyPeer(out, from.device, in, bytes);
    dst_ctx->Synchronize();
  } else {  // device to another device: stage through host memory
    std::vector<char> staging(bytes);
    src_ctx->Copy(TIDE_COPY_DEVICE_TO_HOST, staging.data(), in, bytes);
    src_ctx->Synchronize();
    dst_ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, out, staging.data(), bytes);
  }
}

void TensorUpload(const LoDTensor& src, const Place& place, LoDTensor* dst, DeviceContext* ctx) {
  TIDE_ENFORCE(src.initialized(), "cannot copy a tensor that holds no data");
  const size_t bytes = static_cast<size_t>(src.numel()) * SizeOf(src.dtype());
  DeviceContext* src_ctx = bytes && dst != &src ? ContextFor(src.place(), ctx) : nullptr;
  DeviceContext* compute = src_ctx ? ContextFor(place, ctx) : nullptr;
  DeviceContext* copy = compute && src_ctx->host_accessible() && !compute->host_accessible()
                            ? compute->ForRole(TIDE_STREAM_COPY_IN)
                            : compute;
  if (copy == compute) {
    TensorCopySync(src, place, dst, ctx);
    return;
  }
  if (src_ctx != compute) src_ctx->Synchronize();  // an async kernel may still write the source
  dst->ResetHolder(memory::AllocForCopy(*compute, *copy, bytes), src.dtype(), src.dims());
  CopyMetadata(src, dst);
  copy->CopyFromHost(dst->raw_mutable_data(), src.data(), bytes);
  compute->WaitFor(*copy);  // the kernels queued from now on read it after the copy
}

void TensorDownload(const LoDTensor& src, LoDTensor* dst, DownloadQueue* queue) {
  TIDE_ENFORCE(src.initialized(), "cannot copy a tensor that holds no data");
  const size_t bytes = static_cast<size_t>(src.numel()) * SizeOf(src.dtype());
  DeviceContext* compute =
      bytes && dst != &src ? DeviceContextPool::Global().Get(src.place()) : nullptr;
  if (!compute || compute->host_accessible() || !compute->HasRole(TIDE_STREAM_COPY_OUT)) {
    TensorCopySync(src, HostPlace(), dst);
    return;
  }
  DeviceContext* copy_out = compute->ForRole(TIDE_STREAM_COPY_OUT);
  dst->Resize(src.dims());
  void* out = dst->mutable_data(HostPlace(), src.dtype());
  CopyMetadata(src, dst);
  queue->Add(*compute, *copy_out, out, src.data(), bytes);
}

}  // namespace tide::core
