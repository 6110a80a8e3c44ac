// rpc_ops.cc: the trainer-side operators without kernels: send, recv, send_barrier, fetch_barrier
// and send_complete (Fluid's names and attributes, plus row blocks of sliced variables).
#include <cstring>
#include <map>

#include "client.h"
#include "wire.h"

namespace tide_zmq {
namespace {

using Call = RpcClient::Call;

// One block of a variable on the wire: which variable (its first entry in X/Out), its pserver,
// its name there, its rows.
struct Block {
  size_t var;
  std::string endpoint, wire_name;
  int64_t row_begin = 0, row_end = -1;  // row_end -1: the whole variable
};

// Lays X (or Out) out in blocks, one per entry: entry i goes to epmap[i] as names[i] (default: its
// own name). A variable sliced in row blocks is listed once per block, consecutively, with
// sections[i] rows each; sections[i] == 0 (or no sections) sends the whole variable.
std::vector<Block> LayOut(const tide::OpRunContext& ctx, const std::vector<std::string>& vars,
                          const std::vector<std::string>& epmap,
                          const std::vector<std::string>& names,
                          const std::vector<int64_t>& sections) {
  const std::string op = ctx.op_type();
  const size_t n = vars.size();
  TIDE_CHECK(epmap.size() == n, "op '", op, "': epmap has ", epmap.size(), " endpoint(s) for ", n,
             " variable entries");
  TIDE_CHECK(names.empty() || names.size() == n, "op '", op, "': ", names.size(),
             " wire name(s) for ", n, " variable entries");
  TIDE_CHECK(sections.empty() || sections.size() == n, "op '", op, "': ", sections.size(),
             " sections for ", n, " variable entries");
  std::vector<Block> blocks;
  for (size_t i = 0; i < n; ++i) {
    const bool cont = i > 0 && vars[i - 1] == vars[i];
    const bool more = i + 1 < n && vars[i + 1] == vars[i];
    const int64_t rows = sections.empty() ? 0 : sections[i];
    Block b{cont ? blocks.back().var : i, epmap[i], names.empty() ? vars[i] : names[i]};
    if (rows == 0) {
      TIDE_CHECK(!cont && !more, "op '", op, "': '", vars[i],
                 "' is listed more than once but "
                 "sections gives it no rows");
    } else {
      TIDE_CHECK(rows > 0, "op '", op, "': negative section for '", vars[i], "'");
      b.row_begin = cont ? blocks.back().row_end : 0;
      b.row_end = b.row_begin + rows;
    }
    blocks.push_back(b);
  }
  return blocks;
}

// One call per endpoint, in first-use order.
std::vector<Call> CallsPerEndpoint(const std::vector<std::string>& endpoints, transport::Kind kind,
                                   int32_t trainer, std::map<std::string, size_t>* index) {
  std::vector<Call> calls;
  for (const auto& ep : endpoints) {
    if (index->count(ep)) continue;
    (*index)[ep] = calls.size();
    calls.emplace_back();
    calls.back().endpoint = ep;
    calls.back().request.set_kind(kind);
    calls.back().request.set_trainer_id(trainer);
  }
  return calls;
}

void SendRun(tide::OpRunContext& ctx) {
  const ClientOptions opt = ReadClientOptions(ctx);
  const auto xs = ctx.Inputs("X");
  const auto epmap = ctx.Attr<std::vector<std::string>>("epmap");
  const auto sections = ctx.Attr<std::vector<int64_t>>("sections");
  const int32_t trainer = ctx.Attr<int32_t>("trainer_id");
  std::vector<tide::Variable> vars;
  for (const auto& x : xs) {
    tide::Variable v = ctx.scope().FindVar(x);
    TIDE_CHECK(v, "op 'send': variable '", x, "' is not in the scope");
    vars.push_back(v);
  }
  auto blocks =
      LayOut(ctx, xs, epmap, ctx.Attr<std::vector<std::string>>("send_varnames"), sections);
  for (size_t k = 0; k < blocks.size(); ++k) {  // the blocks of a variable cover all its rows
    if (blocks[k].row_end < 0 || (k + 1 < blocks.size() && blocks[k + 1].var == blocks[k].var))
      continue;
    tide::Variable v = vars[blocks[k].var];
    int64_t rows = v.IsTensor() && v.GetTensor().rank() > 0 ? v.GetTensor().dim(0) : -1;
    TIDE_CHECK(rows == blocks[k].row_end, "op 'send': the blocks of '", xs[blocks[k].var],
               "' cover ", blocks[k].row_end, " rows, the variable has ", rows);
  }
  std::map<std::string, size_t> index;
  std::vector<std::string> eps;
  for (const auto& b : blocks) eps.push_back(b.endpoint);
  std::vector<Call> calls = CallsPerEndpoint(eps, transport::SEND_VARS, trainer, &index);
  const bool sync = ctx.Attr<bool>("sync_mode");
  for (auto& c : calls) {
    c.replay_until_barrier = sync;
    c.detached = !sync;  // async: the answer is checked later; the data must just be on its way
  }
  auto live = std::make_shared<FrameCounter>();
  for (const auto& b : blocks) {
    Call& c = calls[index[b.endpoint]];
    c.data.emplace_back();
    EncodeVariable(
        vars[b.var], b.wire_name, b.row_begin, b.row_end,
        "op 'send': variable '" + xs[b.var] + "' (to " + b.endpoint + " as '" + b.wire_name + "')",
        c.request.add_vars(), &c.data.back(), sync ? nullptr : live);
  }
  RpcClient::Instance().Run(calls, opt, "send");
  // Async: return once ZeroMQ has handed the tensors' bytes to the network (the program may then
  // overwrite them), not when the pserver answers.
  if (!sync && !live->WaitZero(opt.deadline_ms))
    TIDE_THROW(TIDE_UNAVAILABLE, "send of trainer ", trainer, ": ", live->count(),
               " variable(s) still "
               "unsent after rpc_deadline ",
               opt.deadline_ms, " ms (is the pserver of '", xs[0], "' reachable? ",
               epmap.empty() ? "" : epmap[0], ")");
}

void RecvRun(tide::OpRunContext& ctx) {
  const ClientOptions opt = ReadClientOptions(ctx);
  const auto outs = ctx.Outputs("Out");
  auto names = ctx.Attr<std::vector<std::string>>("varnames");
  const auto sections = ctx.Attr<std::vector<int64_t>>("sections");
  auto blocks = LayOut(ctx, outs, ctx.Attr<std::vector<std::string>>("epmap"), names, sections);
  std::map<std::string, size_t> index;
  std::vector<std::string> eps;
  for (const auto& b : blocks) eps.push_back(b.endpoint);
  std::vector<Call> calls =
      CallsPerEndpoint(eps, transport::GET_VARS, ctx.Attr<int32_t>("trainer_id"), &index);
  std::vector<std::pair<size_t, int>> where;  // per block: call, position in its response
  for (const auto& b : blocks) {
    Call& c = calls[index[b.endpoint]];
    where.emplace_back(index[b.endpoint], c.request.names_size());
    c.request.add_names(b.wire_name);
  }
  RpcClient::Instance().Run(calls, opt, "recv");

  for (size_t i = 0; i < outs.size(); ++i) {
    if (i > 0 && outs[i - 1] == outs[i]) continue;  // one variable, several blocks
    std::vector<size_t> mine;
    for (size_t k = 0; k < blocks.size(); ++k)
      if (blocks[k].var == i) mine.push_back(k);
    auto msg = [&](size_t k) -> const transport::VariableMessage& {
      const Call& c = calls[where[k].first];
      TIDE_CHECK(where[k].second < c.response.vars_size() &&
                     c.response.vars(where[k].second).name() == blocks[k].wire_name,
                 "op 'recv': pserver ", c.endpoint, " did not send '", blocks[k].wire_name, "'");
      return c.response.vars(where[k].second);
    };
    auto frame = [&](size_t k) -> zmq::message_t& {
      return calls[where[k].first].reply_data[where[k].second];
    };
    tide::Variable var = ctx.scope().FindVar(outs[i]);
    if (!var) var = ctx.scope().Var(outs[i]);
    if (mine.size() == 1 && blocks[mine[0]].row_end < 0) {
      DecodeVariable(msg(mine[0]), &frame(mine[0]), var, ctx.place());
      continue;
    }
    // Row blocks: one tensor of their rows, in order.
    const auto& first = msg(mine[0]);
    tide::Dims dims(first.dims().begin(), first.dims().end());
    TIDE_CHECK(!dims.empty(), "op 'recv': block '", first.name(), "' has rank 0");
    int64_t rows = 0;
    for (size_t k : mine) {
      const auto& m = msg(k);
      TIDE_CHECK(m.type() == transport::VariableMessage::LOD_TENSOR && m.dtype() == first.dtype() &&
                     m.dims_size() == first.dims_size() &&
                     std::equal(m.dims().begin() + 1, m.dims().end(), first.dims().begin() + 1),
                 "op 'recv': the blocks of '", outs[i], "' do not fit together ('", m.name(),
                 "' vs '", first.name(), "')");
      TIDE_CHECK(blocks[k].row_end < 0 || m.dims(0) == blocks[k].row_end - blocks[k].row_begin,
                 "op 'recv': block '", m.name(), "' has ", m.dims(0), " rows, expected ",
                 blocks[k].row_end - blocks[k].row_begin);
      rows += m.dims(0);
    }
    dims[0] = rows;
    const bool host = IsHostPlace(ctx.place());
    tide::Tensor t = var.GetTensor();
    tide::OwnedTensor staging;
    tide::Tensor dst = host ? t : tide::Tensor(staging.c());
    dst.Resize(dims);
    char* p = static_cast<char*>(dst.mutable_data(static_cast<TideDataType>(first.dtype()),
                                                  host ? ctx.place() : tide::Place("cpu", 0)));
    for (size_t k : mine) {
      const auto& f = frame(k);
      if (f.size()) std::memcpy(p, f.data(), f.size());
      p += f.size();
    }
    if (!host) t.CopyFrom(staging, ctx.place());
  }
}

void BarrierRun(tide::OpRunContext& ctx, transport::Kind kind, const char* op) {
  const ClientOptions opt = ReadClientOptions(ctx);
  std::map<std::string, size_t> index;
  auto calls = CallsPerEndpoint(ctx.Attr<std::vector<std::string>>("endpoints"), kind,
                                ctx.Attr<int32_t>("trainer_id"), &index);
  RpcClient::Instance().Run(calls, opt, op);
}

// The attributes every RPC op has.
tide::OpSchema RpcAttrs(tide::OpSchema s) {
  s.Attr("trainer_id", int32_t(0), "this trainer's id, in [0, trainers)")
      .Attr("rpc_deadline", int32_t(kDefaultDeadlineMs),
            "ms to wait for a pserver's answer before failing with an error naming it")
      .GreaterThan(0)
      .Attr("max_message_size", int64_t(kDefaultMaxMessageBytes),
            "bytes: larger messages are refused (and ZeroMQ drops larger frames)")
      .GreaterThan(0)
      .Attr("curve_server_key_file", std::string(""),
            "the pserver's CurveZMQ public key; empty: none")
      .Attr("curve_key_file", std::string(""),
            "this trainer's CurveZMQ certificate (public + secret)");
  return s;
}

}  // namespace
}  // namespace tide_zmq

using tide_zmq::RpcAttrs;

TIDE_REGISTER_OP(
    RpcAttrs(tide::OpSchema("send"))
        .Comment("Sends each X (or its row blocks) to its pserver; one request per "
                 "pserver, all in flight at once.")
        .Input("X", "variables to send (LoDTensor or SelectedRows)")
        .AsDuplicable()
        .Attr("epmap", std::vector<std::string>{}, "the pserver of each X entry")
        .Attr("send_varnames", std::vector<std::string>{},
              "names on the pserver, one per entry; empty: X's own")
        .Attr("sections", std::vector<int32_t>{},
              "rows of each entry's block (0: the whole variable); a sliced variable is listed "
              "once per block")
        .Attr("sync_mode", true,
              "true: wait for the answers and keep the round's data until send_barrier "
              "(replayed if a pserver restarts); false (async): return once the data "
              "is on its way, a later RPC checks the answer")
        .Run(tide_zmq::SendRun));

TIDE_REGISTER_OP(RpcAttrs(tide::OpSchema("recv"))
                     .Comment("Gets each Out (or its row blocks, concatenated) from its pserver.")
                     .Output("Out", "variables to receive")
                     .AsDuplicable()
                     .Attr("epmap", std::vector<std::string>{}, "the pserver of each Out entry")
                     .Attr("varnames", std::vector<std::string>{},
                           "names on the pserver, one per entry; empty: Out's own")
                     .Attr("sections", std::vector<int32_t>{},
                           "rows of each entry's block (0: the whole variable); a sliced variable "
                           "is listed once per block")
                     .Attr("sync_mode", true, "unused; for Fluid compatibility")
                     .Run(tide_zmq::RecvRun));

TIDE_REGISTER_OP(RpcAttrs(tide::OpSchema("send_barrier"))
                     .Comment("Sync mode: tells every pserver this trainer sent all of the round; "
                              "returns once they have run the optimize blocks.")
                     .Attr("endpoints", std::vector<std::string>{}, "every pserver")
                     .Run([](tide::OpRunContext& c) {
                       tide_zmq::BarrierRun(c, tide_zmq::transport::SEND_BARRIER, "send_barrier");
                     }));

TIDE_REGISTER_OP(RpcAttrs(tide::OpSchema("fetch_barrier"))
                     .Comment("Sync mode: tells every pserver this trainer fetched the round's "
                              "parameters.")
                     .Attr("endpoints", std::vector<std::string>{}, "every pserver")
                     .Run([](tide::OpRunContext& c) {
                       tide_zmq::BarrierRun(c, tide_zmq::transport::FETCH_BARRIER, "fetch_barrier");
                     }));

TIDE_REGISTER_OP(RpcAttrs(tide::OpSchema("send_complete"))
                     .Comment("Tells every pserver this trainer is done; a pserver stops once all "
                              "its trainers are.")
                     .Attr("endpoints", std::vector<std::string>{}, "every pserver")
                     .Run([](tide::OpRunContext& c) {
                       tide_zmq::BarrierRun(c, tide_zmq::transport::COMPLETE, "send_complete");
                     }));
