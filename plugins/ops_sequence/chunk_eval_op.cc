// chunk_eval_op.cc: chunk_eval (Fluid 1.x): precision, recall and F1 of the chunks (e.g. named
// entities) found in a tag sequence against those of the label sequence, for the IOB, IOE, IOBES
// and plain tagging schemes. A tag value v encodes chunk type v / K and tag v % K (K tags per
// scheme: B/I, I/E, B/I/E/S or one); v = num_chunk_types * K is "outside" (O). A chunk counts as
// correct when the inference has one with the same begin, end and type.
#include <set>
#include <string>
#include <vector>

#include "common.h"

namespace ops_sequence {
namespace {

// A scheme's tag positions within a chunk type (-1: the scheme has no such tag).
struct Scheme {
  int64_t num_tags, begin, inside, end, single;
};

Scheme SchemeOf(const char* op, const std::string& name) {
  if (name == "IOB") return {2, 0, 1, -1, -1};
  if (name == "IOE") return {2, -1, 0, 1, -1};
  if (name == "IOBES") return {4, 0, 1, 2, 3};
  if (name == "plain") return {1, -1, -1, -1, -1};
  TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op,
             "': chunk_scheme must be IOB, IOE, IOBES or plain, got '", name, "'");
}

struct Chunk {
  int64_t begin, end, type;  // [begin, end], inclusive as in Fluid
  bool operator==(const Chunk& o) const {
    return begin == o.begin && end == o.end && type == o.type;
  }
};

// Does the chunk of (prev_tag, prev_type) end before a token of (tag, type)?
bool EndsBefore(const Scheme& s, int64_t other, int64_t prev_tag, int64_t prev_type, int64_t tag,
                int64_t type) {
  if (prev_type == other) return false;
  if (type == other || type != prev_type) return true;
  if (prev_tag == s.begin || prev_tag == s.inside) return tag == s.begin || tag == s.single;
  return prev_tag == s.end || prev_tag == s.single;
}

// Does a token of (tag, type) after one of (prev_tag, prev_type) start a chunk?
bool StartsAt(const Scheme& s, int64_t other, int64_t prev_tag, int64_t prev_type, int64_t tag,
              int64_t type) {
  if (prev_type == other) return type != other;
  if (type == other) return false;
  if (type != prev_type) return true;
  if (tag == s.begin || tag == s.single) return true;
  if (tag == s.inside || tag == s.end) return prev_tag == s.end || prev_tag == s.single;
  return false;
}

struct Config {
  Scheme scheme;
  int64_t num_types;  // also the "outside" type
  std::set<int64_t> excluded;
};

// The chunks of one sequence of tag values v[0, len) of input `param`.
std::vector<Chunk> Chunks(const KernelContext& ctx, const char* param, const Config& c,
                          const int64_t* v, int64_t len, int64_t offset) {
  const int64_t K = c.scheme.num_tags, limit = c.num_types * K;
  std::vector<Chunk> out;
  bool in_chunk = false;
  int64_t start = 0, tag = -1, type = c.num_types;
  for (int64_t i = 0; i < len; ++i) {
    TIDE_CHECK(v[i] >= 0 && v[i] <= limit, "op '", ctx.op_type(), "': ", param, " ('",
               ctx.InputName(param), "') holds ", v[i], " at step ", offset + i,
               ", outside [0, num_chunk_types * tags per chunk = ", limit, "] (", limit,
               " is the outside tag)");
    const int64_t prev_tag = tag, prev_type = type;
    tag = v[i] % K;
    type = v[i] / K;
    if (in_chunk && EndsBefore(c.scheme, c.num_types, prev_tag, prev_type, tag, type)) {
      out.push_back({start, i - 1, prev_type});
      in_chunk = false;
    }
    if (StartsAt(c.scheme, c.num_types, prev_tag, prev_type, tag, type)) {
      start = i;
      in_chunk = true;
    }
  }
  if (in_chunk) out.push_back({start, len - 1, type});
  return out;
}

struct Counts {
  int64_t infer = 0, label = 0, correct = 0;
};

void EvalSequence(const KernelContext& ctx, const Config& c, const int64_t* infer,
                  const int64_t* label, int64_t len, int64_t offset, Counts* n) {
  const std::vector<Chunk> a = Chunks(ctx, "Inference", c, infer, len, offset);
  const std::vector<Chunk> b = Chunks(ctx, "Label", c, label, len, offset);
  auto kept = [&](const Chunk& ch) { return c.excluded.count(ch.type) == 0; };
  // Both lists are ordered by end: walk them together.
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j] && kept(a[i])) ++n->correct;
    if (a[i].end < b[j].end) {
      ++i;
    } else if (a[i].end > b[j].end) {
      ++j;
    } else {
      ++i;
      ++j;
    }
  }
  for (const Chunk& ch : a) n->infer += kept(ch) ? 1 : 0;
  for (const Chunk& ch : b) n->label += kept(ch) ? 1 : 0;
}

// Inference and Label: int64 [N, 1] (or [N]) with one equal one-level LoD, or padded [S, T]
// (or [S, T, 1]) with SeqLength [S].
void ChunkEvalKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Config c;
  c.scheme = SchemeOf(op, ctx.Attr<std::string>("chunk_scheme"));
  c.num_types = ctx.Attr<int32_t>("num_chunk_types");
  TIDE_CHECK(c.num_types > 0, "op '", op, "': num_chunk_types must be > 0, got ", c.num_types);
  for (int32_t t : ctx.Attr<std::vector<int32_t>>("excluded_chunk_types")) c.excluded.insert(t);
  Tensor infer = ctx.Input("Inference"), label = ctx.Input("Label");
  for (const char* p : {"Inference", "Label"})
    TIDE_CHECK(ctx.Input(p).dtype() == TIDE_INT64, "op '", op, "': ", p, " ('", ctx.InputName(p),
               "') must be int64, got ", tide::DataTypeName(ctx.Input(p).dtype()));
  TIDE_CHECK(infer.dims() == label.dims(), "op '", op, "': Inference ('",
             ctx.InputName("Inference"), "') ", tide::ToString(infer.dims()), " and Label ('",
             ctx.InputName("Label"), "') ", tide::ToString(label.dims()),
             " must have the same dims");
  const int64_t* iv = infer.data<int64_t>();
  const int64_t* lv = label.data<int64_t>();
  Counts n;
  if (ctx.HasInput("SeqLength")) {
    const Dims d = infer.dims();
    TIDE_CHECK(d.size() == 2 || (d.size() == 3 && d[2] == 1), "op '", op,
               "': with SeqLength, Inference ('", ctx.InputName("Inference"),
               "') must be padded [batch, max_len] or [batch, max_len, 1], got ",
               tide::ToString(d));
    Tensor lens = ctx.Input("SeqLength");
    TIDE_CHECK(lens.dtype() == TIDE_INT64 && lens.numel() == d[0], "op '", op, "': SeqLength ('",
               ctx.InputName("SeqLength"), "') must hold ", d[0], " int64 lengths, got ",
               tide::DataTypeName(lens.dtype()), " ", tide::ToString(lens.dims()));
    const int64_t* len = lens.data<int64_t>();
    for (int64_t s = 0; s < d[0]; ++s) {
      TIDE_CHECK(len[s] >= 0 && len[s] <= d[1], "op '", op, "': SeqLength ('",
                 ctx.InputName("SeqLength"), "')[", s, "] = ", len[s], " is outside [0, ", d[1],
                 "]");
      EvalSequence(ctx, c, iv + s * d[1], lv + s * d[1], len[s], s * d[1], &n);
    }
  } else {
    const Dims d = infer.dims();
    TIDE_CHECK(d.size() == 1 || (d.size() == 2 && d[1] == 1), "op '", op, "': Inference ('",
               ctx.InputName("Inference"), "') must be [N, 1] (or padded with SeqLength), got ",
               tide::ToString(d));
    const LoD lod = InputLoD(ctx, "Label", 1);
    const LoD ilod = infer.lod();
    TIDE_CHECK(ilod == lod, "op '", op, "': Inference ('", ctx.InputName("Inference"),
               "') has LoD ", LoDString(ilod), ", Label ('", ctx.InputName("Label"), "') ",
               LoDString(lod), "; they must be the same");
    const Level& level = lod[0];
    for (size_t s = 0; s + 1 < level.size(); ++s) {
      const int64_t b = static_cast<int64_t>(level[s]);
      EvalSequence(ctx, c, iv + b, lv + b, static_cast<int64_t>(level[s + 1]) - b, b, &n);
    }
  }
  const float p = n.infer ? static_cast<float>(n.correct) / static_cast<float>(n.infer) : 0.0f;
  const float r = n.label ? static_cast<float>(n.correct) / static_cast<float>(n.label) : 0.0f;
  *ctx.Output("Precision").mutable_data<float>({1}, ctx.place()) = p;
  *ctx.Output("Recall").mutable_data<float>({1}, ctx.place()) = r;
  *ctx.Output("F1-Score").mutable_data<float>({1}, ctx.place()) =
      n.correct ? 2.0f * p * r / (p + r) : 0.0f;
  *ctx.Output("NumInferChunks").mutable_data<int64_t>({1}, ctx.place()) = n.infer;
  *ctx.Output("NumLabelChunks").mutable_data<int64_t>({1}, ctx.place()) = n.label;
  *ctx.Output("NumCorrectChunks").mutable_data<int64_t>({1}, ctx.place()) = n.correct;
}

template <typename T>
void ChunkEval(KernelContext& ctx) {
  ChunkEvalKernel(ctx);
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("chunk_eval")
        .NoGradient()
        .Comment("Chunk-level precision, recall and F1 (Fluid 1.x) of Inference's chunks against "
                 "Label's, both int64 tag values encoding type * K + tag (K = 2 for IOB/IOE, 4 for "
                 "IOBES, 1 for plain); num_chunk_types * K is outside any chunk. Chunks of "
                 "excluded_chunk_types are not counted.")
        .Input("Inference",
               "int64 predicted tags: [N, 1] with a one-level LoD, or [S, T] with SeqLength")
        .Input("Label", "int64 true tags, Inference's dims and LoD")
        .Input("SeqLength", "int64 [S]: each padded sequence's length")
        .AsDispensable()
        .Output("Precision", "float32 [1]: NumCorrectChunks / NumInferChunks (0 when none)")
        .Output("Recall", "float32 [1]: NumCorrectChunks / NumLabelChunks (0 when none)")
        .Output("F1-Score", "float32 [1]: 2PR / (P + R) (0 when nothing is correct)")
        .Output("NumInferChunks", "int64 [1]: chunks in Inference")
        .Output("NumLabelChunks", "int64 [1]: chunks in Label")
        .Output("NumCorrectChunks", "int64 [1]: chunks of Inference that are in Label")
        .RequiredAttr("num_chunk_types", TIDE_ATTR_INT, "the number of chunk types")
        .GreaterThan(0)
        .Attr("chunk_scheme", std::string("IOB"), "the tagging scheme")
        .InSet({"IOB", "IOE", "IOBES", "plain"})
        .Attr("excluded_chunk_types", std::vector<int32_t>{}, "chunk types not counted")
        .KernelDataTypeFrom("Inference")
        .InferShape([](tide::InferShapeContext& c) {
          const char* op = c.op_type();
          const Dims a = c.InputDims("Inference"), b = c.InputDims("Label");
          TIDE_CHECK(a.size() == b.size(), "op '", op, "': Inference ('", c.InputName("Inference"),
                     "') ", tide::ToString(a), " and Label ('", c.InputName("Label"), "') ",
                     tide::ToString(b), " must have the same rank");
          for (const char* o : {"Precision", "Recall", "F1-Score"}) {
            c.SetOutputDims(o, {1});
            c.SetOutputDataType(o, TIDE_FP32);
          }
          for (const char* o : {"NumInferChunks", "NumLabelChunks", "NumCorrectChunks"}) {
            c.SetOutputDims(o, {1});
            c.SetOutputDataType(o, TIDE_INT64);
          }
        }));
TIDE_REGISTER_KERNEL("chunk_eval", "cpu", ChunkEval, int64_t);
