// cuda_collective.cc: NCCL as the CUDA device's collective library (see cuda_collective.h).
#include "cuda_collective.h"

#include <cstring>
#include <string>
#include <tide/plugin.hpp>

#include "cuda_check.h"
#include "cuda_libs.h"

namespace tide_cuda {
namespace {
constexpr const char* kPluginName = "device_cuda";
}  // namespace

#ifndef TIDE_CUDA_WITH_NCCL

const TideCollectiveDef* CollectiveLibrary(NcclContext* c) {
  std::call_once(c->once, [] {
    static std::once_flag logged;
    std::call_once(logged, [] {
      tide::Log(TIDE_LOG_WARNING, kPluginName,
                "this CUDA plugin was built without nccl.h: GPU tensors' collectives are "
                "staged through host memory (rebuild with NCCL's headers, e.g. NCCL_ROOT)");
    });
  });
  return nullptr;
}

#else

namespace {

NcclContext* Self(void* self) { return static_cast<NcclContext*>(self); }
ncclComm_t AsNccl(TideCollectiveComm* c) { return reinterpret_cast<ncclComm_t>(c); }

// NCCL's result as a status naming the call and NCCL's text; null on success.
TideStatus* Status(ncclResult_t r, const char* call) {
  if (r == ncclSuccess) return nullptr;
  const std::string msg = std::string("NCCL ") + call + ": " + Nccl().ncclGetErrorString(r);
  return tide::Host().Status_Create(
      r == ncclInvalidArgument || r == ncclInvalidUsage ? TIDE_INVALID_ARGUMENT : TIDE_INTERNAL,
      msg.c_str());
}

ncclDataType_t NcclType(TideDataType t) {
  switch (t) {
    case TIDE_FP32:
      return ncclFloat32;
    case TIDE_FP64:
      return ncclFloat64;
    case TIDE_FP16:
      return ncclFloat16;
    case TIDE_BF16:
      return ncclBfloat16;
    case TIDE_INT32:
      return ncclInt32;
    case TIDE_INT64:
      return ncclInt64;
    case TIDE_UINT8:
      return ncclUint8;
    case TIDE_INT8:
      return ncclInt8;
    default:
      TIDE_THROW(TIDE_UNIMPLEMENTED, "NCCL: data type ", tide::DataTypeName(t),
                 " is not supported (float32/64, float16, bfloat16, int32/64, uint8, int8)");
  }
}

ncclRedOp_t NcclOp(TideReduceOp op) {
  switch (op) {
    case TIDE_REDUCE_PROD:
      return ncclProd;
    case TIDE_REDUCE_MAX:
      return ncclMax;
    case TIDE_REDUCE_MIN:
      return ncclMin;
    default:
      return ncclSum;
  }
}

// Runs `call` (returning an ncclResult_t) with the context's device current; a Tide error thrown
// on the way (an unsupported type, a device that cannot be made current) becomes a status.
template <typename Call>
TideStatus* OnDevice(void* self, const char* what, Call call) {
  TideStatus* result = nullptr;
  TideStatus* thrown = tide::detail::Guard([&] {
    DeviceGuard guard(Self(self)->device);
    result = Status(call(static_cast<cudaStream_t>(Self(self)->stream)), what);
  });
  return thrown ? thrown : result;
}

TideStatus* GetUniqueId(void*, void* id) {
  return Status(Nccl().ncclGetUniqueId(static_cast<ncclUniqueId*>(id)), "ncclGetUniqueId");
}

TideStatus* CommInit(void* self, const void* id, int32_t nranks, int32_t rank,
                     TideCollectiveComm** comm) {
  ncclUniqueId uid;
  std::memcpy(&uid, id, sizeof(uid));
  ncclComm_t c = nullptr;
  TideStatus* st = OnDevice(self, "ncclCommInitRank", [&](cudaStream_t) {
    return Nccl().ncclCommInitRank(&c, nranks, uid, rank);
  });
  *comm = reinterpret_cast<TideCollectiveComm*>(c);
  return st;
}

TideStatus* CommDestroy(void* self, TideCollectiveComm* comm) {
  return OnDevice(self, "ncclCommDestroy",
                  [&](cudaStream_t) { return Nccl().ncclCommDestroy(AsNccl(comm)); });
}

TideStatus* AllReduce(void* self, TideCollectiveComm* comm, const void* send, void* recv,
                      size_t count, TideDataType dtype, TideReduceOp op) {
  return OnDevice(self, "ncclAllReduce", [&](cudaStream_t s) {
    return Nccl().ncclAllReduce(send, recv, count, NcclType(dtype), NcclOp(op), AsNccl(comm), s);
  });
}

TideStatus* Broadcast(void* self, TideCollectiveComm* comm, const void* send, void* recv,
                      size_t count, TideDataType dtype, int32_t root) {
  return OnDevice(self, "ncclBroadcast", [&](cudaStream_t s) {
    return Nccl().ncclBroadcast(send, recv, count, NcclType(dtype), root, AsNccl(comm), s);
  });
}

TideStatus* AllGather(void* self, TideCollectiveComm* comm, const void* send, void* recv,
                      size_t send_count, TideDataType dtype) {
  return OnDevice(self, "ncclAllGather", [&](cudaStream_t s) {
    return Nccl().ncclAllGather(send, recv, send_count, NcclType(dtype), AsNccl(comm), s);
  });
}

TideStatus* ReduceScatter(void* self, TideCollectiveComm* comm, const void* send, void* recv,
                          size_t recv_count, TideDataType dtype, TideReduceOp op) {
  return OnDevice(self, "ncclReduceScatter", [&](cudaStream_t s) {
    return Nccl().ncclReduceScatter(send, recv, recv_count, NcclType(dtype), NcclOp(op),
                                    AsNccl(comm), s);
  });
}

TideStatus* GroupStart(void*) { return Status(Nccl().ncclGroupStart(), "ncclGroupStart"); }
TideStatus* GroupEnd(void*) { return Status(Nccl().ncclGroupEnd(), "ncclGroupEnd"); }

// Opens NCCL once per process; false (logged once) where it cannot be.
bool NcclLoaded() {
  static const bool loaded = [] {
    try {
      int version = 0;
      Nccl().ncclGetVersion(&version);
      tide::Log(TIDE_LOG_INFO, kPluginName,
                "NCCL " + std::to_string(version) + " loaded: the GPU's collective library");
      return true;
    } catch (const std::exception& e) {
      tide::Log(
          TIDE_LOG_WARNING, kPluginName,
          std::string(e.what()) + "; GPU tensors' collectives are staged through host memory");
      return false;
    }
  }();
  return loaded;
}

}  // namespace

const TideCollectiveDef* CollectiveLibrary(NcclContext* c) {
  std::call_once(c->once, [c] {
    if (!NcclLoaded()) return;
    TideCollectiveDef& d = c->def;
    d.struct_size = TIDE_STRUCT_SIZE(TideCollectiveDef, group_end);
    d.self = c;
    d.library = "NCCL";
    d.unique_id_size = sizeof(ncclUniqueId);
    d.get_unique_id = &GetUniqueId;
    d.comm_init = &CommInit;
    d.comm_destroy = &CommDestroy;
    d.all_reduce = &AllReduce;
    d.broadcast = &Broadcast;
    d.all_gather = &AllGather;
    d.reduce_scatter = &ReduceScatter;
    d.group_start = &GroupStart;
    d.group_end = &GroupEnd;
    c->available = true;
  });
  return c->available ? &c->def : nullptr;
}

#endif  // TIDE_CUDA_WITH_NCCL

}  // namespace tide_cuda
