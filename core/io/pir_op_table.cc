// pir_op_table.cc: the PIR-operation -> Fluid-op table. Adding an operation is one line of
// kEntries (docs/paddle_models.md, "PIR programs", says how to read and write one).
#include "core/io/pir_op_table.h"

#include <sstream>

#include "core/platform/enforce.h"

namespace tide::core {
namespace {

// One row, in a compact notation parsed once:
//  operands: per PIR operand, space-separated: `Slot` (a Fluid input), `=attr` (a constant
//    folded into a Fluid attribute), `=attr/Slot` or `=attr/Slot/ListSlot` (the attribute when
//    constant, else that input, or the list input for a builtin.combine), `-` (dropped);
//  results: per PIR result, `Slot`, `Slot@N` (shares operand N's variable) or `-` (dropped);
//  renames: `pir>fluid` pairs, `pir>-` dropping the attribute.
struct Entry {
  const char* pir;
  const char* fluid;
  const char* operands;
  const char* results;
  const char* renames;
  AttributeMap fixed;
  const char* dtype_of_input = "";
  int cast_result_from = PirOpRule::kSameType;
};

// Fluid's element-wise ops broadcast as numpy does with axis -1, which PIR's always mean; the
// InferenceTranspiler reads the attribute.
const AttributeMap kAxis = {{"axis", int32_t{-1}}};

const Entry kEntries[] = {
    // Convolutions, pooling, normalisation.
    {"pd_op.conv2d", "conv2d", "Input Filter", "Output", ""},
    {"pd_op.depthwise_conv2d", "depthwise_conv2d", "Input Filter", "Output", ""},
    {"pd_op.pool2d", "pool2d", "X =ksize", "Out", "kernel_size>ksize"},
    {"pd_op.max_pool2d_with_index", "max_pool2d_with_index", "X", "Out Mask", "kernel_size>ksize"},
    {"pd_op.conv2d_transpose", "conv2d_transpose",
     "Input Filter =output_size/OutputSize/OutputSizeTensor", "Output", ""},
    {"pd_op.depthwise_conv2d_transpose", "depthwise_conv2d_transpose",
     "Input Filter =output_size/OutputSize/OutputSizeTensor", "Output", ""},
    {"pd_op.batch_norm", "batch_norm", "X Mean Variance Scale Bias",
     "Y MeanOut@1 VarianceOut@2 SavedMean SavedVariance ReserveSpace", "data_format>data_layout"},
    {"pd_op.layer_norm", "layer_norm", "X Scale Bias", "Y Mean Variance", ""},
    {"pd_op.dropout", "dropout", "X Seed =dropout_prob", "Out Mask", "mode>dropout_implementation"},
    // Resizing (F.interpolate / F.upsample): Paddle 2.x's v2 ops.
    {"pd_op.nearest_interp", "nearest_interp_v2", "X OutSize SizeTensor Scale", "Out",
     "data_format>data_layout"},
    {"pd_op.bilinear_interp", "bilinear_interp_v2", "X OutSize SizeTensor Scale", "Out",
     "data_format>data_layout"},
    // Volumetric ops of 3-D CNNs (vol3d: conv3d_ops.cc, pool3d_op.cc, max_pool_with_index_op.cc,
    // interp_pad2d_ops.cc's 5-D interps).
    {"pd_op.conv3d", "conv3d", "Input Filter", "Output", ""},
    // PIR's conv3d_transpose takes output_size as an attribute (conv2d_transpose's is an operand).
    {"pd_op.conv3d_transpose", "conv3d_transpose", "Input Filter", "Output", ""},
    // pool3d's kernel_size is an attribute too (pool2d's an operand).
    {"pd_op.pool3d", "pool3d", "X", "Out", "kernel_size>ksize"},
    {"pd_op.max_pool3d_with_index", "max_pool3d_with_index", "X", "Out Mask", "kernel_size>ksize"},
    // pd_op.nearest_interp (above) reads a 5-D X as well.
    {"pd_op.trilinear_interp", "trilinear_interp_v2", "X OutSize SizeTensor Scale", "Out",
     "data_format>data_layout"},
    // Linear algebra and element-wise arithmetic (Fluid's axis -1: numpy broadcasting).
    {"pd_op.matmul", "matmul_v2", "X Y", "Out", "transpose_x>trans_x transpose_y>trans_y"},
    {"pd_op.add", "elementwise_add", "X Y", "Out", "", kAxis},
    {"pd_op.subtract", "elementwise_sub", "X Y", "Out", "", kAxis},
    {"pd_op.multiply", "elementwise_mul", "X Y", "Out", "", kAxis},
    {"pd_op.divide", "elementwise_div", "X Y", "Out", "", kAxis},
    {"pd_op.maximum", "elementwise_max", "X Y", "Out", "", kAxis},
    {"pd_op.minimum", "elementwise_min", "X Y", "Out", "", kAxis},
    {"pd_op.elementwise_pow", "elementwise_pow", "X Y", "Out", "", kAxis},
    {"pd_op.remainder", "elementwise_mod", "X Y", "Out", "", kAxis},
    {"pd_op.floor_divide", "elementwise_floordiv", "X Y", "Out", "", kAxis},
    {"pd_op.bmm", "bmm", "X Y", "Out", ""},
    {"pd_op.where", "where", "Condition X Y", "Out", ""},
    {"pd_op.p_norm", "p_norm", "X", "Out", ""},
    {"pd_op.logsumexp", "logsumexp", "X", "Out", ""},
    {"pd_op.scale", "scale", "X =scale/ScaleTensor", "Out", ""},
    {"pd_op.equal", "equal", "X Y", "Out", "", kAxis},
    {"pd_op.not_equal", "not_equal", "X Y", "Out", "", kAxis},
    {"pd_op.less_than", "less_than", "X Y", "Out", "", kAxis},
    {"pd_op.less_equal", "less_equal", "X Y", "Out", "", kAxis},
    {"pd_op.greater_than", "greater_than", "X Y", "Out", "", kAxis},
    {"pd_op.greater_equal", "greater_equal", "X Y", "Out", "", kAxis},
    {"pd_op.cumsum", "cumsum", "X =axis", "Out", ""},
    {"pd_op.pow", "pow", "X", "Out", "y>factor"},
    {"pd_op.clip", "clip", "X =min/Min =max/Max", "Out", ""},
    {"pd_op.logical_and", "logical_and", "X Y", "Out", ""},
    {"pd_op.logical_or", "logical_or", "X Y", "Out", ""},
    {"pd_op.logical_xor", "logical_xor", "X Y", "Out", ""},
    {"pd_op.logical_not", "logical_not", "X", "Out", ""},
    // Reductions: an empty axis reduces every dim (to a 0-D result, as the program declares).
    {"pd_op.mean", "reduce_mean", "X =dim", "Out", "keepdim>keep_dim"},
    {"pd_op.sum", "reduce_sum", "X =dim", "Out", "keepdim>keep_dim dtype>out_dtype"},
    {"pd_op.max", "reduce_max", "X =dim", "Out", "keepdim>keep_dim"},
    {"pd_op.min", "reduce_min", "X =dim", "Out", "keepdim>keep_dim"},
    {"pd_op.all", "reduce_all", "X", "Out", "axis>dim keepdim>keep_dim"},
    {"pd_op.any", "reduce_any", "X", "Out", "axis>dim keepdim>keep_dim"},
    // Activations.
    {"pd_op.relu", "relu", "X", "Out", ""},
    {"pd_op.relu6", "relu6", "X", "Out", ""},
    {"pd_op.sigmoid", "sigmoid", "X", "Out", ""},
    {"pd_op.tanh", "tanh", "X", "Out", ""},
    {"pd_op.exp", "exp", "X", "Out", ""},
    {"pd_op.log", "log", "X", "Out", ""},
    {"pd_op.sin", "sin", "X", "Out", ""},
    {"pd_op.cos", "cos", "X", "Out", ""},
    {"pd_op.sqrt", "sqrt", "X", "Out", ""},
    {"pd_op.abs", "abs", "X", "Out", ""},
    {"pd_op.gelu", "gelu", "X", "Out", ""},
    {"pd_op.leaky_relu", "leaky_relu", "X", "Out", "negative_slope>alpha"},
    {"pd_op.hardswish", "hard_swish", "X", "Out", ""},
    {"pd_op.hardsigmoid", "hard_sigmoid", "X", "Out", ""},
    {"pd_op.swish", "swish", "X", "Out", ""},
    {"pd_op.softmax", "softmax", "X", "Out", ""},
    {"pd_op.log_softmax", "log_softmax", "X", "Out", ""},
    {"pd_op.silu", "silu", "X", "Out", ""},
    {"pd_op.mish", "mish", "X", "Out", "lambda>threshold"},
    {"pd_op.erf", "erf", "X", "Out", ""},
    // Shapes and layout (the *2 ops' XShape is an optional output Paddle 3.x no longer has).
    {"pd_op.reshape", "reshape2", "X =shape/Shape/ShapeTensor", "Out", ""},
    {"pd_op.transpose", "transpose2", "X", "Out", "perm>axis"},
    {"pd_op.flatten", "flatten_contiguous_range", "X", "Out", ""},
    {"pd_op.unsqueeze", "unsqueeze2", "X =axes/AxesTensor/AxesTensorList", "Out", ""},
    {"pd_op.squeeze", "squeeze2", "X =axes", "Out", ""},
    {"pd_op.expand", "expand_v2", "X =shape/Shape/expand_shapes_tensor", "Out", ""},
    {"pd_op.expand_as", "expand_as_v2", "X Y", "Out", ""},
    {"pd_op.tile", "tile", "X =repeat_times/RepeatTimes/repeat_times_tensor", "Out", ""},
    {"pd_op.pad3d", "pad3d", "X =paddings/Paddings", "Out", "pad_value>value"},
    {"pd_op.flip", "flip", "X", "Out", ""},
    {"pd_op.roll", "roll", "X =shifts/ShiftsTensor", "Out", ""},
    {"pd_op.slice", "slice",
     "Input =starts/StartsTensor/StartsTensorList =ends/EndsTensor/EndsTensorList", "Out", ""},
    {"pd_op.strided_slice", "strided_slice",
     "Input =starts/StartsTensor/StartsTensorList =ends/EndsTensor/EndsTensorList "
     "=strides/StridesTensor/StridesTensorList",
     "Out", ""},
    // The counter and tensor-array operations of PIR's loops; array_write_ writes into its
    // array operand's variable, as Fluid's write_to_array into its Out.
    {"pd_op.increment", "increment", "X", "Out", "value>step"},
    {"pd_op.array_write_", "write_to_array", "- X I", "Out@0", ""},
    {"pd_op.array_read", "read_from_array", "X I", "Out", ""},
    {"pd_op.array_length", "array_length", "X", "Out", ""},
    // paddle.stack / concat of such a list, list[i] and list[a:b] (a negative index counts from
    // the array's end at run time: ops of their own, plugins/ops_control/slice_array_ops.cc).
    {"pd_op.array_to_tensor", "tensor_array_to_tensor", "X", "Out OutIndex", ""},
    {"pd_op.slice_array_dense", "slice_array_dense", "Input =starts/StartsTensor/StartsTensorList",
     "Out", ""},
    {"pd_op.slice_array", "slice_array",
     "Input =starts/StartsTensor/StartsTensorList =ends/EndsTensor/EndsTensorList", "Out", ""},
    // A slice assignment x[...] = v: a constant's elements in `values` (as float64) and
    // `shape`, a tensor in set_value_with_tensor's second operand; the in-place set_value_ /
    // set_value_with_tensor_ that to_static writes read as these (a fresh Out).
    {"pd_op.set_value", "set_value",
     "Input =starts//StartsTensorList =ends//EndsTensorList =steps//StepsTensorList", "Out", ""},
    {"pd_op.set_value_with_tensor", "set_value",
     "Input ValueTensor =starts//StartsTensorList =ends//EndsTensorList "
     "=steps//StepsTensorList",
     "Out", ""},
    {"pd_op.concat", "concat", "X =axis/AxisTensor", "Out", ""},
    // split's results are a vector of tensors that builtin.split unpacks.
    {"pd_op.split_with_num", "split", "X =axis/AxisTensor", "Out", ""},
    {"pd_op.split", "split", "X =sections//SectionsTensorList =axis/AxisTensor", "Out", ""},
    {"pd_op.gather", "gather", "X Index =axis/Axis", "Out", ""},
    {"pd_op.index_select", "index_select", "X Index", "Out", "axis>dim"},
    // unbind's results are a vector of tensors, as split's.
    {"pd_op.unbind", "unbind", "X", "Out", ""},
    {"pd_op.one_hot", "one_hot_v2", "X =depth/depth_tensor", "Out", ""},
    {"pd_op.topk", "top_k_v2", "X =k/K", "Out Indices", ""},
    {"pd_op.index_sample", "index_sample", "X Index", "Out", ""},
    {"pd_op.take_along_axis", "take_along_axis", "Input Index", "Result", "axis>Axis"},
    {"pd_op.masked_select", "masked_select", "X Mask", "Y", ""},
    // Indices are int64, as Paddle's; argsort is stable in Tide, what `stable` asks.
    {"pd_op.argmax", "arg_max", "X =axis", "Out", ""},
    {"pd_op.argmin", "arg_min", "X =axis", "Out", ""},
    {"pd_op.argsort", "argsort", "X", "Out Indices", "stable>-"},
    {"pd_op.stack", "stack", "X", "Y", ""},
    {"pd_op.shape", "shape", "Input", "Out", ""},
    {"pd_op.shape64", "shape", "Input", "Out", "", {}, "", proto::VarType::INT32},
    {"pd_op.cast", "cast", "X", "Out", "dtype>out_dtype", {}, "in_dtype"},
    {"pd_op.assign", "assign", "X", "Out", ""},
    // Tensor.detach(): a copy whose variable the loader marks stop_gradient.
    {"pd_op.share_data_", "assign", "X", "Out", ""},
    // Creating tensors (place: where Paddle puts them; Tide's executor decides).
    {"pd_op.full", "fill_constant", "", "Out", "place>-"},
    {"pd_op.full_like", "fill_any_like", "X =value", "Out", "place>-"},
    {"pd_op.full_with_tensor", "fill_constant",
     "=value/ValueTensor =shape/ShapeTensor/ShapeTensorList", "Out", ""},
    // Fluid's range computes in its inputs' type (Paddle 3 saves them float64), PIR's in `dtype`.
    {"pd_op.arange",
     "range",
     "Start End Step",
     "Out",
     "place>- dtype>-",
     {},
     "",
     PirOpRule::kFirstOperandType},
    // Random ops (plugins/ops_math/fill_ops.cc, random_ops.cc; seed 0, or none: a fresh draw
    // each run): paddle.uniform's min / max are constant operands; rrelu's Noise is its grad's.
    {"pd_op.gaussian", "gaussian_random", "=shape/ShapeTensor/ShapeTensorList", "Out", "place>-"},
    {"pd_op.uniform", "uniform_random", "=shape/ShapeTensor/ShapeTensorList =min =max", "Out",
     "place>-"},
    {"pd_op.randint", "randint", "=shape/ShapeTensor/ShapeTensorList", "Out", "place>-"},
    {"pd_op.randperm", "randperm", "", "Out", "place>-"},
    {"pd_op.bernoulli", "bernoulli", "X", "Out", ""},
    {"pd_op.multinomial", "multinomial", "X =num_samples", "Out", ""},
    {"pd_op.gumbel_softmax", "gumbel_softmax", "X", "Out", ""},
    {"pd_op.rrelu", "rrelu", "X", "Out Noise", ""},
    {"pd_op.tril", "tril_triu", "X", "Out", "", {{"lower", true}}},
    {"pd_op.triu", "tril_triu", "X", "Out", "", {{"lower", false}}},
    // Shape and rearrangement ops (plugins/ops_nn/shuffle_ops.cc, diagonal_trace_ops.cc,
    // meshgrid_op.cc, cumprod_op.cc; plugins/ops_math/linspace_numel_ops.cc, reduce_dim_ops.cc):
    // numel is Fluid's size; meshgrid's results, a vector, are unpacked by builtin.split;
    // repeat_interleave's output_size (a hint, -1 when unknown) is not Fluid's.
    {"pd_op.pixel_shuffle", "pixel_shuffle", "X", "Out", ""},
    {"pd_op.pixel_unshuffle", "pixel_unshuffle", "X", "Out", ""},
    {"pd_op.channel_shuffle", "channel_shuffle", "X", "Out", ""},
    {"pd_op.diagonal", "diagonal", "Input", "Out", ""},
    {"pd_op.trace", "trace", "Input", "Out", ""},
    {"pd_op.numel", "size", "Input", "Out", ""},
    {"pd_op.meshgrid", "meshgrid", "X", "Out", ""},
    {"pd_op.linspace", "linspace", "Start Stop Num", "Out", "place>-"},
    {"pd_op.amax", "reduce_amax", "X", "Out", "axis>dim keepdim>keep_dim"},
    {"pd_op.amin", "reduce_amin", "X", "Out", "axis>dim keepdim>keep_dim"},
    {"pd_op.cumprod", "cumprod", "X", "Out", ""},
    {"pd_op.kron", "kron", "X Y", "Out", ""},
    {"pd_op.repeat_interleave", "repeat_interleave", "X", "Out",
     "repeats>Repeats axis>dim output_size>-"},
    {"pd_op.repeat_interleave_with_tensor_index", "repeat_interleave", "X RepeatsTensor", "Out",
     "axis>dim output_size>-"},
    // Vision ops (plugins/ops_nn/grid_sample_ops.cc, unfold_op.cc, put_along_searchsorted_ops.cc,
    // interp_pad2d_ops.cc): grid_sample is Fluid's grid_sampler; affine_grid's output_shape a
    // constant or a tensor (OutputShape).
    {"pd_op.grid_sample", "grid_sampler", "X Grid", "Output", ""},
    {"pd_op.affine_grid", "affine_grid", "Theta =output_shape/OutputShape", "Output", ""},
    {"pd_op.bicubic_interp", "bicubic_interp_v2", "X OutSize SizeTensor Scale", "Out",
     "data_format>data_layout"},
    {"pd_op.unfold", "unfold", "X", "Y", ""},
    {"pd_op.put_along_axis", "put_along_axis", "Input Index Value", "Result",
     "axis>Axis reduce>Reduce include_self>Include_self"},
    {"pd_op.searchsorted", "searchsorted", "SortedSequence Values", "Out", ""},
    // Elementwise math, tests and activations (the "unary" ops: plugins/ops_math/
    // paddle_math_activations.h, isfinite_ops.cc; hardtanh is Fluid's brelu), gather_nd,
    // scatter, group_norm and instance_norm (their mean / variance results: Fluid's slots).
    {"pd_op.log1p", "log1p", "X", "Out", ""},
    {"pd_op.expm1", "expm1", "X", "Out", ""},
    {"pd_op.sinh", "sinh", "X", "Out", ""},
    {"pd_op.cosh", "cosh", "X", "Out", ""},
    {"pd_op.asinh", "asinh", "X", "Out", ""},
    {"pd_op.acosh", "acosh", "X", "Out", ""},
    {"pd_op.atanh", "atanh", "X", "Out", ""},
    {"pd_op.trunc", "trunc", "X", "Out", ""},
    {"pd_op.selu", "selu", "X", "Out", ""},
    {"pd_op.celu", "celu", "X", "Out", ""},
    {"pd_op.logit", "logit", "X", "Out", ""},
    {"pd_op.erfinv", "erfinv", "X", "Out", ""},
    {"pd_op.lgamma", "lgamma", "X", "Out", ""},
    {"pd_op.digamma", "digamma", "X", "Out", ""},
    {"pd_op.isnan", "isnan_v2", "X", "Out", ""},
    {"pd_op.isinf", "isinf_v2", "X", "Out", ""},
    {"pd_op.isfinite", "isfinite_v2", "X", "Out", ""},
    {"pd_op.hardtanh", "brelu", "X", "Out", ""},
    {"pd_op.elu", "elu", "X", "Out", ""},
    {"pd_op.reciprocal", "reciprocal", "X", "Out", ""},
    {"pd_op.rsqrt", "rsqrt", "X", "Out", ""},
    {"pd_op.sign", "sign", "X", "Out", ""},
    {"pd_op.logsigmoid", "logsigmoid", "X", "Out", ""},
    {"pd_op.softsign", "softsign", "X", "Out", ""},
    {"pd_op.tanh_shrink", "tanh_shrink", "X", "Out", ""},
    {"pd_op.gather_nd", "gather_nd", "X Index", "Out", ""},
    {"pd_op.scatter", "scatter", "X Ids Updates", "Out", ""},
    {"pd_op.group_norm", "group_norm", "X Scale Bias", "Y Mean Variance",
     "data_format>data_layout"},
    {"pd_op.instance_norm", "instance_norm", "X Scale Bias", "Y SavedMean SavedVariance", ""},
    // Binary and selection math ops (plugins/ops_math/atan2_op.cc, elementwise_ops.cc,
    // logcumsumexp_op.cc, dist_op.cc, selection_ops.cc): atan2's operands are Fluid's X1 / X2;
    // fmax, fmin and heaviside are Fluid's elementwise_* ops; median's indices: MedianIndex.
    {"pd_op.atan2", "atan2", "X1 X2", "Out", ""},
    {"pd_op.fmax", "elementwise_fmax", "X Y", "Out", "", kAxis},
    {"pd_op.fmin", "elementwise_fmin", "X Y", "Out", "", kAxis},
    {"pd_op.heaviside", "elementwise_heaviside", "X Y", "Out", "", kAxis},
    {"pd_op.logcumsumexp", "logcumsumexp", "X", "Out", ""},
    {"pd_op.dist", "dist", "X Y", "Out", ""},
    {"pd_op.kthvalue", "kthvalue", "X", "Out Indices", ""},
    {"pd_op.mode", "mode", "X", "Out Indices", ""},
    {"pd_op.median", "median", "X", "Out MedianIndex", ""},
    // Math ops Tide had without PIR rows, and the "misc" ops (mathmisc; docs/paddle_ops.md):
    // hardshrink is Fluid's hard_shrink, softshrink's threshold Fluid's lambda, nonzero Fluid's
    // where_index, prod Fluid's reduce_prod.
    {"pd_op.round", "round", "X", "Out", ""},
    {"pd_op.floor", "floor", "X", "Out", ""},
    {"pd_op.ceil", "ceil", "X", "Out", ""},
    {"pd_op.square", "square", "X", "Out", ""},
    {"pd_op.asin", "asin", "X", "Out", ""},
    {"pd_op.acos", "acos", "X", "Out", ""},
    {"pd_op.atan", "atan", "X", "Out", ""},
    {"pd_op.softplus", "softplus", "X", "Out", ""},
    {"pd_op.softshrink", "softshrink", "X", "Out", "threshold>lambda"},
    {"pd_op.hardshrink", "hard_shrink", "X", "Out", ""},
    {"pd_op.prelu", "prelu", "X Alpha", "Out", ""},
    {"pd_op.stanh", "stanh", "X", "Out", ""},
    {"pd_op.thresholded_relu", "thresholded_relu", "X", "Out", ""},
    {"pd_op.clip_by_norm", "clip_by_norm", "X", "Out", ""},
    {"pd_op.nonzero", "where_index", "Condition", "Out", ""},
    {"pd_op.prod", "reduce_prod", "X =dim", "Out", "keepdim>keep_dim"},
    // plugins/ops_math/paddle_math_activations.h, bitwise_ops.cc and vector_ops.cc: diag is
    // Fluid's diag_v2, cross's axis its dim, addmm's alpha / beta its Alpha / Beta; eye's
    // num_rows / num_columns are constants (full) folded into its attributes.
    {"pd_op.tan", "tan", "X", "Out", ""},
    {"pd_op.log2", "log2", "X", "Out", ""},
    {"pd_op.log10", "log10", "X", "Out", ""},
    {"pd_op.bitwise_and", "bitwise_and", "X Y", "Out", ""},
    {"pd_op.bitwise_or", "bitwise_or", "X Y", "Out", ""},
    {"pd_op.bitwise_xor", "bitwise_xor", "X Y", "Out", ""},
    {"pd_op.bitwise_not", "bitwise_not", "X", "Out", ""},
    {"pd_op.eye", "eye", "=num_rows =num_columns", "Out", "place>-"},
    {"pd_op.diag", "diag_v2", "X", "Out", ""},
    {"pd_op.dot", "dot", "X Y", "Out", ""},
    {"pd_op.mv", "mv", "X Vec", "Out", ""},
    {"pd_op.cross", "cross", "X Y", "Out", "axis>dim"},
    {"pd_op.lerp", "lerp", "X Y Weight", "Out", ""},
    {"pd_op.addmm", "addmm", "Input X Y", "Out", "alpha>Alpha beta>Beta"},
    // einsum, baddbmm, frobenius_norm, matrix_power, renorm (plugins/ops_math/einsum_op.cc,
    // baddbmm_op.cc, frobenius_norm_op.cc, matrix_power_op.cc, renorm_op.cc): einsum's operands
    // are one builtin.combine list (Fluid's Operands), its inner_cache and xshape results Paddle's
    // grad's (dropped); frobenius_norm's axis operand is Fluid's dim.
    {"pd_op.einsum", "einsum", "Operands", "Out - -", ""},
    {"pd_op.baddbmm", "baddbmm", "Input X Y", "Out", "alpha>Alpha beta>Beta"},
    {"pd_op.frobenius_norm", "frobenius_norm", "X =dim", "Out", ""},
    {"pd_op.matrix_power", "matrix_power", "X", "Out", ""},
    {"pd_op.renorm", "renorm", "X", "Out", ""},
    // Indexing, scattering and counting ops (indexops: plugins/ops_nn/cummax_cummin_op.cc,
    // masked_fill_op.cc, index_add_op.cc, scatter_nd_add_op.cc, index_put_op.cc, diag_embed_op.cc,
    // tri_indices_op.cc; plugins/ops_math/bincount_histogram_ops.cc, unique_op.cc; index_put's
    // indices are a builtin.combine list, bincount's minlength a constant).
    {"pd_op.cummax", "cummax", "x", "out indices", ""},
    {"pd_op.cummin", "cummin", "x", "out indices", ""},
    {"pd_op.masked_fill", "masked_fill", "x mask value", "out", ""},
    {"pd_op.index_add", "index_add", "X Index AddValue", "Out", ""},
    {"pd_op.scatter_nd_add", "scatter_nd_add", "X Index Updates", "Out", ""},
    {"pd_op.index_put", "index_put", "x indices value", "out", ""},
    {"pd_op.diag_embed", "diag_embed", "Input", "Out", ""},
    {"pd_op.triu_indices", "triu_indices", "", "out", "place>-"},
    {"pd_op.tril_indices", "tril_indices", "", "out", "place>-"},
    {"pd_op.bincount", "bincount", "X Weights =minlength/MinLength", "Out", ""},
    {"pd_op.histogram", "histogram", "X Weight", "Out", ""},
    {"pd_op.unique", "unique", "X", "Out Indices Index Counts", ""},
    // Dense linear algebra (plugins/ops_linalg, linalg's rows): det and slogdet are Fluid's
    // determinant / slogdeterminant (Input -> Out), inverse's result Fluid's Output;
    // paddle.linalg.pinv is svd and element-wise ops.
    {"pd_op.det", "determinant", "Input", "Out", ""},
    {"pd_op.slogdet", "slogdeterminant", "Input", "Out", ""},
    {"pd_op.inverse", "inverse", "Input", "Output", ""},
    {"pd_op.cholesky", "cholesky", "X", "Out", ""},
    {"pd_op.triangular_solve", "triangular_solve", "X Y", "Out", ""},
    {"pd_op.solve", "solve", "X Y", "Out", ""},
    {"pd_op.cholesky_solve", "cholesky_solve", "X Y", "Out", ""},
    {"pd_op.svd", "svd", "X", "U S VH", ""},
    {"pd_op.qr", "qr", "X", "Q R", ""},
    {"pd_op.eigh", "eigh", "X", "Eigenvalues Eigenvectors", ""},
    {"pd_op.eigvalsh", "eigvalsh", "X", "Eigenvalues Eigenvectors", "uplo>UPLO"},
    // paddle.linalg.pinv of a batch of dynamic size fills its cut-off through it.
    {"pd_op.full_batch_size_like", "fill_constant_batch_size_like", "Input", "Out", "place>-"},
    // (end of linalg's rows)
    // linalg2's rows (plugins/ops_linalg/lu_ops.cc, matrix_rank_op.cc, lstsq_op.cc,
    // multi_dot_op.cc; plugins/ops_math/conj_op.cc, nanmedian_op.cc): matrix_rank_tol is Fluid's
    // matrix_rank with its TolTensor, lstsq's rcond a constant, multi_dot's operand a
    // builtin.combine list. Paddle 3.3.1 declares matrix_rank's results float32, yet its kernels
    // write int64 and its executor gives int64: so does Tide's.
    {"pd_op.lu", "lu", "X", "Out Pivots Infos", ""},
    {"pd_op.lu_unpack", "lu_unpack", "X Pivots", "Pmat L U", ""},
    {"pd_op.matrix_rank", "matrix_rank", "X", "Out", ""},
    {"pd_op.matrix_rank_tol", "matrix_rank", "X TolTensor", "Out", ""},
    {"pd_op.matrix_rank_atol_rtol", "matrix_rank_atol_rtol", "X atol rtol", "Out", ""},
    {"pd_op.lstsq", "lstsq", "X Y =rcond", "Solution Residuals Rank SingularValues", ""},
    {"pd_op.multi_dot", "multi_dot", "X", "Out", ""},
    {"pd_op.conj", "conj", "X", "Out", ""},
    {"pd_op.nanmedian", "nanmedian", "X", "Out MedianIndex", ""},
    // Graph message passing (plugins/ops_graph, graph's rows): paddle.geometric's segment_* and
    // send_* ops; out_size a constant (Fluid's attribute) or a tensor (Out_size).
    {"pd_op.segment_pool", "segment_pool", "X SegmentIds", "Out SummedIds", ""},
    {"pd_op.send_u_recv", "send_u_recv", "X Src_index Dst_index =out_size/Out_size",
     "Out Dst_count", ""},
    {"pd_op.send_ue_recv", "send_ue_recv", "X Y Src_index Dst_index =out_size/Out_size",
     "Out Dst_count", ""},
    {"pd_op.send_uv", "send_uv", "X Y Src_index Dst_index", "Out", ""},
    {"pd_op.reindex_graph", "graph_reindex", "X Neighbors Count HashTable_Value HashTable_Index",
     "Reindex_Src Reindex_Dst Out_Nodes", ""},
    // (end of graph's rows)
    // Spectral ops (plugins/ops_fft, fft's rows): paddle.fft's transforms (axes, normalization,
    // forward, onesided, last_dim_size as Fluid's), paddle.signal's frame and overlap_add (stft /
    // istft, paddle.audio's spectrograms).
    {"pd_op.fft_c2c", "fft_c2c", "X", "Out", ""},
    {"pd_op.fft_r2c", "fft_r2c", "X", "Out", ""},
    {"pd_op.fft_c2r", "fft_c2r", "X", "Out", ""},
    {"pd_op.frame", "frame", "X", "Out", ""},
    {"pd_op.overlap_add", "overlap_add", "X", "Out", ""},
    // (end of fft's rows)
    // Losses and special functions (lossact: plugins/ops_nn/loss_ops.cc, temporal_shift_op.cc,
    // rms_norm_ops.cc, rotary_embedding_op.cc; plugins/ops_math/bessel_polygamma_ops.cc,
    // swiglu_op.cc): F.cross_entropy is
    // Fluid's softmax_with_cross_entropy, a reduction 'mean' Fluid's mean; sequence_mask's max_len
    // a constant or a tensor; fused_rms_norm_quant refuses quantisation (quant_scale > 0).
    {"pd_op.cross_entropy_with_softmax", "softmax_with_cross_entropy", "Logits Label",
     "Softmax Loss", ""},
    {"pd_op.mean_all", "mean", "X", "Out", ""},
    {"pd_op.label_smooth", "label_smooth", "X PriorDist", "Out", ""},
    {"pd_op.maxout", "maxout", "X", "Out", ""},
    {"pd_op.sequence_mask", "sequence_mask", "X =maxlen/MaxLenTensor", "Y", ""},
    {"pd_op.huber_loss", "huber_loss", "X Y", "Out Residual", ""},
    {"pd_op.kldiv_loss", "kldiv_loss", "X Target", "Loss", ""},
    {"pd_op.sigmoid_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
     "X Label pos_weight", "Out", ""},
    {"pd_op.temporal_shift", "temporal_shift", "X", "Out", ""},
    {"pd_op.i0", "i0", "x", "out", ""},
    {"pd_op.i0e", "i0e", "x", "out", ""},
    {"pd_op.i1", "i1", "x", "out", ""},
    {"pd_op.i1e", "i1e", "x", "out", ""},
    {"pd_op.polygamma", "polygamma", "x", "out", ""},
    {"pd_op.swiglu", "swiglu", "x y", "out", ""},
    {"pd_op.rms_norm", "rms_norm", "x scale", "y invvar", ""},
    {"pd_op.fused_rms_norm_quant", "fused_rms_norm_quant", "x bias residual norm_weight norm_bias",
     "out residual_out inv_var", ""},
    {"pd_op.fused_rotary_position_embedding", "fused_rotary_position_embedding",
     "q k v sin cos position_ids", "out_q out_k out_v", ""},
    {"pd_op.fused_softmax_mask_upper_triangle", "fused_softmax_mask_upper_triangle", "X", "Out",
     ""},
    // Embeddings.
    {"pd_op.embedding", "lookup_table_v2", "Ids W", "Out", "sparse>is_sparse"},
    // Recurrent layers (nn.LSTM / GRU / SimpleRNN): PIR's dropout_state_in operand and its
    // dropout_state_out and reserve results (training's) are not Fluid's inputs.
    {"pd_op.rnn", "rnn", "Input PreState WeightList SequenceLength -", "Out - State -", ""},
    // Quantization (plugins/ops_nn/quant_ops.cc): Paddle 3.x's paddle.quantization QAT / PTQ
    // after `convert` (quantize_linear / dequantize_linear: x, scale, zero_point, in_accum,
    // in_state -> y, out_state, out_accum, out_scale) and its quanters' fake ops before it. The
    // training state (in_accum / in_state, whose saved values are zeros, and out_state /
    // out_accum) is not read in inference: dropped; the fake ops' out_scale is kept (the legacy
    // pattern's fake_dequantize_max_abs reads it). Their attributes are Fluid's, by name.
    {"pd_op.quantize_linear", "quantize_linear", "X Scale ZeroPoint - -", "Y - - -", ""},
    {"pd_op.dequantize_linear", "dequantize_linear", "X Scale ZeroPoint - -", "Y - - -", ""},
    {"pd_op.fake_quantize_dequantize_moving_average_abs_max",
     "fake_quantize_dequantize_moving_average_abs_max", "X InScale - -", "Out OutScale - -", ""},
    {"pd_op.fake_quantize_moving_average_abs_max", "fake_quantize_moving_average_abs_max",
     "X InScale - -", "Out OutScale - -", ""},
    {"pd_op.fake_quantize_dequantize_abs_max", "fake_quantize_dequantize_abs_max", "X",
     "Out OutScale", ""},
    {"pd_op.fake_quantize_abs_max", "fake_quantize_abs_max", "X", "Out OutScale", ""},
    {"pd_op.fake_channel_wise_quantize_dequantize_abs_max",
     "fake_channel_wise_quantize_dequantize_abs_max", "X", "Out OutScale", ""},
    {"pd_op.fake_channel_wise_quantize_abs_max", "fake_channel_wise_quantize_abs_max", "X",
     "Out OutScale", ""},
    {"pd_op.fake_dequantize_max_abs", "fake_dequantize_max_abs", "X Scale", "Out", ""},
    {"pd_op.fake_channel_wise_dequantize_max_abs", "fake_channel_wise_dequantize_max_abs",
     "X Scales", "Out", ""},
    {"pd_op.moving_average_abs_max_scale", "moving_average_abs_max_scale", "X - -", "Out - - -",
     ""},
    // Object detection (plugins/ops_detection, detect's rows):
    {"pd_op.yolo_box", "yolo_box", "X ImgSize", "Boxes Scores", ""},
    {"pd_op.nms", "nms", "Boxes", "KeepBoxesIdxs", "threshold>iou_threshold"},
    {"pd_op.multiclass_nms3", "multiclass_nms3", "BBoxes Scores RoisNum", "Out Index NmsRoisNum",
     ""},
    {"pd_op.box_coder", "box_coder", "PriorBox PriorBoxVar TargetBox", "OutputBox", ""},
    {"pd_op.prior_box", "prior_box", "Input Image", "Boxes Variances", ""},
    {"pd_op.roi_align", "roi_align", "X ROIs RoisNum", "Out", ""},
    {"pd_op.deformable_conv", "deformable_conv", "Input Offset Filter Mask", "Output", ""},
    {"pd_op.matrix_nms", "matrix_nms", "BBoxes Scores", "Out Index RoisNum", ""},
    {"pd_op.roi_pool", "roi_pool", "X ROIs RoisNum", "Out Argmax", ""},
    {"pd_op.distribute_fpn_proposals", "distribute_fpn_proposals", "FpnRois RoisNum",
     "MultiFpnRois MultiLevelRoIsNum RestoreIndex", ""},
    {"pd_op.generate_proposals", "generate_proposals_v2",
     "Scores BboxDeltas ImShape Anchors Variances", "RpnRois RpnRoiProbs RpnRoisNum",
     "pre_nms_top_n>pre_nms_topN post_nms_top_n>post_nms_topN"},
    // (end of detect's rows)
    // More nn ops (nnextra: plugins/ops_nn's fold in unfold_op.cc, unpool_op.cc, lp_pool2d_op.cc,
    // linear_interp_op.cc, crop_tensor_op.cc, spectral_norm_op.cc,
    // bilinear_tensor_product_op.cc, multiplex_op.cc, shard_index_op.cc; pad is Fluid's, its
    // pad_value a constant).
    {"pd_op.fold", "fold", "X", "Y", ""},
    {"pd_op.unpool", "unpool", "X Indices =output_size", "Out", "padding>paddings"},
    {"pd_op.unpool3d", "unpool3d", "X Indices", "Out", ""},
    {"pd_op.lp_pool2d", "lp_pool2d", "X", "Out", "kernel_size>ksize"},
    {"pd_op.linear_interp", "linear_interp_v2", "X OutSize SizeTensor Scale", "Out",
     "data_format>data_layout"},
    {"pd_op.pad", "pad", "X =pad_value", "Out", ""},
    {"pd_op.crop", "crop_tensor", "X =shape/Shape/ShapeTensor =offsets/Offsets/OffsetsTensor",
     "Out", ""},
    {"pd_op.spectral_norm", "spectral_norm", "Weight U V", "Out", ""},
    {"pd_op.bilinear", "bilinear_tensor_product", "X Y Weight Bias", "Out", ""},
    {"pd_op.multiplex", "multiplex", "X Ids", "Out", ""},
    {"pd_op.shard_index", "shard_index", "X", "Out", ""},
    // (end of nnextra's rows)
    // Probability losses and sequence decoding (lossseq: plugins/ops_nn/prob_loss_ops.cc;
    // plugins/ops_sequence/warpctc_op.cc, viterbi_decode_op.cc, gather_tree_op.cc): F.ctc_loss is
    // Fluid's warpctc on padded logits with their lengths (WarpCTCGrad kept for its grad).
    {"pd_op.bce_loss", "bce_loss", "X Label", "Out", ""},
    {"pd_op.log_loss", "log_loss", "Predicted Labels", "Loss", ""},
    {"pd_op.nll_loss", "nll_loss", "X Label Weight", "Out Total_weight", ""},
    {"pd_op.warpctc", "warpctc", "Logits Label LogitsLength LabelLength", "Loss WarpCTCGrad", ""},
    {"pd_op.viterbi_decode", "viterbi_decode", "Input Transition Length", "Scores Path", ""},
    {"pd_op.gather_tree", "gather_tree", "Ids Parents", "Out", ""},
    // (end of lossseq's rows)
    // Extra element-wise and tensor ops (elem: plugins/ops_math/close_compare_ops.cc,
    // elementwise_extra_ops.cc, broadcast_tensors_op.cc, fill_diagonal_tensor_op.cc,
    // unique_op.cc, linspace_numel_ops.cc; plugins/ops_nn's unstack): isclose / allclose take
    // rtol / atol as their float64 Rtol / Atol inputs; broadcast_tensors' and unstack's results are
    // vectors unpacked by builtin.split; paddle.diagonal_scatter is fill_diagonal_tensor.
    {"pd_op.isclose", "isclose", "Input Other Rtol Atol", "Out", ""},
    {"pd_op.allclose", "allclose", "Input Other Rtol Atol", "Out", ""},
    {"pd_op.equal_all", "equal_all", "X Y", "Out", ""},
    {"pd_op.angle", "angle", "X", "Out", ""},
    {"pd_op.copysign", "copysign", "x y", "out", ""},
    {"pd_op.nextafter", "nextafter", "x y", "out", ""},
    {"pd_op.bitwise_left_shift", "bitwise_left_shift", "x y", "out", ""},
    {"pd_op.bitwise_right_shift", "bitwise_right_shift", "x y", "out", ""},
    {"pd_op.logspace", "logspace", "Start Stop Num Base", "Out", "place>-"},
    {"pd_op.broadcast_tensors", "broadcast_tensors", "X", "Out", ""},
    {"pd_op.unique_consecutive", "unique_consecutive", "X", "Out Index Counts", ""},
    {"pd_op.fill_diagonal_tensor", "fill_diagonal_tensor", "X Y", "Out", ""},
    {"pd_op.unstack", "unstack", "X", "Y", ""},
    // (end of elem's rows)
    // Complex values (complex: plugins/ops_math/complex_ops.cc): paddle.complex, real, imag,
    // as_complex and as_real; conj, angle and abs read complex tensors through their rows above.
    {"pd_op.complex", "complex", "X Y", "Out", ""},
    {"pd_op.real", "real", "X", "Out", ""},
    {"pd_op.imag", "imag", "X", "Out", ""},
    {"pd_op.as_complex", "as_complex", "X", "Out", ""},
    {"pd_op.as_real", "as_real", "X", "Out", ""},
    // (end of complex's rows)
};

std::vector<std::string> Split(const char* s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

PirOperand ParseOperand(const std::string& w) {
  PirOperand o;
  if (w == "-") return o;
  if (w[0] != '=') {
    o.slot = w;
    return o;
  }
  std::vector<std::string> parts;
  std::stringstream in(w.substr(1));
  for (std::string p; std::getline(in, p, '/');) parts.push_back(p);
  o.attr = parts.at(0);
  if (parts.size() > 1) o.slot = parts[1];
  if (parts.size() > 2) o.list_slot = parts[2];
  return o;
}

std::map<std::string, PirOpRule> BuildTable() {
  std::map<std::string, PirOpRule> table;
  for (const Entry& e : kEntries) {
    PirOpRule r;
    r.fluid_type = e.fluid;
    for (const auto& w : Split(e.operands)) r.operands.push_back(ParseOperand(w));
    for (const auto& w : Split(e.results)) {
      PirResult res;
      const auto at = w.find('@');
      res.slot = w.substr(0, at) == "-" ? "" : w.substr(0, at);
      if (at != std::string::npos) res.same_as = std::stoi(w.substr(at + 1));
      r.results.push_back(res);
    }
    for (const auto& w : Split(e.renames)) {
      const auto gt = w.find('>');
      TIDE_ENFORCE(gt != std::string::npos, "pir_op_table: bad rename '", w, "' of ", e.pir);
      const std::string to = w.substr(gt + 1);
      r.renames[w.substr(0, gt)] = to == "-" ? "" : to;
    }
    r.fixed = e.fixed;
    r.dtype_of_input = e.dtype_of_input;
    r.cast_result_from = e.cast_result_from;
    TIDE_ENFORCE(table.emplace(e.pir, std::move(r)).second, "pir_op_table: ", e.pir, " twice");
  }
  return table;
}

const std::map<std::string, PirOpRule>& Table() {
  static const std::map<std::string, PirOpRule> table = BuildTable();
  return table;
}

}  // namespace

const PirOpRule* FindPirOpRule(const std::string& pir_name) {
  const auto& t = Table();
  auto it = t.find(pir_name);
  if (it == t.end() && pir_name.size() > 1 && pir_name.back() == '_')
    it = t.find(pir_name.substr(0, pir_name.size() - 1));
  return it == t.end() ? nullptr : &it->second;
}

std::vector<std::string> PirOpNames() {
  std::vector<std::string> names;
  for (const auto& kv : Table()) names.push_back(kv.first);
  return names;
}

}  // namespace tide::core
