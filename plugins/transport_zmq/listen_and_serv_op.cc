// listen_and_serv_op.cc: the pserver's operator (Fluid's listen_and_serv): reads its attributes and
// runs the PServer loop until every trainer has completed.
#include "pserver.h"

namespace tide_zmq {
namespace {

std::map<std::string, int32_t> ParseGradToBlock(const std::vector<std::string>& pairs,
                                                const std::string& who) {
  std::map<std::string, int32_t> out;
  for (const auto& p : pairs) {
    size_t colon = p.rfind(':');
    TIDE_CHECK(colon != std::string::npos && colon > 0 && colon + 1 < p.size() &&
                   p.find_first_not_of("0123456789", colon + 1) == std::string::npos,
               who, ": grad_to_block_id entry '", p, "' is not \"grad_name:block_index\"");
    out[p.substr(0, colon)] = std::stoi(p.substr(colon + 1));
  }
  return out;
}

// "grad_name:LOD_TENSOR|SELECTED_ROWS:dtype code:d0,d1,..." (the name may hold ':').
std::map<std::string, GradSpec> ParseGradSpecs(const std::vector<std::string>& specs,
                                               const std::string& who) {
  std::map<std::string, GradSpec> out;
  for (const auto& s : specs) {
    size_t c3 = s.rfind(':'),
           c2 = c3 == std::string::npos || c3 == 0 ? std::string::npos : s.rfind(':', c3 - 1);
    size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : s.rfind(':', c2 - 1);
    TIDE_CHECK(c1 != std::string::npos && c1 > 0, who, ": grad_specs entry '", s,
               "' is not \"name:type:dtype:dims\"");
    GradSpec g;
    std::string type = s.substr(c1 + 1, c2 - c1 - 1);
    TIDE_CHECK(type == "LOD_TENSOR" || type == "SELECTED_ROWS", who, ": grad_specs entry '", s,
               "' has an unknown type");
    g.sparse = type == "SELECTED_ROWS";
    g.dtype = std::stoi(s.substr(c2 + 1, c3 - c2 - 1));
    std::string dims = s.substr(c3 + 1);
    for (size_t a = 0; a < dims.size();) {
      size_t b = dims.find(',', a);
      g.dims.push_back(std::stoll(dims.substr(a, b == std::string::npos ? b : b - a)));
      a = b == std::string::npos ? dims.size() : b + 1;
    }
    out[s.substr(0, c1)] = g;
  }
  return out;
}

void ListenAndServRun(tide::OpRunContext& ctx) {
  PServerConfig c;
  c.server.endpoint = ctx.Attr<std::string>("endpoint");
  const std::string who = "listen_and_serv " + c.server.endpoint;
  c.server.bind_address = ctx.Attr<std::string>("bind_address");
  c.server.max_message_bytes = ctx.Attr<int64_t>("max_message_size");
  c.server.curve_secret_key_file = ctx.Attr<std::string>("curve_secret_key_file");
  c.server.curve_trainer_key_files = ctx.Attr<std::vector<std::string>>("curve_trainer_keys");
  c.fanin = ctx.Attr<int32_t>("Fanin");
  c.sync_mode = ctx.Attr<bool>("sync_mode");
  c.grad_to_block = ParseGradToBlock(ctx.Attr<std::vector<std::string>>("grad_to_block_id"), who);
  c.grad_specs = ParseGradSpecs(ctx.Attr<std::vector<std::string>>("grad_specs"), who);
  c.optimize_blocks = ctx.Attr<std::vector<int32_t>>("optimize_blocks");
  c.lr_decay_block = ctx.Attr<int32_t>("lr_decay_block_id");
  for (const auto& s : ctx.Attr<std::vector<std::string>>("served_vars")) c.served.insert(s);
  c.checkpoint_vars = ctx.Attr<std::vector<std::string>>("checkpoint_vars");
  c.checkpoint_dir = ctx.Attr<std::string>("checkpoint_dir");
  c.checkpoint_interval = ctx.Attr<int32_t>("checkpoint_interval");
  c.deadline_ms = ctx.Attr<int32_t>("rpc_deadline");
  for (const auto& kv : c.grad_to_block)
    TIDE_CHECK(kv.second > 0, who, ": gradient '", kv.first, "' maps to block ", kv.second,
               "; optimize blocks are sub-blocks (index > 0)");
  if (c.checkpoint_interval > 0 && c.checkpoint_vars.empty())
    for (const auto& s : c.served) c.checkpoint_vars.push_back(s);
  PServer(ctx, std::move(c)).Run();
}

}  // namespace
}  // namespace tide_zmq

TIDE_REGISTER_OP(
    tide::OpSchema("listen_and_serv")
        .Comment("The pserver loop: takes the trainers' gradients, runs their optimize blocks "
                 "(sync: once per round after every trainer's send barrier; async: per gradient), "
                 "serves the parameters; returns when every trainer has sent send_complete.")
        .Input("X", "the variables it receives (informational)")
        .AsDuplicable()
        .AsDispensable()
        .Attr("endpoint", std::string(""), "host:port the trainers reach this pserver at")
        .Attr("bind_address", std::string("127.0.0.1"),
              "the address to listen on (the port is the endpoint's); 0.0.0.0 for every interface")
        .Attr("Fanin", int32_t(1), "the number of trainers")
        .GreaterThan(0)
        .RequiredAttr("optimize_blocks", TIDE_ATTR_BLOCKS, "the optimize sub-blocks, in run order")
        .Attr("grad_to_block_id", std::vector<std::string>{},
              "\"grad_name:block_index\": the block that applies each gradient")
        .Attr(
            "grad_specs", std::vector<std::string>{},
            "\"grad_name:LOD_TENSOR|SELECTED_ROWS:dtype:d0,d1,...\": what each gradient must be; a "
            "gradient that differs is refused (unlisted ones are not checked)")
        .Attr("lr_decay_block_id", int32_t(-1), "a block run before the optimize blocks; -1: none")
        .Attr("sync_mode", true, "sync: average each round's gradients over the trainers")
        .Attr("served_vars", std::vector<std::string>{}, "the variables trainers may recv")
        .Attr("checkpoint_vars", std::vector<std::string>{},
              "the variables a checkpoint holds (default: served_vars)")
        .Attr("checkpoint_dir", std::string(""),
              "where to save checkpoints and resume from at start-up; empty: no checkpoints")
        .Attr("checkpoint_interval", int32_t(0), "save every N rounds (0: never)")
        .Attr("rpc_deadline", int32_t(tide_zmq::kDefaultDeadlineMs),
              "ms a round may wait for the last trainer's send barrier before the pserver fails")
        .GreaterThan(0)
        .Attr("max_message_size", int64_t(tide_zmq::kDefaultMaxMessageBytes),
              "bytes: larger requests are refused and logged")
        .GreaterThan(0)
        .Attr("curve_secret_key_file", std::string(""),
              "this pserver's CurveZMQ certificate (secret key); empty: no CurveZMQ")
        .Attr("curve_trainer_keys", std::vector<std::string>{},
              "files with the public keys of the trainers admitted (empty: any CurveZMQ client)")
        .Run(tide_zmq::ListenAndServRun));
