// rotary_embedding_op.cc: Paddle's fused_rotary_position_embedding (its
// incubate.nn.functional.fused_rotary_position_embedding; the GPU kernel in Paddle, none on its
// CPU) and its grad. q, and k and v where given, are [B, S, H, D] ([S, B, H, D] with time_major);
// each row of D values at position p is rotated by the angles of row p of sin / cos ([S, D] or
// [1, S, 1, D]; with position_ids [B, S], p is the id and the tables may hold more rows), each
// pair (i, j) of a row as out[i] = x[i] cos[i] - x[j] sin[i], out[j] = x[j] cos[j] + x[i] sin[j]:
//   rotate_half (use_neox_rotary_style false): j = i + D/2, for i < D/2;
//   pairs (use_neox_rotary_style true):        j = i + 1, for even i.
// Without sin / cos the angles are p / rotary_emb_base^(2 floor(i / 2) / D) (pairs only, as
// Paddle). The grad applies the transposed rotation. InferenceTranspiler makes the op of a
// rotate_half written out in ops (python/tide/transpiler/inference_passes/rotary.py).
#include <cmath>
#include <string>
#include <tide/low_precision.hpp>
#include <type_traits>
#include <vector>

#include "common.h"

namespace ops_nn {
namespace {

const char* const kRoped[] = {"q", "k", "v"};
const char* const kOuts[] = {"out_q", "out_k", "out_v"};

struct RopeGeom {
  int64_t b = 0, s = 0, h = 0, d = 0;
  bool time_major = false;
};

RopeGeom GeomOf(const char* op, const std::string& name, const Dims& q, bool time_major) {
  TIDE_CHECK(q.size() == 4, "op '", op, "': q ('", name, "') must be [B, S, H, D]",
             time_major ? " ([S, B, H, D] with time_major)" : "", ", got ", tide::ToString(q));
  RopeGeom g;
  g.time_major = time_major;
  g.b = time_major ? q[1] : q[0];
  g.s = time_major ? q[0] : q[1];
  g.h = q[2];
  g.d = q[3];
  TIDE_CHECK(g.d < 0 || g.d % 2 == 0, "op '", op, "': the head dim D of q ('", name,
             "') must be even, got ", g.d);
  return g;
}

// The rows of a sin / cos table, [rows, D] or [1, rows, 1, D].
int64_t TableRows(const char* op, const char* slot, const std::string& name, const Dims& t,
                  int64_t d) {
  const bool flat = t.size() == 2, padded = t.size() == 4 && t[0] == 1 && t[2] == 1;
  TIDE_CHECK((flat || padded) && t.back() == d, "op '", op, "': ", slot, " ('", name,
             "') must be [S, D] or [1, S, 1, D] with q's D = ", d, ", got ", tide::ToString(t));
  return flat ? t[0] : t[1];
}

void RopeInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims q = ctx.InputDims("q");
  const RopeGeom g = GeomOf(op, ctx.InputName("q"), q, ctx.Attr<bool>("time_major"));
  for (int i = 1; i < 3; ++i)
    if (ctx.HasInput(kRoped[i]))
      TIDE_CHECK(DimsCompatible(ctx.InputDims(kRoped[i]), q), "op '", op, "': ", kRoped[i], " ('",
                 ctx.InputName(kRoped[i]), "') must have q's dims ", tide::ToString(q), ", got ",
                 tide::ToString(ctx.InputDims(kRoped[i])));
  TIDE_CHECK(ctx.HasInput("sin") == ctx.HasInput("cos"), "op '", op,
             "': sin and cos come together (or neither: angles from rotary_emb_base)");
  if (ctx.HasInput("sin")) {
    const int64_t rows = TableRows(op, "sin", ctx.InputName("sin"), ctx.InputDims("sin"), g.d);
    TIDE_CHECK(ctx.InputDims("cos") == ctx.InputDims("sin"), "op '", op,
               "': cos must have sin's dims ", tide::ToString(ctx.InputDims("sin")), ", got ",
               tide::ToString(ctx.InputDims("cos")));
    TIDE_CHECK(ctx.HasInput("position_ids") || rows < 0 || g.s < 0 || rows == g.s, "op '", op,
               "': sin / cos must have q's S = ", g.s, " rows without position_ids, got ", rows);
  } else {
    TIDE_CHECK(ctx.Attr<bool>("use_neox_rotary_style"), "op '", op,
               "': rotate_half (use_neox_rotary_style false) takes sin and cos (Paddle computes "
               "the angles for the pairs style only)");
  }
  if (ctx.HasInput("position_ids"))
    TIDE_CHECK(DimsCompatible(ctx.InputDims("position_ids"), Dims{g.b, g.s}), "op '", op,
               "': position_ids must be [B, S] = [", g.b, ", ", g.s, "], got ",
               tide::ToString(ctx.InputDims("position_ids")));
  for (int i = 0; i < 3; ++i)
    if (ctx.HasInput(kRoped[i]) && ctx.HasOutput(kOuts[i])) {
      ctx.SetOutputDims(kOuts[i], ctx.InputDims(kRoped[i]));
      ctx.SetOutputDataType(kOuts[i], ctx.InputDataType(kRoped[i]));
    }
}

// The angles of each (batch, position) row: sin / cos rows of the tables given, or computed
// for the row's position (no table: position ids may be any size).
template <typename T>
class Angles {
 public:
  Angles(KernelContext& ctx, const RopeGeom& g) : g_(g) {
    const char* op = ctx.op_type();
    if (ctx.HasInput("position_ids")) {
      Tensor p = ctx.Input("position_ids");
      TIDE_CHECK(p.dtype() == TIDE_INT64 && p.numel() == g.b * g.s, "op '", op,
                 "': position_ids must be int64 [B, S] = [", g.b, ", ", g.s, "]");
      ids_ = p.data<int64_t>();
    }
    if (!ctx.HasInput("sin")) {
      base_ = ctx.Attr<float>("rotary_emb_base");
      for (int64_t i = 0; ids_ && i < g.b * g.s; ++i)
        TIDE_CHECK(ids_[i] >= 0, "op '", op, "': position id ", ids_[i], " at [", i / g.s, ", ",
                   i % g.s, "] is negative");
      return;
    }
    Tensor s = ctx.Input("sin"), c = ctx.Input("cos");
    const int64_t rows = TableRows(op, "sin", ctx.InputName("sin"), s.dims(), g.d);
    TIDE_CHECK(c.dims() == s.dims(), "op '", op, "': cos must have sin's dims ",
               tide::ToString(s.dims()), ", got ", tide::ToString(c.dims()));
    TIDE_CHECK(ids_ || rows == g.s, "op '", op, "': sin / cos must have q's S = ", g.s,
               " rows without position_ids, got ", rows);
    for (int64_t i = 0; ids_ && i < g.b * g.s; ++i)
      TIDE_CHECK(ids_[i] >= 0 && ids_[i] < rows, "op '", op, "': position id ", ids_[i], " at [",
                 i / g.s, ", ", i % g.s, "] is outside the ", rows, " rows of sin / cos");
    sin_ = s.data<T>();
    cos_ = c.data<T>();
  }
  // The cos and sin rows of token (bi, si): the tables', or computed into c_buf / s_buf (D each).
  void Row(int64_t bi, int64_t si, T* c_buf, T* s_buf, const T** c, const T** s) const {
    const int64_t pos = ids_ ? ids_[bi * g_.s + si] : si;
    if (sin_) {
      *c = cos_ + pos * g_.d;
      *s = sin_ + pos * g_.d;
      return;
    }
    for (int64_t i = 0; i < g_.d; ++i) {  // Paddle's: pos / base^(2 floor(i / 2) / D)
      const double a = double(pos) / std::pow(base_, double(i / 2 * 2) / double(g_.d));
      c_buf[i] = static_cast<T>(std::cos(a));
      s_buf[i] = static_cast<T>(std::sin(a));
    }
    *c = c_buf;
    *s = s_buf;
  }

 private:
  RopeGeom g_;
  const int64_t* ids_ = nullptr;
  const T *sin_ = nullptr, *cos_ = nullptr;
  double base_ = 0;
};

// The type the angles and the rotation are computed in: float32 for bfloat16 q (bfloat16
// inference: sin / cos stay float32, AsFloat32Param), q's own type else.
template <typename T>
using AngleType = std::conditional_t<std::is_same_v<T, tide::bfloat16>, float, T>;

// One row of D: the rotation (or, with `transposed`, its transpose: the grad).
template <typename T>
void RotateRow(const T* x, const T* c, const T* s, T* o, int64_t d, bool pairs, bool transposed) {
  const int64_t step = pairs ? 1 : d / 2;  // the partner of i (i + step) in each pair
  const int64_t n = pairs ? d : d / 2;
  for (int64_t i = 0; i < n; i += pairs ? 2 : 1) {
    const int64_t j = i + step;
    if (!transposed) {
      o[i] = x[i] * c[i] - x[j] * s[i];
      o[j] = x[j] * c[j] + x[i] * s[j];
    } else {
      o[i] = x[i] * c[i] + x[j] * s[j];
      o[j] = x[j] * c[j] - x[i] * s[i];
    }
  }
}

// outs[k] = the rotation of ins[k] for the tensors given, rows over the CPU pool.
template <typename T>
void Rotate(KernelContext& ctx, const char* const* ins, const char* const* outs, bool transposed) {
  const char* op = ctx.op_type();
  const std::string first = ins[0];
  Tensor q = ctx.Input(ins[0]);
  const RopeGeom g = GeomOf(op, ctx.InputName(ins[0]), q.dims(), ctx.Attr<bool>("time_major"));
  const bool pairs = ctx.Attr<bool>("use_neox_rotary_style");
  using A = AngleType<T>;
  const Angles<A> angles(ctx, g);  // rotate_half comes with tables: RopeInferShape checked it
  for (int k = 0; k < 3; ++k) {
    if (!ctx.HasInput(ins[k]) || !ctx.HasOutput(outs[k])) continue;
    Tensor x = ctx.Input(ins[k]);
    TIDE_CHECK(x.dims() == q.dims(), "op '", op, "': ", ins[k], " must have ", first, "'s dims ",
               tide::ToString(q.dims()), ", got ", tide::ToString(x.dims()));
    const T* xd = x.data<T>();
    T* od = ctx.Output(outs[k]).mutable_data<T>(x.dims(), ctx.place());
    // Rows in memory order: (b, s) or (s, b), then h; each (b, s) has one angle row.
    ParallelFor(ctx, g.b * g.s, g.h * g.d * 4, [&](int64_t r0, int64_t r1) {
      std::vector<A> c_buf(static_cast<size_t>(g.d)), s_buf(c_buf.size());
      std::vector<float> x_row, o_row;  // bfloat16 q: a row widened, and its rotation
      if constexpr (!std::is_same_v<A, T>) x_row.resize(c_buf.size()), o_row.resize(c_buf.size());
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t bi = g.time_major ? r % g.b : r / g.s, si = g.time_major ? r / g.b : r % g.s;
        const A *c = nullptr, *s = nullptr;
        angles.Row(bi, si, c_buf.data(), s_buf.data(), &c, &s);
        for (int64_t hi = 0; hi < g.h; ++hi) {
          const int64_t at = (r * g.h + hi) * g.d;
          if constexpr (std::is_same_v<A, T>) {
            RotateRow(xd + at, c, s, od + at, g.d, pairs, transposed);
          } else {  // float arithmetic, each value rounded once (as between two casts)
            tide::Bfloat16BitsToFloat(tide::Bits(xd + at), x_row.data(), g.d);
            RotateRow(x_row.data(), c, s, o_row.data(), g.d, pairs, transposed);
            tide::FloatToBfloat16Bits(o_row.data(), tide::Bits(od + at), g.d);
          }
        }
      }
    });
  }
}

template <typename T>
void RopeKernel(KernelContext& ctx) {
  Rotate<T>(ctx, kRoped, kOuts, false);
}

template <typename T>
void RopeGradKernel(KernelContext& ctx) {
  static const std::string gi[] = {GradVarName("out_q"), GradVarName("out_k"),
                                   GradVarName("out_v")};
  static const std::string go[] = {GradVarName("q"), GradVarName("k"), GradVarName("v")};
  const char* ins[] = {gi[0].c_str(), gi[1].c_str(), gi[2].c_str()};
  const char* outs[] = {go[0].c_str(), go[1].c_str(), go[2].c_str()};
  Rotate<T>(ctx, ins, outs, true);
}

tide::OpSchema RopeAttrs(tide::OpSchema s) {
  return s
      .Attr("use_neox_rotary_style", true,
            "true: adjacent pairs (2i, 2i + 1); false: rotate_half (i, i + D/2)")
      .Attr("time_major", false, "q, k, v are [S, B, H, D]")
      .Attr("rotary_emb_base", 10000.0f, "the angles' base without sin / cos");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(RopeAttrs(
    tide::OpSchema("fused_rotary_position_embedding")
        .Comment("Rotary position embedding of q (and k, v where given): each row of D "
                 "values rotated by the angles of its position (sin / cos, or computed).")
        .Input("q", "[B, S, H, D] ([S, B, H, D] with time_major), D even")
        .Input("k", "q's dims (optional)")
        .AsDispensable()
        .Input("v", "q's dims (optional)")
        .AsDispensable()
        .Input("sin", "[S, D] or [1, S, 1, D] (optional; with position_ids, rows by id)")
        .AsDispensable()
        .AsFloat32Param()  // float32 for bfloat16 q
        .Input("cos", "sin's dims (optional, with sin)")
        .AsDispensable()
        .AsFloat32Param()
        .Input("position_ids", "int64 [B, S]: the row of sin / cos of each token (optional)")
        .AsDispensable()
        .Output("out_q", "q rotated")
        .Output("out_k", "k rotated")
        .AsDispensable()
        .Output("out_v", "v rotated")
        .AsDispensable()
        .KernelDataTypeFrom("q")
        .InferShape(RopeInferShape)
        .Grad([](tide::GradMaker& g) {
          auto op = g.NewOp("fused_rotary_position_embedding_grad");
          for (const char* t : {"sin", "cos", "position_ids"}) op.Input(t, g.Input(t));
          for (int i = 0; i < 3; ++i) {
            op.Input(GradVarName(kOuts[i]), g.OutputGrad(kOuts[i]));
            op.Output(GradVarName(kRoped[i]), g.InputGrad(kRoped[i]));
          }
          op.CopyAttrs();
        })));
TIDE_REGISTER_OP(RopeAttrs(tide::OpSchema("fused_rotary_position_embedding_grad")
                               .Input("sin")
                               .AsDispensable()
                               .Input("cos")
                               .AsDispensable()
                               .Input("position_ids")
                               .AsDispensable()
                               .Input(GradVarName("out_q"))
                               .Input(GradVarName("out_k"))
                               .AsDispensable()
                               .Input(GradVarName("out_v"))
                               .AsDispensable()
                               .Output(GradVarName("q"))
                               .Output(GradVarName("k"))
                               .AsDispensable()
                               .Output(GradVarName("v"))
                               .AsDispensable()
                               .KernelDataTypeFrom(GradVarName("out_q"))
                               .InferShape([](tide::InferShapeContext& ctx) {
                                 for (int i = 0; i < 3; ++i) {
                                   const std::string in = GradVarName(kOuts[i]);
                                   const std::string out = GradVarName(kRoped[i]);
                                   if (!ctx.HasInput(in.c_str()) || !ctx.HasOutput(out.c_str()))
                                     continue;
                                   ctx.SetOutputDims(out.c_str(), ctx.InputDims(in.c_str()));
                                   ctx.SetOutputDataType(out.c_str(),
                                                         ctx.InputDataType(in.c_str()));
                                 }
                               })));
TIDE_REGISTER_KERNEL("fused_rotary_position_embedding", "cpu", RopeKernel, OPS_NN_FLOAT_TYPES,
                     tide::bfloat16);
TIDE_REGISTER_KERNEL("fused_rotary_position_embedding_grad", "cpu", RopeGradKernel,
                     OPS_NN_FLOAT_TYPES);
