// good_plugin.cc: a well-behaved test plugin; compile definitions give its name, op and kernel:
//   TP_NAME, TP_OP (strings); TP_OP_DEF 0: kernel only; TP_SCHEMA 1: a second, different schema;
//   TP_KERNEL 0: no kernel; TP_PRIORITY: the float32 kernel's; TP_FP64 1: a float64 kernel too;
//   TP_REQUIRES: names of plugins to load first; TP_SLOW_MS: registration takes that long.
#include <chrono>
#include <thread>
#include <tide/plugin.hpp>

#ifndef TP_OP_DEF
#define TP_OP_DEF 1
#endif
#ifndef TP_SCHEMA
#define TP_SCHEMA 0
#endif
#ifndef TP_KERNEL
#define TP_KERNEL 1
#endif
#ifndef TP_PRIORITY
#define TP_PRIORITY 0
#endif
#ifndef TP_FP64
#define TP_FP64 0
#endif

namespace {
template <typename T>
void NoopKernel(tide::KernelContext&) {}
}  // namespace

#if TP_OP_DEF && TP_SCHEMA == 0
TIDE_REGISTER_OP(tide::OpSchema(TP_OP)
                     .Comment("a test op")
                     .Input("X")
                     .Output("Out")
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
#elif TP_OP_DEF
TIDE_REGISTER_OP(tide::OpSchema(TP_OP)
                     .Comment("a test op")
                     .Input("X")
                     .Input("Y")
                     .Output("Out")
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
#endif
#if TP_FP64
TIDE_REGISTER_KERNEL(TP_OP, "cpu", NoopKernel, double);
#endif
#if TP_KERNEL
TIDE_REGISTER_KERNEL_EX(TP_OP, "cpu", TIDE_LAYOUT_ANY, "plain", TP_PRIORITY, NoopKernel, float);
#endif

#ifdef TP_SLOW_MS
namespace {
void Slow(tide::Registrar&) { std::this_thread::sleep_for(std::chrono::milliseconds(TP_SLOW_MS)); }
}  // namespace
TIDE_ON_REGISTER(Slow);
#endif

#ifdef TP_REQUIRES
TIDE_PLUGIN_REQUIRES(TP_NAME, "1.2.3", "a good test plugin", TP_REQUIRES);
#else
TIDE_PLUGIN(TP_NAME, "1.2.3", "a good test plugin");
#endif
