// paddle_program_repairs.cc: a Paddle program, once built and checked, repaired where what Paddle
// writes means something else to Tide: a while's X, a value overwritten unread, ranks and sizes
// Paddle's compile-time inference left unset or wrong.
#include "core/io/paddle_program_repairs.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/passes/compile_infer_shape.h"
#include "core/platform/enforce.h"
#include "core/registry/registry.h"

namespace tide::core {

namespace {

// The names `block` (its ops, and the blocks of theirs) reads before it writes them; `written`:
// the names written before it starts.
void CollectOuterReads(const ProgramDesc& program, const BlockDesc& block,
                       std::set<std::string> written, std::set<std::string>* read) {
  for (size_t i = 0; i < block.OpSize(); ++i) {
    const OpDesc* op = block.Op(i);
    for (const auto& n : op->InputArgumentNames())
      if (!written.count(n)) read->insert(n);
    for (const auto& [attr, sub] : op->SubBlocks())
      CollectOuterReads(program, program.Block(sub), written, read);
    for (const auto& n : op->OutputArgumentNames()) written.insert(n);
  }
}

// Paddle 2.x's While (paddle.static.nn.while_loop, the loops of dynamic-to-static) lists every
// variable its body writes among its X too, read or not; Tide's while reads X as what the body
// reads (its layers' While writes that): a tensor in X and Out is loop-carried, its gradient
// carried from each iteration to the one before. A tensor the body only overwrites (a generation
// loop's last logits) would carry the loss's gradient into every iteration and into the value
// before the loop. Its X keeps the tensors the body reads before it writes them (and every tensor
// array, which a body's writes change element by element); inner loops first.
void ListWhileReads(ProgramDesc* program) {
  for (size_t b = program->Size(); b-- > 0;) {
    const BlockDesc& block = program->Block(b);
    for (size_t i = 0; i < block.OpSize(); ++i) {
      OpDesc* op = block.Op(i);
      if (op->type() != "while" || !op->HasAttr("sub_block")) continue;
      const auto* body = std::get_if<BlockIndex>(&op->GetAttr("sub_block"));
      if (!body || body->idx < 0 || static_cast<size_t>(body->idx) >= program->Size()) continue;
      std::set<std::string> read;
      CollectOuterReads(*program, program->Block(body->idx), {}, &read);
      std::vector<std::string> xs;
      for (const auto& x : op->Input("X")) {
        const VarDesc* v = block.FindVarRecursive(x);
        if (read.count(x) || !v || v->type() != TIDE_VAR_LOD_TENSOR) xs.push_back(x);
      }
      op->SetInput("X", std::move(xs));
    }
  }
}

// A legacy Paddle program writes some variables twice in a block with no read in between:
// dynamic-to-static gives two loop variables one name (`h, state = cell(x, state)` of a GRU cell
// whose results are one tensor: two assigns to the name each step). The first write is never read,
// so it takes no gradient; the backward pass would sum both writes' gradients. Such a write goes to
// a fresh variable of its own ("<name>.overwritten_<n>", declared like the name), which nothing
// reads. Only plain tensors that are not persistable, and only writes of ops without blocks (a
// loop's or a branch's results may leave the value before it).
void RenameOverwrittenValues(ProgramDesc* program) {
  int renamed = 0;
  for (size_t b = 0; b < program->Size(); ++b) {
    BlockDesc* block = program->MutableBlock(b);
    std::map<std::string, size_t> unread;  // variable -> the op whose write no op read yet
    std::vector<std::pair<size_t, std::string>> dead;
    for (size_t i = 0; i < block->OpSize(); ++i) {
      const OpDesc* op = block->Op(i);
      const auto subs = op->SubBlocks();
      const bool nested = !subs.empty();
      std::set<std::string> read;
      for (const auto& n : op->InputArgumentNames()) read.insert(n);
      if (nested) {
        for (const auto& n : op->OutputArgumentNames()) read.insert(n);
        for (const auto& [attr, sub] : subs)
          CollectOuterReads(*program, program->Block(sub), {}, &read);
      }
      for (const auto& n : read) unread.erase(n);
      if (nested) continue;
      for (const auto& o : op->OutputArgumentNames()) {
        auto it = unread.find(o);
        if (it != unread.end()) dead.emplace_back(it->second, o);
        const VarDesc* v = block->FindVarRecursive(o);
        if (v && v->type() == TIDE_VAR_LOD_TENSOR && !v->persistable())
          unread[o] = i;
        else
          unread.erase(o);
      }
    }
    for (const auto& [i, name] : dead) {
      const VarDesc* from = block->FindVarRecursive(name);
      std::string fresh;
      do {
        fresh = StrCat(name, ".overwritten_", renamed++);
      } while (block->FindVarRecursive(fresh));
      VarDesc* v = block->Var(fresh);
      v->set_type(from->type());
      v->set_dtype(from->dtype());
      v->CopyShapeFrom(*from);
      v->set_lod_level(from->lod_level());
      v->set_stop_gradient(from->stop_gradient());
      block->Op(i)->RenameOutput(name, fresh);
    }
  }
}

// Paddle 2.5+ declares a 0-D tensor with no dims, which is also how it leaves an output whose
// dims its compile-time inference never set (generate_proposals_v2's RpnRoisNum, and the `scale`
// paddle.jit.save puts before its fetch): read as 0-D, such an output of one image would lose its
// rank ([1] made []). Where Tide's inference of the op gives an output declared 0-D a rank (other
// than [1], which Fluid's ops make for Paddle's 0-D results), it is declared so; in block order,
// so the ops reading it follow.
void RedeclareUninferredRanks(ProgramDesc* program) {
  for (size_t b = 0; b < program->Size(); ++b) {
    BlockDesc* block = program->MutableBlock(b);
    for (size_t i = 0; i < block->OpSize(); ++i) {
      const OpDesc* op = block->Op(i);
      std::vector<std::pair<VarDesc*, VarDesc>> zero_d;  // an output and its declaration
      for (const auto& n : op->OutputArgumentNames()) {
        VarDesc* v = block->FindVarRecursive(n);
        if (v && v->type() == TIDE_VAR_LOD_TENSOR && v->zero_dim() &&
            std::none_of(zero_d.begin(), zero_d.end(), [&](const auto& z) { return z.first == v; }))
          zero_d.emplace_back(v, *v);
      }
      const OpInfo* info = Registry::Global().FindOp(op->type());
      if (zero_d.empty() || !info || !op->SubBlocks().empty()) continue;
      std::vector<std::pair<VarDesc*, VarDesc>> outs;  // every output's declaration, restored
      for (const auto& n : op->OutputArgumentNames())
        if (VarDesc* v = block->FindVarRecursive(n)) outs.emplace_back(v, *v);
      try {
        InferShapeAtCompileTime(*info, *op, block);
      } catch (const Error&) {
      }
      std::vector<std::pair<VarDesc*, std::vector<int64_t>>> ranked;
      for (const auto& [v, before] : zero_d) {
        const auto& shape = v->shape();
        if (!v->zero_dim() && !shape.empty() && !(shape.size() == 1 && shape[0] == 1))
          ranked.emplace_back(v, shape);
      }
      for (auto& [v, before] : outs) *v = before;
      for (auto& [v, shape] : ranked) v->set_shape(shape);
    }
  }
}

// Paddle 3.x's conv2d_transpose InferMeta adds output_padding to its -1 (an unknown size), so a
// Conv2DTranspose(output_padding=1) of an input of dynamic height and width (CycleGAN's
// generator) declares its result [N, C, 0, 0], and the ops after it declare sizes computed from
// that 0 (a reflect pad's 6 x 6, a 7x7 conv's 0 x 0), which Tide's compile-time shape inference of
// a fused op refuses ("the output would be empty"). Such a size is redeclared unknown, and the ops
// reading a redeclared variable have their results' shapes inferred again (in block order, so the
// correction flows through the chain). A conv2d_transpose with an output_size declares it right.
void RedeclareConvTransposeSizes(ProgramDesc* program) {
  std::set<std::string> redone;
  for (size_t b = 0; b < program->Size(); ++b) {
    BlockDesc* block = program->MutableBlock(b);
    for (size_t i = 0; i < block->OpSize(); ++i) {
      OpDesc* op = block->Op(i);
      const bool deconv =
          op->type() == "conv2d_transpose" || op->type() == "depthwise_conv2d_transpose";
      if (deconv && op->Input("Input").size() == 1 && op->Output("Output").size() == 1) {
        auto attr_size = [&](const char* name) -> size_t {
          if (!op->HasAttr(name)) return 0;
          const auto* v = std::get_if<std::vector<int32_t>>(&op->GetAttr(name));
          return v ? v->size() : 0;
        };
        const bool sized = attr_size("output_size") > 0 || !op->Input("OutputSize").empty() ||
                           !op->Input("OutputSizeTensor").empty();
        VarDesc* x = block->FindVarRecursive(op->Input("Input")[0]);
        VarDesc* out = block->FindVarRecursive(op->Output("Output")[0]);
        if (sized || attr_size("output_padding") == 0 || !x || !out || x->shape().size() != 4 ||
            out->shape().size() != 4)
          continue;
        const auto* fmt = op->HasAttr("data_format")
                              ? std::get_if<std::string>(&op->GetAttr("data_format"))
                              : nullptr;
        const int first = fmt && *fmt == "NHWC" ? 1 : 2;
        std::vector<int64_t> dims = out->shape();
        bool changed = false;
        for (int a = first; a < first + 2; ++a)
          if (x->shape()[a] < 0 && dims[a] >= 0) {
            dims[a] = -1;
            changed = true;
          }
        if (changed) {
          out->set_shape(dims);
          redone.insert(out->name());
        }
        continue;
      }
      if (redone.empty()) continue;
      const auto ins = op->InputArgumentNames();
      if (std::none_of(ins.begin(), ins.end(),
                       [&](const std::string& n) { return redone.count(n); }))
        continue;
      const OpInfo* info = Registry::Global().FindOp(op->type());
      if (!info || !info->infer_shape) continue;
      const auto outs = op->OutputArgumentNames();
      try {
        InferShapeAtCompileTime(*info, *op, block);
      } catch (const Error&) {
        // An op whose compile-time inference wants known sizes: its results' sizes unknown
        // (the rank kept), as the run infers them.
        for (const auto& n : outs)
          if (VarDesc* v = block->FindVarRecursive(n); v && !v->shape().empty())
            v->set_shape(std::vector<int64_t>(v->shape().size(), -1));
      }
      redone.insert(outs.begin(), outs.end());
    }
  }
}

}  // namespace

void RepairLegacyPaddleProgram(ProgramDesc* program) {
  ListWhileReads(program);
  RenameOverwrittenValues(program);
  RedeclareUninferredRanks(program);
}

void RepairPirProgram(ProgramDesc* program) { RedeclareConvTransposeSizes(program); }

}  // namespace tide::core
