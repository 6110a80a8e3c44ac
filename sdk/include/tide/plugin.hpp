// tide/plugin.hpp: header-only C++ over the C plugin ABI (tide/plugin_api.h). Plugin authors
// write ordinary C++ here: views over core objects, typed attributes, exceptions that turn into
// statuses at the boundary, and registration macros. This header only gathers the parts, each a
// header of one job under tide/plugin/ (listed below); include this one.
//
// A whole op pack (the SDK test compiles this example; docs/writing_plugins.md has more):
//
//   #include <tide/plugin.hpp>
//   template <typename T>
//   void Triple(tide::KernelContext& ctx) {
//     tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
//     const T* in = x.data<T>();
//     T* o = out.mutable_data<T>(x.dims(), ctx.place());
//     for (int64_t i = 0; i < x.numel(); ++i) o[i] = 3 * in[i];
//   }
//   TIDE_REGISTER_OP(tide::OpSchema("my.triple").Input("X").Output("Out")
//                        .InferShape(tide::SameShapeAsInput("X", "Out"))
//                        .Grad([](tide::GradMaker& g) {
//                          g.NewOp("my.triple").Input("X", g.OutputGrad("Out"))
//                              .Output("Out", g.InputGrad("X"));
//                        }));
//   TIDE_REGISTER_KERNEL("my.triple", "cpu", Triple, float, double);
//   TIDE_PLUGIN("my_ops", "0.1.0", "triples");  // once per plugin, in one file
#ifndef TIDE_PLUGIN_HPP_
#define TIDE_PLUGIN_HPP_

// The parts, by who needs them (the C ABI's rules on ownership, lifetimes and threads are
// written in tide/plugin_api.h, beside each function):
//  everyone:
//   tide/plugin/host.hpp       tide::Host(), tide::Error, TIDE_THROW / TIDE_CHECK, TIDE_HOST_FN,
//                              the core's flags (tide::Flag) and log (tide::Log)
//   tide/plugin/data_type.hpp  the data-type table: DataTypeName, DataTypeSize, DataTypeOf<T>
//   tide/plugin/types.hpp      tide::Dims, tide::LoD, tide::Place
//   tide/plugin/attributes.hpp tide::AttrValue and the typed reads behind Attr<T>()
//  op-pack authors:
//   tide/plugin/tensor.hpp         tide::Tensor, OwnedTensor, SelectedRows, TensorArray
//   tide/plugin/scope.hpp          tide::Variable, Scope, StepScopes
//   tide/plugin/kernel_context.hpp tide::KernelContext: what a kernel sees
//   tide/plugin/infer_shape.hpp    tide::InferShapeContext, SameShapeAsInput
//   tide/plugin/grad_maker.hpp     tide::GradMaker, GradOp
//   tide/plugin/op_run.hpp         tide::OpRunContext: operators without kernels (control flow)
//   tide/plugin/op_schema.hpp      tide::OpSchema: declaring an operator
//   tide/ops/*.hpp                 the standard ops' shape rules and checks (include them apart)
//  device vendors:
//   tide/plugin/device.hpp         tide::Device, adapted to TideDeviceDef (the concurrency rule
//                                  for device callbacks is at TideDeviceDef in plugin_api.h)
//   tide/cpu_context.h, tide/cuda_context.h  the device extensions in-tree devices publish
//  registration, for both:
//   tide/plugin/registrar.hpp      tide::Registrar: ops, kernels, libraries, devices, transforms
//   tide/plugin/registration.hpp   TIDE_REGISTER_OP / _KERNEL(_EX), TIDE_ON_REGISTER,
//                                  TIDE_ON_FINALIZE, TIDE_PLUGIN(_REQUIRES)
#include <tide/plugin_api.h>

#include <tide/plugin/attributes.hpp>
#include <tide/plugin/data_type.hpp>
#include <tide/plugin/device.hpp>
#include <tide/plugin/grad_maker.hpp>
#include <tide/plugin/host.hpp>
#include <tide/plugin/infer_shape.hpp>
#include <tide/plugin/kernel_context.hpp>
#include <tide/plugin/op_run.hpp>
#include <tide/plugin/op_schema.hpp>
#include <tide/plugin/registrar.hpp>
#include <tide/plugin/registration.hpp>
#include <tide/plugin/scope.hpp>
#include <tide/plugin/tensor.hpp>
#include <tide/plugin/types.hpp>

#endif  // TIDE_PLUGIN_HPP_
