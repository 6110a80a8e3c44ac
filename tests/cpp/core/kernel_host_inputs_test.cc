// Tests a kernel's host inputs (TideKernelDef.host_inputs, issue 33) at registration: the names
// are kept with the kernel; a name its op does not declare is refused naming the op, the kernel
// key, the parameter and the plugin, whether the op comes with the kernel, was registered
// before it, or comes after it from another plugin (the whole commit is then refused).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/platform/enforce.h"
#include "core/platform/status.h"
#include "core/plugin/registrar.h"

namespace tide::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Never called: registration only keeps the functions.
TideStatus* NoInfer(TideInferShapeContext*, void*) { return nullptr; }
TideStatus* NoCompute(TideKernelContext*, void*) { return nullptr; }

TideRegistrar MakeRegistrar(const std::string& plugin) {
  TideRegistrar r;
  r.plugin = plugin;
  r.plugin_file = "lib" + plugin + ".so";
  return r;
}

// Adds op `type` with inputs X and Shape to `r`.
void AddOp(TideRegistrar* r, const char* type) {
  static const TideArgDef inputs[] = {{sizeof(TideArgDef), "X", nullptr, 0},
                                      {sizeof(TideArgDef), "Shape", nullptr, 0}};
  static const TideArgDef outputs[] = {{sizeof(TideArgDef), "Out", nullptr, 0}};
  TideOpDef d{};
  d.struct_size = sizeof(TideOpDef);
  d.type = type;
  d.inputs = inputs;
  d.num_inputs = 2;
  d.outputs = outputs;
  d.num_outputs = 1;
  d.infer_shape = &NoInfer;
  std::unique_ptr<TideStatus> s(RegistrarAddOp(r, &d));
  ASSERT_TRUE(s == nullptr) << s->message;
}

// Adds a float32 kernel of `type` on place kind "hostin" reading `host_inputs` on the host; the
// message of the status Registrar_AddKernel returned, "" when it was staged.
std::string AddKernel(TideRegistrar* r, const char* type, std::vector<const char*> host_inputs) {
  TideKernelDef d{};
  d.struct_size = sizeof(TideKernelDef);
  d.op_type = type;
  d.place_kind = "hostin";
  d.dtype = TIDE_FP32;
  d.library = "plain";
  d.compute = &NoCompute;
  d.host_inputs = host_inputs.data();
  d.num_host_inputs = host_inputs.size();
  std::unique_ptr<TideStatus> s(RegistrarAddKernel(r, &d));
  return s ? s->message : "";
}

// The message of the error Commit threw; "" when it committed.
std::string Commit(TideRegistrar* r) {
  try {
    Registry::Global().Commit(std::move(r->staged));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const KernelEntry* Kernel(const char* type) {
  const std::vector<const KernelEntry*> k = Registry::Global().Kernels(type);
  return k.size() == 1 ? k[0] : nullptr;
}

TEST(KernelHostInputs, DeclaredInputsAreKeptWithTheKernel) {
  TideRegistrar r = MakeRegistrar("hostin_a");
  AddOp(&r, "hostin.kept");
  ASSERT_EQ(AddKernel(&r, "hostin.kept", {"Shape"}), "");
  ASSERT_EQ(Commit(&r), "");
  const KernelEntry* k = Kernel("hostin.kept");
  ASSERT_NE(k, nullptr);
  EXPECT_THAT(k->host_inputs, ElementsAre("Shape"));
  EXPECT_TRUE(k->ReadsOnHost("Shape"));
  EXPECT_FALSE(k->ReadsOnHost("X"));
}

TEST(KernelHostInputs, AnUnknownNameIsRefusedWithItsOp) {
  TideRegistrar r = MakeRegistrar("hostin_b");
  AddOp(&r, "hostin.same_plugin");
  ASSERT_EQ(AddKernel(&r, "hostin.same_plugin", {"Shape", "Shapes"}), "");
  const std::string e = Commit(&r);
  EXPECT_THAT(e, HasSubstr("kernel hostin.same_plugin {"));  // the op and its key
  EXPECT_THAT(e, HasSubstr("plugin 'hostin_b' (libhostin_b.so)"));
  EXPECT_THAT(e, HasSubstr("host input 'Shapes', which op 'hostin.same_plugin'"));
  EXPECT_THAT(e, HasSubstr("its inputs: X, Shape"));
  EXPECT_EQ(Kernel("hostin.same_plugin"), nullptr);  // nothing committed
}

TEST(KernelHostInputs, AnUnknownNameIsRefusedForAnOpRegisteredBefore) {
  TideRegistrar ops = MakeRegistrar("hostin_ops");
  AddOp(&ops, "hostin.earlier_op");
  ASSERT_EQ(Commit(&ops), "");
  TideRegistrar r = MakeRegistrar("hostin_c");
  ASSERT_EQ(AddKernel(&r, "hostin.earlier_op", {"Offsets"}), "");
  EXPECT_THAT(Commit(&r), HasSubstr("plugin 'hostin_c' (libhostin_c.so) declares host input "
                                    "'Offsets', which op 'hostin.earlier_op'"));
}

TEST(KernelHostInputs, AnUnknownNameIsRefusedWhenTheOpComesLater) {
  TideRegistrar r = MakeRegistrar("hostin_d");
  ASSERT_EQ(AddKernel(&r, "hostin.later_op", {"Axis"}), "");
  ASSERT_EQ(Commit(&r), "");  // the op is unknown yet
  TideRegistrar ops = MakeRegistrar("hostin_later_ops");
  AddOp(&ops, "hostin.later_op");
  const std::string e = Commit(&ops);
  EXPECT_THAT(e, HasSubstr("plugin 'hostin_d' (libhostin_d.so) declares host input 'Axis', which "
                           "op 'hostin.later_op' (libhostin_later_ops.so) does not have"));
}

TEST(KernelHostInputs, AMalformedDeclarationIsRefusedAtOnce) {
  TideRegistrar r = MakeRegistrar("hostin_e");
  EXPECT_THAT(AddKernel(&r, "hostin.malformed", {"Shape", "Shape"}),
              HasSubstr("declares host input 'Shape' twice"));
  EXPECT_THAT(AddKernel(&r, "hostin.malformed", {""}), HasSubstr("host input #0 has no name"));
}

}  // namespace
}  // namespace tide::core
