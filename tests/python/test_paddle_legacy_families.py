"""Today's model families saved by PaddlePaddle 2.6.2 in its legacy format (inference.pdmodel +
inference.pdiparams + inference.pdiparams.info, what PaddleOCR / PaddleDetection / PaddleSeg release
models before Paddle 3.0 are), by tools/paddle_legacy_models.py from the families' models of
tools/paddle_{llm,speech,gen,seg,vis,det}_models.py (tests/fixtures/paddle/legacy_*): those that
needed a change in Tide. Greedy LLM generation in a while loop whose last logits the body only
writes (Paddle 2.x lists every loop variable among the loop's X: the loader keeps what the body
reads, or the loss's gradient reached every step), a GRU attention decoder stepped over a fed
length (lod_array_length; `h, state = cell(x, state)` of one tensor written twice a step: the
first write, never read, takes no gradient), CycleGAN (instance_norm binding only Y), PaddleSeg's
UNet (conv2d_transpose's output_size bound to variables: a VAR attribute, read as its
OutputSizeTensor), PatchTST and RT-DETR (Tensor.detach as share_data; reduce_all's dim written
as int64s), the two-stage detector (roi_align 3, generate_proposals_v2 1, distribute_fpn_proposals
2; RpnRoisNum declared without dims, not 0-D) and StyleGAN2 (blur kernels, layer buffers the
.pdiparams.info marks stop_gradient). Each matches Paddle 2.6's executor at the export's feed and
at another batch / length / size, on the plain kernels and with oneDNN, optimized and as saved;
loaded as saved, append_backward's gradients of sum(out0 * R) are Paddle 2.6's dygraph ones."""

import json
import os
import pickle
import shutil

import numpy as np
import pytest
import test_paddle_models as fixtures
from op_test import make
from paddle_fixture_checks import (
    assert_gradients_match,
    check_cases,
    expected_outputs,
    weighted_output_gradients,
)
from test_paddle_seg import other_cases

import tide

MODELS = [
    "llm_generate",
    "speech_gru_attn_dyn",
    "gen_cyclegan",
    "seg_unet",
    "vis_patchtst",
    "det_rtdetr",
    "det_two_stage",
    "gen_stylegan2",
]


def fixture_dir(name):
    return os.path.join(fixtures.FIXTURES, "legacy_" + name)


def load(d, **kw):
    with tide.scope_guard(tide.Scope()):
        return tide.io.load_inference_model(os.path.join(d, "inference"), **kw)


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", fixtures.LIBS)
@pytest.mark.parametrize("name", MODELS)
def test_matches_paddle(name, lib, optimize):
    d = fixture_dir(name)
    info = json.load(open(os.path.join(d, "info.json")))
    assert info["paddle"].startswith("2.6") and info["saved_by"].startswith("paddle.jit.save")
    assert os.path.exists(os.path.join(d, "inference.pdmodel"))
    cases = [(fixtures.load_feed(d), expected_outputs(d))] + other_cases(d)
    check_cases(d, cases, lib, optimize)


@pytest.mark.parametrize("name", MODELS)
def test_gradients_match_paddle(name):
    """Fine-tuning: the program loaded as saved, loss = sum(out0 * R), every trainable
    parameter's gradient against Paddle 2.6's dygraph one (eval mode, as saved)."""
    d = fixture_dir(name)
    with np.load(os.path.join(d, "grads.npz")) as f:
        r = f["R"]
        want = {k[len("grad/") :]: f[k] for k in f.files if k.startswith("grad/")}
    got, _ = weighted_output_gradients(d, fixtures.load_feed(d), r, r_name="legacy_test_R")
    assert_gradients_match(got, want)


def test_while_reads_only_what_its_body_reads():
    """Paddle 2.x's While puts every variable its body writes among X; the last step's logits
    the body only overwrites must not carry the loss's gradient into earlier steps (each step's
    lm_head took it: every gradient was wrong) nor into the prompt's logits."""
    d = fixture_dir("llm_generate")
    raw = tide.Program.parse_from_string(open(os.path.join(d, "inference.pdmodel"), "rb").read())
    (saved,) = [op for op in raw.global_block().ops if op.type == "while"]
    program, _, _ = load(d, optimize=False)
    (loop,) = [op for op in program.global_block().ops if op.type == "while"]
    body = program.block(loop.attr("sub_block"))
    written_first = set()
    read_first = set()
    for op in body.ops:
        read_first |= {n for n in op.input_arg_names if n not in written_first}
        written_first |= set(op.output_arg_names)
    dropped = set(saved.input("X")) - set(loop.input("X"))
    # Paddle's X: all the body writes but the condition
    assert set(saved.output("Out")) - set(saved.input("Condition")) <= set(saved.input("X"))
    assert dropped and not dropped & read_first and dropped <= set(loop.output("Out"))
    assert set(loop.input("X")) <= read_first | {
        n for n in loop.input("X") if program.global_block().var(n).type != "LOD_TENSOR"
    }


def test_overwritten_loop_variable_takes_no_gradient():
    """Two loop variables of one name (a GRU cell's h and state): the body assigns the new state
    to it twice; the first write, never read, is renamed so that backward does not add its
    gradient to the second's."""
    program, _, _ = load(fixture_dir("speech_gru_attn_dyn"), optimize=False)
    (loop,) = [op for op in program.global_block().ops if op.type == "while"]
    body = program.block(loop.attr("sub_block"))
    renamed = [n for op in body.ops for n in op.output_arg_names if ".overwritten_" in n]
    assert renamed
    assert not any(n in op.input_arg_names for op in body.ops for n in renamed)
    assert "lod_array_length" in [op.type for op in body.ops]


def test_var_attribute_becomes_input():
    """PaddleSeg's UNet upsamples to its skip's size: Paddle 2.6's dynamic-to-static binds
    conv2d_transpose's output_size to variables (a VARS attribute), read as OutputSizeTensor."""
    d = fixture_dir("seg_unet")
    program, _, _ = load(d, optimize=False)
    deconvs = [op for op in program.global_block().ops if op.type == "conv2d_transpose"]
    assert deconvs and all(op.input("OutputSizeTensor") or op.input("OutputSize") for op in deconvs)
    assert all(list(op.attr("output_size")) == [] for op in deconvs)


def test_undeclared_rank_is_not_zero_d():
    """generate_proposals_v2's RpnRoisNum (and the scale before its fetch) have no dims in the
    saved program (Paddle's compile-time inference sets none): one image's count stays [1]."""
    d = fixture_dir("det_two_stage")
    program, _, fetches = load(d, optimize=False)
    assert list(fetches[3].shape) == [-1]
    (feed, want), *_ = other_cases(d)
    assert want[3].shape == (1,)


def test_params_info_marks_buffers():
    """StyleGAN2's blur kernels are layer buffers; the legacy program declares them persistable
    like the parameters, and inference.pdiparams.info says they are stop_gradient: loaded, they
    are Parameters that do not train (all_parameters() lists them, as Paddle's)."""
    d = fixture_dir("gen_stylegan2")
    with open(os.path.join(d, "inference.pdiparams.info"), "rb") as f:
        info = pickle.load(f)
    buffers = sorted(n for n, e in info.items() if "trainable" not in e)
    assert buffers and all(info[n]["stop_gradient"] for n in buffers)
    program, _, _ = load(d, optimize=False)
    params = {p.name: p for p in program.all_parameters()}
    assert all(not params[n].trainable for n in buffers)
    assert sum(p.trainable for p in params.values()) == len(params) - len(buffers)


def test_params_info_is_optional_and_never_runs_code(tmp_path):
    """Without the .info file the buffers are trainable Parameters (nothing tells them apart);
    a .info that is not plain data (a pickle naming a function) is ignored with a warning, its
    code not run."""
    src = fixture_dir("gen_stylegan2")
    d = tmp_path / "m"
    shutil.copytree(src, d)
    os.remove(d / "inference.pdiparams.info")
    program, _, _ = load(str(d), optimize=False)
    assert all(p.trainable for p in program.all_parameters())

    class Boom:
        def __reduce__(self):
            return (os.mkdir, (str(tmp_path / "ran"),))

    with open(d / "inference.pdiparams.info", "wb") as f:
        pickle.dump({"eager_tmp_0": Boom()}, f, protocol=2)
    with pytest.warns(UserWarning, match="not plain data"):
        program, _, _ = load(str(d), optimize=False)
    assert not (tmp_path / "ran").exists()
    assert all(p.trainable for p in program.all_parameters())


# --- the ops these models brought ------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_instance_norm_without_statistics(dtype, rng):
    """Paddle 2.x saves instance_norm with Y only: SavedMean / SavedVariance are dispensable."""
    x = rng.uniform(-1, 1, (2, 3, 2, 3)).astype(dtype)
    scale = rng.uniform(0.5, 1.5, 3).astype(dtype)
    bias = rng.uniform(-1, 1, 3).astype(dtype)
    x64 = x.astype(np.float64)
    m = x64.mean(axis=(2, 3), keepdims=True)
    v = x64.var(axis=(2, 3), keepdims=True)
    y = (x64 - m) / np.sqrt(v + 1e-5) * scale.reshape(1, 3, 1, 1) + bias.reshape(1, 3, 1, 1)
    t = make(
        "instance_norm",
        {"X": x, "Scale": scale, "Bias": bias},
        {"Y": y.astype(dtype)},
        {"epsilon": 1e-5},
    )
    t.check_output(atol=1e-5, rtol=1e-4)
    err, delta = (0.03, 0.01) if dtype == "float32" else (1e-5, 1e-5)
    t.check_grad(["X", "Scale", "Bias"], "Y", max_relative_error=err, numeric_grad_delta=delta)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_share_data(dtype, rng):
    """Tensor.detach() in Paddle 2.x's static graph: Out holds X's values."""
    x = rng.uniform(-3, 3, (2, 3, 4)) > 0 if dtype == "bool" else rng.uniform(-3, 3, (2, 3, 4))
    x = x.astype(dtype)
    make("share_data", {"X": x}, {"Out": x.copy()}, {}).check_output(atol=0, rtol=0)


def test_share_data_stops_the_gradient():
    """Nothing flows back through share_data: of loss = sum(w * detach(w)), w's gradient is the
    detached factor alone."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        w = tide.layers.create_parameter(shape=[3], dtype="float32", name="legacy_test_w")
        block = main.global_block()
        y = block.create_var(name="w_detached", dtype="float32", shape=[3])
        block.append_op("share_data", inputs={"X": w}, outputs={"Out": y})
        loss = tide.layers.reduce_sum(tide.layers.elementwise_mul(w, y))
        ((_, gw),) = tide.append_backward(loss)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    wv = np.array([1.0, -2.0, 3.0], "float32")
    with tide.scope_guard(scope):
        exe.run(startup)
        scope.find_var("legacy_test_w").get_tensor().set(wv, tide.CPUPlace())
        got_y, got = exe.run(main, fetch_list=[y, gw])
    np.testing.assert_array_equal(got_y, wv)
    np.testing.assert_array_equal(got, wv)  # 2 * w if the gradient went through share_data


def test_lod_array_length():
    """Fluid's / Paddle 2.x's name of array_length (len() of a list in a to_static loop)."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data(name="x", shape=[2], dtype="float32", append_batch_size=False)
        arr = tide.layers.create_array("float32")
        for k in range(3):
            tide.layers.array_write(x, tide.layers.fill_constant([1], "int64", k), array=arr)
        block = main.global_block()
        n = block.create_var(name="n", dtype="int64", shape=[1])
        block.append_op("lod_array_length", inputs={"X": arr}, outputs={"Out": n})
    (got,) = tide.Executor(tide.CPUPlace()).run(
        main, feed={"x": np.ones(2, "float32")}, fetch_list=[n]
    )
    assert got.dtype == np.int64 and got.tolist() == [3]
