// bad_register_plugin.cc: a test plugin (plugin.hpp) whose registration fails after it staged an
// op and a kernel (TP_OP). TP_FAIL: 1 an invalid op name, 2 a failing TIDE_CHECK, 3 a throw.
#include <stdexcept>
#include <tide/plugin.hpp>

namespace {
template <typename T>
void NoopKernel(tide::KernelContext&) {}

[[maybe_unused]] void RefuseWithCheck(tide::Registrar&) {
  bool wanted = tide::Flag("tide_test_no_such_flag") == "yes";  // never: the core has no such flag
  TIDE_CHECK(wanted, "regerr_check refuses to register: tide_test_no_such_flag is not 'yes'");
}

[[maybe_unused]] void Throw(tide::Registrar&) {
  throw std::runtime_error("throw_callback: a std::runtime_error from a registration callback");
}
}  // namespace

TIDE_REGISTER_OP(
    tide::OpSchema(TP_OP).Input("X").Output("Out").InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL(TP_OP, "cpu", NoopKernel, float);
#if TP_FAIL == 1
TIDE_REGISTER_OP(tide::OpSchema("bad op name!").Input("X").Output("Out"));
#elif TP_FAIL == 2
TIDE_ON_REGISTER(RefuseWithCheck);
#elif TP_FAIL == 3
TIDE_ON_REGISTER(Throw);
#endif

TIDE_PLUGIN(TP_NAME, "0.0.1", "a test plugin whose registration fails");
