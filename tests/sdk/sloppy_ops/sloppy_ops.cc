// sloppy_ops.cc: a vendor's op pack with the mistakes Tide must make loud (tests only): an op
// with no gradient (and no NoGradient()), a kernel that never writes its output, an op without a
// vendor prefix, a kernel for an op no plugin defines, and a grad maker asking for the gradient of
// an output the op does not have (a misspelt parameter), two ops of one layer name, and a kernel
// that declines after writing its output.
#include <tide/plugin.hpp>

namespace {

template <typename T>
void Twice(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const T* in = x.data<T>();
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = 2 * in[i];
}

template <typename T>
void Forgetful(tide::KernelContext&) {}  // never writes Out

// Allocates Out, writes half of it, then declines: the core must fail naming Out instead of
// running the next kernel (the "halfway" library's Twice) on what it left.
template <typename T>
void HalfThenDecline(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < x.numel() / 2; ++i) o[i] = -1;
  TIDE_THROW(TIDE_UNIMPLEMENTED, "sloppy.half_written: declined after writing half of Out");
}

// Declines before it writes anything, as it should, though it made a scratch tensor first.
template <typename T>
void ScratchThenDecline(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X");
  tide::OwnedTensor scratch;
  scratch.mutable_data<T>(x.dims(), ctx.place());
  TIDE_THROW(TIDE_UNIMPLEMENTED, "sloppy.scratch_first: declined before writing Out");
}

}  // namespace

TIDE_REGISTER_OP(tide::OpSchema("sloppy.twice")
                     .Comment("Out = 2 X, with no gradient declared")
                     .Input("X", "input")
                     .Output("Out", "2 X")
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("sloppy.twice", "cpu", Twice, float, double);

TIDE_REGISTER_OP(tide::OpSchema("sloppy.forgetful")
                     .Comment("a kernel that forgets to write Out")
                     .Input("X", "input")
                     .Output("Out", "never written")
                     .NoGradient()
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("sloppy.forgetful", "cpu", Forgetful, float);

// Its grad maker misspells the output: OutputGrad("Outt").
TIDE_REGISTER_OP(
    tide::OpSchema("sloppy.typo_grad")
        .Comment("Out = 2 X, whose grad maker reads the gradient of 'Outt'")
        .Input("X", "input")
        .Output("Out", "2 X")
        .InferShape(tide::SameShapeAsInput("X", "Out"))
        .Grad([](tide::GradMaker& g) {
          g.NewOp("sloppy.twice").Input("X", g.OutputGrad("Outt")).Output("Out", g.InputGrad("X"));
        }));
TIDE_REGISTER_KERNEL("sloppy.typo_grad", "cpu", Twice, float, double);

// Two ops that map to one layer name, tide.layers.sloppy_dup_twice.
TIDE_REGISTER_OP(tide::OpSchema("sloppy.dup_twice")
                     .Comment("Out = 2 X, as tide.layers.sloppy_dup_twice")
                     .Input("X", "input")
                     .Output("Out", "2 X")
                     .NoGradient()
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("sloppy.dup_twice", "cpu", Twice, float);
TIDE_REGISTER_OP(tide::OpSchema("sloppy_dup.twice")
                     .Comment("Out = 2 X, as tide.layers.sloppy_dup_twice too")
                     .Input("X", "input")
                     .Output("Out", "2 X")
                     .NoGradient()
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("sloppy_dup.twice", "cpu", Twice, float);

// An op whose layer name is one of Tide's own Python layers (tide.layers.sequence_conv), which
// wins: tide.load_plugin warns.
TIDE_REGISTER_OP(tide::OpSchema("sequence.conv")
                     .Comment("Out = 2 X, under a layer name Tide's sequence_conv has")
                     .Input("X", "input")
                     .Output("Out", "2 X")
                     .NoGradient()
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("sequence.conv", "cpu", Twice, float);

// Shape inference that declares what the kernel does not write (int64 and one more dim):
// OpTest.check_output names each difference.
TIDE_REGISTER_OP(tide::OpSchema("sloppy.misdeclared")
                     .Comment("Out = 2 X, declared int64 [rows, cols, 1]")
                     .Input("X", "input")
                     .Output("Out", "2 X")
                     .NoGradient()
                     .InferShape([](tide::InferShapeContext& ctx) {
                       tide::Dims d = ctx.InputDims("X");
                       d.push_back(1);
                       ctx.SetOutputDims("Out", d);
                       ctx.SetOutputDataType("Out", TIDE_INT64);
                     }));
TIDE_REGISTER_KERNEL("sloppy.misdeclared", "cpu", Twice, float);

// A kernel for a place kind no device plugin provides (a misspelt "npu"): it never runs; the
// op has no other kernel, so running it names the kernel and the missing device.
TIDE_REGISTER_OP(tide::OpSchema("sloppy.elsewhere")
                     .Comment("Out = 2 X, with a kernel for place kind 'npuu' only")
                     .Input("X", "input")
                     .Output("Out", "2 X")
                     .NoGradient()
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("sloppy.elsewhere", "npuu", Twice, float);

// An op named without a vendor prefix, outside Tide's plugin directory: a warning.
TIDE_REGISTER_OP(tide::OpSchema("unprefixed_twice")
                     .Comment("Out = 2 X, under a name that belongs to Fluid")
                     .Input("X", "input")
                     .Output("Out", "2 X")
                     .NoGradient()
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("unprefixed_twice", "cpu", Twice, float);

// A plain kernel that declines after writing Out (a mistake the core names), and one that declines
// in time after writing only a scratch tensor; each op's "halfway" library kernel would run next.
TIDE_REGISTER_OP(tide::OpSchema("sloppy.half_written")
                     .Comment("Out = 2 X, whose plain kernel writes Out and then declines")
                     .Input("X", "input")
                     .Output("Out", "2 X")
                     .NoGradient()
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("sloppy.half_written", "cpu", HalfThenDecline, float);
TIDE_REGISTER_KERNEL_EX("sloppy.half_written", "cpu", TIDE_LAYOUT_ANY, "halfway", 0, Twice, float);
TIDE_REGISTER_OP(tide::OpSchema("sloppy.scratch_first")
                     .Comment("Out = 2 X, whose plain kernel declines after a scratch tensor")
                     .Input("X", "input")
                     .Output("Out", "2 X")
                     .NoGradient()
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("sloppy.scratch_first", "cpu", ScratchThenDecline, float);
TIDE_REGISTER_KERNEL_EX("sloppy.scratch_first", "cpu", TIDE_LAYOUT_ANY, "halfway", 0, Twice, float);

// A kernel whose op type is misspelt: no plugin defines "sloppy.twise".
TIDE_REGISTER_KERNEL("sloppy.twise", "cpu", Twice, float);

TIDE_PLUGIN("sloppy_ops", "0.0.1", "an op pack with mistakes, for tests");
