"""Object detectors as PaddleDetection writes them in Paddle 3.x, tiny (tools/paddle_det_models.py),
saved by Paddle 3.3.1 as PIR programs (tests/fixtures/paddle/pir/det_*):

- det_ppyoloe: PP-YOLOE (CSPResNet with effective SE attention, CustomCSPPAN with SPP and
  `F.interpolate(scale_factor=2)` + concat, PPYOLOEHead: ESE stems, anchor points by arange /
  meshgrid / stack from the features' dynamic shapes, the distribution focal loss integral by the
  fixed `proj_conv` and by a matmul with `paddle.arange`, batch_distance2bbox, sigmoid scores),
  boxes scaled by a `scale_factor` input, `multiclass_nms3` with normalized=True; a dynamic
  image height and width (32x32, 48x32, 16x16).
- det_rtdetr: RT-DETR (HybridEncoder: AIFI attention with a 2-D sine-cosine position embedding,
  CCFF fusion; the decoder: encoder anchors by arange / meshgrid and a logit under `where` of a
  valid mask made by multiplying bool masks, topk query selection with gather_nd, detach
  (`pd_op.share_data_`), multi-scale deformable attention as deformable_attention_core_func
  writes it with `F.grid_sample` per level, inverse_sigmoid; DETRPostProcess with topk and
  take_along_axis).
- det_two_stage: Faster R-CNN pieces (DCNv2 `DeformConv2D` with a mask and DCNv1
  `deform_conv2d` without, an RPN, generate_proposals, distribute_fpn_proposals, roi_align per
  level (aligned, sampling_ratio 2, boxes_num), the restore index, box_coder with a variance list
  along axis 1, `paddle.vision.ops.nms` by category with scores (a `nonzero` of an int32 mask)).

Each matches Paddle's outputs at the example and at other batch sizes (and image sizes), plain
and oneDNN, optimized or as saved; loaded with optimize=False, the gradients of sum(out0 * R)
are Paddle's for every parameter (the heads before NMS); SGD fine-tunes PP-YOLOE and leaves its
fixed proj_conv as it was."""

import json
import os

import numpy as np
import pytest
import test_paddle_models as fixtures
from op_test import make
from paddle_fixture_checks import (
    assert_gradients_match,
    check_cases,
    fixture_dir,
    load_for_training,
    weighted_output_gradients,
)

import tide

# tools/paddle_det_models.py's DET_MODELS.
DET = ["det_ppyoloe", "det_rtdetr", "det_two_stage"]


def cases(d):
    """(feed, Paddle's outputs): the example, then alt.npz's other shapes."""
    with np.load(os.path.join(d, "expected.npz")) as f:
        out = [(fixtures.load_feed(d), [f["out%d" % i] for i in range(len(f.files))])]
    with np.load(os.path.join(d, "alt.npz")) as f:
        for i in range(len({k.split("/")[0] for k in f.files})):
            feed = {k.split("/")[2]: f[k] for k in f.files if k.startswith("%d/in/" % i)}
            n = sum(k.startswith("%d/out/" % i) for k in f.files)
            out.append((feed, [f["%d/out/%d" % (i, j)] for j in range(n)]))
    return out


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", fixtures.LIBS)
@pytest.mark.parametrize("name", DET)
def test_det_matches_paddle(name, lib, optimize):
    d = fixture_dir(name)
    info = json.load(open(os.path.join(d, "info.json")))
    assert info["paddle"].startswith("3."), info["paddle"]
    check_cases(d, cases(d), lib, optimize)


@pytest.mark.parametrize("name", DET)
def test_det_fine_tuning_gradients_match_paddle(name):
    """Loaded as saved, loss = sum(out0 * R) (out0: the heads' boxes and scores before NMS),
    append_backward: every parameter's gradient is Paddle's dygraph one (grads.npz). The
    parameters that reach out0 only through a detach (RT-DETR's encoder heads, whose top-k
    selects the queries) get none, and Paddle's are zero; PP-YOLOE's proj_conv (stop_gradient)
    gets none in either."""
    d = fixture_dir(name)
    with np.load(os.path.join(d, "grads.npz")) as f:
        r = f["R"]
        want = {k[len("grad/") :]: f[k] for k in f.files if k.startswith("grad/")}
    got, _ = weighted_output_gradients(d, fixtures.load_feed(d), r)
    assert set(got) <= set(want), sorted(set(got) - set(want))
    for n in set(want) - set(got):
        assert not want[n].any(), n
    assert (len(got) < len(want)) == (name == "det_rtdetr"), sorted(set(want) - set(got))
    assert_gradients_match(got, {n: want[n] for n in got}, floor=1e-7)


def test_ppyoloe_fine_tuning_with_sgd_keeps_the_fixed_projection():
    """SGD on a squared error of PP-YOLOE's boxes and scores: the loss falls, the convolutions
    move, the distribution focal loss projection (proj_conv, stop_gradient in Paddle) stays."""
    d = fixture_dir("det_ppyoloe")
    exe, scope, program, _, fetches = load_for_training(d)
    feed = fixtures.load_feed(d)
    with np.load(os.path.join(d, "expected.npz")) as f:
        target = f["out0"] * 0.5
    startup = tide.Program()
    with tide.program_guard(program, startup):
        t = tide.layers.data(name="target", shape=list(target.shape), append_batch_size=False)
        loss = tide.layers.reduce_mean(
            tide.layers.square(tide.layers.elementwise_sub(fetches[0], t))
        )
        _, pairs = tide.optimizer.SGD(learning_rate=5e-3).minimize(loss)
    trained = {p.name for p, _ in pairs}
    fixed = [n for n in scope.local_var_names() if n.startswith("conv2d") and n.endswith(".w_0")]
    proj = [n for n in fixed if tuple(scope.find_var(n).get_tensor().shape()) == (1, 5, 1, 1)]
    assert len(proj) == 1 and proj[0] not in trained, (proj, sorted(trained))
    exe.run(startup, scope=scope)
    before = {n: np.array(scope.find_var(n).get_tensor()) for n in fixed}
    np.testing.assert_array_equal(before[proj[0]].ravel(), np.arange(5, dtype=np.float32))
    run_feed = dict(feed, target=target)
    steps = [
        exe.run(program, feed=run_feed, fetch_list=[loss], scope=scope)[0].item() for _ in range(5)
    ]
    assert steps[-1] < 0.9 * steps[0], steps
    for n, v in before.items():
        moved = not np.array_equal(np.array(scope.find_var(n).get_tensor()), v)
        assert moved == (n != proj[0]), n


def test_where_index_of_numbers():
    """nonzero (where_index) of int32, int64 and float tensors: paddle.vision.ops.nms's
    paddle.where(mask) of an int32 mask."""
    for dtype in ("int32", "int64", "float32", "float64", "uint8"):
        cond = np.array([[0, 3, 0], [-1, 0, 2]], dtype if dtype != "uint8" else "int64")
        cond = cond.astype(dtype)
        make(
            "where_index", {"Condition": cond}, {"Out": np.argwhere(cond).astype("int64")}
        ).check_output()
    make(
        "where_index",
        {"Condition": np.zeros((3,), "int32")},
        {"Out": np.zeros((0, 1), "int64")},
    ).check_output()


def test_elementwise_mul_of_bools():
    """Paddle's multiply of bool masks: a logical and, with numpy's broadcast and Fluid's axis."""
    rng = np.random.default_rng(0)
    x = rng.random((2, 3, 4)) > 0.4
    for y_shape, attrs, y_as in (
        ((2, 3, 4), {}, (2, 3, 4)),
        ((4,), {}, (4,)),
        ((2, 1, 4), {}, (2, 1, 4)),
        ((3,), {"axis": 1}, (1, 3, 1)),
    ):
        y = rng.random(y_shape) > 0.5
        want = x & y.reshape(y_as)
        make("elementwise_mul", {"X": x, "Y": y}, {"Out": want}, attrs).check_output()
