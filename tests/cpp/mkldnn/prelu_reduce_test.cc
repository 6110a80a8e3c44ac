// prelu_reduce_test.cc: the oneDNN prelu kernel and its grad (prelu_kernel.cc) in modes all /
// channel / element, and the oneDNN reduce_sum / mean / max / min / prod kernels
// (reduce_kernel.cc), against float64 loops of Fluid's formulas, fed plain and blocked; the
// shapes each declines (reductions over leading dims, small inputs) run the plain kernels.
#include <functional>
#include <numeric>

#include "mkldnn_test_util.h"

namespace tide::test::mkldnn {
namespace {

int64_t Product(const std::vector<int64_t>& d) {
  return std::accumulate(d.begin(), d.end(), int64_t(1), std::multiplies<int64_t>());
}

// ---- prelu --------------------------------------------------------------------------------------
struct PreluCase {
  const char* name;
  std::string mode;
  std::vector<int64_t> x, alpha;
};

std::ostream& operator<<(std::ostream& os, const PreluCase& c) { return os << c.name; }

const PreluCase kPreluCases[] = {
    {"channel_4d", "channel", {4, 16, 16, 16}, {16}},
    {"channel_c3", "channel", {8, 3, 24, 24}, {3}},
    {"channel_2d", "channel", {128, 96}, {96}},
    {"channel_5d", "channel", {2, 8, 4, 16, 16}, {1, 8, 1, 1, 1}},
    {"all_4d", "all", {4, 16, 16, 16}, {1}},
    {"all_1d", "all", {10000}, {1}},
    {"element_4d", "element", {4, 16, 16, 16}, {16, 16, 16}},
    {"element_3d", "element", {8, 32, 48}, {1, 32, 48}},
};

// The Alpha index of element e (Fluid's rule, written out here).
int64_t AlphaIndex(const PreluCase& k, int64_t e) {
  const int64_t n = Product(k.x), sample = n / k.x[0];
  if (k.mode == "all") return 0;
  if (k.mode == "element") return e % sample;
  return (e / (sample / k.x[1])) % k.x[1];
}

// X with some exact zeros (Fluid: Out = Alpha * 0, dX = Alpha * dOut, no dAlpha).
TestTensor PreluX(const PreluCase& k, unsigned seed) {
  TestTensor x = Random(k.x, TIDE_FP32, -2, 2, seed);
  for (size_t i = 0; i < x.data.size(); i += 97) x.data[i] = 0;
  return x;
}

OneOp PreluOp(const PreluCase& k, const TestTensor& x, const TestTensor& alpha) {
  return OneOp("prelu")
      .Input("X", "x", x)
      .Input("Alpha", "alpha", alpha, /*blockable=*/false)
      .Output("Out", "out")
      .Attr("mode", k.mode);
}

class MkldnnPrelu : public ::testing::TestWithParam<PreluCase> {};

TEST_P(MkldnnPrelu, ForwardMatchesFloat64Reference) {
  const PreluCase& k = GetParam();
  const TestTensor x = PreluX(k, 41), alpha = Random(k.alpha, TIDE_FP32, -0.5, 1, 42);
  TestTensor want = x;
  for (size_t e = 0; e < x.data.size(); ++e)
    want.data[e] = x.data[e] > 0 ? x.data[e] : alpha.data[AlphaIndex(k, e)] * x.data[e];
  for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
    SCOPED_TRACE(FeedName(feed));
    Result got = PreluOp(k, x, alpha).MakeNet().Run({"out"}, /*mkldnn=*/true, feed);
    EXPECT_TRUE(RanMkldnn(got, "prelu"));
    EXPECT_TRUE(Close(got.values.at("out"), want, 1e-6, 1e-7));
    if (feed == InputLayout::kBlocked && k.mode != "element" && k.x.size() == 4 && k.x[1] % 8 == 0)
      EXPECT_EQ(got.layouts.at("out"), TIDE_LAYOUT_ONEDNN) << "Out keeps a blocked X's format";
  }
}

TEST_P(MkldnnPrelu, GradMatchesFloat64Reference) {
  const PreluCase& k = GetParam();
  const TestTensor x = PreluX(k, 43), alpha = Random(k.alpha, TIDE_FP32, -0.5, 1, 44);
  const TestTensor dout = Random(k.x, TIDE_FP32, -1, 1, 45);
  TestTensor dx = x, dalpha = alpha;
  std::fill(dalpha.data.begin(), dalpha.data.end(), 0.0);
  for (size_t e = 0; e < x.data.size(); ++e) {
    const int64_t a = AlphaIndex(k, e);
    dx.data[e] = x.data[e] > 0 ? dout.data[e] : alpha.data[a] * dout.data[e];
    if (x.data[e] <= 0) dalpha.data[a] += dout.data[e] * x.data[e];
  }
  for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
    SCOPED_TRACE(FeedName(feed));
    Net net = PreluOp(k, x, alpha).MakeNet();
    net.Backward("out", dout);
    Result got = net.Run({"x@GRAD", "alpha@GRAD"}, /*mkldnn=*/true, feed);
    EXPECT_TRUE(RanMkldnn(got, "prelu_grad"));
    EXPECT_EQ(got.layouts.at("x@GRAD"), TIDE_LAYOUT_ANY);
    EXPECT_TRUE(Close(got.values.at("x@GRAD"), dx, 1e-6, 1e-7));
    // dAlpha sums up to 16384 products: float32 accumulation error.
    EXPECT_TRUE(Close(got.values.at("alpha@GRAD"), dalpha, 1e-4, 1e-3));
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, MkldnnPrelu, ::testing::ValuesIn(kPreluCases),
                         [](const ::testing::TestParamInfo<PreluCase>& i) {
                           return std::string(i.param.name);
                         });

TEST(MkldnnPrelu, SmallXRunsThePlainKernels) {
  const PreluCase k{"small", "channel", {2, 16, 8, 8}, {16}};
  const TestTensor x = PreluX(k, 46), alpha = Random(k.alpha, TIDE_FP32, 0, 1, 47);
  Net net = PreluOp(k, x, alpha).MakeNet();
  net.Backward("out", Random(k.x, TIDE_FP32, -1, 1, 48));
  Result got = net.Run({"out", "x@GRAD"}, /*mkldnn=*/true);
  EXPECT_TRUE(RanPlain(got, "prelu"));
  EXPECT_TRUE(RanPlain(got, "prelu_grad"));
}

// ---- reduce_* -----------------------------------------------------------------------------------
struct ReduceCase {
  const char* name;
  std::vector<int64_t> x;
  std::vector<int32_t> dim;
  bool keep_dim, reduce_all;
  std::vector<int64_t> out;
};

std::ostream& operator<<(std::ostream& os, const ReduceCase& c) { return os << c.name; }

const ReduceCase kReduceCases[] = {
    {"rows", {32, 1024}, {1}, false, false, {32}},
    {"rows_keep_dim", {32, 1024}, {-1}, true, false, {32, 1}},
    {"spatial", {4, 8, 32, 32}, {2, 3}, false, false, {4, 8}},
    {"spatial_keep_dim", {4, 8, 32, 32}, {2, 3}, true, false, {4, 8, 1, 1}},
    {"all", {128, 128}, {0}, false, true, {1}},
    {"all_by_dims", {4, 64, 64}, {0, 1, 2}, true, false, {1, 1, 1}},
    // size-1 dims between or after the reduced ones do not break the trailing run
    {"ones_around", {16, 1, 1024, 1}, {2, 3}, false, false, {16, 1}},
    {"reduced_one_and_trailing", {16, 1, 1024}, {1, 2}, true, false, {16, 1, 1}},
};

struct Reducer {
  const char* op;
  double init;
  std::function<double(double, double)> combine;
  bool mean;
  double lo, hi, rtol;
};

const Reducer kReducers[] = {
    {"reduce_sum", 0, [](double a, double b) { return a + b; }, false, -1, 1, 1e-5},
    {"reduce_mean", 0, [](double a, double b) { return a + b; }, true, -1, 1, 1e-5},
    {"reduce_max", -1e300, [](double a, double b) { return std::max(a, b); }, false, -1, 1, 0},
    {"reduce_min", 1e300, [](double a, double b) { return std::min(a, b); }, false, -1, 1, 0},
    // values near 1 keep the product of up to 16384 of them finite
    {"reduce_prod", 1, [](double a, double b) { return a * b; }, false, 0.98, 1.02, 1e-4},
};

// Out of a reducer over the case's dims, in float64, as Out's dims list them.
TestTensor ReduceReference(const Reducer& r, const ReduceCase& k, const TestTensor& x) {
  const size_t rank = k.x.size();
  std::vector<bool> reduced(rank, k.reduce_all);
  for (int32_t d : k.dim) reduced[d < 0 ? d + rank : d] = true;
  std::vector<int64_t> keep(k.x);
  for (size_t i = 0; i < rank; ++i)
    if (reduced[i]) keep[i] = 1;
  const int64_t n_out = Product(keep), n = Product(k.x);
  std::vector<double> acc(n_out, r.init);
  std::vector<int64_t> index(rank, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t o = 0;
    for (size_t i = 0; i < rank; ++i) o = o * keep[i] + (reduced[i] ? 0 : index[i]);
    acc[o] = r.combine(acc[o], x.data[e]);
    for (size_t i = rank; i-- > 0;) {  // the next multi-index, row-major
      if (++index[i] < k.x[i]) break;
      index[i] = 0;
    }
  }
  if (r.mean)
    for (double& v : acc) v /= static_cast<double>(n / n_out);
  return Values(k.out, acc);
}

class MkldnnReduce : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(MkldnnReduce, EveryReducerMatchesFloat64Reference) {
  const ReduceCase& k = GetParam();
  for (const Reducer& r : kReducers) {
    SCOPED_TRACE(r.op);
    const TestTensor x = Random(k.x, TIDE_FP32, r.lo, r.hi, 51);
    const TestTensor want = ReduceReference(r, k, x);
    for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
      SCOPED_TRACE(FeedName(feed));
      Net net;
      net.Feed("x", x).Op(r.op, {{"X", {"x"}}}, {{"Out", {"out"}}},
                          {{"dim", k.dim}, {"keep_dim", k.keep_dim}, {"reduce_all", k.reduce_all}});
      Result got = net.Run({"out"}, /*mkldnn=*/true, feed);
      EXPECT_TRUE(RanMkldnn(got, r.op));
      EXPECT_EQ(got.layouts.at("out"), TIDE_LAYOUT_ANY);
      EXPECT_TRUE(Close(got.values.at("out"), want, r.rtol, 1e-5));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dims, MkldnnReduce, ::testing::ValuesIn(kReduceCases),
                         [](const ::testing::TestParamInfo<ReduceCase>& i) {
                           return std::string(i.param.name);
                         });

// Reductions over leading dims (oneDNN's reference loop), small X and short reduced runs
// (README.md, "Speed") run the plain kernel; the grad always does.
TEST(MkldnnReduce, DeclinedShapesAndGradsRunThePlainKernels) {
  const Reducer& sum = kReducers[0];
  const ReduceCase declined[] = {
      {"leading_dim", {64, 1024}, {0}, false, false, {1024}},
      {"middle_dim", {8, 64, 32}, {1}, false, false, {8, 32}},
      {"short_runs", {1024, 64}, {1}, false, false, {1024}},
      {"small", {8, 1024}, {1}, false, false, {8}},
  };
  for (const ReduceCase& k : declined) {
    SCOPED_TRACE(k.name);
    const TestTensor x = Random(k.x, TIDE_FP32, -1, 1, 52);
    Net net;
    net.Feed("x", x).Op("reduce_sum", {{"X", {"x"}}}, {{"Out", {"out"}}},
                        {{"dim", k.dim}, {"keep_dim", k.keep_dim}, {"reduce_all", false}});
    net.Backward("out", Random(k.out, TIDE_FP32, -1, 1, 53));
    Result got = net.Run({"out", "x@GRAD"}, /*mkldnn=*/true);
    EXPECT_TRUE(RanPlain(got, "reduce_sum"));
    EXPECT_TRUE(RanPlain(got, "reduce_sum_grad"));
    EXPECT_TRUE(Close(got.values.at("out"), ReduceReference(sum, k, x), 1e-5, 1e-5));
  }
}

}  // namespace
}  // namespace tide::test::mkldnn
