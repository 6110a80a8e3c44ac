"""Executor and tensors from Python: feeds and fetches, errors on bad input, scopes, numpy and
DLPack exchange without copies."""

import numpy as np
import pytest

import tide
from tide import layers


def _linear():
    x = layers.data(name="x", shape=[13])
    y = layers.fc(input=x, size=1, param_attr="w", bias_attr="b")
    return x, y


def test_feed_fetch_and_program_cache(exe, rng):
    x, y = _linear()
    exe.run(tide.default_startup_program())
    xs = rng.rand(4, 13).astype("float32")
    (out1,) = exe.run(feed={"x": xs}, fetch_list=[y])
    w = np.array(tide.global_scope().find_var("w").get_tensor())
    b = np.array(tide.global_scope().find_var("b").get_tensor())
    np.testing.assert_allclose(out1, xs @ w + b, rtol=1e-5)
    (out2,) = exe.run(feed={"x": xs[:2]}, fetch_list=[y.name])  # another batch size, same program
    np.testing.assert_allclose(out2, out1[:2], rtol=1e-6)
    raw = exe.run(feed={"x": xs}, fetch_list=[y], return_numpy=False)[0]
    assert isinstance(raw, tide.LoDTensor) and raw.shape() == [4, 1]


def test_fetched_arrays_do_not_alias_later_runs(exe, rng):
    x, y = _linear()
    exe.run(tide.default_startup_program())
    (a,) = exe.run(feed={"x": np.ones((2, 13), "float32")}, fetch_list=[y])
    keep = a.copy()
    exe.run(feed={"x": np.zeros((2, 13), "float32")}, fetch_list=[y])
    np.testing.assert_array_equal(a, keep)


def test_a_fetched_temporary_is_handed_over_not_copied(exe, rng):
    """A run's non-persistable result is lent to the caller, not copied (a LLaMA prefill's 16 MB
    of logits took 9% of its time to copy): fetched twice in one run it is one buffer; the next
    run writes fresh memory, so what the caller holds never changes."""
    x, y = _linear()
    exe.run(tide.default_startup_program())
    xs = rng.rand(4, 13).astype("float32")
    a, b = exe.run(feed={"x": xs}, fetch_list=[y, y])
    assert np.shares_memory(a, b)
    keep = a.copy()
    (c,) = exe.run(feed={"x": xs * 2}, fetch_list=[y])
    assert not np.shares_memory(a, c)
    np.testing.assert_array_equal(a, keep)
    assert not np.array_equal(c, keep)


def test_a_fetched_lodtensor_written_by_the_caller_moves_to_a_copy(exe, rng):
    """Lent memory is never written by the core: set() on the returned LoDTensor (a copy into
    its own memory) leaves an array viewed from it before as it was."""
    x, y = _linear()
    exe.run(tide.default_startup_program())
    (raw,) = exe.run(
        feed={"x": rng.rand(3, 13).astype("float32")}, fetch_list=[y], return_numpy=False
    )
    before = np.array(raw, copy=True)
    view = raw.numpy()
    raw.set(np.zeros((3, 1), "float32"), tide.CPUPlace(), False)
    np.testing.assert_array_equal(view, before)
    np.testing.assert_array_equal(np.asarray(raw), np.zeros((3, 1), "float32"))


def test_a_fetched_parameter_is_a_copy_the_next_update_leaves_alone(exe, rng):
    """A persistable fetch is copied: the optimizer's next in-place update of the parameter does
    not reach the array a caller holds."""
    x, y = _linear()
    loss = layers.mean(y)
    tide.optimizer.SGD(learning_rate=0.5).minimize(loss)
    exe.run(tide.default_startup_program())
    xs = rng.rand(4, 13).astype("float32")
    (w1,) = exe.run(feed={"x": xs}, fetch_list=["w"])
    keep = w1.copy()
    (w2,) = exe.run(feed={"x": xs}, fetch_list=["w"])
    np.testing.assert_array_equal(w1, keep)
    assert not np.array_equal(w1, w2)
    assert not np.shares_memory(w2, np.asarray(tide.global_scope().find_var("w").get_tensor()))


def test_wrong_feed_dtype_and_shape(exe):
    _linear()
    exe.run(tide.default_startup_program())
    with pytest.raises(tide.InvalidArgumentError, match=r"feed 'x'.*float64.*float32"):
        exe.run(feed={"x": np.zeros((2, 13), "float64")})
    with pytest.raises(tide.InvalidArgumentError, match=r"feed 'x'.*\[2, 12\].*\[-1, 13\]"):
        exe.run(feed={"x": np.zeros((2, 12), "float32")})
    with pytest.raises(tide.InvalidArgumentError, match="cannot feed 'nope'"):
        exe.run(feed={"nope": np.zeros((2, 13), "float32")})


def test_unknown_fetch_and_unfed_input(exe):
    x, y = _linear()
    exe.run(tide.default_startup_program())
    with pytest.raises(tide.InvalidArgumentError, match="cannot fetch 'no_such_var'"):
        exe.run(feed={"x": np.zeros((1, 13), "float32")}, fetch_list=["no_such_var"])
    # op 'fc': the Executor runs the layer's mul and bias add as one (fuse_fc_bias_act)
    with pytest.raises(tide.PreconditionError, match=r"op '(mul|fc)'.*'x' holds no data"):
        exe.run(fetch_list=[y])


def test_parameters_not_initialised(exe):
    x, y = _linear()
    with pytest.raises(tide.PreconditionError, match="holds no data"):
        exe.run(feed={"x": np.zeros((1, 13), "float32")}, fetch_list=[y])


def test_unknown_place():
    with pytest.raises(
        tide.UnavailableError,
        match="no loaded device plugin provides kind 'nosuch'.*a plugin that failed to load may "
        "provide it: tide.plugins\\(\\)",
    ):
        tide.Executor(tide.Place("nosuch", 0))
    with pytest.raises(tide.UnavailableError, match="cpu:3 does not exist"):
        tide.Executor(tide.Place("cpu", 3))


def test_scope_guard_and_nested_scopes(exe, rng):
    _linear()
    s1, s2 = tide.Scope(), tide.Scope()
    with tide.scope_guard(s1):
        exe.run(tide.default_startup_program())
    assert s1.find_var("w") is not None and s2.find_var("w") is None
    kid = s1.new_scope()
    assert kid.find_var("w") is not None and kid.find_local_var("w") is None
    kid.var("w").get_tensor().set(np.zeros((13, 1), "float32"))
    assert np.array(kid.find_var("w").get_tensor()).sum() == 0  # shadows the parent's
    assert np.array(s1.find_var("w").get_tensor()).sum() != 0


def test_numpy_zero_copy_both_ways():
    a = np.arange(12, dtype="float32").reshape(3, 4)
    t = tide.LoDTensor(a)
    v = np.array(t, copy=False)
    a[0, 0] = 42.0
    assert v[0, 0] == 42.0  # shares a's memory
    t2 = tide.LoDTensor(a[:, 1])  # not contiguous: copied
    a[0, 1] = -1.0
    assert np.array(t2)[0] == 1.0
    with pytest.raises(tide.InvalidArgumentError, match="uint32"):
        tide.LoDTensor(np.zeros(3, dtype=np.uint32))


def test_a_numpy_copy_keeps_the_content_version():
    """np.array(t) copies and exports no view: the core still knows the bytes (content version),
    so what kernels keep converted from them (a reordered filter) stays valid. A view (numpy(),
    np.asarray) may be written unseen: its version is 0 from then on."""
    t = tide.LoDTensor()
    t.set(np.arange(6, dtype="float32").reshape(2, 3), tide.CPUPlace(), False)  # a copy of its own
    version = t._content_version()
    assert version != 0
    c = np.array(t)
    c[0, 0] = 99.0
    assert np.array(t)[0, 0] == 0.0 and t._content_version() == version
    np.testing.assert_array_equal(np.array(t, dtype="float64"), np.arange(6).reshape(2, 3))
    assert t._content_version() == version
    v = np.asarray(t)
    v[0, 0] = 7.0
    assert np.array(t)[0, 0] == 7.0 and t._content_version() == 0


def test_lod_validation():
    t = tide.LoDTensor(np.zeros((5, 2), "float32"))
    t.set_recursive_sequence_lengths([[2, 3]])
    assert t.lod() == [[0, 2, 5]]
    with pytest.raises(tide.InvalidArgumentError, match="invalid LoD"):
        t.set_lod([[0, 2, 4]])


def test_dlpack_with_numpy():
    a = np.arange(6, dtype="int64").reshape(2, 3)
    t = tide.from_dlpack(a)
    assert t.shape() == [2, 3] and t.dtype() == "int64"
    a[1, 2] = 99
    b = np.from_dlpack(t)
    assert b[1, 2] == 99  # one buffer through both exchanges
    del a
    assert b.sum() == 0 + 1 + 2 + 3 + 4 + 99  # t keeps the producer's memory alive


def test_dlpack_with_torch_if_present():
    torch = pytest.importorskip("torch")
    x = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    t = tide.from_dlpack(x)
    x[0, 0] = 7.0
    assert np.array(t)[0, 0] == 7.0
    y = torch.from_dlpack(t)
    assert y.data_ptr() == x.data_ptr()


def test_cuda_place_without_that_gpu_is_a_clear_error():
    n = tide.cuda.device_count()
    with pytest.raises(tide.UnavailableError, match=r"gpu:5"):
        tide.Executor(tide.CUDAPlace(5))
    if n == 0:  # no GPU here: any GPU place is an error, never a crash
        with pytest.raises(tide.UnavailableError, match=r"gpu:0"):
            tide.Executor(tide.CUDAPlace(0))
    assert tide.is_compiled_with_cuda() == any(
        p["status"] == "loaded" and "gpu" in p["devices"] for p in tide.plugins()
    )


def test_close_tells_the_pservers_once():
    # Fluid's Executor.close(): a trainer's executor sends send_complete to every pserver its
    # programs talked to (with their trainer_id and RPC settings), once, and not at all where
    # the trainer sent it itself (DistributeTranspiler.send_complete).
    x = layers.data(name="x", shape=[4])
    loss = layers.mean(layers.fc(x, 2))
    tide.optimizer.SGD(0.1).minimize(loss)
    eps = ["127.0.0.1:6170", "127.0.0.1:6171"]
    t = tide.DistributeTranspiler().transpile(1, pservers=",".join(eps), trainers=2)
    sent = []

    class Recording(tide.Executor):
        def run(self, program=None, **kwargs):  # what would go over the wire, not sent
            self._note_pservers(program)
            sent.append(
                [
                    (op.type, op.attr("endpoints"), op.attr("trainer_id"))
                    for op in program.global_block().ops
                    if op.type == "send_complete"
                ]
            )

    exe = Recording(tide.CPUPlace())
    exe._note_pservers(t.get_trainer_program())
    exe.close()
    assert sent == [[("send_complete", eps, 1)]]
    exe.close()  # told already
    assert len(sent) == 1
    sent.clear()
    exe._note_pservers(t.get_trainer_startup_program())  # recv from the pservers
    t.send_complete(exe)  # the trainer says it is done itself
    exe.close()
    assert sent == [[("send_complete", eps, 1)]]
    # An executor that ran no trainer program tells no one.
    plain = Recording(tide.CPUPlace())
    plain._note_pservers(tide.default_main_program())
    plain.close()
    assert sent == [[("send_complete", eps, 1)]]
