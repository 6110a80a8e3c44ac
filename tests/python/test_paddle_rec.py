"""PaddleRec-style ranking and retrieval models (tools/paddle_rec_models.py: DeepFM, Wide&Deep,
DLRM, DIN, DCN-v2 with MMoE, a two-tower model), int64 feature ids in, saved by Paddle 3.3.1 as
PIR programs (tests/fixtures/paddle/pir/rec_*). Each loads and gives Paddle's outputs on the plain
CPU kernels and with oneDNN, optimized and as saved, at the export's batch and at another batch
(and DIN's history length); ids at both ends of the vocabulary are in every feed. Loaded with
optimize=False and trained further: the gradients of sum(out_i * R_i) are Paddle's for every
parameter, with the embeddings' gradients sparse (SelectedRows, as Paddle saved them:
`pd_op.embedding`'s `sparse`) and dense; SGD steps on a BCE loss give Paddle's losses and
weights."""

import json
import os

import numpy as np
import pytest
import test_paddle_models as fixtures

import tide

MODELS = ["rec_deepfm", "rec_wide_deep", "rec_dlrm", "rec_din", "rec_dcn_mmoe", "rec_two_tower"]
# Those with an SGD fine-tune reference (train.npz).
TRAIN = ["rec_deepfm", "rec_wide_deep", "rec_dlrm", "rec_din", "rec_dcn_mmoe"]


def fixture(name):
    d = os.path.join(fixtures.FIXTURES, "pir", name)
    return d, os.path.join(d, "inference")


def npz(path):
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def expected(d, second):
    if not second and os.path.exists(os.path.join(d, "expected.npy")):
        return [np.load(os.path.join(d, "expected.npy"))]
    f = npz(os.path.join(d, "expected2.npz" if second else "expected.npz"))
    return [f["out%d" % i] for i in range(len(f))]


def check(got, want, rtol, err_msg=""):
    if np.issubdtype(want.dtype, np.integer):  # topk's indices
        np.testing.assert_array_equal(got, want, err_msg=err_msg)
    else:
        atol = rtol * np.abs(want).max()
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=err_msg)


@pytest.mark.parametrize("second", [False, True], ids=["example", "other_batch"])
@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", fixtures.LIBS)
@pytest.mark.parametrize("name", MODELS)
def test_rec_matches_paddle(name, lib, optimize, second):
    d, prefix = fixture(name)
    info = json.load(open(os.path.join(d, "info.json")))
    assert info["paddle"].startswith("3.") and "PIR" in info["saved_by"]
    feed = npz(os.path.join(d, "inputs2.npz" if second else "inputs.npz"))
    want = expected(d, second)
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        program, feeds, fetches = tide.io.load_inference_model(prefix, exe, optimize=optimize)
        assert sorted(feeds) == sorted(feed) and len(fetches) == len(want)
        tide.set_flags({"use_mkldnn": lib == "mkldnn"})
        try:
            outs = exe.run(program, feed=feed, fetch_list=fetches)
        finally:
            tide.set_flags({"use_mkldnn": False})
    for i, (out, w) in enumerate(zip(outs, want)):
        assert out.shape == w.shape, (i, out.shape, w.shape)
        check(out, w, 1e-4, "output %d" % i)


def load_for_training(prefix, is_sparse):
    """The model as saved (optimize=False) in its own scope; `is_sparse` None keeps each lookup's
    `is_sparse` as Paddle saved it, True / False sets every lookup's."""
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    with tide.scope_guard(scope):
        program, feeds, fetches = tide.io.load_inference_model(prefix, exe, optimize=False)
    lookups = [op for op in program.global_block().ops if op.type == "lookup_table_v2"]
    assert lookups
    if is_sparse is not None:
        for op in lookups:
            op._set_attr("is_sparse", is_sparse)
    return exe, scope, program, fetches, lookups


def dense_gradient(scope, grad, shape):
    """A SelectedRows gradient's rows summed into a [shape] array."""
    rows = scope.find_var(grad.name).get_selected_rows()
    out = np.zeros(shape, np.float64)
    np.add.at(out, list(rows.rows()), np.array(rows.get_tensor()))
    return out


@pytest.mark.parametrize("is_sparse", [None, True, False], ids=["as_saved", "sparse", "dense"])
@pytest.mark.parametrize("name", MODELS)
def test_rec_gradients_match_paddle(name, is_sparse):
    """Every parameter's gradient of sum_i sum(out_i * R_i) (the float outputs) against Paddle's
    dygraph. A padding_idx row's gradient is zero both ways, as Paddle's dense embedding gradient
    (Paddle 3.3.1's sparse one gives that row the padded positions' gradients; the reference is
    Paddle's dense gradient)."""
    d, prefix = fixture(name)
    info = json.load(open(os.path.join(d, "info.json")))
    feed = npz(os.path.join(d, "inputs.npz"))
    ref = npz(os.path.join(d, "grads.npz"))
    weights = {k: v for k, v in ref.items() if not k.startswith("grad:")}
    want = {k[len("grad:") :]: v for k, v in ref.items() if k.startswith("grad:")}
    exe, scope, program, fetches, lookups = load_for_training(prefix, is_sparse)
    if is_sparse is None and info["sparse_embeddings"]:
        assert any(op.attr("is_sparse") for op in lookups)
    with tide.program_guard(program, tide.Program()):
        terms = []
        for key, r in sorted(weights.items()):
            var = tide.layers.data(key, list(r.shape), dtype="float32", append_batch_size=False)
            terms.append(tide.layers.reduce_sum(fetches[int(key[1:])] * var))
        loss = terms[0]
        for t in terms[1:]:
            loss = loss + t
        grads = {p.name: g for p, g in tide.backward.append_backward(loss)}
    assert sorted(grads) == sorted(want)
    sparse = [n for n, g in grads.items() if g.type == "SELECTED_ROWS"]
    tables = {op.input("W")[0] for op in lookups}
    if is_sparse is not None:
        assert set(sparse) == (tables if is_sparse else set()), sparse
    for n in sparse:  # read from the scope after the run (fetch takes LoDTensors)
        grads[n].persistable = True
    dense = sorted(set(grads) - set(sparse))
    got = exe.run(
        program, feed={**feed, **weights}, fetch_list=[grads[n] for n in dense], scope=scope
    )
    got = dict(zip(dense, got))
    for n in sparse:
        got[n] = dense_gradient(scope, grads[n], want[n].shape)
    for n in sorted(want):
        check(got[n], want[n], 1e-3, n)


@pytest.mark.parametrize("is_sparse", [True, False], ids=["sparse", "dense"])
@pytest.mark.parametrize("name", TRAIN)
def test_rec_fine_tunes_like_paddle(name, is_sparse):
    """Five SGD steps (learning rate 0.5) on the mean binary cross entropy of the first output,
    from the saved weights, on Paddle's batches of another size: Paddle's dygraph losses step by
    step and its weights after the steps."""
    d, prefix = fixture(name)
    ref = npz(os.path.join(d, "train.npz"))
    exe, scope, program, fetches, _ = load_for_training(prefix, is_sparse)
    startup = tide.Program()
    with tide.program_guard(program, startup):
        out = fetches[0]
        label = tide.layers.data("label", list(out.shape[1:]), dtype="float32")
        loss = tide.layers.reduce_mean(tide.layers.bce_loss(out, label))
        _, pairs = tide.optimizer.SGD(learning_rate=0.5).minimize(loss)
    exe.run(startup, scope=scope)
    losses = []
    for step in range(len(ref["loss"])):
        prefix_ = "%d/" % step
        feed = {k[len(prefix_) :]: v for k, v in ref.items() if k.startswith(prefix_)}
        (value,) = exe.run(program, feed=feed, fetch_list=[loss], scope=scope)
        losses.append(np.asarray(value).item())
    np.testing.assert_allclose(losses, ref["loss"], rtol=1e-5)
    params = {k[len("param:") :]: v for k, v in ref.items() if k.startswith("param:")}
    # every parameter: those off the first output's path (MMoE's second task) stay as loaded
    assert {p.name for p, _ in pairs} <= set(params) and len(pairs) > len(params) // 2
    for n, want in params.items():
        check(np.array(scope.find_var(n).get_tensor()), want, 1e-4, n)


@pytest.mark.parametrize("bad", [37, -1], ids=["vocab_size", "negative"])
def test_an_id_outside_the_vocabulary_is_an_error(bad):
    """DeepFM's vocabulary has 37 ids: 36 is its last (in the fixtures' feeds), 37 and -1 are
    refused by name, the id and the table's size."""
    d, prefix = fixture("rec_deepfm")
    feed = npz(os.path.join(d, "inputs.npz"))
    feed["sparse_ids"][1, 2] = bad
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        program, _, fetches = tide.io.load_inference_model(prefix, exe)
        with pytest.raises(
            Exception, match=r"lookup_table_v2.*= %d is out of range.*37 rows" % bad
        ):
            exe.run(program, feed=feed, fetch_list=fetches)


def test_fetching_a_sparse_gradient_says_where_its_rows_are():
    """An is_sparse lookup's gradient is SelectedRows: fetch refuses it naming that and the ways
    to read it (the scope's get_selected_rows(), or is_sparse False)."""
    d, prefix = fixture("rec_dlrm")
    exe, scope, program, fetches, _ = load_for_training(prefix, True)
    with tide.program_guard(program, tide.Program()):
        grads = dict(
            (p.name, g) for p, g in tide.backward.append_backward(tide.layers.mean(fetches[0]))
        )
    table = grads["embedding_0.w_0"]
    assert table.type == "SELECTED_ROWS"
    with pytest.raises(Exception, match=r"holds SelectedRows .*get_selected_rows\(\).*is_sparse"):
        exe.run(program, feed=npz(os.path.join(d, "inputs.npz")), fetch_list=[table], scope=scope)
