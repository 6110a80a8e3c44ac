// mkldnn_test_util.h: what the oneDNN kernel tests need beyond OpTester. OpTester runs the
// plain reference (the ops_math / ops_nn kernels); Net runs the same ops (or a chain of them)
// with use_mkldnn = true through the real executor, feeding inputs either plain or already in a
// blocked oneDNN layout (converted by the plugin's NCHW -> ONEDNN transform), reads back the
// fetched tensors (a blocked one through the plugin's ONEDNN -> NCHW transform), and reports
// which kernel every op ran, how many layout transforms the core made and which oneDNN primitives
// ran (from oneDNN's verbose output), so tests can assert the absence of needless reorders
// whatever formats oneDNN picks for the machine's ISA. Header-only.
#pragma once

#include <dnnl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/executor/executor.h"
#include "core/host/initialize.h"
#include "core/passes/grad_op_maker.h"
#include "core/platform/status.h"
#include "core/plugin/c_handles.h"
#include "core/registry/registry.h"
#include "one_op_program.h"
#include "op_tester.h"

namespace tide::test::mkldnn {

// How the oneDNN run's inputs are fed: as plain data, or converted to a blocked layout.
enum class InputLayout { kPlain, kBlocked };

inline const char* FeedName(InputLayout f) {
  return f == InputLayout::kPlain ? "plain" : "blocked";
}

// Whether a blockable input of this rank is fed blocked (Net::Run converts ranks 3 to 5).
inline bool FedBlocked(InputLayout f, size_t rank) {
  return f == InputLayout::kBlocked && rank >= 3 && rank <= 5;
}

// Applies the registered cpu layout transform `from` -> `to` to `in`.
inline core::LoDTensor Transform(const core::LoDTensor& in, TideLayout from, TideLayout to) {
  const core::TransformEntry* e =
      core::Registry::Global().FindLayoutTransform(core::PlaceKindId("cpu"), from, to);
  if (!e)
    throw std::runtime_error(std::string("no cpu layout transform ") + core::LayoutName(from) +
                             " -> " + core::LayoutName(to));
  core::LoDTensor out;
  out.Resize(in.dims());
  core::DeviceContext* dctx = core::DeviceContextPool::Global().Get(core::Place("cpu", 0));
  core::ThrowIfStatus(e->fn(core::Wrap(&in), core::Wrap(&out), core::Wrap(dctx), e->user_data),
                      "layout transform", e->plugin_file);
  return out;
}

struct Result {
  std::map<std::string, TestTensor> values;   // plain values of the fetched variables
  std::map<std::string, TideLayout> layouts;  // their layouts as fetched
  std::vector<std::pair<std::string, core::OpKernelType>> kernels;  // (op type, kernel run)
  core::TransformCounts counts;  // layout transforms etc. the core made in the run
  // The oneDNN primitives the last run executed, in order ("convolution", "reorder", ...):
  // kernels' own reorders and the core's layout transforms (oneDNN reorders too) alike.
  std::vector<std::string> dnnl_execs;
  std::vector<std::string> dnnl_impls;  // each exec's implementation ("jit_fp32_wino_2x3:...")

  // How many of dnnl_execs are `kind`, among those in [from, to).
  int DnnlCount(const std::string& kind, size_t from = 0, size_t to = SIZE_MAX) const {
    const size_t end = std::min(to, dnnl_execs.size());
    if (from >= end) return 0;
    return static_cast<int>(std::count(dnnl_execs.begin() + from, dnnl_execs.begin() + end, kind));
  }
  // The index of the first dnnl_execs entry that is `kind`, or dnnl_execs.size().
  size_t DnnlFind(const std::string& kind) const {
    return std::find(dnnl_execs.begin(), dnnl_execs.end(), kind) - dnnl_execs.begin();
  }
};

// Runs `fn` with oneDNN's verbose mode on and returns the primitive kind of every "exec" line it
// printed (oneDNN prints them to stdout); `impls`, when given, gets each one's implementation.
template <typename Fn>
std::vector<std::string> RecordDnnlExecs(Fn&& fn, std::vector<std::string>* impls = nullptr) {
  ::testing::internal::CaptureStdout();
  dnnl_set_verbose(1);
  try {
    fn();
  } catch (...) {
    dnnl_set_verbose(0);
    ::testing::internal::GetCapturedStdout();
    throw;
  }
  dnnl_set_verbose(0);
  std::istringstream out(::testing::internal::GetCapturedStdout());
  std::vector<std::string> kinds;
  for (std::string line; std::getline(out, line);) {
    // onednn_verbose,exec,cpu,<primitive kind>,<implementation>,...
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; f.size() < 5 && std::getline(fields, x, ',');) f.push_back(x);
    if (f.size() < 4 || f[1] != "exec") continue;
    kinds.push_back(f[3]);
    if (impls) impls->push_back(f.size() == 5 ? f[4] : "");
  }
  return kinds;
}

// True when every op of type `type` in `r` ran kernel `want` (and at least one such op ran).
inline ::testing::AssertionResult RanKernel(const Result& r, const std::string& type,
                                            const core::OpKernelType& want) {
  int seen = 0;
  for (const auto& [t, key] : r.kernels) {
    if (t != type) continue;
    ++seen;
    if (key != want)
      return ::testing::AssertionFailure()
             << "op '" << type << "' ran kernel " << key.ToString() << ", not " << want.ToString();
  }
  if (!seen) return ::testing::AssertionFailure() << "no op '" << type << "' ran";
  return ::testing::AssertionSuccess();
}

// The {cpu, float32, ONEDNN, mkldnn} kernel.
inline ::testing::AssertionResult RanMkldnn(const Result& r, const std::string& type) {
  return RanKernel(
      r, type,
      {core::PlaceKindId("cpu"), TIDE_FP32, TIDE_LAYOUT_ONEDNN, core::LibraryId("mkldnn")});
}

// The plain {cpu, float32, ANY} kernel: what runs after a oneDNN kernel declines.
inline ::testing::AssertionResult RanPlain(const Result& r, const std::string& type) {
  return RanKernel(r, type, {core::PlaceKindId("cpu"), TIDE_FP32, TIDE_LAYOUT_ANY, 0});
}

// A program of ops in one block: fed variables, ops in order, optionally their grad ops.
class Net {
 public:
  Net() { core::Initialize(); }

  // `blockable`: in a InputLayout::kBlocked run, fed through the NCHW -> ONEDNN transform.
  Net& Feed(const std::string& var, TestTensor t, bool blockable = true) {
    feeds_[var] = std::move(t);
    blockable_[var] = blockable;
    return *this;
  }
  Net& Op(std::string type, core::VariableNameMap ins, core::VariableNameMap outs,
          core::AttributeMap attrs = {}) {
    steps_.push_back(
        core::OpDesc(std::move(type), std::move(ins), std::move(outs), std::move(attrs)));
    return *this;
  }
  // The last run records the oneDNN primitives it executes (Result::dnnl_execs). It captures
  // stdout, so only one thread at a time may run a Net that records.
  Net& RecordingDnnl() {
    record_dnnl_ = true;
    return *this;
  }
  // After the forward ops, their grad ops in reverse order, with out@GRAD fed as `dout`.
  Net& Backward(const std::string& out, TestTensor dout) {
    backward_out_ = out;
    Feed(core::GradVarName(out), std::move(dout));
    return *this;
  }

  core::ProgramDesc Build(bool mkldnn) const {
    core::ProgramDesc prog;
    core::BlockDesc* b = prog.MutableBlock(0);
    DeclareFeeds(b, feeds_);
    std::vector<core::OpDesc> fwd;
    for (core::OpDesc op : steps_) {
      if (mkldnn) op.SetAttr("use_mkldnn", true);
      fwd.push_back(*AppendChecked(b, op));
    }
    if (!backward_out_.empty())
      for (auto it = fwd.rbegin(); it != fwd.rend(); ++it)
        for (core::OpDesc g : core::MakeGradOps(*it, {})) {
          if (mkldnn) g.SetAttr("use_mkldnn", true);
          AppendChecked(b, g);
        }
    return prog;
  }

  Result Run(const std::vector<std::string>& fetch, bool mkldnn,
             InputLayout feed = InputLayout::kPlain, int runs = 1) const {
    core::ProgramDesc prog = Build(mkldnn);
    // Fetched variables live in `scope` so their own layout can be checked (fetch results are
    // always converted to a plain layout).
    for (const auto& f : fetch)
      if (core::VarDesc* v = prog.MutableBlock(0)->FindVar(f)) v->set_persistable(true);
    core::Executor exe(core::Place("cpu", 0));
    std::vector<std::string> names;
    for (const auto& kv : feeds_) names.push_back(kv.first);
    auto prepared = exe.Prepare(prog, 0, names, fetch);
    core::Scope scope;
    std::vector<core::LoDTensor> got;
    std::vector<std::string> execs, impls;
    for (int r = 0; r < runs; ++r) {  // fresh inputs each run: ops may update them in place
      std::vector<core::LoDTensor> tensors;
      for (const auto& n : prepared->feed_names()) {
        core::LoDTensor t = ToLoD(feeds_.at(n));
        const int rank = t.dims().size();
        if (feed == InputLayout::kBlocked && blockable_.at(n) && rank >= 3 && rank <= 5)
          t = Transform(t, TIDE_LAYOUT_NCHW, TIDE_LAYOUT_ONEDNN);
        tensors.push_back(std::move(t));
      }
      if (r + 1 < runs || !record_dnnl_) {
        got = exe.Run(*prepared, &scope, tensors);
      } else {
        execs = mkldnn::RecordDnnlExecs([&] { got = exe.Run(*prepared, &scope, tensors); }, &impls);
      }
    }
    Result res;
    res.dnnl_execs = std::move(execs);
    res.dnnl_impls = std::move(impls);
    for (size_t i = 0; i < fetch.size(); ++i) {
      EXPECT_NE(got[i].layout(), TIDE_LAYOUT_ONEDNN) << fetch[i] << ": fetched data must be plain";
      res.layouts[fetch[i]] = scope.FindVar(fetch[i])->Get<core::LoDTensor>().layout();
      res.values[fetch[i]] = FromLoD(got[i]);
    }
    for (size_t i = 0; i < prepared->num_ops(); ++i) {
      const core::OpInstance& op = prepared->op(i);
      if (op.type() == "feed" || op.type() == "fetch") continue;
      res.kernels.emplace_back(op.type(), op.kernel_key());
    }
    res.counts = prepared->transform_counts();
    return res;
  }

 private:
  std::map<std::string, TestTensor> feeds_;
  std::map<std::string, bool> blockable_;
  std::vector<core::OpDesc> steps_;
  std::string backward_out_;
  bool record_dnnl_ = false;
};

// |got - want| <= atol + rtol * |want| everywhere, naming the first mismatch.
inline ::testing::AssertionResult Close(const TestTensor& got, const TestTensor& want, double rtol,
                                        double atol) {
  if (got.dims != want.dims)
    return ::testing::AssertionFailure() << "dims " << ::testing::PrintToString(got.dims) << " vs "
                                         << ::testing::PrintToString(want.dims);
  double worst = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    const double err = std::fabs(got.data[i] - want.data[i]);
    worst = std::max(worst, err);
    if (!(err <= atol + rtol * std::fabs(want.data[i])))
      return ::testing::AssertionFailure()
             << "element " << i << " of " << want.data.size() << ": " << got.data[i] << " vs "
             << want.data[i] << " (|diff| " << err << ")";
  }
  if (want.data.empty() && !got.data.empty())
    return ::testing::AssertionFailure() << "unexpected elements";
  return ::testing::AssertionSuccess() << "max |diff| " << worst;
}

// An input of a one-op comparison.
struct In {
  std::string param, var;
  TestTensor value;
  bool blockable = true;  // fed blocked in the InputLayout::kBlocked run (when rank 3 to 5)
};

// One op, plain (OpTester, the reference) against oneDNN (use_mkldnn, fed plain and then
// blocked): checks that the oneDNN kernel ran and that every output matches.
class OneOp {
 public:
  explicit OneOp(std::string type) : type_(std::move(type)) { core::Initialize(); }
  OneOp& Input(const std::string& param, const std::string& var, TestTensor t,
               bool blockable = true) {
    ins_.push_back({param, var, std::move(t), blockable});
    return *this;
  }
  OneOp& Output(const std::string& param, const std::string& var) {
    outs_.emplace_back(param, var);
    return *this;
  }
  OneOp& Attr(const std::string& name, core::Attribute v) {
    attrs_[name] = std::move(v);
    return *this;
  }

  OpTester Reference() const {
    OpTester t(type_);
    for (const auto& i : ins_) t.Input(i.param, i.var, i.value);
    for (const auto& [p, v] : outs_) t.Output(p, v);
    for (const auto& [k, v] : attrs_) t.Attr(k, v);
    return t;
  }
  Net MakeNet() const {
    Net net;
    core::VariableNameMap in, out;
    std::map<std::string, bool> fed;
    for (const auto& i : ins_) {
      in[i.param].push_back(i.var);
      if (!fed[i.var]) net.Feed(i.var, i.value, i.blockable);
      fed[i.var] = true;
    }
    for (const auto& [p, v] : outs_) out[p].push_back(v);
    net.Op(type_, in, out, attrs_);
    return net;
  }
  std::vector<std::string> OutVars() const {
    std::vector<std::string> v;
    for (const auto& o : outs_) v.push_back(o.second);
    return v;
  }

  // Forward outputs; `skip` lists output variables not compared.
  void CheckForward(double rtol, double atol, const std::vector<std::string>& skip = {}) const {
    std::map<std::string, TestTensor> want = Reference().Run();
    for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
      SCOPED_TRACE(std::string("inputs fed ") + FeedName(feed));
      Result got = MakeNet().RecordingDnnl().Run(OutVars(), /*mkldnn=*/true, feed);
      if (!MayDecline(feed))
        EXPECT_TRUE(Declines(feed) ? RanPlain(got, type_) : RanMkldnn(got, type_));
      for (const auto& var : OutVars()) {
        if (std::find(skip.begin(), skip.end(), var) != skip.end()) continue;
        EXPECT_TRUE(Close(got.values.at(var), want.at(var), rtol, atol))
            << type_ << " output " << var;
      }
      last_ = got;
    }
  }

  // Gradients of `wrt` (input variables) with out@GRAD = `dout`, through the grad op(s). A grad
  // kernel may leave an activation's gradient blocked, for the next oneDNN grad kernel; the fetch
  // converts it.
  void CheckGrad(const std::vector<std::string>& wrt, const std::string& out,
                 const TestTensor& dout, double rtol, double atol) const {
    std::map<std::string, TestTensor> want = Reference().RunGrad(wrt, out, dout);
    std::vector<std::string> fetch;
    for (const auto& w : wrt) fetch.push_back(core::GradVarName(w));
    for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
      SCOPED_TRACE(std::string("inputs fed ") + FeedName(feed));
      Net net = MakeNet();
      net.Backward(out, dout);
      Result got = net.Run(fetch, /*mkldnn=*/true, feed);
      if (!MayDecline(feed)) {
        EXPECT_TRUE(Declines(feed) ? RanPlain(got, type_) : RanMkldnn(got, type_));
        EXPECT_TRUE(Declines(feed) || grad_declines_ ? RanPlain(got, type_ + "_grad")
                                                     : RanMkldnn(got, type_ + "_grad"));
      }
      for (const auto& w : wrt) {
        const std::string g = core::GradVarName(w);
        EXPECT_TRUE(Close(got.values.at(g), want.at(w), rtol, atol)) << type_ << " grad of " << w;
      }
    }
  }

  // The last oneDNN run of CheckForward (the blocked-fed one).
  const Result& last() const { return last_; }

  // The oneDNN kernel declines (the plain one runs) when the inputs are plain data (fed plain, or
  // of a rank never fed blocked), or its grad kernel always: the speed rules of
  // devices/mkldnn/README.md.
  OneOp& DeclinesFedPlain(bool d = true) {
    declines_fed_plain_ = d;
    return *this;
  }
  OneOp& GradDeclines(bool d = true) {
    grad_declines_ = d;
    return *this;
  }
  // Whether the oneDNN kernel runs depends on the ISA (it declines where oneDNN would run a
  // reference implementation): only the values are checked for those feeds.
  OneOp& MayDecline(bool fed_plain, bool fed_blocked) {
    may_decline_plain_ = fed_plain;
    may_decline_blocked_ = fed_blocked;
    return *this;
  }

 private:
  std::string type_;
  std::vector<In> ins_;
  std::vector<std::pair<std::string, std::string>> outs_;
  core::AttributeMap attrs_;
  mutable Result last_;
  bool declines_fed_plain_ = false, grad_declines_ = false;
  bool may_decline_plain_ = false, may_decline_blocked_ = false;
  // Declining plain data: every input is plain in the plain run, and in the blocked one when
  // none of them is blockable (rank 3 to 5).
  bool Declines(InputLayout feed) const {
    if (!declines_fed_plain_) return false;
    for (const auto& i : ins_)
      if (i.blockable && FedBlocked(feed, i.value.dims.size())) return false;
    return true;
  }
  bool MayDecline(InputLayout feed) const {
    return feed == InputLayout::kPlain ? may_decline_plain_ : may_decline_blocked_;
  }
};

// Skips a test whose op no loaded plugin defines yet (e.g. an op pack still being written).
#define TIDE_SKIP_WITHOUT_OP(type)                                                    \
  do {                                                                                \
    ::tide::core::Initialize();                                                       \
    if (!::tide::core::Registry::Global().FindOp(type))                               \
      GTEST_SKIP() << "op '" << (type) << "' is not registered by any loaded plugin"; \
  } while (0)

}  // namespace tide::test::mkldnn
