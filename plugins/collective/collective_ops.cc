// collective_ops.cc: Fluid's collective ops on a ring made by c_comm_init. On host tensors each is
// one Gloo algorithm: c_allreduce_{sum,max,min,prod} (gloo::allreduce; asynchronous on the ring's
// thread unless use_calc_stream, waited for by c_sync_comm_stream), c_broadcast
// (gloo::broadcast), c_allgather (gloo::allgather; SelectedRows through gloo::allgatherv),
// c_reducescatter (Gloo's halving-doubling reduce-scatter), barrier (gloo::barrier), and
// c_sync_calc_stream (a no-op on the CPU) and c_sync_comm_stream. On a device's tensors they go
// through the ring's communicator in the device's collective library, queued on the op's stream,
// or, without one, are staged through host memory (route.h).
#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/reduce_scatter.h>

#include <cstring>
#include <functional>
#include <memory>
#include <tide/plugin.hpp>
#include <tide/plugin/data_type_visit.hpp>
#include <utility>
#include <vector>

#include "communicator.h"
#include "route.h"

namespace tide_collective {
namespace {

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

// Calls fn(tide::TypeTag<T>{}) with T the C++ type of `dtype`: the types Gloo moves here.
template <typename Fn>
void Dispatch(TideDataType dtype, const std::string& op, Fn&& fn) {
  tide::VisitDataType<float, double, int32_t, int64_t, uint8_t, int8_t>(dtype, "op '" + op + "'",
                                                                        std::forward<Fn>(fn));
}

tide::Variable OutVar(tide::OpRunContext& ctx, const std::string& name) {
  tide::Variable v = ctx.scope().FindVar(name);
  return v ? v : ctx.scope().Var(name);
}

tide::Tensor OutTensor(tide::OpRunContext& ctx, size_t i = 0) {
  return OutVar(ctx, ctx.Outputs("Out").at(i)).GetTensor();
}

// X (the i-th): an initialised tensor, on the host or a device.
tide::Tensor Input(tide::OpRunContext& ctx, const std::string& op, size_t i = 0) {
  const std::string x = ctx.Inputs("X").at(i);
  tide::Variable v = ctx.scope().FindVar(x);
  TIDE_CHECK(v && v.IsTensor(), "op '", op, "': X ('", x, "') is not a LoDTensor in the scope");
  tide::Tensor t = v.GetTensor();
  TIDE_CHECK(t.initialized(), "op '", op, "': X ('", x, "') holds no data");
  return t;
}

// Out (the i-th), X's shape, data type and place; X's data copied in when Out is another
// variable and `copy`.
tide::Tensor OutputWithInput(tide::OpRunContext& ctx, const tide::Tensor& x, bool copy,
                             size_t i = 0) {
  const std::string xn = ctx.Inputs("X").at(i), on = ctx.Outputs("Out").at(i);
  tide::Tensor out = OutTensor(ctx, i);
  if (xn == on) return out;
  out.Resize(x.dims());
  void* p = out.mutable_data(x.dtype(), x.place());
  if (copy)
    std::memcpy(p, x.raw_data(), static_cast<size_t>(x.numel()) * tide::DataTypeSize(x.dtype()));
  out.set_lod(x.lod());
  return out;
}

// Runs `call(device communicator)` as collective `op` of the ring (checked and named as every
// collective is): queued on the op's stream by the device's library, and watched there by the
// ring's watchdog; nothing when `empty`. A communicator the watchdog aborted is not used again.
template <typename Call>
void RunOnDevice(Communicator& comm, const std::string& op, const std::string& what, bool empty,
                 Call call) {
  DeviceComm* dev = comm.device();
  const std::string aborted = dev->Aborted();
  if (!aborted.empty())
    TIDE_THROW(TIDE_UNAVAILABLE, "op '", op, "': ring ", comm.ring_id(), "'s ", dev->library(),
               " communicator is unusable: ", aborted);
  comm.Run(
      op, what,
      [&](uint32_t seq) {
        if (empty) return;
        call(*dev);
        dev->Watch(comm.Where(op, seq));
      },
      dev->library());
}

template <typename T>
ReduceFn Reduction(const std::string& kind) {
  if (kind == "sum") return &gloo::sum<T>;
  if (kind == "max") return &gloo::max<T>;
  if (kind == "min") return &gloo::min<T>;
  return &gloo::product<T>;
}

TideReduceOp ReduceOpOf(const std::string& kind) {
  if (kind == "sum") return TIDE_REDUCE_SUM;
  if (kind == "max") return TIDE_REDUCE_MAX;
  if (kind == "min") return TIDE_REDUCE_MIN;
  return TIDE_REDUCE_PROD;
}

// The Gloo allreduce of host buffers `dst` (`bytes` each, n elements in all), as a task for the
// caller's thread or the ring's: one buffer is reduced in place, several (a fused bucket) are
// packed now (their values are final), reduced by one gloo::allreduce and unpacked.
std::function<void()> GlooAllreduce(Communicator& comm, const std::string& op,
                                    const std::string& what, const std::string& kind,
                                    TideDataType dtype, const std::vector<char*>& dst,
                                    const std::vector<size_t>& bytes, size_t n) {
  std::function<void()> exchange;
  Dispatch(dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto packed = std::make_shared<std::vector<T>>();
    if (dst.size() > 1) {
      packed->resize(n);
      char* at = reinterpret_cast<char*>(packed->data());
      for (size_t i = 0; i < dst.size(); ++i) {
        std::memcpy(at, dst[i], bytes[i]);
        at += bytes[i];
      }
    }
    exchange = [&comm, op, what, kind, n, dst, bytes, packed] {
      T* data = packed->empty() ? reinterpret_cast<T*>(dst[0]) : packed->data();
      comm.Run(op, what, [&](uint32_t seq) {
        if (n == 0 || comm.nranks() == 1) return;
        gloo::AllreduceOptions o(comm.context());
        o.setOutput(data, n);
        o.setReduceFunction(Reduction<T>(kind));
        o.setTag(seq);
        o.setTimeout(comm.timeout());
        gloo::allreduce(o);
      });
      const char* at = reinterpret_cast<const char*>(packed->data());
      for (size_t i = 0; !packed->empty() && i < dst.size(); ++i) {
        std::memcpy(dst[i], at, bytes[i]);
        at += bytes[i];
      }
    };
  });
  return exchange;
}

// One X: reduced into Out (Out may be X). Several (a fused bucket of gradients, one data type
// and place): one Gloo allreduce of them packed, or one group of the device library's.
void AllreduceRun(tide::OpRunContext& ctx, const std::string& kind) {
  const std::string op = ctx.op_type();
  Communicator& comm = GetCommunicator(ctx.Attr<int32_t>("ring_id"), op);
  const auto xs = ctx.Inputs("X"), outs = ctx.Outputs("Out");
  TIDE_CHECK(xs.size() == outs.size() && !xs.empty(), "op '", op, "': ", xs.size(), " X for ",
             outs.size(), " Out");
  std::vector<tide::Tensor> in_tensors;
  size_t n = 0;
  TideDataType dtype = TIDE_UNDEFINED;
  for (size_t i = 0; i < xs.size(); ++i) {
    tide::Tensor x = Input(ctx, op, i);
    TIDE_CHECK(dtype == TIDE_UNDEFINED || x.dtype() == dtype, "op '", op, "': X ('", xs[i],
               "') is ", tide::DataTypeName(x.dtype()), " but X ('", xs[0], "') is ",
               tide::DataTypeName(dtype), "; a fused allreduce moves one data type");
    TIDE_CHECK(in_tensors.empty() || x.place() == in_tensors[0].place(), "op '", op, "': X ('",
               xs[i], "') is on ", x.place().ToString(), " but X ('", xs[0], "') on ",
               in_tensors[0].place().ToString(), "; a fused allreduce moves one place");
    dtype = x.dtype();
    in_tensors.push_back(x);
    n += static_cast<size_t>(x.numel());
  }
  const tide::Place place = in_tensors[0].place();
  const std::string what = in_tensors.size() == 1
                               ? Describe(dtype, in_tensors[0].dims())
                               : Describe(dtype, {static_cast<int64_t>(n)}) + " (" +
                                     std::to_string(in_tensors.size()) + " tensors fused)";
  const Route route = RouteOf(ctx, comm, place);
  if (route == Route::kDevice) {
    // use_calc_stream = false: on the device's communication stream where it has one, else on
    // the op's stream; the host does not wait either way.
    const bool comm_stream = !ctx.Attr<bool>("use_calc_stream");
    comm.Wait(op);
    std::vector<DeviceComm::Buffer> buffers;
    for (size_t i = 0; i < in_tensors.size(); ++i) {
      tide::Tensor out = OutputWithInput(ctx, in_tensors[i], false, i);
      buffers.push_back({in_tensors[i].raw_data(), out.mutable_data(dtype, place),
                         static_cast<size_t>(in_tensors[i].numel())});
    }
    RunOnDevice(comm, op, what, n == 0, [&](DeviceComm& dev) {
      dev.AllReduce(buffers, dtype, ReduceOpOf(kind), comm_stream);
    });
    return;
  }
  // Host buffers: the Outs themselves, or host copies of a device's X.
  std::vector<tide::Tensor> host;
  std::vector<tide::OwnedTensor> staged;
  for (size_t i = 0; i < in_tensors.size(); ++i) {
    if (route == Route::kHost) {
      host.push_back(OutputWithInput(ctx, in_tensors[i], true, i));
    } else {
      staged.push_back(ToHost(in_tensors[i]));
      host.push_back(staged.back());
    }
  }
  // The buffers are found here, on the executor's thread; the exchange may run on the ring's.
  std::vector<char*> dst;
  std::vector<size_t> bytes;
  for (auto& t : host) {
    dst.push_back(static_cast<char*>(t.mutable_data(dtype, t.place())));
    bytes.push_back(static_cast<size_t>(t.numel()) * tide::DataTypeSize(dtype));
  }
  std::function<void()> exchange = GlooAllreduce(comm, op, what, kind, dtype, dst, bytes, n);
  if (route == Route::kStaged) {  // the copies back are queued on the op's stream
    comm.Wait(op);
    exchange();
    for (size_t i = 0; i < staged.size(); ++i) FromHost(ctx, staged[i], OutTensor(ctx, i), place);
  } else if (ctx.Attr<bool>("use_calc_stream")) {
    comm.Wait(op);
    exchange();
  } else {
    comm.Async(std::move(exchange));  // c_sync_comm_stream (or the next collective) waits
  }
}

void GlooBroadcast(Communicator& comm, const std::string& op, const std::string& what, void* data,
                   size_t n, TideDataType dtype, int root) {
  Dispatch(dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    comm.Run(op, what, [&](uint32_t seq) {
      if (n == 0 || comm.nranks() == 1) return;
      gloo::BroadcastOptions o(comm.context());
      o.setOutput(static_cast<T*>(data), n);
      o.setRoot(root);
      o.setTag(seq);
      o.setTimeout(comm.timeout());
      gloo::broadcast(o);
    });
  });
}

void BroadcastRun(tide::OpRunContext& ctx) {
  const std::string op = ctx.op_type();
  Communicator& comm = GetCommunicator(ctx.Attr<int32_t>("ring_id"), op);
  comm.Wait(op);
  const int root = ctx.Attr<int32_t>("root");
  TIDE_CHECK(root >= 0 && root < comm.nranks(), "op 'c_broadcast': root ", root,
             " is outside ring ", comm.ring_id(), "'s ranks [0, ", comm.nranks(), ")");
  tide::Tensor x = Input(ctx, op);
  const tide::Place place = x.place();
  const size_t n = static_cast<size_t>(x.numel());
  const std::string what = Describe(x.dtype(), x.dims()) + " from root " + std::to_string(root);
  switch (RouteOf(ctx, comm, place)) {
    case Route::kDevice: {
      tide::Tensor out = OutputWithInput(ctx, x, false);
      void* data = out.mutable_data(x.dtype(), place);
      RunOnDevice(comm, op, what, n == 0, [&](DeviceComm& dev) {
        dev.Broadcast(x.raw_data(), data, n, x.dtype(), root, false);
      });
      return;
    }
    case Route::kHost: {
      tide::Tensor out = OutputWithInput(ctx, x, comm.rank() == root);
      GlooBroadcast(comm, op, what, out.mutable_data(x.dtype(), place), n, x.dtype(), root);
      return;
    }
    case Route::kStaged: {
      tide::OwnedTensor h = ToHost(x);
      GlooBroadcast(comm, op, what, h.mutable_data(x.dtype(), h.place()), n, x.dtype(), root);
      FromHost(ctx, h, OutTensor(ctx), place);
      return;
    }
  }
}

// SelectedRows: every rank's rows and values, concatenated in rank order (the sum of sparse
// gradients, as the optimizers add duplicate rows). Row counts differ: gloo::allgatherv. Values
// on a device are staged through the host (the device libraries gather equal counts only).
void AllgatherSelectedRows(tide::OpRunContext& ctx, Communicator& comm, tide::SelectedRows in) {
  const std::string op = ctx.op_type();
  tide::Tensor v = in.value();
  TIDE_CHECK(v.initialized() && v.rank() >= 1,
             "op 'c_allgather': X's "
             "SelectedRows value holds no data");
  const tide::Place vplace = v.place();
  tide::OwnedTensor staged_in;
  if (!IsHost(vplace)) {
    staged_in = ToHost(v);
    v = staged_in;
  }
  const std::vector<int64_t> rows = in.rows();
  const int64_t width = v.dim(0) ? v.numel() / v.dim(0) : 0;
  std::vector<int64_t> counts(static_cast<size_t>(comm.nranks()));
  int64_t mine = static_cast<int64_t>(rows.size());
  comm.Run(op, "SelectedRows row count", [&](uint32_t seq) {
    gloo::AllgatherOptions o(comm.context());
    o.setInput(&mine, 1);
    o.setOutput(counts.data(), counts.size());
    o.setTag(seq);
    o.setTimeout(comm.timeout());
    gloo::allgather(o);
  });
  std::vector<size_t> row_counts, value_counts;
  int64_t total = 0;
  for (int64_t c : counts) {
    row_counts.push_back(static_cast<size_t>(c));
    value_counts.push_back(static_cast<size_t>(c * width));
    total += c;
  }
  std::vector<int64_t> all_rows(static_cast<size_t>(total));
  // Out may be X: this rank's values are copied out before Out is resized.
  const char* src = static_cast<const char*>(v.raw_data());
  const std::vector<char> values(
      src, src + v.numel() * static_cast<int64_t>(tide::DataTypeSize(v.dtype())));
  const tide::Dims vdims = v.dims();
  const TideDataType vtype = v.dtype();
  const int64_t height = in.height();
  const int64_t vnumel = v.numel();
  tide::SelectedRows o_sr = OutVar(ctx, ctx.Outputs("Out").at(0)).GetSelectedRows();
  tide::Tensor ov = o_sr.value();
  tide::OwnedTensor staged_out;
  tide::Tensor gathered = IsHost(vplace) ? ov : staged_out;
  tide::Dims d = vdims;
  d[0] = total;
  gathered.Resize(d);
  void* out = gathered.mutable_data(vtype, IsHost(vplace) ? vplace : tide::Place("cpu", 0));
  comm.Run(op, "SelectedRows rows", [&](uint32_t seq) {
    gloo::AllgathervOptions o(comm.context());
    o.setInput(const_cast<int64_t*>(rows.data()), rows.size());
    o.setOutput(all_rows.data(), row_counts);
    o.setTag(seq);
    o.setTimeout(comm.timeout());
    gloo::allgatherv(o);
  });
  Dispatch(vtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    comm.Run(op, "SelectedRows " + Describe(vtype, {-1, width}) + " values", [&](uint32_t seq) {
      gloo::AllgathervOptions o(comm.context());
      o.setInput(reinterpret_cast<T*>(const_cast<char*>(values.data())),
                 static_cast<size_t>(vnumel));
      o.setOutput(static_cast<T*>(out), value_counts);
      o.setTag(seq);
      o.setTimeout(comm.timeout());
      gloo::allgatherv(o);
    });
  });
  if (!IsHost(vplace)) FromHost(ctx, staged_out, ov, vplace);
  o_sr.set_height(height);
  o_sr.set_rows(all_rows);
}

void GlooAllgather(Communicator& comm, const std::string& op, const std::string& what,
                   const void* in, void* out, size_t n, TideDataType dtype) {
  Dispatch(dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    comm.Run(op, what, [&](uint32_t seq) {
      if (n == 0) return;
      if (comm.nranks() == 1) {
        std::memcpy(out, in, n * sizeof(T));
        return;
      }
      gloo::AllgatherOptions o(comm.context());
      o.setInput(const_cast<T*>(static_cast<const T*>(in)), n);
      o.setOutput(static_cast<T*>(out), n * static_cast<size_t>(comm.nranks()));
      o.setTag(seq);
      o.setTimeout(comm.timeout());
      gloo::allgather(o);
    });
  });
}

void AllgatherRun(tide::OpRunContext& ctx) {
  const std::string op = ctx.op_type();
  Communicator& comm = GetCommunicator(ctx.Attr<int32_t>("ring_id"), op);
  comm.Wait(op);
  const int nranks = ctx.Attr<int32_t>("nranks");
  TIDE_CHECK(nranks == comm.nranks(), "op 'c_allgather': attribute nranks ", nranks, " but ring ",
             comm.ring_id(), " has ", comm.nranks(), " ranks");
  const std::string xn = ctx.Inputs("X").at(0);
  tide::Variable xv = ctx.scope().FindVar(xn);
  if (xv && xv.IsSelectedRows()) return AllgatherSelectedRows(ctx, comm, xv.GetSelectedRows());
  tide::Tensor x = Input(ctx, op);
  TIDE_CHECK(x.rank() >= 1, "op 'c_allgather': X ('", xn, "') must have rank >= 1");
  TIDE_CHECK(xn != ctx.Outputs("Out").at(0), "op 'c_allgather': Out must differ from X ('", xn,
             "')");
  const tide::Place place = x.place();
  tide::Tensor out = OutTensor(ctx);
  tide::Dims d = x.dims();
  d[0] *= nranks;
  const size_t n = static_cast<size_t>(x.numel());
  const std::string what = Describe(x.dtype(), x.dims());
  switch (RouteOf(ctx, comm, place)) {
    case Route::kDevice: {
      out.Resize(d);
      void* data = out.mutable_data(x.dtype(), place);
      RunOnDevice(comm, op, what, n == 0,
                  [&](DeviceComm& dev) { dev.AllGather(x.raw_data(), data, n, x.dtype(), false); });
      return;
    }
    case Route::kHost:
      out.Resize(d);
      GlooAllgather(comm, op, what, x.raw_data(), out.mutable_data(x.dtype(), place), n, x.dtype());
      return;
    case Route::kStaged: {
      tide::OwnedTensor hx = ToHost(x), ho;
      ho.Resize(d);
      GlooAllgather(comm, op, what, hx.raw_data(), ho.mutable_data(x.dtype(), hx.place()), n,
                    x.dtype());
      FromHost(ctx, ho, out, place);
      return;
    }
  }
}

void ReduceScatterRun(tide::OpRunContext& ctx) {
  const std::string op = ctx.op_type();
  Communicator& comm = GetCommunicator(ctx.Attr<int32_t>("ring_id"), op);
  comm.Wait(op);
  const int nranks = ctx.Attr<int32_t>("nranks");
  TIDE_CHECK(nranks == comm.nranks(), "op 'c_reducescatter': attribute nranks ", nranks,
             " but ring ", comm.ring_id(), " has ", comm.nranks(), " ranks");
  tide::Tensor x = Input(ctx, op);
  TIDE_CHECK(x.rank() >= 1 && x.dim(0) % nranks == 0,
             "op 'c_reducescatter': X's first "
             "dimension (",
             x.rank() ? x.dim(0) : 0, ") must divide into ", nranks, " parts");
  const size_t n = static_cast<size_t>(x.numel());
  const size_t part = n / static_cast<size_t>(nranks);
  const tide::Place place = x.place();
  tide::Tensor out = OutTensor(ctx);
  tide::Dims d = x.dims();
  d[0] /= nranks;
  const std::string what = Describe(x.dtype(), x.dims());
  const Route route = RouteOf(ctx, comm, place);
  if (route == Route::kDevice) {
    out.Resize(d);
    void* data = out.mutable_data(x.dtype(), place);
    RunOnDevice(comm, op, what, part == 0, [&](DeviceComm& dev) {
      dev.ReduceScatter(x.raw_data(), data, part, x.dtype(), TIDE_REDUCE_SUM, false);
    });
    return;
  }
  tide::OwnedTensor staged;
  if (route == Route::kStaged) staged = ToHost(x);
  const tide::Tensor hx = route == Route::kStaged ? tide::Tensor(staged) : x;
  Dispatch(x.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Gloo reduces in place and leaves this rank's part at the front of the buffer.
    std::vector<T> buf(static_cast<const T*>(hx.raw_data()),
                       static_cast<const T*>(hx.raw_data()) + n);
    comm.Run(op, what, [&](uint32_t) {
      if (part == 0 || nranks == 1) return;
      std::vector<int> parts(static_cast<size_t>(nranks), static_cast<int>(part));
      gloo::ReduceScatterHalvingDoubling<T> rs(comm.context(), {buf.data()}, static_cast<int>(n),
                                               parts, gloo::ReductionFunction<T>::sum);
      rs.run();
    });
    tide::OwnedTensor ho;
    tide::Tensor result = route == Route::kStaged ? tide::Tensor(ho) : out;
    result.Resize(d);
    T* o = static_cast<T*>(result.mutable_data(x.dtype(), hx.place()));
    std::memcpy(o, buf.data(), part * sizeof(T));
    if (route == Route::kStaged) FromHost(ctx, ho, out, place);
  });
}

void BarrierRun(tide::OpRunContext& ctx) {
  Communicator& comm = GetCommunicator(ctx.Attr<int32_t>("ring_id"), "barrier");
  comm.Wait("barrier");
  comm.Run("barrier", "", [&](uint32_t seq) {
    if (comm.nranks() == 1) return;
    gloo::BarrierOptions o(comm.context());
    o.setTag(seq);
    o.setTimeout(comm.timeout());
    gloo::barrier(o);
  });
}

// Out shares X's data (Fluid's ops are in place).
void ShareOutputs(tide::OpRunContext& ctx) {
  const auto xs = ctx.Inputs("X"), outs = ctx.Outputs("Out");
  for (size_t i = 0; i < xs.size() && i < outs.size(); ++i) {
    if (xs[i] == outs[i]) continue;
    tide::Variable v = ctx.scope().FindVar(xs[i]);
    if (v && v.IsTensor()) OutVar(ctx, outs[i]).GetTensor().ShareDataWith(v.GetTensor());
  }
}

// The CPU computes synchronously: when an op returns its outputs are there. A device's stream is
// waited for (Fluid's cudaStreamSynchronize of the calculation stream).
void SyncCalcStreamRun(tide::OpRunContext& ctx) {
  if (!IsHost(ctx.place()))
    tide::ThrowIfError(tide::Host().DeviceContext_Synchronize(ctx.device_context()));
  ShareOutputs(ctx);
}

// Waits for the ring's asynchronous allreduces (use_calc_stream = false): those on the ring's
// thread, and makes the device's stream wait for those on its communication stream.
void SyncCommStreamRun(tide::OpRunContext& ctx) {
  Communicator& comm = GetCommunicator(ctx.Attr<int32_t>("ring_id"), ctx.op_type());
  comm.Wait(ctx.op_type());
  if (DeviceComm* dev = comm.device()) dev->CalcWaitComm();
  ShareOutputs(ctx);
}

void DimsTimesRanks(tide::InferShapeContext& ctx, bool multiply) {
  tide::Dims d = ctx.InputDims("X");
  const int nranks = ctx.Attr<int32_t>("nranks");
  if (!d.empty() && d[0] > 0) d[0] = multiply ? d[0] * nranks : d[0] / nranks;
  ctx.SetOutputDims("Out", d);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

tide::OpSchema AllreduceSchema(const std::string& kind) {
  return tide::OpSchema("c_allreduce_" + kind)
      .Comment("Out = the element-wise " + kind +
               " of X over every rank of ring ring_id "
               "(gloo::allreduce); Out may be X.")
      .Input("X", "this rank's tensor; several: a fused bucket (one data type)")
      .AsDuplicable()
      .Output("Out", "the reduced tensors, the same on every rank")
      .AsDuplicable()
      .Attr("ring_id", int32_t(0), "the communicator (c_comm_init)")
      .Attr("use_calc_stream", false,
            "true: reduce before the op returns (a device's tensors: on its stream); false: on "
            "the ring's thread (a device's tensors: on its communication stream, where it has "
            "one), overlapping the ops that follow, until c_sync_comm_stream or the ring's next "
            "collective")
      .Attr("use_model_parallel", false, "unused (Fluid's)")
      .InferShape([](tide::InferShapeContext& ctx) {
        for (size_t i = 0; i < ctx.InputCount("X") && i < ctx.OutputCount("Out"); ++i) {
          ctx.SetOutputDims("Out", ctx.InputDims("X", i), i);
          ctx.SetOutputDataType("Out", ctx.InputDataType("X", i), i);
        }
      })
      .NoGradient()
      .Run([kind](tide::OpRunContext& ctx) { AllreduceRun(ctx, kind); });
}

}  // namespace
}  // namespace tide_collective

TIDE_REGISTER_OP(tide_collective::AllreduceSchema("sum"));
TIDE_REGISTER_OP(tide_collective::AllreduceSchema("max"));
TIDE_REGISTER_OP(tide_collective::AllreduceSchema("min"));
TIDE_REGISTER_OP(tide_collective::AllreduceSchema("prod"));

TIDE_REGISTER_OP(tide::OpSchema("c_broadcast")
                     .Comment("Out = root's X on every rank of ring ring_id (gloo::broadcast); "
                              "Out may be X.")
                     .Input("X", "the tensor (read on the root)")
                     .Output("Out", "root's tensor")
                     .Attr("ring_id", int32_t(0), "the communicator (c_comm_init)")
                     .Attr("root", int32_t(0), "the rank whose X is sent")
                     .Attr("use_calc_stream", false, "unused on the CPU (Fluid's)")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .NoGradient()
                     .Run(tide_collective::BroadcastRun));

TIDE_REGISTER_OP(tide::OpSchema("c_allgather")
                     .Comment("Out = every rank's X concatenated along dim 0 in rank order "
                              "(gloo::allgather); a SelectedRows X gives their rows and values "
                              "concatenated (gloo::allgatherv).")
                     .Input("X", "this rank's tensor or SelectedRows")
                     .Output("Out", "nranks * X's rows")
                     .Attr("ring_id", int32_t(0), "the communicator (c_comm_init)")
                     .Attr("nranks", int32_t(1), "the ring's size")
                     .Attr("use_calc_stream", false, "unused on the CPU (Fluid's)")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       if (ctx.InputVarType("X") == TIDE_VAR_SELECTED_ROWS) {
                         ctx.SetOutputVarType("Out", TIDE_VAR_SELECTED_ROWS);
                         ctx.SetOutputDims("Out", ctx.InputDims("X"));
                         ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
                         return;
                       }
                       tide_collective::DimsTimesRanks(ctx, true);
                     })
                     .NoGradient()
                     .Run(tide_collective::AllgatherRun));

TIDE_REGISTER_OP(tide::OpSchema("c_reducescatter")
                     .Comment("Out = rank r's share (dim-0 part r of nranks) of the sum of every "
                              "rank's X (Gloo's halving-doubling reduce-scatter).")
                     .Input("X", "this rank's tensor; dim 0 divisible by nranks")
                     .Output("Out", "this rank's part of the sum")
                     .Attr("ring_id", int32_t(0), "the communicator (c_comm_init)")
                     .Attr("nranks", int32_t(1), "the ring's size")
                     .Attr("use_calc_stream", false, "unused on the CPU (Fluid's)")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       tide_collective::DimsTimesRanks(ctx, false);
                     })
                     .NoGradient()
                     .Run(tide_collective::ReduceScatterRun));

TIDE_REGISTER_OP(tide::OpSchema("barrier")
                     .Comment("Returns once every rank of ring ring_id has reached it "
                              "(gloo::barrier).")
                     .Input("X", "unused (Fluid's)")
                     .AsDispensable()
                     .Output("Out", "unused (Fluid's)")
                     .AsDispensable()
                     .Attr("ring_id", int32_t(0), "the communicator (c_comm_init)")
                     .NoGradient()
                     .Run(tide_collective::BarrierRun));

TIDE_REGISTER_OP(tide::OpSchema("c_sync_calc_stream")
                     .Comment("Waits for the computation stream (on the CPU every op is "
                              "complete when it returns); Out is X.")
                     .Input("X", "the tensors")
                     .AsDuplicable()
                     .Output("Out", "the same tensors")
                     .AsDuplicable()
                     .NoGradient()
                     .Run(tide_collective::SyncCalcStreamRun));

TIDE_REGISTER_OP(tide::OpSchema("c_sync_comm_stream")
                     .Comment("Waits for ring ring_id's communication: the c_allreduce_* ops "
                              "with use_calc_stream = false run on the ring's own thread, or a "
                              "device's communication stream, which the device's stream then "
                              "waits for (without the host waiting). Out is X.")
                     .Input("X", "the tensors")
                     .AsDuplicable()
                     .Output("Out", "the same tensors")
                     .AsDuplicable()
                     .Attr("ring_id", int32_t(0), "the communicator (c_comm_init)")
                     .NoGradient()
                     .Run(tide_collective::SyncCommStreamRun));
