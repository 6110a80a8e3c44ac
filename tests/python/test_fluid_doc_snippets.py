"""Fluid's own documents, their code run as written (issue 37, item 7): the Python snippets of
Fluid's developer guide (开发者指南), design notes (设计思想) and code walkthrough (代码走读), with
`fluid` bound to tide, where a Fluid release accepted them. Where a snippet is pseudo-code, a Fluid
internal, or needs data the document does not give, a comment says so and the nearest runnable form
is tested. (The older Paddle's C++ module notes have no Python.)
Each test starts from fresh default programs (conftest.py)."""

import numpy as np
import pytest

import tide as fluid
import tide as paddle  # the documents' paddle.batch / paddle.reader.shuffle
from tide import Program, core, debugger, framework, layers
from tide.clip import GradientClipByValue
from tide.initializer import UniformInitializer
from tide.param_attr import ParamAttr
from tide.regularizer import L1Decay


def _uci_housing_like(n=100, seed=0):
    """A reader of (13 features, price) samples: the documents read paddle.dataset.uci_housing,
    which they do not ship; this is a linear problem of the same shape."""
    rng = np.random.RandomState(seed)
    xs = rng.uniform(-1, 1, (n, 13)).astype("float32")
    ys = (xs @ rng.uniform(-1, 1, (13, 1)) + 0.3).astype("float32")

    def reader():
        for x, y in zip(xs, ys):
            yield x, y

    return reader


# ---------------------------------------------------------------------------------------------
# Fluid's developer guide (Fluid 开发者指南)
def test_dev_guide_compile_time_and_run_time():
    # "Fluid 编译时": the forward part, then backward, regularisation and optimisation.
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y_predict = fluid.layers.fc(input=x, size=1, act=None)
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    cost = fluid.layers.square_error_cost(input=y_predict, label=y)
    avg_cost = fluid.layers.mean(x=cost)

    learning_rate = 0.01
    sgd_optimizer = fluid.optimizer.SGD(learning_rate)
    sgd_optimizer.minimize(avg_cost)

    # "Fluid 运行时" (uci_housing replaced, see _uci_housing_like).
    place = fluid.CPUPlace()
    train_reader = paddle.batch(
        paddle.reader.shuffle(_uci_housing_like(), buf_size=500), batch_size=20
    )
    feeder = fluid.DataFeeder(place=place, feed_list=[x, y])

    exe = fluid.Executor(place)
    exe.run(fluid.default_startup_program())
    PASS_NUM = 100
    losses = []
    for _pass_id in range(PASS_NUM):
        for data in train_reader():
            (avg_loss_value,) = exe.run(
                fluid.default_main_program(), feed=feeder.feed(data), fetch_list=[avg_cost]
            )
            losses.append(float(avg_loss_value[0]))
    assert losses[-1] < 0.01 * losses[0], (losses[0], losses[-1])


def test_dev_guide_switch():
    # Pseudo-code in the document: fluid.Var, fluid.larger and fluid.print never existed. The switch
    # itself runs as written (fluid.switch(), switch.block(), switch.case, switch.default); the
    # nearest form of the rest: constants, layers.less_equal / greater_than, and an assign per
    # case so the test sees which ran (layers.Print is there too, as the document prints).
    a = fluid.layers.fill_constant(shape=[1], dtype="float32", value=10)
    b = fluid.layers.fill_constant(shape=[1], dtype="float32", value=0)
    ran = fluid.layers.fill_constant(shape=[1], dtype="float32", value=0)

    switch = fluid.switch()
    with switch.block():
        with switch.case(
            fluid.layers.less_equal(a, fluid.layers.fill_constant([1], "float32", 10))
        ):
            fluid.layers.assign(
                fluid.layers.Print(fluid.layers.fill_constant([1], "float32", 1), message="Case 1"),
                ran,
            )
        with switch.case(fluid.layers.greater_than(a, b)):
            fluid.layers.assign(fluid.layers.fill_constant([1], "float32", 2), ran)
        with switch.default():
            fluid.layers.assign(fluid.layers.fill_constant([1], "float32", 3), ran)
    (got,) = fluid.Executor(fluid.CPUPlace()).run(fetch_list=[ran])
    assert got.tolist() == [1.0]


def test_dev_guide_while():
    # The document's loop leaves i, result and the arrays' other elements out, and writes `result`
    # into `d` (a tensor, not an array). The nearest runnable form is Fluid's test_while_op,
    # which the snippet is cut from: mem_array[i + 1] = data_array[i] + mem_array[i].
    d0 = layers.data("d0", shape=[10], append_batch_size=False, dtype="float32")
    d1 = layers.data("d1", shape=[10], append_batch_size=False, dtype="float32")
    d2 = layers.data("d2", shape=[10], append_batch_size=False, dtype="float32")
    i = layers.zeros(shape=[1], dtype="int64")
    i.stop_gradient = True
    init = layers.zeros(shape=[10], dtype="float32")
    mem_array = layers.array_write(x=init, i=i)
    data_array = layers.array_write(x=d0, i=i)
    i = layers.increment(i)
    layers.array_write(d1, i, array=data_array)
    i = layers.increment(i)
    layers.array_write(d2, i, array=data_array)
    i = layers.zeros(shape=[1], dtype="int64")
    i.stop_gradient = True

    array_len = layers.fill_constant(shape=[1], dtype="int64", value=3)
    cond = layers.less_than(x=i, y=array_len)
    while_op = layers.While(cond=cond)
    with while_op.block():
        d = layers.array_read(array=data_array, i=i)
        prev = layers.array_read(array=mem_array, i=i)
        result = layers.sums(input=[d, prev])
        i = layers.increment(x=i, in_place=True)
        layers.array_write(result, i=i, array=mem_array)
        layers.less_than(x=i, y=array_len, cond=cond)
    sum_result = layers.array_read(array=mem_array, i=i)

    rng = np.random.RandomState(0)
    feed = {n: rng.rand(10).astype("float32") for n in ("d0", "d1", "d2")}
    (got,) = fluid.Executor(fluid.CPUPlace()).run(feed=feed, fetch_list=[sum_result])
    np.testing.assert_allclose(got, feed["d0"] + feed["d1"] + feed["d2"], rtol=1e-6)


def test_dev_guide_print_program_desc(capsys):
    # "打印 ProgramDesc" (`place` is left undefined in the document: the CPU).
    place = fluid.CPUPlace()
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y_predict = fluid.layers.fc(input=x, size=1, act=None)
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    cost = fluid.layers.square_error_cost(input=y_predict, label=y)
    avg_cost = fluid.layers.mean(x=cost)
    sgd_optimizer = fluid.optimizer.SGD(learning_rate=0.001)
    sgd_optimizer.minimize(avg_cost)

    exe = fluid.Executor(place)
    exe.run(fluid.default_startup_program())
    print(fluid.default_startup_program().to_string(True))
    print(fluid.default_main_program().to_string(True))
    # The document's `print debugger pprint_program_codes(...)` is Python 2 and misses a dot; with
    # paddle.v2.fluid's debugger and framework modules (tide's):
    print(debugger.pprint_program_codes(framework.default_main_program().desc))
    out = capsys.readouterr().out
    # The document's "输出效果": fc_0.w_0@GRAD's description and the mul op's.
    assert (
        '  vars {\n    name: "fc_0.w_0@GRAD"\n    type {\n      type: LOD_TENSOR\n'
        "      lod_tensor {\n        tensor {\n          data_type: FP32\n"
        "          dims: 13\n          dims: 1\n"
    ) in out
    assert (
        '    outputs {\n      parameter: "Out"\n      arguments: "fc_0.tmp_0"\n    }\n'
        '    type: "mul"\n'
    ) in out
    assert 'name: "y_num_col_dims"\n      type: INT\n      i: 1\n' in out
    assert "fc_0.tmp_0 = mul(X=x, Y=fc_0.w_0)" in out


def test_dev_guide_dynamic_rnn():
    # The document's decoder step, inside a function that returns rnn(); trg_embedding, encoder_out,
    # decoder_size and target_dict_dim come from the model around it, which the document leaves out:
    # here a source sequence's last state and an embedded target sequence.
    decoder_size, target_dict_dim = 8, 12
    src = fluid.layers.data(name="src", shape=[1], dtype="int64", lod_level=1)
    trg = fluid.layers.data(name="trg", shape=[1], dtype="int64", lod_level=1)
    src_embedding = fluid.layers.embedding(src, size=[target_dict_dim, decoder_size])
    encoder_out = fluid.layers.sequence_last_step(
        fluid.layers.fc(input=src_embedding, size=decoder_size, act="tanh")
    )
    trg_embedding = fluid.layers.embedding(trg, size=[target_dict_dim, decoder_size])

    def decoder():
        rnn = fluid.layers.DynamicRNN()
        with rnn.block():
            current_word = rnn.step_input(trg_embedding)
            mem = rnn.memory(init=encoder_out)
            fc1 = fluid.layers.fc(input=[current_word, mem], size=decoder_size, act="tanh")
            out = fluid.layers.fc(input=fc1, size=target_dict_dim, act="softmax")
            rnn.update_memory(mem, fc1)
            rnn.output(out)
        return rnn()

    prob = decoder()
    lens_src, lens_trg = [3, 2, 4], [2, 5, 1]
    rng = np.random.RandomState(0)
    feed = {}
    for name, lens in (("src", lens_src), ("trg", lens_trg)):
        t = fluid.LoDTensor(rng.randint(0, target_dict_dim, (sum(lens), 1)).astype("int64"))
        t.set_recursive_sequence_lengths([lens])
        feed[name] = t
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    (got,) = exe.run(feed=feed, fetch_list=[prob], return_numpy=False)
    assert got.recursive_sequence_lengths() == [lens_trg]
    np.testing.assert_allclose(np.array(got).sum(axis=1), 1.0, rtol=1e-5)


def test_dev_guide_param_attr_and_create_var():
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    # "自定义参数的初始化": the document's `clip=` was never ParamAttr's argument (Fluid 0.11+ call it
    # gradient_clip), and GradientClipByValue takes (max, min): the document's (-1.0, 1.0) is a
    # clip to [-1, 1] written min first. The rest as written.
    w_param_attrs = ParamAttr(
        name=None,
        initializer=UniformInitializer(low=-1.0, high=1.0, seed=0),
        learning_rate=1.0,
        regularizer=L1Decay(1.0),
        trainable=True,
        gradient_clip=GradientClipByValue(max=1.0, min=-1.0),
    )
    y_predict = fluid.layers.fc(input=x, size=1, param_attr=w_param_attrs)
    w = fluid.default_main_program().global_block().all_parameters()[0]
    assert isinstance(w.regularizer, L1Decay) and isinstance(
        w.gradient_clip_attr, GradientClipByValue
    )
    assert y_predict.shape == (-1, 1)

    # "如何创建 Variable"
    cur_program = Program()
    cur_block = cur_program.current_block()
    new_var = cur_block.create_var(name="X", shape=[-1, 16, 16], dtype="float32")
    assert new_var.shape == (-1, 16, 16) and "X" in cur_block.vars


def test_dev_guide_append_backward_and_optimize():
    data = fluid.layers.data(name="data", shape=(2, 3, 4))
    out = fluid.layers.fc(input=data, size=128, act=None)
    loss = fluid.layers.reduce_sum(out)
    fluid.backward.append_backward(loss=loss)
    types = [op.type for op in fluid.default_main_program().global_block().ops]
    assert "mul_grad" in types and "reduce_sum_grad" in types

    # "添加优化相关的Op" (a separate snippet: on a program of its own).
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        data = fluid.layers.data(name="data", shape=(2, 3, 4))
        loss = fluid.layers.reduce_sum(fluid.layers.fc(input=data, size=128, act=None))
        sgd_optimizer = fluid.optimizer.SGD(learning_rate=0.001)
        sgd_optimizer.minimize(loss)
        print(fluid.default_main_program())
        fluid.memory_optimize(fluid.default_main_program())
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(fluid.default_startup_program())
        w = fluid.default_main_program().global_block().all_parameters()[0]
        before = np.array(fluid.global_scope().find_var(w.name).get_tensor())
        # The loss was freed after its last use (the document passes no skip_opt_set): fetch a weight.
        (after,) = exe.run(feed={"data": np.ones((2, 2, 3, 4), "float32")}, fetch_list=[w])
        assert np.isfinite(after).all() and not np.array_equal(after, before)


def test_dev_guide_feed_dict_with_core_tensors():
    # "Feed 数据(一)": the document's `fetchlist=` is a typo for fetch_list (no release took it); y
    # is fed as its [1] value, so declared without a batch dim.
    x = fluid.layers.data(name="x", shape=[8], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="int32", append_batch_size=False)
    avg_cost = fluid.layers.mean(
        fluid.layers.elementwise_add(
            fluid.layers.reduce_sum(x, dim=1), fluid.layers.cast(y, "float32")
        )
    )
    place = fluid.CPUPlace()
    exe = fluid.Executor(place)

    y_data = np.random.randint(0, 8, [1]).astype("int32")
    y_tensor = core.Tensor()
    y_tensor.set(y_data, place)

    x_data = np.random.uniform(0.1, 1, [11, 8]).astype("float32")
    x_tensor = core.Tensor()
    x_tensor.set(x_data, place)
    cost = exe.run(
        fluid.default_main_program(), feed={"x": x_tensor, "y": y_tensor}, fetch_list=[avg_cost]
    )
    np.testing.assert_allclose(cost[0], [x_data.sum(axis=1).mean() + y_data[0]], rtol=1e-5)


def test_dev_guide_data_feeder_reader():
    # "Feed 数据(二)": demo_reader as written, batched by paddle.batch over paddle.reader.shuffle.
    x = fluid.layers.data(name="x", shape=[4], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="int64")
    cost = fluid.layers.mean(
        fluid.layers.cross_entropy(input=fluid.layers.fc(input=x, size=2, act="softmax"), label=y)
    )
    place = fluid.CPUPlace()
    exe = fluid.Executor(place)
    exe.run(fluid.default_startup_program())

    def demo_reader():
        def random_generator():
            yield np.random.uniform(0.1, 1, [4]), np.random.randint(0, 1, [1])

        return random_generator

    train_reader = paddle.batch(paddle.reader.shuffle(demo_reader(), buf_size=500), batch_size=4)
    feeder = fluid.DataFeeder(place=place, feed_list=[x, y])
    for data in train_reader():
        cost = exe.run(fluid.default_main_program(), feed=feeder.feed(data), fetch_list=[cost])
    assert np.isfinite(cost[0]).all()


def test_dev_guide_evaluator():
    # "如何使用 evaluator ?": the document's accuracy.reset() takes the executor in every Fluid
    # release (reset(exe)); predict, label, avg_cost, the reader and PASS_NUM come from the model
    # around it.
    image = fluid.layers.data(name="image", shape=[8], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    predict = fluid.layers.fc(input=image, size=3, act="softmax")
    avg_cost = fluid.layers.mean(fluid.layers.cross_entropy(input=predict, label=label))
    fluid.optimizer.SGD(learning_rate=0.1).minimize(avg_cost)
    place = fluid.CPUPlace()
    exe = fluid.Executor(place)
    feeder = fluid.DataFeeder(place=place, feed_list=[image, label])
    rng = np.random.RandomState(0)
    samples = [(rng.rand(8).astype("float32"), [int(rng.randint(0, 3))]) for _ in range(30)]
    train_reader = paddle.batch(lambda: iter(samples), batch_size=10)
    PASS_NUM = 2

    accuracy = fluid.evaluator.Accuracy(input=predict, label=label)
    exe.run(fluid.default_startup_program())
    for _pass_id in range(PASS_NUM):
        accuracy.reset(exe)
        batch_accs = []
        for data in train_reader():
            loss, acc = exe.run(
                fluid.default_main_program(),
                feed=feeder.feed(data),
                fetch_list=[avg_cost] + accuracy.metrics,
            )
            batch_accs.append(float(acc[0]))
        pass_acc = accuracy.eval(exe)
        np.testing.assert_allclose(pass_acc, [np.mean(batch_accs)], rtol=1e-5)  # equal batches
    pass_total_acc = accuracy.eval(exe)
    assert pass_total_acc == pass_acc


# ---------------------------------------------------------------------------------------------
# Fluid's design notes (Fluid 设计思想)
def test_design_notes_blocks_if_else():
    # The Program of 3 blocks; image and label are the model's inputs, which the document leaves out.
    image = fluid.layers.data(name="image", shape=[16], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    # block 0
    limit = fluid.layers.fill_constant_batch_size_like(
        input=label, dtype="int64", shape=[1], value=5.0
    )
    cond = fluid.layers.less_than(x=label, y=limit)
    ie = fluid.layers.IfElse(cond)
    with ie.true_block():
        # block 1
        true_image = ie.input(image)
        hidden = fluid.layers.fc(input=true_image, size=100, act="tanh")
        prob = fluid.layers.fc(input=hidden, size=10, act="softmax")
        ie.output(prob)
    with ie.false_block():
        # block 2
        false_image = ie.input(image)
        hidden = fluid.layers.fc(input=false_image, size=200, act="tanh")
        prob = fluid.layers.fc(input=hidden, size=10, act="softmax")
        ie.output(prob)
    prob = ie()
    assert fluid.default_main_program().num_blocks == 3
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    rng = np.random.RandomState(0)
    labels = np.array([[1], [7], [3], [9]], "int64")
    (got,) = exe.run(
        feed={"image": rng.rand(4, 16).astype("float32"), "label": labels}, fetch_list=prob
    )
    assert got.shape == (4, 10)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)


def test_design_notes_linear_regression(capsys):
    # "代码实例" as written (`import paddle.fluid as fluid` is this file's `import tide as fluid`).
    import numpy

    # 定义数据
    train_data = numpy.array([[1.0], [2.0], [3.0], [4.0]]).astype("float32")
    y_true = numpy.array([[2.0], [4.0], [6.0], [8.0]]).astype("float32")
    # 定义网络
    x = fluid.layers.data(name="x", shape=[1], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    y_predict = fluid.layers.fc(input=x, size=1, act=None)
    # 定义损失函数
    cost = fluid.layers.square_error_cost(input=y_predict, label=y)
    avg_cost = fluid.layers.mean(cost)
    # 定义优化方法
    sgd_optimizer = fluid.optimizer.SGD(learning_rate=0.01)
    sgd_optimizer.minimize(avg_cost)

    print(fluid.default_main_program().to_string(True))
    text = capsys.readouterr().out
    # The document's listing of x.
    assert (
        '  vars {\n    name: "x"\n    type {\n      type: LOD_TENSOR\n      lod_tensor {\n'
        "        tensor {\n          data_type: FP32\n          dims: -1\n          dims: 1\n"
        "        }\n        lod_level: 0\n      }\n    }\n    persistable: false\n"
    ) in text

    # 在CPU内执行训练
    cpu = fluid.core.CPUPlace()
    # 创建Executor
    exe = fluid.Executor(cpu)
    # 参数初始化
    exe.run(fluid.default_startup_program())
    # 开始训练
    outs = exe.run(feed={"x": train_data, "y": y_true}, fetch_list=[y_predict.name, avg_cost.name])
    # The document's values come from its random initialisation; their shapes and types are these.
    assert outs[0].shape == (4, 1) and outs[0].dtype == np.float32
    assert outs[1].shape == (1,) and outs[1].dtype == np.float32
    np.testing.assert_allclose(outs[1], [np.mean((outs[0] - y_true) ** 2)], rtol=1e-5)


def test_design_notes_executor_snippets():
    # "创建Executor" / "运行Executor": `...` stands for the model; here loss = mean(fc(X)).
    cpu = core.CPUPlace()
    exe = fluid.Executor(cpu)
    X = fluid.layers.data(name="X", shape=[1], dtype="float32")
    loss = fluid.layers.mean(fluid.layers.fc(input=X, size=1))
    exe.run(fluid.default_startup_program())
    x = np.random.random(size=(10, 1)).astype("float32")
    outs = exe.run(feed={"X": x}, fetch_list=[loss.name])
    assert outs[0].shape == (1,)


# ---------------------------------------------------------------------------------------------
# Fluid's code walkthrough (Fluid 代码走读). Its Python is Fluid's own executor.py and distribute_transpiler.py
# (Fluid 0.11's transpile(optimize_ops, params_grads, ...)), not user code; the nearest runnable
# form is what they describe: the trainer's program loses the optimize ops and gains send ops, each
# pserver's program sums the trainers' gradients, scales them and runs the optimizer.
def test_code_walkthrough_distribute_transpiler_programs():
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    avg_cost = fluid.layers.mean(
        fluid.layers.square_error_cost(input=fluid.layers.fc(input=x, size=1), label=y)
    )
    fluid.optimizer.SGD(learning_rate=0.01).minimize(avg_cost)
    t = fluid.DistributeTranspiler()
    t.transpile(0, pservers="127.0.0.1:6174,127.0.0.1:6175", trainers=2)
    trainer_types = [op.type for op in t.get_trainer_program().global_block().ops]
    assert "sgd" not in trainer_types and "send" in trainer_types and "recv" in trainer_types
    pserver = t.get_pserver_program("127.0.0.1:6174")
    serve = pserver.global_block().ops[-1]
    assert serve.type == "listen_and_serv"
    sub_types = [op.type for b in pserver.blocks[1:] for op in b.ops]
    assert {"sum", "scale", "sgd"} <= set(sub_types)


@pytest.mark.parametrize(
    "name",
    [
        "switch",
        "evaluator",
        "metrics",
        "debugger",
        "memory_optimize",
        "DataFeeder",
        "DistributeTranspiler",
    ],
)
def test_the_fluid_names_the_documents_use_exist(name):
    assert hasattr(fluid, name)
