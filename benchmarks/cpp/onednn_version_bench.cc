// One oneDNN build's speed on the primitives Tide's oneDNN plugin runs most, for deciding which
// oneDNN to build against (benchmarks/onednn_versions.py builds this file against each and
// interleaves them). Compiles against oneDNN 2.x and 3.x (their primitive-descriptor APIs differ).
//
//   onednn_version_bench NET BATCH f32|bf16 infer|train ROUNDS
//     NET: resnet50 (the 53 convolutions of Paddle's ResNet-50 v1.5 at 224x224),
//          amp_nets (benchmarks/amp.py's ResNet-ish net and LeNet-5's convolutions),
//          bert_fc (BERT-base's 48 fc layers at sequence 128; infer only)
//   prints: "<oneDNN version> <ms median> <ms min> <implementations...>"
// Convolutions: bias + relu post-op (the fused_conv2d Tide's transpiler makes), formats "any"
// (what the plugin asks for); train adds backward data and backward weights. fc: matmul with
// bias (+ gelu_erf on the first feed-forward layer), weights in the primitive's format.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::post_ops;
using dnnl::primitive;
using dnnl::primitive_attr;
using dnnl::prop_kind;
using Tag = memory::format_tag;
using Dt = memory::data_type;
using Args = std::unordered_map<int, memory>;

struct ConvShape {
  int ic, oc, hw, k, stride, pad, repeat;
};

std::vector<ConvShape> Resnet50() {
  std::vector<ConvShape> v{{3, 64, 224, 7, 2, 3, 1}};
  int in = 64, hw = 56;
  const int mids[4] = {64, 128, 256, 512}, blocks[4] = {3, 4, 6, 3};
  for (int st = 0; st < 4; ++st) {
    const int mid = mids[st], out = mid * 4, s = st == 0 ? 1 : 2, ohw = hw / s;
    v.push_back({in, mid, hw, 1, 1, 0, 1});  // first block: stride on the 3x3, projection
    v.push_back({mid, mid, hw, 3, s, 1, 1});
    v.push_back({mid, out, ohw, 1, 1, 0, 1});
    v.push_back({in, out, hw, 1, s, 0, 1});
    v.push_back({out, mid, ohw, 1, 1, 0, blocks[st] - 1});
    v.push_back({mid, mid, ohw, 3, 1, 1, blocks[st] - 1});
    v.push_back({mid, out, ohw, 1, 1, 0, blocks[st] - 1});
    in = out;
    hw = ohw;
  }
  return v;
}

std::vector<ConvShape> AmpNets() {
  return {{3, 32, 32, 3, 1, 1, 1},  {32, 32, 32, 3, 1, 1, 4}, {32, 64, 32, 3, 2, 1, 1},
          {64, 64, 16, 3, 1, 1, 4}, {1, 20, 28, 5, 1, 0, 1},  {20, 50, 12, 5, 1, 0, 1}};
}

struct Step {
  primitive prim;
  Args args;
  int repeat;
};

memory Zeroed(const memory::desc& md, const dnnl::engine& eng) {
  memory m(md, eng);
  std::memset(m.get_data_handle(), 0, md.get_size());
  return m;
}

post_ops Eltwise(algorithm alg) {
  post_ops po;
#if DNNL_VERSION_MAJOR >= 3
  po.append_eltwise(alg, 0.f, 0.f);
#else
  po.append_eltwise(1.f, alg, 0.f, 0.f);
#endif
  return po;
}

void AddConv(const ConvShape& sh, int batch, Dt t, bool train, const dnnl::engine& eng,
             std::vector<Step>* steps, std::string* impls) {
  const int oh = (sh.hw + 2 * sh.pad - sh.k) / sh.stride + 1;
  memory::desc src({batch, sh.ic, sh.hw, sh.hw}, t, Tag::any);
  memory::desc wei({sh.oc, sh.ic, sh.k, sh.k}, t, Tag::any);
  memory::desc bia({sh.oc}, Dt::f32, Tag::any);
  memory::desc dst({batch, sh.oc, oh, oh}, t, Tag::any);
  const memory::dims str{sh.stride, sh.stride}, pad{sh.pad, sh.pad};
  primitive_attr attr;
  attr.set_post_ops(Eltwise(algorithm::eltwise_relu));
  const auto pk = train ? prop_kind::forward_training : prop_kind::forward_inference;
  const auto alg = algorithm::convolution_direct;
#if DNNL_VERSION_MAJOR >= 3
  dnnl::convolution_forward::primitive_desc fwd(eng, pk, alg, src, wei, bia, dst, str, pad, pad,
                                                attr);
#else
  dnnl::convolution_forward::primitive_desc fwd(
      dnnl::convolution_forward::desc(pk, alg, src, wei, bia, dst, str, pad, pad), attr, eng);
#endif
  *impls += std::string(fwd.impl_info_str()) + " ";
  steps->push_back({dnnl::convolution_forward(fwd),
                    {{DNNL_ARG_SRC, Zeroed(fwd.src_desc(), eng)},
                     {DNNL_ARG_WEIGHTS, Zeroed(fwd.weights_desc(), eng)},
                     {DNNL_ARG_BIAS, Zeroed(fwd.bias_desc(), eng)},
                     {DNNL_ARG_DST, Zeroed(fwd.dst_desc(), eng)}},
                    sh.repeat});
  if (!train) return;
#if DNNL_VERSION_MAJOR >= 3
  dnnl::convolution_backward_data::primitive_desc bd(eng, alg, src, wei, dst, str, pad, pad, fwd);
  dnnl::convolution_backward_weights::primitive_desc bw(eng, alg, src, wei, bia, dst, str, pad, pad,
                                                        fwd);
#else
  dnnl::convolution_backward_data::primitive_desc bd(
      dnnl::convolution_backward_data::desc(alg, src, wei, dst, str, pad, pad), eng, fwd);
  dnnl::convolution_backward_weights::primitive_desc bw(
      dnnl::convolution_backward_weights::desc(alg, src, wei, bia, dst, str, pad, pad), eng, fwd);
#endif
  *impls +=
      std::string("bwd_data:") + bd.impl_info_str() + " bwd_weights:" + bw.impl_info_str() + " ";
  steps->push_back({dnnl::convolution_backward_data(bd),
                    {{DNNL_ARG_DIFF_DST, Zeroed(bd.diff_dst_desc(), eng)},
                     {DNNL_ARG_WEIGHTS, Zeroed(bd.weights_desc(), eng)},
                     {DNNL_ARG_DIFF_SRC, Zeroed(bd.diff_src_desc(), eng)}},
                    sh.repeat});
  steps->push_back({dnnl::convolution_backward_weights(bw),
                    {{DNNL_ARG_SRC, Zeroed(bw.src_desc(), eng)},
                     {DNNL_ARG_DIFF_DST, Zeroed(bw.diff_dst_desc(), eng)},
                     {DNNL_ARG_DIFF_WEIGHTS, Zeroed(bw.diff_weights_desc(), eng)},
                     {DNNL_ARG_DIFF_BIAS, Zeroed(bw.diff_bias_desc(), eng)}},
                    sh.repeat});
}

void AddBertFc(int batch, Dt t, const dnnl::engine& eng, std::vector<Step>* steps,
               std::string* impls) {
  const int m = batch * 128;
  const struct {
    int k, n;
    bool gelu;
  } fcs[4] = {{768, 2304, false}, {768, 768, false}, {768, 3072, true}, {3072, 768, false}};
  for (const auto& fc : fcs) {
    memory::desc src({m, fc.k}, t, Tag::ab), wei({fc.k, fc.n}, t, Tag::any),
        bia({1, fc.n}, Dt::f32, Tag::ab), dst({m, fc.n}, t, Tag::ab);
    primitive_attr attr;
    if (fc.gelu) attr.set_post_ops(Eltwise(algorithm::eltwise_gelu_erf));
#if DNNL_VERSION_MAJOR >= 3
    dnnl::matmul::primitive_desc pd(eng, src, wei, bia, dst, attr);
#else
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, bia, dst), attr, eng);
#endif
    *impls += std::string(pd.impl_info_str()) + " ";
    steps->push_back({dnnl::matmul(pd),
                      {{DNNL_ARG_SRC, Zeroed(pd.src_desc(), eng)},
                       {DNNL_ARG_WEIGHTS, Zeroed(pd.weights_desc(), eng)},
                       {DNNL_ARG_BIAS, Zeroed(pd.bias_desc(), eng)},
                       {DNNL_ARG_DST, Zeroed(pd.dst_desc(), eng)}},
                      12});
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s resnet50|amp_nets|bert_fc BATCH f32|bf16 infer|train ROUNDS\n",
                 argv[0]);
    return 2;
  }
  const std::string net = argv[1];
  const int batch = std::atoi(argv[2]), rounds = std::atoi(argv[5]);
  const Dt t = std::string(argv[3]) == "bf16" ? Dt::bf16 : Dt::f32;
  const bool train = std::string(argv[4]) == "train";
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::vector<Step> steps;
  std::string impls;
  try {
    if (net == "bert_fc") {
      AddBertFc(batch, t, eng, &steps, &impls);
    } else {
      for (const ConvShape& sh : net == "amp_nets" ? AmpNets() : Resnet50())
        AddConv(sh, batch, t, train, eng, &steps, &impls);
    }
  } catch (const dnnl::error& e) {
    std::fprintf(stderr, "oneDNN refused %s: %s\n", net.c_str(), e.what());
    return 1;
  }
  auto pass = [&] {
    for (Step& s : steps)
      for (int i = 0; i < s.repeat; ++i) s.prim.execute(strm, s.args);
    strm.wait();
  };
  pass();  // warm-up: first-touch, jit caches
  std::vector<double> ms;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    pass();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const dnnl_version_t* v = dnnl_version();
  std::printf("%d.%d.%d %.3f %.3f %s\n", v->major, v->minor, v->patch, ms[ms.size() / 2], ms[0],
              impls.c_str());
  return 0;
}
