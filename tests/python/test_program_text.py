"""Printing programs as Fluid does (issue 37): Program.to_string(True), print(program),
print(var) and print(op) give the protobuf text format of the descs (Fluid's developer guide's "打印
ProgramDesc"), Tide's compact listing stays as summary(); fluid.debugger's pprint_program_codes /
pprint_block_codes write a program as code; fluid.core.Tensor is a tensor to feed; and
memory_optimize keeps gradients by default (Fluid's skip_grads=True)."""

import re

import numpy as np

import tide
from tide import layers


def _fit_a_line():
    x = layers.data(name="x", shape=[13], dtype="float32")
    y_predict = layers.fc(input=x, size=1, act=None)
    y = layers.data(name="y", shape=[1], dtype="float32")
    avg_cost = layers.mean(layers.square_error_cost(input=y_predict, label=y))
    tide.optimizer.SGD(learning_rate=0.001).minimize(avg_cost)
    return x, y_predict, avg_cost


def _blocks(text):
    """The top-level `blocks { ... }` messages of a ProgramDesc's text format."""
    return re.findall(r"^blocks \{\n(.*?)^\}", text, flags=re.S | re.M)


def test_program_prints_its_protobuf_text():
    x, _, _ = _fit_a_line()
    main = tide.default_main_program()
    text = main.to_string(True)
    assert str(main) == text
    assert text.startswith("blocks {\n  idx: 0\n  parent_idx: -1\n")
    (block,) = _blocks(text)
    # The developer guide's listing: fc's weight as a LOD_TENSOR of FP32 [13, 1], the mul op with its
    # parameters, arguments and typed attributes.
    assert re.search(
        r'  vars \{\n    name: "fc_0.w_0"\n    type \{\n      type: LOD_TENSOR\n'
        r"      lod_tensor \{\n        tensor \{\n          data_type: FP32\n"
        r"          dims: 13\n          dims: 1\n",
        block,
    ), block[:2000]
    assert re.search(
        r'  ops \{\n    inputs \{\n      parameter: "X"\n      arguments: "x"\n    \}\n'
        r'    inputs \{\n      parameter: "Y"\n      arguments: "fc_0.w_0"\n    \}\n'
        r'    outputs \{\n      parameter: "Out"\n      arguments: "fc_0.tmp_0"\n    \}\n'
        r'    type: "mul"\n',
        block,
    ), block[:3000]
    assert re.search(
        r'attrs \{\n      name: "x_num_col_dims"\n      type: INT\n      i: 1\n', block
    )
    assert 'name: "fc_0.w_0@GRAD"' in block and 'type: "sgd"' in block
    # Every variable and op of the program is in it.
    assert block.count("\n  vars {") == len(main.global_block().vars)
    assert block.count("\n  ops {") == len(main.global_block().ops)
    # Tide's own listing is still there, by another name.
    assert "op mul(X=[x], Y=[fc_0.w_0])" in main.summary()
    assert str(tide.default_startup_program()).startswith("blocks {")


def test_sub_blocks_and_details():
    x, _, _ = _fit_a_line()
    i = layers.fill_constant([1], "int64", 0)
    n = layers.fill_constant([1], "int64", 3)
    cond = layers.less_than(i, n)
    loop = layers.While(cond)
    with loop.block():
        layers.increment(i, in_place=True)
        layers.less_than(i, n, cond=cond)
    main = tide.default_main_program()
    blocks = _blocks(main.to_string(True))
    assert len(blocks) == 2 and blocks[1].startswith("  idx: 1\n  parent_idx: 0\n")
    assert re.search(r'name: "sub_block"\n\s+type: BLOCK\n\s+block_idx: 1\n', blocks[0])
    # with_details: each variable's Python-side attributes after its fields, as Fluid.
    details = main.to_string(True, with_details=True)
    w = re.search(r'  vars \{\n    name: "fc_0.w_0"\n(.*?)\n  \}', details, flags=re.S).group(1)
    for line in (
        "stop_gradient: False",
        "trainable: True",
        "regularizer: None",
        "optimize_attr: {'learning_rate': 1.0}",
    ):
        assert "    " + line in w.splitlines(), (line, w)
    assert "trainable: " not in re.search(
        r'  vars \{\n    name: "x"\n(.*?)\n  \}', details, flags=re.S
    ).group(1)
    assert main.global_block().to_string(True).startswith("idx: 0\nparent_idx: -1\nvars {\n")


def test_variables_and_ops_print_their_descs():
    x, y_predict, _ = _fit_a_line()
    text = str(x)
    assert text == x.to_string(True)
    assert text.startswith(
        'name: "x"\ntype {\n  type: LOD_TENSOR\n  lod_tensor {\n    tensor {\n'
        "      data_type: FP32\n      dims: -1\n      dims: 13\n"
    )
    assert "stop_gradient: true" in text
    op = tide.default_main_program().global_block().ops[0]
    assert str(op).startswith('inputs {\n  parameter: "X"\n  arguments: "x"\n}\n')
    assert 'type: "mul"\n' in str(op)
    assert "mul(X=[x]" in op.summary() and "x : LOD_TENSOR float32 [-1, 13]" in x.summary()
    assert repr(x).startswith("Variable(x : LOD_TENSOR")


def test_debugger_pprints_program_codes():
    _fit_a_line()
    main = tide.default_main_program()
    # The developer guide's call: the program's desc (a Program is accepted too).
    codes = tide.debugger.pprint_program_codes(main.desc)
    assert codes == tide.debugger.pprint_program_codes(main)
    assert codes.startswith("// block-0  parent--1\n// variables\n")
    assert "Tensor x (tensor(type=float32, shape=[-1, 13]))" in codes
    assert "Tensor fc_0.w_0 (tensor(type=float32, shape=[13, 1]))" in codes
    assert "fc_0.tmp_0 = mul(X=x, Y=fc_0.w_0) [{" in codes and "x_num_col_dims=1" in codes
    # The backward part only on request.
    assert "@GRAD" not in codes and "sgd(" not in codes
    full = tide.debugger.pprint_block_codes(main.global_block(), show_backward=True)
    assert "Tensor fc_0.w_0@GRAD (tensor(type=float32, shape=[13, 1]))" in full
    assert re.search(
        r"fc_0.w_0 = sgd\(Grad=fc_0.w_0@GRAD, LearningRate=learning_rate_0, "
        r"Param=fc_0.w_0\)",
        full,
    ), full
    # fill_constant reads as a constant; a sequence's level is shown.
    with tide.program_guard(tide.Program()):
        words = layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
        layers.fill_constant([2, 3], "float32", 0.5)
        codes = tide.debugger.pprint_program_codes(tide.default_main_program())
    assert "LoDTensor words (level=1, tensor(type=int64, shape=[-1, 1]))" in codes
    assert re.search(r"\S+ = 0\.5 \[shape=\[2, 3\]\]", codes), codes
    del words


def test_core_tensor_feeds_as_in_the_seed(exe):
    x = layers.data(name="x", shape=[8], dtype="float32")
    y = layers.data(name="y", shape=[1], dtype="int32", append_batch_size=False)
    s = layers.reduce_sum(x)
    place = tide.CPUPlace()
    y_data = np.random.randint(0, 8, [1]).astype("int32")
    y_tensor = tide.core.Tensor()
    y_tensor.set(y_data, place)
    x_data = np.random.uniform(0.1, 1, [11, 8]).astype("float32")
    x_tensor = tide.core.Tensor()
    x_tensor.set(x_data, place)
    got, got_y = exe.run(
        tide.default_main_program(), feed={"x": x_tensor, "y": y_tensor}, fetch_list=[s, y]
    )
    np.testing.assert_allclose(got, [x_data.sum()], rtol=1e-5)
    np.testing.assert_array_equal(got_y, y_data)


def test_memory_optimize_keeps_gradients_by_default():
    _, _, avg_cost = _fit_a_line()
    main = tide.default_main_program()
    kept = tide.memory_optimize(main.clone(), skip_opt_set=[avg_cost])
    assert kept and not any(n.endswith("@GRAD") for n in kept)
    freed = tide.memory_optimize(main.clone(), skip_opt_set=[avg_cost], skip_grads=False)
    assert any(n.endswith("@GRAD") for n in freed)
    assert set(kept) < set(freed)
