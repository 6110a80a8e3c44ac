// einsum_op.cc: Paddle's einsum (paddle.einsum with one or two operands; Paddle's Python splits
// longer ones into pairs) and its grad. The plan is Paddle's and opt_einsum's: each operand takes
// its diagonals (a label repeated in it) and sums away the labels used nowhere else, is laid out
// as [batch, free, contracted], one batched GEMM multiplies the two, and the product is permuted
// to the output's order. Labels are letters; "..." stands for the leading dims not named, which
// broadcast numpy-style (right-aligned; a size 1 meets any size, as any label's does). Of complex
// operands, each one's gradient is the real rule's with the other operand conjugated (common.h's
// convention); the forward conjugates nothing, as numpy and Paddle.
#include <algorithm>
#include <string>
#include <vector>

#include "common.h"
#include "gemm.h"

namespace ops_math {
namespace {

using tide::GradVarName;

constexpr int kMaxOperands = 2;
// Label ids: a letter is its character code; dim k of "..." (from the left) is kEllipsis + k.
constexpr int kEllipsis = 128;
constexpr int kNumLabelIds = kEllipsis + 64;

std::string LabelName(int label) {
  if (label < kEllipsis) return std::string("'") + static_cast<char>(label) + "'";
  return "'...' dim " + std::to_string(label - kEllipsis);
}

// One side of the equation, as written: its labels, with -1 where "..." stands.
std::vector<int> ParseTerm(const char* op, const std::string& eq, const std::string& term) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == '.') {
      TIDE_CHECK(term.compare(i, 3, "...") == 0, "op '", op, "': equation '", eq,
                 "' has a '.' outside an ellipsis '...' in '", term, "'");
      TIDE_CHECK(!ellipsis, "op '", op, "': equation '", eq, "' has two ellipses in '", term, "'");
      ellipsis = true;
      labels.push_back(-1);
      i += 2;
    } else {
      TIDE_CHECK((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'), "op '", op, "': equation '", eq,
                 "' has '", std::string(1, c), "' in '", term, "'; labels are letters");
      labels.push_back(c);
    }
  }
  return labels;
}

// The equation against its operands' dims (-1: unknown at compile time): every dim's label, the
// output's labels and each label's size.
struct EinsumPlan {
  std::vector<std::vector<int>> in;  // per operand, per dim: its label
  std::vector<int> out;              // per output dim: its label
  std::vector<int64_t> size;         // per label id: its size (-1 unknown), 0 when unused
  std::vector<bool> used;            // per label id: in some operand
  Dims OutDims() const {
    Dims d;
    for (int l : out) d.push_back(size[l]);
    return d;
  }
};

// A label's size from a dim of each operand: equal, or one is 1 (it broadcasts).
int64_t MergeSize(const char* op, int label, int64_t a, int64_t b, size_t ia, size_t ib) {
  if (a < 0) return b > 1 ? b : -1;
  if (b < 0) return a > 1 ? a : -1;
  TIDE_CHECK(a == b || a == 1 || b == 1, "op '", op, "': label ", LabelName(label), " has size ", a,
             " in Operands[", ia, "] but ", b, " in Operands[", ib, "]");
  return std::max(a, b);
}

EinsumPlan MakePlan(const char* op, std::string eq, const std::vector<Dims>& dims) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  TIDE_CHECK(!dims.empty() && dims.size() <= kMaxOperands, "op '", op,
             "': Operands must hold 1 or 2 tensors (Paddle's limit), got ", dims.size());
  const size_t arrow = eq.find("->");
  TIDE_CHECK(arrow == std::string::npos || eq.find("->", arrow + 2) == std::string::npos, "op '",
             op, "': equation '", eq, "' has more than one '->'");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back() += c;
  }
  TIDE_CHECK(terms.size() == dims.size(), "op '", op, "': equation '", eq, "' has ", terms.size(),
             " operand term(s) but Operands holds ", dims.size(), " tensor(s)");
  std::vector<std::vector<int>> written;
  int ellipsis_rank = 0;
  bool any_ellipsis = false;
  for (size_t i = 0; i < terms.size(); ++i) {
    written.push_back(ParseTerm(op, eq, terms[i]));
    const auto& w = written.back();
    const bool has_ellipsis = std::count(w.begin(), w.end(), -1) > 0;
    const int named = static_cast<int>(w.size()) - (has_ellipsis ? 1 : 0);
    const int rank = static_cast<int>(dims[i].size());
    if (has_ellipsis) {
      TIDE_CHECK(rank >= named, "op '", op, "': term '", terms[i], "' of equation '", eq,
                 "' names ", named, " dims, more than Operands[", i, "] ", tide::ToString(dims[i]),
                 " has");
      ellipsis_rank = std::max(ellipsis_rank, rank - named);
      any_ellipsis = true;
    } else {
      TIDE_CHECK(rank == named, "op '", op, "': term '", terms[i], "' of equation '", eq,
                 "' names ", named, " dims but Operands[", i, "] is ", tide::ToString(dims[i]));
    }
  }
  TIDE_CHECK(ellipsis_rank <= kNumLabelIds - kEllipsis, "op '", op, "': '...' covers ",
             ellipsis_rank, " dims, more than ", kNumLabelIds - kEllipsis);
  EinsumPlan p;
  p.size.assign(kNumLabelIds, 0);
  p.used.assign(kNumLabelIds, false);
  std::vector<int> count(kNumLabelIds, 0);
  std::vector<int> seen_in(kNumLabelIds, -1);  // the operand that sized the label so far
  for (size_t i = 0; i < written.size(); ++i) {
    const int rank = static_cast<int>(dims[i].size());
    std::vector<int> labels;
    for (int w : written[i]) {
      if (w >= 0) {
        labels.push_back(w);
        continue;
      }
      // This operand's "..." dims, right-aligned against the widest.
      const int e = rank - (static_cast<int>(written[i].size()) - 1);
      for (int k = 0; k < e; ++k) labels.push_back(kEllipsis + ellipsis_rank - e + k);
    }
    std::vector<int64_t> own(kNumLabelIds, -2);  // the label's size in this operand
    for (size_t d = 0; d < labels.size(); ++d) {
      const int l = labels[d];
      const int64_t s = dims[i][d];
      ++count[l];
      if (own[l] != -2) {
        TIDE_CHECK(own[l] < 0 || s < 0 || own[l] == s, "op '", op, "': label ", LabelName(l),
                   " repeats in term '", terms[i], "' with sizes ", own[l], " and ", s,
                   " (Operands[", i, "] ", tide::ToString(dims[i]), "); a diagonal needs one");
        if (own[l] < 0) own[l] = s;
        continue;
      }
      own[l] = s;
      if (!p.used[l]) {
        p.size[l] = s;
      } else {
        p.size[l] = MergeSize(op, l, p.size[l], s, seen_in[l], i);
      }
      p.used[l] = true;
      seen_in[l] = static_cast<int>(i);
    }
    p.in.push_back(labels);
  }
  if (arrow == std::string::npos) {  // implicit: "..." first, then the labels used once, sorted
    for (int k = 0; k < ellipsis_rank; ++k) p.out.push_back(kEllipsis + k);
    for (int l = 0; l < kEllipsis; ++l)
      if (count[l] == 1) p.out.push_back(l);
    return p;
  }
  const std::string rhs = eq.substr(arrow + 2);
  const std::vector<int> out = ParseTerm(op, eq, rhs);
  const bool out_ellipsis = std::count(out.begin(), out.end(), -1) > 0;
  TIDE_CHECK(out_ellipsis || !any_ellipsis, "op '", op, "': equation '", eq,
             "' has '...' in its operands but not in its output '", rhs, "'");
  std::vector<bool> in_out(kNumLabelIds, false);
  for (int w : out) {
    if (w < 0) {
      for (int k = 0; k < ellipsis_rank; ++k) p.out.push_back(kEllipsis + k);
      continue;
    }
    TIDE_CHECK(p.used[w], "op '", op, "': output label ", LabelName(w), " of equation '", eq,
               "' is in no operand");
    TIDE_CHECK(!in_out[w], "op '", op, "': output label ", LabelName(w), " of equation '", eq,
               "' repeats");
    in_out[w] = true;
    p.out.push_back(w);
  }
  return p;
}

std::vector<Dims> OperandDims(const std::vector<Tensor>& ts) {
  std::vector<Dims> d;
  for (const Tensor& t : ts) d.push_back(t.dims());
  return d;
}

// ---- strided walks ------------------------------------------------------------------------

// An operand seen through some of the plan's labels: per label, its size and the operand's
// stride along it (the sum of its dims' strides for a repeated label: the diagonal; 0 where the
// operand's dim is 1 and broadcasts, or where the operand lacks the label).
struct LabelView {
  std::vector<int64_t> size, stride;
};

std::vector<int64_t> LabelStrides(const EinsumPlan& p, size_t operand, const Dims& dims) {
  std::vector<int64_t> stride(kNumLabelIds, 0);
  int64_t s = 1;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    const int l = p.in[operand][d];
    if (dims[d] != 1 || p.size[l] == 1) stride[l] += s;
    s *= dims[d];
  }
  return stride;
}

LabelView ViewOf(const EinsumPlan& p, const std::vector<int64_t>& strides,
                 const std::vector<int>& labels) {
  LabelView v;
  for (int l : labels) {
    v.size.push_back(p.size[l]);
    v.stride.push_back(strides[l]);
  }
  return v;
}

// The offsets of every element of the view, row-major over its labels.
std::vector<int64_t> Offsets(const LabelView& v) {
  std::vector<int64_t> off(1, 0);
  for (size_t k = 0; k < v.size.size(); ++k) {
    std::vector<int64_t> next;
    next.reserve(off.size() * v.size[k]);
    for (int64_t o : off)
      for (int64_t i = 0; i < v.size[k]; ++i) next.push_back(o + i * v.stride[k]);
    off.swap(next);
  }
  return off;
}

// The contiguous strides of a layout of labels.
std::vector<int64_t> ContiguousStrides(const EinsumPlan& p, const std::vector<int>& labels) {
  std::vector<int64_t> stride(kNumLabelIds, 0);
  int64_t s = 1;
  for (int k = static_cast<int>(labels.size()) - 1; k >= 0; --k) {
    stride[labels[k]] = s;
    s *= p.size[labels[k]];
  }
  return stride;
}

// dst (contiguous over `keep`) = src summed over `sum`.
template <typename T>
void Gather(const T* src, const LabelView& keep, const LabelView& sum, T* dst) {
  const std::vector<int64_t> ko = Offsets(keep), so = Offsets(sum);
  for (size_t i = 0; i < ko.size(); ++i) {
    T s = T(0);
    for (int64_t o : so) s += src[ko[i] + o];
    dst[i] = s;
  }
}

// The adjoint of Gather: dsrc (zeroed by the caller) += ddst at every element summed into it.
template <typename T>
void ScatterAdd(const T* ddst, const LabelView& keep, const LabelView& sum, T* dsrc) {
  const std::vector<int64_t> ko = Offsets(keep), so = Offsets(sum);
  for (size_t i = 0; i < ko.size(); ++i)
    for (int64_t o : so) dsrc[ko[i] + o] += ddst[i];
}

// Whether the view reads the operand's elements in order, each once: then it is the data itself.
bool IsIdentity(const LabelView& v, const LabelView& sum, int64_t numel) {
  if (!sum.size.empty()) return false;
  int64_t s = 1;
  for (int k = static_cast<int>(v.size.size()) - 1; k >= 0; --k) {
    if (v.size[k] != 1 && v.stride[k] != s) return false;
    s *= v.size[k];
  }
  return s == numel;
}

// ---- the two-operand plan -----------------------------------------------------------------

// The labels of a pair of operands by their role: batch (in both and the output), free (in one
// and the output), contracted (in both, not the output), summed (in one only, not the output).
struct PairLayout {
  std::vector<int> batch, free[2], contracted, summed[2];
  int64_t nb = 1, m = 1, n = 1, k = 1;
};

PairLayout LayoutOf(const EinsumPlan& p) {
  PairLayout y;
  std::vector<bool> in[2] = {std::vector<bool>(kNumLabelIds, false),
                             std::vector<bool>(kNumLabelIds, false)};
  std::vector<bool> out(kNumLabelIds, false);
  for (int i = 0; i < 2; ++i)
    for (int l : p.in[i]) in[i][l] = true;
  for (int l : p.out) {
    out[l] = true;
    if (in[0][l] && in[1][l])
      y.batch.push_back(l);
    else
      y.free[in[0][l] ? 0 : 1].push_back(l);
  }
  for (int i = 0; i < 2; ++i)
    for (int l = 0; l < kNumLabelIds; ++l) {
      if (!in[i][l] || out[l]) continue;
      if (!in[1 - i][l])
        y.summed[i].push_back(l);
      else if (i == 0)
        y.contracted.push_back(l);
    }
  for (int l : y.batch) y.nb *= p.size[l];
  for (int l : y.free[0]) y.m *= p.size[l];
  for (int l : y.free[1]) y.n *= p.size[l];
  for (int l : y.contracted) y.k *= p.size[l];
  return y;
}

std::vector<int> Concat(std::initializer_list<const std::vector<int>*> parts) {
  std::vector<int> all;
  for (const auto* v : parts) all.insert(all.end(), v->begin(), v->end());
  return all;
}

// One operand as the GEMM's [batch, rows, cols] matrices (operand 0: [free, contracted],
// operand 1: [contracted, free]): its own data when it is laid out so, or transposed so
// (trans), else a gathered copy.
template <typename T>
struct MatrixOperand {
  const T* data;
  bool trans = false;
  std::vector<T> copy;
};

template <typename T>
void MakeMatrix(const EinsumPlan& p, const PairLayout& y, int i, const Tensor& t,
                MatrixOperand<T>* mo) {
  const std::vector<int64_t> strides = LabelStrides(p, i, t.dims());
  const std::vector<int>& rows = i == 0 ? y.free[0] : y.contracted;
  const std::vector<int>& cols = i == 0 ? y.contracted : y.free[1];
  const LabelView sum = ViewOf(p, strides, y.summed[i]);
  const LabelView plain = ViewOf(p, strides, Concat({&y.batch, &rows, &cols}));
  mo->data = t.data<T>();
  if (IsIdentity(plain, sum, t.numel())) return;
  if (IsIdentity(ViewOf(p, strides, Concat({&y.batch, &cols, &rows})), sum, t.numel())) {
    mo->trans = true;
    return;
  }
  mo->copy.resize(y.nb * (i == 0 ? y.m * y.k : y.k * y.n));
  Gather(t.data<T>(), plain, sum, mo->copy.data());
  mo->data = mo->copy.data();
}

// The operand's matrices conjugated, for the other operand's gradient (a copy; a real operand
// stays as it is). numel: how many values data points at.
template <typename T>
void Conjugate(MatrixOperand<T>* mo, int64_t numel) {
  if constexpr (kIsComplex<T>) {
    if (mo->copy.empty()) mo->copy.assign(mo->data, mo->data + numel);
    for (T& v : mo->copy) v = std::conj(v);
    mo->data = mo->copy.data();
  }
}

// ---- kernels ------------------------------------------------------------------------------

EinsumPlan PlanOf(const KernelContext& ctx, const std::vector<Tensor>& ops) {
  return MakePlan(ctx.op_type(), ctx.Attr<std::string>("equation"), OperandDims(ops));
}

template <typename T>
void EinsumKernel(KernelContext& ctx) {
  const std::vector<Tensor> ops = ctx.Inputs("Operands");
  const EinsumPlan p = PlanOf(ctx, ops);
  T* out = ctx.Output("Out").mutable_data<T>(p.OutDims(), ctx.place());
  for (size_t i = 0; i < ctx.OutputCount("XShape") && i < ops.size(); ++i)  // shapes only
    if (ctx.HasOutput("XShape", i))
      ctx.Output("XShape", i).mutable_data<T>(tide::ops::XShapeDims(ops[i].dims()), ctx.place());
  if (ops.size() == 1) {
    const std::vector<int64_t> strides = LabelStrides(p, 0, ops[0].dims());
    std::vector<int> rest;
    for (int l = 0; l < kNumLabelIds; ++l)
      if (p.used[l] && std::find(p.out.begin(), p.out.end(), l) == p.out.end()) rest.push_back(l);
    Gather(ops[0].data<T>(), ViewOf(p, strides, p.out), ViewOf(p, strides, rest), out);
    return;
  }
  const PairLayout y = LayoutOf(p);
  MatrixOperand<T> a, b;
  MakeMatrix(p, y, 0, ops[0], &a);
  MakeMatrix(p, y, 1, ops[1], &b);
  // The product is [batch, free 0, free 1]: the output itself when that is its order.
  const std::vector<int> prod_labels = Concat({&y.batch, &y.free[0], &y.free[1]});
  std::vector<T> prod;
  T* c = out;
  if (prod_labels != p.out) {
    prod.resize(y.nb * y.m * y.n);
    c = prod.data();
  }
  for (int64_t i = 0; i < y.nb; ++i)
    Gemm<T>(ctx, a.trans, b.trans, y.m, y.n, y.k, T(1), a.data + i * y.m * y.k,
            b.data + i * y.k * y.n, T(0), c + i * y.m * y.n);
  if (c != out) Gather(c, ViewOf(p, ContiguousStrides(p, prod_labels), p.out), LabelView(), out);
}

// Operands@GRAD[i], zeroed, or null where that operand takes no gradient.
template <typename T>
T* ZeroedGrad(KernelContext& ctx, size_t i, const Tensor& x) {
  const std::string name = GradVarName("Operands");
  if (i >= ctx.OutputCount(name.c_str()) || !ctx.HasOutput(name.c_str(), i)) return nullptr;
  T* g = ctx.Output(name.c_str(), i).mutable_data<T>(x.dims(), ctx.place());
  std::fill(g, g + x.numel(), T(0));
  return g;
}

template <typename T>
void EinsumGradKernel(KernelContext& ctx) {
  const std::vector<Tensor> ops = ctx.Inputs("Operands");
  const EinsumPlan p = PlanOf(ctx, ops);
  const Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), p.OutDims());
  const T* g = dout.data<T>();
  if (ops.size() == 1) {
    T* dx = ZeroedGrad<T>(ctx, 0, ops[0]);
    if (!dx) return;
    const std::vector<int64_t> strides = LabelStrides(p, 0, ops[0].dims());
    std::vector<int> rest;
    for (int l = 0; l < kNumLabelIds; ++l)
      if (p.used[l] && std::find(p.out.begin(), p.out.end(), l) == p.out.end()) rest.push_back(l);
    ScatterAdd(g, ViewOf(p, strides, p.out), ViewOf(p, strides, rest), dx);
    return;
  }
  const PairLayout y = LayoutOf(p);
  MatrixOperand<T> mat[2];
  for (int i = 0; i < 2; ++i) {
    MakeMatrix(p, y, i, ops[i], &mat[i]);
    Conjugate(&mat[i], ops[i].numel());
  }
  // Out@GRAD as the product's [batch, free 0, free 1].
  const std::vector<int> prod_labels = Concat({&y.batch, &y.free[0], &y.free[1]});
  std::vector<T> dprod;
  if (prod_labels != p.out) {
    dprod.resize(y.nb * y.m * y.n);
    Gather(g, ViewOf(p, ContiguousStrides(p, p.out), prod_labels), LabelView(), dprod.data());
    g = dprod.data();
  }
  for (int i = 0; i < 2; ++i) {
    T* dx = ZeroedGrad<T>(ctx, i, ops[i]);
    if (!dx) continue;
    // d[batch, free 0, contracted] = dProd B^T; d[batch, contracted, free 1] = A^T dProd.
    const MatrixOperand<T>& other = mat[1 - i];
    const int64_t rows = i == 0 ? y.m : y.k, cols = i == 0 ? y.k : y.n;
    std::vector<T> dmat(y.nb * rows * cols);
    for (int64_t b = 0; b < y.nb; ++b) {
      const T* gb = g + b * y.m * y.n;
      T* db = dmat.data() + b * rows * cols;
      if (i == 0)
        Gemm<T>(ctx, false, !other.trans, y.m, y.k, y.n, T(1), gb, other.data + b * y.k * y.n, T(0),
                db);
      else
        Gemm<T>(ctx, !other.trans, false, y.k, y.n, y.m, T(1), other.data + b * y.m * y.k, gb, T(0),
                db);
    }
    const std::vector<int64_t> strides = LabelStrides(p, i, ops[i].dims());
    const std::vector<int>& r = i == 0 ? y.free[0] : y.contracted;
    const std::vector<int>& c = i == 0 ? y.contracted : y.free[1];
    ScatterAdd(dmat.data(), ViewOf(p, strides, Concat({&y.batch, &r, &c})),
               ViewOf(p, strides, y.summed[i]), dx);
  }
}

// ---- shape inference ----------------------------------------------------------------------

void EinsumInferShape(tide::InferShapeContext& ctx) {
  const std::vector<Dims> dims = ctx.InputsDims("Operands");
  for (size_t i = 1; i < dims.size(); ++i)
    TIDE_CHECK(ctx.InputDataType("Operands", i) == ctx.InputDataType("Operands", 0), "op '",
               ctx.op_type(), "': Operands[", i, "] is ",
               tide::DataTypeName(ctx.InputDataType("Operands", i)), " but Operands[0] is ",
               tide::DataTypeName(ctx.InputDataType("Operands", 0)));
  const EinsumPlan p = MakePlan(ctx.op_type(), ctx.Attr<std::string>("equation"), dims);
  ctx.SetOutputDims("Out", p.OutDims());
  ctx.SetOutputDataType("Out", ctx.InputDataType("Operands"));
  for (size_t i = 0; i < ctx.OutputCount("XShape") && i < dims.size(); ++i) {
    ctx.SetOutputDims("XShape", tide::ops::XShapeDims(dims[i]), i);
    ctx.SetOutputDataType("XShape", ctx.InputDataType("Operands", i), i);
  }
  for (size_t i = 0; i < ctx.OutputCount("InnerCache"); ++i) {
    ctx.SetOutputDims("InnerCache", {0}, i);
    ctx.SetOutputDataType("InnerCache", ctx.InputDataType("Operands"), i);
  }
}

void EinsumGradInferShape(tide::InferShapeContext& ctx) {
  const std::string g = GradVarName("Operands");
  for (size_t i = 0; i < ctx.OutputCount(g.c_str()); ++i) {
    ctx.SetOutputDims(g.c_str(), ctx.InputDims("Operands", i), i);
    ctx.SetOutputDataType(g.c_str(), ctx.InputDataType("Operands", i), i);
  }
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("einsum")
                     .Comment("Out = the Einstein summation of Operands by `equation` "
                              "(paddle.einsum): one or two operands, '...' broadcasting, "
                              "diagonals, implicit output.")
                     .Input("Operands", "1 or 2 tensors of one type")
                     .AsDuplicable()
                     .Output("Out", "the output's labels' sizes")
                     .Output("InnerCache", "Paddle's cache for its grad (empty here)")
                     .AsDuplicable()
                     .AsDispensable()
                     .AsIntermediate()
                     .Output("XShape", "[0] + each operand's dims (no data)")
                     .AsDuplicable()
                     .AsDispensable()
                     .AsIntermediate()
                     .Attr("equation", std::string(""), "e.g. 'bhqd,bhkd->bhqk'")
                     .KernelDataTypeFrom("Operands")
                     .InferShape(EinsumInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("einsum_grad")
                           .Input("Operands", g.Input("Operands"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("Operands"), g.InputGrad("Operands"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("einsum_grad")
                     .Input("Operands")
                     .AsDuplicable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("Operands"))
                     .AsDuplicable()
                     .Attr("equation", std::string(""))
                     .KernelDataTypeFrom("Operands")
                     .InferShape(EinsumGradInferShape));
// complex64 / complex128: no operand is conjugated, as in Paddle and numpy (the grad conjugates
// the other operand, by the gradient convention).
TIDE_REGISTER_KERNEL("einsum", "cpu", EinsumKernel, OPS_MATH_FLOAT_TYPES, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("einsum_grad", "cpu", EinsumGradKernel, OPS_MATH_FLOAT_TYPES,
                     OPS_MATH_COMPLEX_TYPES);
