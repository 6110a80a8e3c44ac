"""Op tests of the ops_detection pack (Paddle's object-detection ops): each op's outputs against
a numpy reference written here (YOLO decoding, IoU, greedy NMS, bilinear RoI sampling), the edge
cases Paddle's kernels define (no box above the threshold, all boxes overlapping,
keep_top_k = -1, the background label, pixel boxes), gradients by central differences, and the
errors of bad inputs."""

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(61)
DTYPES = ["float32", "float64"]
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64


def tol(dtype):
    return {"atol": 1e-5, "rtol": 1e-5} if dtype == "float32" else {"atol": 1e-12, "rtol": 1e-12}


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


# --- yolo_box ----------------------------------------------------------------------------------


def yolo_box(
    x,
    img_size,
    anchors,
    class_num,
    conf_thresh,
    downsample,
    clip=True,
    scale=1.0,
    iou_aware=False,
    iou_factor=0.5,
):
    """Boxes [N, A H W, 4] and Scores [N, A H W, C] of a YOLOv3 head, in float64."""
    x = x.astype(np.float64)
    n, _, h, w = x.shape
    a = len(anchors) // 2
    if iou_aware:
        iou, x = sigmoid(x[:, :a]), x[:, a:]
    p = x.reshape(n, a, 5 + class_num, h, w)
    conf = sigmoid(p[:, :, 4])  # [n, a, h, w]
    if iou_aware:
        conf = conf ** (1 - iou_factor) * iou**iou_factor
    gx, gy = np.meshgrid(np.arange(w), np.arange(h))
    img_h = img_size[:, 0].astype(np.float64).reshape(n, 1, 1, 1)
    img_w = img_size[:, 1].astype(np.float64).reshape(n, 1, 1, 1)
    bias = -0.5 * (scale - 1)
    cx = (gx + sigmoid(p[:, :, 0]) * scale + bias) * img_w / w
    cy = (gy + sigmoid(p[:, :, 1]) * scale + bias) * img_h / h
    aw = np.array(anchors[0::2], np.float64).reshape(1, a, 1, 1)
    ah = np.array(anchors[1::2], np.float64).reshape(1, a, 1, 1)
    bw = np.exp(p[:, :, 2]) * aw * img_w / (downsample * w)
    bh = np.exp(p[:, :, 3]) * ah * img_h / (downsample * h)
    boxes = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], -1)
    if clip:
        boxes[..., 0:2] = np.maximum(boxes[..., 0:2], 0)
        boxes[..., 2] = np.minimum(boxes[..., 2], img_w - 1)
        boxes[..., 3] = np.minimum(boxes[..., 3], img_h - 1)
    scores = conf[:, :, None] * sigmoid(p[:, :, 5:])  # [n, a, c, h, w]
    keep = conf >= conf_thresh
    boxes = np.where(keep[..., None], boxes, 0)
    scores = np.where(keep[:, :, None], scores, 0)
    return boxes.reshape(n, -1, 4), scores.transpose(0, 1, 3, 4, 2).reshape(n, -1, class_num)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"clip_bbox": False, "scale_x_y": 1.05},
        {"iou_aware": True, "iou_aware_factor": 0.4},
    ],
)
def test_yolo_box(dtype, attrs):
    anchors, class_num = [10, 13, 16, 30], 3
    channels = 2 * (5 + class_num) + (2 if attrs.get("iou_aware") else 0)
    x = RNG.uniform(-3, 3, (2, channels, 4, 5)).astype(dtype)
    img = np.array([[64, 80], [50, 40]], np.int32)
    full = {
        "anchors": anchors,
        "class_num": class_num,
        "conf_thresh": 0.3,
        "downsample_ratio": 16,
        **attrs,
    }
    boxes, scores = yolo_box(
        x,
        img,
        anchors,
        class_num,
        0.3,
        16,
        attrs.get("clip_bbox", True),
        attrs.get("scale_x_y", 1.0),
        attrs.get("iou_aware", False),
        attrs.get("iou_aware_factor", 0.5),
    )
    assert 0 < (boxes.sum(-1) == 0).sum() < boxes.shape[1]  # some boxes below conf_thresh
    t = make(
        "yolo_box",
        {"X": x, "ImgSize": img},
        {"Boxes": boxes.astype(dtype), "Scores": scores.astype(dtype)},
        full,
    )
    t.check_output(atol=1e-4 if dtype == "float32" else 1e-10, rtol=1e-5)


def test_yolo_box_defaults_and_nothing_kept():
    # Paddle's defaults: class_num 1, conf_thresh 0.01, downsample_ratio 32, clip_bbox.
    x = RNG.uniform(-1, 1, (1, 6, 2, 2))
    img = np.array([[64, 64]], np.int64)
    boxes, scores = yolo_box(x, img, [8, 8], 1, 0.01, 32)
    make(
        "yolo_box",
        {"X": x, "ImgSize": img},
        {"Boxes": boxes, "Scores": scores},
        {"anchors": [8, 8]},
    ).check_output(atol=1e-12, rtol=1e-12)
    x[:, 4] = -50.0  # objectness ~0: every box and score stays 0
    make(
        "yolo_box",
        {"X": x, "ImgSize": img},
        {"Boxes": np.zeros((1, 4, 4)), "Scores": np.zeros((1, 4, 1))},
        {"anchors": [8, 8]},
    ).check_output(atol=0, rtol=0)


def test_yolo_box_errors():
    img = np.array([[32, 32]], np.int32)
    with pytest.raises(
        tide.TideError,
        match=r"yolo_box.*X .*must have 2 anchors \* \(5 \+ "
        r"class_num 2\) = 14 channels, got 12",
    ):
        make(
            "yolo_box",
            {"X": np.zeros((1, 12, 2, 2)), "ImgSize": img},
            {"Boxes": np.zeros(1), "Scores": np.zeros(1)},
            {"anchors": [1, 2, 3, 4], "class_num": 2},
        ).check_output()
    with pytest.raises(
        tide.TideError,
        match=r"yolo_box.*anchors must hold \(width, height\) "
        r"pairs, got 3",
    ):
        make(
            "yolo_box",
            {"X": np.zeros((1, 6, 2, 2)), "ImgSize": img},
            {"Boxes": np.zeros(1), "Scores": np.zeros(1)},
            {"anchors": [1, 2, 3]},
        ).check_output()
    with pytest.raises(
        tide.TideError,
        match=r"yolo_box.*ImgSize must be int32 or int64, got "
        r"float32",
    ):
        make(
            "yolo_box",
            {"X": np.zeros((1, 6, 2, 2)), "ImgSize": img.astype(np.float32)},
            {"Boxes": np.zeros(1), "Scores": np.zeros(1)},
            {"anchors": [1, 2]},
        ).check_output()


# --- IoU and greedy NMS ------------------------------------------------------------------------


def iou(a, b, normalized=True):
    """Paddle's JaccardOverlap: pixel boxes (normalized False) count both end pixels."""
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return 0.0
    pad = 0.0 if normalized else 1.0

    def area(x):
        return 0.0 if x[2] < x[0] or x[3] < x[1] else (x[2] - x[0] + pad) * (x[3] - x[1] + pad)

    inter = (min(a[2], b[2]) - max(a[0], b[0]) + pad) * (min(a[3], b[3]) - max(a[1], b[1]) + pad)
    return inter / (area(a) + area(b) - inter)


def greedy_nms(boxes, scores, score_thr, nms_thr, top_k=-1, normalized=True, eta=1.0):
    """Indices kept, best first: candidates above score_thr by score (ties: the earlier box),
    the top_k best, each kept unless its IoU with a kept box exceeds the (eta-shrunk) threshold."""
    cand = sorted(
        (i for i in range(len(scores)) if scores[i] > score_thr), key=lambda i: -scores[i]
    )
    if top_k > -1:
        cand = cand[:top_k]
    kept, thr = [], nms_thr
    for i in cand:
        if all(iou(boxes[i], boxes[k], normalized) <= thr for k in kept):
            kept.append(i)
            if eta < 1 and thr > 0.5:
                thr *= eta
    return kept


def random_boxes(n, size=1.0, rng=RNG):
    xy = rng.uniform(0, size * 0.7, (n, 2))
    wh = rng.uniform(size * 0.05, size * 0.4, (n, 2))
    return np.concatenate([xy, xy + wh], 1)


# --- nms -----------------------------------------------------------------------------------------


def plain_nms(boxes, thr):
    """paddle.vision.ops.nms's kernel: boxes in their order, IoU without the +1."""

    def plain_iou(a, b):
        iw = max(min(a[2], b[2]) - max(a[0], b[0]), 0)
        ih = max(min(a[3], b[3]) - max(a[1], b[1]), 0)
        inter = iw * ih
        return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)

    kept = []
    for i in range(len(boxes)):
        if all(plain_iou(boxes[k], boxes[i]) <= thr for k in kept):
            kept.append(i)
    return np.array(kept, np.int64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("thr", [0.1, 0.5])
def test_nms(dtype, thr):
    boxes = random_boxes(30, 10.0).astype(dtype)
    keep = plain_nms(boxes.astype(np.float64), thr)
    assert 1 < len(keep) < 30
    make("nms", {"Boxes": boxes}, {"KeepBoxesIdxs": keep}, {"iou_threshold": thr}).check_output()


def test_nms_all_overlapping_and_default_threshold():
    boxes = np.array([[0, 0, 2, 2], [0.1, 0.1, 2, 2], [0, 0, 2, 2.1], [0, 0, 2, 2]], np.float32)
    make(
        "nms", {"Boxes": boxes}, {"KeepBoxesIdxs": np.array([0], np.int64)}, {"iou_threshold": 0.5}
    ).check_output()
    # The default threshold, 1: only IoU > 1 would drop a box, so every box stays.
    make("nms", {"Boxes": boxes}, {"KeepBoxesIdxs": np.arange(4, dtype=np.int64)}).check_output()
    make(
        "nms", {"Boxes": np.zeros((0, 4), np.float32)}, {"KeepBoxesIdxs": np.zeros(0, np.int64)}
    ).check_output()


def test_nms_errors():
    with pytest.raises(
        tide.TideError,
        match=r"nms.*Boxes .*must have 4 \(xmin, ymin, xmax, "
        r"ymax\) at dim 1, got 5",
    ):
        make(
            "nms", {"Boxes": np.zeros((3, 5), np.float32)}, {"KeepBoxesIdxs": np.zeros(0, np.int64)}
        ).check_output()


# --- multiclass_nms3 -----------------------------------------------------------------------------


def multiclass_nms(bboxes, scores, a, rois_num=None):
    """(Out [K, 6], Index [K, 1] int32, NmsRoisNum [N] int32) of Paddle's multiclass_nms3."""
    f32 = scores.astype(np.float32)  # Paddle sorts on float scores
    shared = scores.ndim == 3
    starts = np.arange(len(bboxes) + 1) if shared else np.concatenate([[0], np.cumsum(rois_num)])
    classes = scores.shape[1]
    rows, index, nums = [], [], []
    for i in range(len(starts) - 1):
        s, e = starts[i], starts[i + 1]

        def cls(c, i=i, s=s, e=e):
            if shared:
                return bboxes[i], scores[i, c], f32[i, c]
            return bboxes[s:e, c], scores[s:e, c], f32[s:e, c]

        kept = {}
        for c in range(classes):
            if c == a["background_label"] or e == s:
                continue
            b, sc, sf = cls(c)
            k = greedy_nms(
                b,
                sf,
                a["score_threshold"],
                a["nms_threshold"],
                a["nms_top_k"],
                a["normalized"],
                a["nms_eta"],
            )
            kept[c] = k if shared else sorted(k)
        total = sum(len(v) for v in kept.values())
        if -1 < a["keep_top_k"] < total:
            pairs = [(cls(c)[2][k], c, k) for c in sorted(kept) for k in kept[c]]
            pairs = sorted(pairs, key=lambda p: -p[0])[: a["keep_top_k"]]
            kept = {}
            for _, c, k in pairs:
                kept.setdefault(c, []).append(k)
            if not shared:
                kept = {c: sorted(v) for c, v in kept.items()}
        n = 0
        for c in sorted(kept):
            b, sc, _ = cls(c)
            for k in kept[c]:
                rows.append([c, sc[k], *b[k]])
                index.append(i * bboxes.shape[1] + k if shared else (s + k) * classes + c)
                n += 1
        nums.append(n)
    out = np.array(rows, scores.dtype).reshape(-1, 6)
    return out, np.array(index, np.int32).reshape(-1, 1), np.array(nums, np.int32)


NMS_ATTRS = {
    "score_threshold": 0.3,
    "nms_top_k": -1,
    "keep_top_k": -1,
    "nms_threshold": 0.4,
    "normalized": True,
    "nms_eta": 1.0,
    "background_label": 0,
}


def nms3_test(bboxes, scores, attrs, rois_num=None, lod=None):
    a = {**NMS_ATTRS, **attrs}
    out, index, nums = multiclass_nms(bboxes, scores, a, rois_num if lod is None else lod[0])
    inputs = {"BBoxes": bboxes if lod is None else (bboxes, lod), "Scores": scores}
    if rois_num is not None:
        inputs["RoisNum"] = np.array(rois_num, np.int32)
    outputs = {"Out": out, "Index": index, "NmsRoisNum": nums}
    return make("multiclass_nms3", inputs, outputs, a), out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"keep_top_k": 7},
        {"nms_top_k": 4, "background_label": -1},
        {"normalized": False, "nms_threshold": 0.5},
        {"nms_eta": 0.7, "nms_threshold": 0.9, "background_label": 2},
    ],
)
def test_multiclass_nms3(dtype, attrs):
    size = 1.0 if attrs.get("normalized", True) else 20.0
    bboxes = np.stack([random_boxes(16, size) for _ in range(2)]).astype(dtype)
    scores = RNG.uniform(0, 1, (2, 3, 16)).astype(dtype)
    t, out = nms3_test(bboxes, scores, attrs)
    assert len(out) > 2
    t.check_output(**tol(dtype))


@pytest.mark.parametrize("use_lod", [False, True])
def test_multiclass_nms3_per_class_boxes(use_lod):
    # BBoxes [M, C, 4], Scores [M, C], the images' rows by RoisNum or LoD (an empty image too).
    counts = [6, 0, 9]
    bboxes = np.stack([random_boxes(15) for _ in range(4)], 1)  # [15, 4, 4]
    scores = RNG.uniform(0, 1, (15, 4))
    attrs = {"keep_top_k": 4, "score_threshold": 0.2}
    t, out = nms3_test(
        bboxes, scores, attrs, None if use_lod else counts, [counts] if use_lod else None
    )
    t.check_output(atol=1e-12, rtol=1e-12)


def test_multiclass_nms3_nothing_kept_and_all_overlapping():
    bboxes = np.tile(np.array([[[0.1, 0.1, 0.5, 0.5]]]), (2, 5, 1))  # identical boxes
    scores = RNG.uniform(0, 0.2, (2, 3, 5))
    t, out = nms3_test(bboxes, scores, {"score_threshold": 0.5})
    assert out.shape == (0, 6)
    t.check_output()
    scores[:, :, 2] = 0.9  # above the threshold; every class keeps exactly one of its copies
    scores[:, :, 3] = 0.9
    t, out = nms3_test(bboxes, scores, {"score_threshold": 0.5})
    assert out[:, 0].tolist() == [1, 2, 1, 2]
    t.check_output()


def test_multiclass_nms_without_index_writes_minus_one():
    # multiclass_nms (no Index): nothing kept gives one row holding -1, as Paddle's.
    bboxes = random_boxes(4)[None]
    scores = np.full((1, 2, 4), 0.1)
    a = {k: v for k, v in NMS_ATTRS.items()}
    make(
        "multiclass_nms", {"BBoxes": bboxes, "Scores": scores}, {"Out": np.array([[-1.0]])}, a
    ).check_output(atol=0, rtol=0)
    scores[0, 1, 2] = 0.8
    want = np.array([[1, 0.8, *bboxes[0, 2]]])
    make("multiclass_nms", {"BBoxes": bboxes, "Scores": scores}, {"Out": want}, a).check_output(
        atol=0, rtol=0
    )


def test_multiclass_nms3_errors():
    with pytest.raises(
        tide.TideError,
        match=r"multiclass_nms3.*BBoxes .*must have 4 .*polygon "
        r"boxes are not supported.*got 8",
    ):
        nms3_test(np.zeros((1, 3, 8)), np.zeros((1, 2, 3)), {})[0].check_output()
    with pytest.raises(
        tide.TideError,
        match=r"multiclass_nms3.*BBoxes .*must have 5 \(Scores' "
        r"boxes, dim 2\) at dim 1, got 3",
    ):
        nms3_test(np.zeros((1, 3, 4)), np.zeros((1, 2, 5)), {})[0].check_output()
    with pytest.raises(
        tide.TideError,
        match=r"multiclass_nms3.*RoisNum .*counts 5 boxes but "
        r"BBoxes has 6 rows",
    ):
        nms3_test(np.zeros((6, 2, 4)), np.zeros((6, 2)), {}, rois_num=[2, 3])[0].check_output()
    with pytest.raises(
        tide.TideError,
        match=r"multiclass_nms3.*BBoxes .*needs a LoD .*or the "
        r"RoisNum input",
    ):
        make(
            "multiclass_nms3",
            {"BBoxes": np.zeros((6, 2, 4)), "Scores": np.zeros((6, 2))},
            {"Out": np.zeros((0, 6)), "Index": np.zeros((0, 1), np.int32)},
            NMS_ATTRS,
        ).check_output()


# --- box_coder -----------------------------------------------------------------------------------


def center_size(b, pad):
    w = b[..., 2] - b[..., 0] + pad
    h = b[..., 3] - b[..., 1] + pad
    return w, h, b[..., 0] + w / 2, b[..., 1] + h / 2


def box_coder(prior, target, code_type, normalized=True, axis=0, var=None, variance=()):
    """Centre-size offsets of target from prior (encode), or the boxes offsets give (decode)."""
    pad = 0.0 if normalized else 1.0
    # The variance attribute is float32, as Paddle's.
    attr = np.array(variance or [1.0] * 4, np.float32).astype(np.float64)
    v = var if var is not None else np.tile(attr, (len(prior), 1))
    pw, ph, pcx, pcy = center_size(prior, pad)
    if code_type == "encode_center_size":
        tw, th, _, _ = center_size(target, pad)
        tcx, tcy = (target[:, 2] + target[:, 0]) / 2, (target[:, 3] + target[:, 1]) / 2
        out = np.stack(
            [
                (tcx[:, None] - pcx) / pw,
                (tcy[:, None] - pcy) / ph,
                np.log(np.abs(tw[:, None] / pw)),
                np.log(np.abs(th[:, None] / ph)),
            ],
            -1,
        )
        return out / v[None]
    expand = (lambda a: a[None]) if axis == 0 else (lambda a: a[:, None])
    pw, ph, pcx, pcy, v = map(expand, (pw, ph, pcx, pcy, v))
    cx = v[..., 0] * target[..., 0] * pw + pcx
    cy = v[..., 1] * target[..., 1] * ph + pcy
    w = np.exp(v[..., 2] * target[..., 2]) * pw
    h = np.exp(v[..., 3] * target[..., 3]) * ph
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2 - pad, cy + h / 2 - pad], -1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("variances", ["input", "attr", "none"])
def test_box_coder_encode(dtype, normalized, variances):
    size = 1.0 if normalized else 30.0
    prior, target = random_boxes(5, size).astype(dtype), random_boxes(3, size).astype(dtype)
    var = RNG.uniform(0.1, 0.3, (5, 4)).astype(dtype)
    inputs = {"PriorBox": prior, "TargetBox": target}
    attrs = {"code_type": "encode_center_size", "box_normalized": normalized}
    kw = {}
    if variances == "input":
        inputs["PriorBoxVar"], kw["var"] = var, var.astype(np.float64)
    elif variances == "attr":
        attrs["variance"] = kw["variance"] = [0.1, 0.1, 0.2, 0.2]
    want = box_coder(
        prior.astype(np.float64), target.astype(np.float64), "encode_center_size", normalized, **kw
    )
    t = make("box_coder", inputs, {"OutputBox": want.astype(dtype)}, attrs)
    t.check_output(
        atol=1e-4 if dtype == "float32" else 1e-12, rtol=1e-5 if dtype == "float32" else 1e-12
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("variances", ["input", "attr"])
def test_box_coder_decode(dtype, axis, variances):
    prior = random_boxes(4, 30.0).astype(dtype)
    target = RNG.uniform(-1, 1, (3, 4, 4) if axis == 0 else (4, 3, 4)).astype(dtype)
    var = RNG.uniform(0.1, 0.3, (4, 4)).astype(dtype)
    inputs = {"PriorBox": prior, "TargetBox": target}
    attrs = {"code_type": "decode_center_size", "box_normalized": False, "axis": axis}
    kw = {}
    if variances == "input":
        inputs["PriorBoxVar"], kw["var"] = var, var.astype(np.float64)
    else:
        attrs["variance"] = kw["variance"] = [0.1, 0.1, 0.2, 0.2]
    want = box_coder(
        prior.astype(np.float64), target.astype(np.float64), "decode_center_size", False, axis, **kw
    )
    t = make("box_coder", inputs, {"OutputBox": want.astype(dtype)}, attrs)
    t.check_output(
        atol=1e-4 if dtype == "float32" else 1e-12, rtol=1e-5 if dtype == "float32" else 1e-12
    )


def test_box_coder_errors():
    prior, target = random_boxes(3), random_boxes(2)
    with pytest.raises(tide.TideError, match=r"box_coder.*code_type.*decode_center"):
        make(
            "box_coder",
            {"PriorBox": prior, "TargetBox": target},
            {"OutputBox": prior},
            {"code_type": "center"},
        ).check_output()
    with pytest.raises(
        tide.TideError,
        match=r"box_coder.*TargetBox must have 3 dims, got "
        r"\[2, 4\]",
    ):
        make(
            "box_coder",
            {"PriorBox": prior, "TargetBox": target},
            {"OutputBox": prior},
            {"code_type": "decode_center_size"},
        ).check_output()
    with pytest.raises(
        tide.TideError,
        match=r"box_coder.*either as PriorBoxVar or as the "
        r"variance attribute",
    ):
        make(
            "box_coder",
            {"PriorBox": prior, "PriorBoxVar": prior, "TargetBox": target},
            {"OutputBox": prior},
            {"variance": [1.0, 1.0, 1.0, 1.0]},
        ).check_output()


# --- prior_box -----------------------------------------------------------------------------------


def prior_box(
    fh,
    fw,
    ih,
    iw,
    min_sizes,
    max_sizes=(),
    ratios=(),
    variances=(0.1, 0.1, 0.2, 0.2),
    flip=True,
    clip=True,
    step=(0.0, 0.0),
    offset=0.5,
    min_max_order=False,
):
    # Paddle's sizes and ratios are float32 (1 / r too), its arithmetic double.
    f32 = np.float32
    ars = [f32(1.0)]
    for r in map(f32, ratios):
        if all(abs(r - a) >= 1e-6 for a in ars):
            ars += [r, f32(1.0) / r] if flip else [r]
    ars = [float(a) for a in ars]
    sw, sh = (iw / fw, ih / fh) if 0.0 in step else step
    boxes = []
    for h in range(fh):
        for w in range(fw):
            cx, cy = (w + offset) * sw, (h + offset) * sh
            cell = []
            for s, m in enumerate(min_sizes):
                sizes = [(m * np.sqrt(a), m / np.sqrt(a)) for a in ars]
                big = [(np.sqrt(float(f32(m) * f32(max_sizes[s]))),) * 2] if max_sizes else []
                if min_max_order:
                    rest = [(m * np.sqrt(a), m / np.sqrt(a)) for a in ars if abs(a - 1) >= 1e-6]
                    cell += [(m, m)] + big + rest
                else:
                    cell += sizes + big
            for bw, bh in cell:
                boxes.append(
                    [(cx - bw / 2) / iw, (cy - bh / 2) / ih, (cx + bw / 2) / iw, (cy + bh / 2) / ih]
                )
    out = np.array(boxes).reshape(fh, fw, -1, 4)
    if clip:
        out = np.clip(out, 0, 1)
    return out, np.broadcast_to(np.array(variances, f32).astype(np.float64), out.shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "attrs",
    [
        {"min_sizes": [4.0], "aspect_ratios": [2.0]},
        {
            "min_sizes": [4.0, 8.0],
            "max_sizes": [6.0, 12.0],
            "aspect_ratios": [2.0, 3.0, 1.0],
            "flip": False,
            "clip": False,
        },
        {
            "min_sizes": [5.0],
            "max_sizes": [9.0],
            "aspect_ratios": [2.0, 0.5],
            "min_max_aspect_ratios_order": True,
            "step_w": 6.0,
            "step_h": 4.0,
            "offset": 0.25,
        },
    ],
)
def test_prior_box(dtype, attrs):
    x, img = np.zeros((1, 2, 3, 4), dtype), np.zeros((1, 3, 24, 30), dtype)
    full = {"variances": [0.1, 0.1, 0.2, 0.2], **attrs}
    boxes, var = prior_box(
        3,
        4,
        24,
        30,
        attrs["min_sizes"],
        attrs.get("max_sizes", ()),
        attrs.get("aspect_ratios", ()),
        full["variances"],
        attrs.get("flip", True),
        attrs.get("clip", True),
        (attrs.get("step_w", 0.0), attrs.get("step_h", 0.0)),
        attrs.get("offset", 0.5),
        attrs.get("min_max_aspect_ratios_order", False),
    )
    t = make(
        "prior_box",
        {"Input": x, "Image": img},
        {"Boxes": boxes.astype(dtype), "Variances": var.astype(dtype)},
        full,
    )
    t.check_output(**tol(dtype))


def test_prior_box_errors():
    x, img = np.zeros((1, 2, 3, 4), np.float32), np.zeros((1, 3, 24, 30), np.float32)
    out = {"Boxes": x, "Variances": x}
    with pytest.raises(
        tide.TideError,
        match=r"prior_box.*max_sizes\[0\] \(3\) must be greater "
        r"than min_sizes\[0\] \(4\)",
    ):
        make(
            "prior_box",
            {"Input": x, "Image": img},
            out,
            {"min_sizes": [4.0], "max_sizes": [3.0], "variances": [1.0] * 4},
        ).check_output()
    with pytest.raises(tide.TideError, match=r"prior_box.*variances must hold 4 values, got 2"):
        make(
            "prior_box",
            {"Input": x, "Image": img},
            out,
            {"min_sizes": [4.0], "variances": [1.0] * 2},
        ).check_output()


# --- roi_align -----------------------------------------------------------------------------------


def bilinear(img, y, x):
    """img [C, H, W] at (y, x): 0 outside [-1, H] x [-1, W], else clamped to the border."""
    _, h, w = img.shape
    if y < -1 or y > h or x < -1 or x > w:
        return np.zeros(img.shape[0])
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return (
        (1 - ly) * (1 - lx) * img[:, y0, x0]
        + (1 - ly) * lx * img[:, y0, x1]
        + ly * (1 - lx) * img[:, y1, x0]
        + ly * lx * img[:, y1, x1]
    )


def roi_align(x, rois, counts, ph, pw, scale=1.0, ratio=-1, aligned=False):
    x, rois = x.astype(np.float64), rois.astype(np.float64)
    image = np.repeat(np.arange(len(counts)), counts)
    out = np.zeros((len(rois), x.shape[1], ph, pw))
    off = 0.5 if aligned else 0.0
    for n, roi in enumerate(rois):
        x0, y0, x1, y1 = roi * scale - off
        rw, rh = x1 - x0, y1 - y0
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = ratio if ratio > 0 else int(np.ceil(rh / ph))
        gw = ratio if ratio > 0 else int(np.ceil(rw / pw))
        for i in range(ph):
            for j in range(pw):
                acc = np.zeros(x.shape[1])
                for a in range(gh):
                    for b in range(gw):
                        yy = y0 + rh / ph * (i + (a + 0.5) / gh)
                        xx = x0 + rw / pw * (j + (b + 0.5) / gw)
                        acc += bilinear(x[image[n]], yy, xx)
                out[n, :, i, j] = acc / (gh * gw)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "attrs",
    [
        {"pooled_height": 2, "pooled_width": 3},
        {"pooled_height": 3, "pooled_width": 2, "spatial_scale": 0.5, "sampling_ratio": 2},
        {"pooled_height": 2, "pooled_width": 2, "aligned": True},
    ],
)
@pytest.mark.parametrize("use_lod", [False, True])
def test_roi_align(dtype, attrs, use_lod):
    x = RNG.uniform(-1, 1, (2, 3, 7, 8)).astype(dtype)
    s = 1.0 / attrs.get("spatial_scale", 1.0)
    # RoIs inside, over the border (samples clamped and beyond -1: 0), and under a pixel.
    rois = (
        np.array(
            [
                [0.5, 0.5, 4.0, 5.0],
                [2.0, 1.0, 7.5, 6.9],
                [-3.0, -2.5, 2.0, 3.0],
                [3.2, 2.1, 3.6, 2.4],
                [1.0, 0.0, 9.0, 8.0],
            ]
        )
        * s
    )
    rois = rois.astype(dtype)
    counts = [2, 3]
    want = roi_align(
        x,
        rois,
        counts,
        attrs["pooled_height"],
        attrs["pooled_width"],
        attrs.get("spatial_scale", 1.0),
        attrs.get("sampling_ratio", -1),
        attrs.get("aligned", False),
    )
    inputs = {"X": x, "ROIs": (rois, [counts]) if use_lod else rois}
    if not use_lod:
        inputs["RoisNum"] = np.array(counts, np.int32)
    t = make("roi_align", inputs, {"Out": want.astype(dtype)}, attrs)
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_roi_align_defaults_and_int64_rois_num():
    # Paddle's defaults: one 1 x 1 bin, sampling ceil(RoI size), not aligned.
    x = RNG.uniform(-1, 1, (1, 2, 5, 5))
    rois = np.array([[1.0, 1.0, 3.5, 4.0]])
    make(
        "roi_align",
        {"X": x, "ROIs": rois, "RoisNum": np.array([1], np.int64)},
        {"Out": roi_align(x, rois, [1], 1, 1)},
    ).check_output(atol=1e-12, rtol=1e-12)


def test_roi_align_errors():
    x, rois = np.zeros((2, 1, 4, 4)), np.zeros((3, 4))
    out = {"Out": np.zeros((3, 1, 1, 1))}
    with pytest.raises(
        tide.TideError,
        match=r"roi_align.*RoisNum .*counts 2 boxes but ROIs "
        r"has 3 rows",
    ):
        make(
            "roi_align", {"X": x, "ROIs": rois, "RoisNum": np.array([1, 1], np.int32)}, out
        ).check_output()
    with pytest.raises(tide.TideError, match=r"roi_align.*given for 1 images but X has 2"):
        make(
            "roi_align", {"X": x, "ROIs": rois, "RoisNum": np.array([3], np.int32)}, out
        ).check_output()
    with pytest.raises(tide.TideError, match=r"roi_align.*ROIs .*must have 4 .*at dim 1, got 5"):
        make("roi_align", {"X": x, "ROIs": np.zeros((3, 5))}, out).check_output()


# --- deformable_conv -----------------------------------------------------------------------------


def sample_zero_padded(img, h, w):
    """img [H, W] at (h, w): 0 outside (-1, H) x (-1, W), else bilinear with 0 beyond the edge."""
    height, width = img.shape
    if not (-1 < h < height and -1 < w < width):
        return 0.0
    h0, w0 = int(np.floor(h)), int(np.floor(w))
    lh, lw = h - h0, w - w0

    def at(y, x):
        return img[y, x] if 0 <= y < height and 0 <= x < width else 0.0

    return (
        (1 - lh) * (1 - lw) * at(h0, w0)
        + (1 - lh) * lw * at(h0, w0 + 1)
        + lh * (1 - lw) * at(h0 + 1, w0)
        + lh * lw * at(h0 + 1, w0 + 1)
    )


def deform_conv(x, offset, filt, mask, stride, pad, dil, groups, dgroups):
    n, c, h, w = x.shape
    m, cg, kh, kw = filt.shape
    ho = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (w + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    cols = np.zeros((n, c, kh, kw, ho, wo))
    for b, ch, i, j, y, xo in np.ndindex(n, c, kh, kw, ho, wo):
        dg, tap = ch // (c // dgroups), i * kw + j
        dy = offset[b, 2 * (dg * kh * kw + tap), y, xo]
        dx = offset[b, 2 * (dg * kh * kw + tap) + 1, y, xo]
        v = sample_zero_padded(
            x[b, ch],
            y * stride[0] - pad[0] + i * dil[0] + dy,
            xo * stride[1] - pad[1] + j * dil[1] + dx,
        )
        cols[b, ch, i, j, y, xo] = v * (1.0 if mask is None else mask[b, dg * kh * kw + tap, y, xo])
    out = np.zeros((n, m, ho, wo))
    mg = m // groups
    for g in range(groups):
        out[:, g * mg : (g + 1) * mg] = np.einsum(
            "mcij,ncijyx->nmyx", filt[g * mg : (g + 1) * mg], cols[:, g * cg : (g + 1) * cg]
        )
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "case",
    [
        {},  # 3 x 3, padding 1
        {"strides": [2, 1], "dilations": [1, 2], "paddings": [1, 2]},
        {"groups": 2, "deformable_groups": 2},
        {"no_mask": True},
    ],
)
def test_deformable_conv(dtype, case):
    attrs = {k: v for k, v in case.items() if k != "no_mask"}
    stride = attrs.get("strides", [1, 1])
    pad = attrs.setdefault("paddings", [1, 1])
    dil = attrs.get("dilations", [1, 1])
    groups, dgroups = attrs.get("groups", 1), attrs.get("deformable_groups", 1)
    x = RNG.uniform(-1, 1, (2, 4, 5, 6))
    filt = RNG.uniform(-1, 1, (6, 4 // groups, 3, 3))
    ho = (5 + 2 * pad[0] - dil[0] * 2 - 1) // stride[0] + 1
    wo = (6 + 2 * pad[1] - dil[1] * 2 - 1) // stride[1] + 1
    offset = RNG.uniform(-1.5, 1.5, (2, 2 * dgroups * 9, ho, wo))  # samples past the border too
    mask = None if case.get("no_mask") else RNG.uniform(0, 1, (2, dgroups * 9, ho, wo))
    want = deform_conv(x, offset, filt, mask, stride, pad, dil, groups, dgroups)
    inputs = {"Input": x, "Offset": offset, "Filter": filt}
    if mask is not None:
        inputs["Mask"] = mask
    inputs = {k: v.astype(dtype) for k, v in inputs.items()}
    op = "deformable_conv_v1" if case.get("no_mask") else "deformable_conv"
    t = make(op, inputs, {"Output": want.astype(dtype)}, attrs)
    t.check_output(atol=1e-4 if dtype == "float32" else 1e-10, rtol=1e-5)
    if dtype == "float64":
        t.check_grad(sorted(inputs), "Output", max_relative_error=1e-4, numeric_grad_delta=1e-6)


def test_deformable_conv_without_mask_input_and_errors():
    # deformable_conv with no Mask is DCNv1.
    x, filt = RNG.uniform(-1, 1, (1, 2, 4, 4)), RNG.uniform(-1, 1, (3, 2, 3, 3))
    offset = RNG.uniform(-1, 1, (1, 18, 2, 2))
    want = deform_conv(x, offset, filt, None, [1, 1], [0, 0], [1, 1], 1, 1)
    make(
        "deformable_conv", {"Input": x, "Offset": offset, "Filter": filt}, {"Output": want}
    ).check_output(atol=1e-12, rtol=1e-12)
    with pytest.raises(
        tide.TideError,
        match=r"deformable_conv.*Offset .*must have 18 \(2 "
        r"deformable_groups kh kw\) at dim 1, got 9",
    ):
        make(
            "deformable_conv",
            {"Input": x, "Offset": offset[:, :9], "Filter": filt},
            {"Output": want},
        ).check_output()
    with pytest.raises(
        tide.TideError,
        match=r"deformable_conv.*Mask .*must have 9 "
        r"\(deformable_groups kh kw\) at dim 1, got 4",
    ):
        make(
            "deformable_conv",
            {"Input": x, "Offset": offset, "Filter": filt, "Mask": np.ones((1, 4, 2, 2))},
            {"Output": want},
        ).check_output()
    with pytest.raises(
        tide.TideError,
        match=r"deformable_conv.*Filter .*must have 2 \(Input's "
        r"channels / groups\) at dim 1, got 1",
    ):
        make(
            "deformable_conv",
            {"Input": x, "Offset": offset, "Filter": filt[:, :1]},
            {"Output": want},
        ).check_output()


# --- matrix_nms ----------------------------------------------------------------------------------


def matrix_nms(bboxes, scores, a):
    """(Out, Index, RoisNum) of Matrix NMS: scores decayed by IoU with the better boxes."""
    rows, index, nums = [], [], []
    n, classes, m = scores.shape
    for i in range(n):
        dets = []  # (decayed score, label, box)
        for c in range(classes):
            if c == a["background_label"]:
                continue
            sc = scores[i, c]
            cand = sorted(
                (j for j in range(m) if sc[j] > a["score_threshold"]), key=lambda j: -sc[j]
            )
            if a["nms_top_k"] > -1:
                cand = cand[: a["nms_top_k"]]
            ious = [[iou(bboxes[i, p], bboxes[i, q], a["normalized"]) for q in cand] for p in cand]
            worst = [max(ious[x][:x], default=0.0) for x in range(len(cand))]
            for x, j in enumerate(cand):
                decay = 1.0
                for y in range(x):
                    if a["use_gaussian"]:
                        d = np.exp((worst[y] ** 2 - ious[x][y] ** 2) * a["gaussian_sigma"])
                    else:
                        d = (1 - ious[x][y]) / (1 - worst[y])
                    decay = min(decay, d)
                if decay * sc[j] > a["post_threshold"]:
                    dets.append((decay * sc[j], c, j))
        dets.sort(key=lambda d: -d[0])
        if a["keep_top_k"] > -1:
            dets = dets[: a["keep_top_k"]]
        for ds, c, j in dets:
            rows.append([c, ds, *bboxes[i, j]])
            index.append(i * m + j)
        nums.append(len(dets))
    return (
        np.array(rows, scores.dtype).reshape(-1, 6),
        np.array(index, np.int32).reshape(-1, 1),
        np.array(nums, np.int32),
    )


MATRIX_ATTRS = {
    "score_threshold": 0.25,
    "nms_top_k": -1,
    "keep_top_k": -1,
    "post_threshold": 0.0,
    "use_gaussian": False,
    "gaussian_sigma": 2.0,
    "background_label": 0,
    "normalized": True,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"use_gaussian": True, "post_threshold": 0.25, "keep_top_k": 9},
        {"nms_top_k": 5, "background_label": -1, "normalized": False, "post_threshold": 0.125},
    ],
)
def test_matrix_nms(dtype, attrs):
    a = {**MATRIX_ATTRS, **attrs}
    size = 1.0 if a["normalized"] else 20.0
    bboxes = np.stack([random_boxes(14, size) for _ in range(2)]).astype(dtype)
    scores = RNG.uniform(0, 1, (2, 3, 14)).astype(dtype)
    out, index, nums = matrix_nms(bboxes.astype(np.float64), scores.astype(np.float64), a)
    assert len(out) > 3
    t = make(
        "matrix_nms",
        {"BBoxes": bboxes, "Scores": scores},
        {"Out": out.astype(dtype), "Index": index, "RoisNum": nums},
        a,
    )
    t.check_output(**tol(dtype))


def test_matrix_nms_nothing_kept_and_errors():
    bboxes, scores = random_boxes(5)[None], np.full((1, 2, 5), 0.1)
    make(
        "matrix_nms",
        {"BBoxes": bboxes, "Scores": scores},
        {
            "Out": np.zeros((0, 6)),
            "Index": np.zeros((0, 1), np.int32),
            "RoisNum": np.zeros(1, np.int32),
        },
        MATRIX_ATTRS,
    ).check_output()
    with pytest.raises(
        tide.TideError,
        match=r"matrix_nms.*BBoxes .*must have 4 \(Scores' boxes, "
        r"dim 2\) at dim 1, got 5",
    ):
        make(
            "matrix_nms",
            {"BBoxes": bboxes, "Scores": np.zeros((1, 2, 4))},
            {"Out": np.zeros((0, 6)), "Index": np.zeros((0, 1), np.int32)},
            MATRIX_ATTRS,
        ).check_output()


# --- roi_pool ------------------------------------------------------------------------------------


def roi_pool(x, rois, counts, ph, pw, scale=1.0):
    """(Out, Argmax) of RoI max pooling; 0 and -1 for an empty bin."""
    image = np.repeat(np.arange(len(counts)), counts)
    _, c, h, w = x.shape
    out, arg = np.zeros((len(rois), c, ph, pw), x.dtype), np.full((len(rois), c, ph, pw), -1)
    for n, roi in enumerate(rois):
        x0, y0, x1, y1 = (int(np.sign(v) * np.floor(abs(v) + 0.5)) for v in roi * scale)
        bh, bw = np.float32(max(y1 - y0 + 1, 1)) / ph, np.float32(max(x1 - x0 + 1, 1)) / pw
        for i, j in np.ndindex(ph, pw):
            hs = min(max(int(np.floor(i * bh)) + y0, 0), h)
            he = min(max(int(np.ceil((i + 1) * bh)) + y0, 0), h)
            ws = min(max(int(np.floor(j * bw)) + x0, 0), w)
            we = min(max(int(np.ceil((j + 1) * bw)) + x0, 0), w)
            if he <= hs or we <= ws:
                continue
            win = x[image[n], :, hs:he, ws:we].reshape(c, -1)
            best = win.argmax(1)  # the first maximum
            out[n, :, i, j] = win[np.arange(c), best]
            arg[n, :, i, j] = (hs + best // (we - ws)) * w + ws + best % (we - ws)
    return out, arg


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "attrs",
    [
        {"pooled_height": 2, "pooled_width": 3},
        {"pooled_height": 3, "pooled_width": 2, "spatial_scale": 0.5},
    ],
)
def test_roi_pool(dtype, attrs):
    x = RNG.permutation(2 * 3 * 7 * 8).reshape(2, 3, 7, 8).astype(dtype) / 100  # no ties
    s = 1.0 / attrs.get("spatial_scale", 1.0)
    rois = (
        np.array(
            [
                [0.4, 0.6, 4.0, 5.0],
                [2.0, 1.0, 7.5, 6.9],
                [-3.0, -2.5, 2.0, 3.0],
                [3.2, 2.1, 3.6, 2.4],
                [9.0, 8.0, 12.0, 11.0],
            ]
        )
        * s
    ).astype(dtype)
    counts = [2, 3]
    out, arg = roi_pool(
        x,
        rois,
        counts,
        attrs["pooled_height"],
        attrs["pooled_width"],
        attrs.get("spatial_scale", 1.0),
    )
    assert (arg == -1).any()  # the last RoI lies outside X
    t = make(
        "roi_pool",
        {"X": x, "ROIs": rois, "RoisNum": np.array(counts, np.int32)},
        {"Out": out, "Argmax": arg},
        attrs,
    )
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_roi_pool_errors():
    x, rois = np.zeros((2, 1, 4, 4)), np.zeros((3, 4))
    with pytest.raises(tide.TideError, match=r"roi_pool.*given for 1 images but X has 2"):
        make(
            "roi_pool",
            {"X": x, "ROIs": rois, "RoisNum": np.array([3], np.int32)},
            {"Out": np.zeros((3, 1, 1, 1)), "Argmax": None},
        ).check_output()
    with pytest.raises(
        tide.TideError,
        match=r"roi_pool.*pooled_height and pooled_width must be "
        r"> 0, got 0 and 1",
    ):
        make(
            "roi_pool",
            {"X": x, "ROIs": rois, "RoisNum": np.array([1, 2], np.int32)},
            {"Out": np.zeros((3, 1, 1, 1)), "Argmax": None},
            {"pooled_height": 0},
        ).check_output()


# --- distribute_fpn_proposals --------------------------------------------------------------------


def distribute_fpn(rois, counts, min_level, max_level, refer_level, refer_scale, pixel_offset):
    """([level RoIs], [level RoIs per image], RestoreIndex) of FPN's level assignment."""
    pad = 1.0 if pixel_offset else 0.0
    w, h = rois[:, 2] - rois[:, 0] + pad, rois[:, 3] - rois[:, 1] + pad
    area = np.where((rois[:, 2] < rois[:, 0]) | (rois[:, 3] < rois[:, 1]), 0.0, w * h)
    lvl = np.floor(np.log2(np.sqrt(area) / refer_scale + 1e-6) + refer_level)
    lvl = np.clip(lvl, min_level, max_level).astype(int)
    image = np.repeat(np.arange(len(counts)), counts)
    order = [r for level in range(min_level, max_level + 1) for r in np.flatnonzero(lvl == level)]
    restore = np.empty(len(rois), np.int32)
    restore[order] = np.arange(len(rois))
    levels = [rois[lvl == level] for level in range(min_level, max_level + 1)]
    nums = [
        np.array([np.sum((lvl == level) & (image == i)) for i in range(len(counts))], np.int32)
        for level in range(min_level, max_level + 1)
    ]
    return levels, nums, restore.reshape(-1, 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pixel_offset", [True, False])
def test_distribute_fpn_proposals(dtype, pixel_offset):
    xy = RNG.uniform(0, 200, (20, 2))
    rois = np.concatenate([xy, xy + RNG.uniform(2, 400, (20, 2))], 1).astype(dtype)
    counts = [8, 0, 12]
    attrs = {
        "min_level": 2,
        "max_level": 5,
        "refer_level": 4,
        "refer_scale": 224,
        "pixel_offset": pixel_offset,
    }
    levels, nums, restore = distribute_fpn(
        rois.astype(np.float64), counts, 2, 5, 4, 224, pixel_offset
    )
    assert sum(len(v) > 0 for v in levels) >= 3
    outputs = {
        "MultiFpnRois": [("rois%d" % i, v.astype(dtype)) for i, v in enumerate(levels)],
        "MultiLevelRoIsNum": [("num%d" % i, v) for i, v in enumerate(nums)],
        "RestoreIndex": restore,
    }
    make(
        "distribute_fpn_proposals",
        {"FpnRois": rois, "RoisNum": np.array(counts, np.int32)},
        outputs,
        attrs,
    ).check_output(atol=0, rtol=0)
    # The same from FpnRois' LoD.
    del outputs["MultiLevelRoIsNum"]
    make("distribute_fpn_proposals", {"FpnRois": (rois, [counts])}, outputs, attrs).check_output(
        atol=0, rtol=0
    )


def test_distribute_fpn_proposals_errors():
    rois = random_boxes(4, 100.0)
    attrs = {"min_level": 2, "max_level": 3, "refer_level": 4, "refer_scale": 224}
    with pytest.raises(
        tide.TideError,
        match=r"distribute_fpn_proposals.*MultiFpnRois must have "
        r"one variable per level .*= 2\), got 3",
    ):
        make(
            "distribute_fpn_proposals",
            {"FpnRois": rois, "RoisNum": np.array([4], np.int32)},
            {
                "MultiFpnRois": [("r%d" % i, rois) for i in range(3)],
                "RestoreIndex": np.zeros((4, 1), np.int32),
            },
            attrs,
        ).check_output()


# --- generate_proposals_v2 -----------------------------------------------------------------------


def generate_proposals(scores, deltas, im_shape, anchors, var, a):
    """(RpnRois, RpnRoiProbs, RpnRoisNum) of an RPN: decode, clip, filter, NMS, per image."""
    n, na, h, w = scores.shape
    sc = scores.transpose(0, 2, 3, 1).reshape(n, -1)
    dl = deltas.reshape(n, na, 4, h, w).transpose(0, 3, 4, 1, 2).reshape(n, -1, 4)
    an, va = anchors.reshape(-1, 4), var.reshape(-1, 4)
    off = 1.0 if a["pixel_offset"] else 0.0
    rois, probs, nums = [], [], []
    for i in range(n):
        order = np.argsort(-sc[i], kind="stable")
        if 0 < a["pre_nms_topN"] < len(order):
            order = order[: a["pre_nms_topN"]]
        p, d, v = an[order], dl[i, order], va[order]
        aw, ah = p[:, 2] - p[:, 0] + off, p[:, 3] - p[:, 1] + off
        cx, cy = (
            v[:, 0] * d[:, 0] * aw + p[:, 0] + 0.5 * aw,
            v[:, 1] * d[:, 1] * ah + p[:, 1] + 0.5 * ah,
        )
        bw = np.exp(np.minimum(v[:, 2] * d[:, 2], np.log(1000.0 / 16.0))) * aw
        bh = np.exp(np.minimum(v[:, 3] * d[:, 3], np.log(1000.0 / 16.0))) * ah
        b = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2 - off, cy + bh / 2 - off], 1)
        b[:, 0::2] = np.clip(b[:, 0::2], 0, im_shape[i, 1] - off)
        b[:, 1::2] = np.clip(b[:, 1::2], 0, im_shape[i, 0] - off)
        ws, hs = b[:, 2] - b[:, 0] + off, b[:, 3] - b[:, 1] + off
        keep = (ws >= max(a["min_size"], 1.0)) & (hs >= max(a["min_size"], 1.0))
        if a["pixel_offset"]:
            keep &= (b[:, 0] + ws / 2 <= im_shape[i, 1]) & (b[:, 1] + hs / 2 <= im_shape[i, 0])
        b, s = b[keep], sc[i, order][keep]
        if not len(s):
            b, s = np.zeros((1, 4)), np.zeros(1)
        elif a["nms_thresh"] > 0:
            kept = greedy_nms(b, s, -np.inf, a["nms_thresh"], -1, not a["pixel_offset"], a["eta"])
            if a["post_nms_topN"] > 0:
                kept = kept[: a["post_nms_topN"]]
            b, s = b[kept], s[kept]
        rois.append(b)
        probs.append(s)
        nums.append(len(s))
    return (np.concatenate(rois), np.concatenate(probs).reshape(-1, 1), np.array(nums, np.int32))


def rpn_inputs(n=2, na=3, h=4, w=5, stride=8.0):
    scores = RNG.uniform(0, 1, (n, na, h, w))
    deltas = RNG.uniform(-0.5, 0.5, (n, 4 * na, h, w))
    ys, xs = np.meshgrid(np.arange(h) * stride, np.arange(w) * stride, indexing="ij")
    sizes = np.array([8.0, 16.0, 24.0])[:na]
    anchors = np.zeros((h, w, na, 4))
    anchors[..., 0], anchors[..., 1] = xs[..., None] - sizes / 2, ys[..., None] - sizes / 2
    anchors[..., 2], anchors[..., 3] = xs[..., None] + sizes / 2, ys[..., None] + sizes / 2
    var = np.tile(np.array([0.1, 0.1, 0.2, 0.2]), (h, w, na, 1))
    im_shape = np.array([[32.0, 40.0], [28.0, 30.0]])[:n]
    return scores, deltas, im_shape, anchors, var


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "attrs",
    [
        {"pre_nms_topN": 30, "post_nms_topN": 10, "nms_thresh": 0.5, "min_size": 2.0, "eta": 1.0},
        {
            "pre_nms_topN": 0,
            "post_nms_topN": 0,
            "nms_thresh": 0.7,
            "min_size": 0.1,
            "eta": 0.9,
            "pixel_offset": False,
        },
        {"pre_nms_topN": 100, "post_nms_topN": 5, "nms_thresh": 0.0, "min_size": 1.0, "eta": 1.0},
    ],
)
def test_generate_proposals_v2(dtype, attrs):
    a = {"pixel_offset": True, **attrs}
    scores, deltas, im_shape, anchors, var = rpn_inputs()
    rois, probs, nums = generate_proposals(scores, deltas, im_shape, anchors, var, a)
    assert (nums > 3).all()
    inputs = {
        "Scores": scores,
        "BboxDeltas": deltas,
        "ImShape": im_shape,
        "Anchors": anchors,
        "Variances": var,
    }
    t = make(
        "generate_proposals_v2",
        {k: v.astype(dtype) for k, v in inputs.items()},
        {"RpnRois": rois.astype(dtype), "RpnRoiProbs": probs.astype(dtype), "RpnRoisNum": nums},
        a,
    )
    t.check_output(**tol(dtype) if dtype == "float64" else {"atol": 1e-4, "rtol": 1e-5})


def test_generate_proposals_v2_nothing_kept_and_errors():
    scores, deltas, im_shape, anchors, var = rpn_inputs(n=1)
    a = {"pre_nms_topN": 10, "post_nms_topN": 5, "nms_thresh": 0.5, "min_size": 100.0, "eta": 1.0}
    inputs = {
        "Scores": scores,
        "BboxDeltas": deltas,
        "ImShape": im_shape,
        "Anchors": anchors,
        "Variances": var,
    }
    # No box is min_size wide: one zero box of score 0.
    make(
        "generate_proposals_v2",
        inputs,
        {
            "RpnRois": np.zeros((1, 4)),
            "RpnRoiProbs": np.zeros((1, 1)),
            "RpnRoisNum": np.ones(1, np.int32),
        },
        a,
    ).check_output()
    with pytest.raises(
        tide.TideError,
        match=r"generate_proposals_v2.*Anchors .*must hold H W A = "
        r"60 boxes, got 45",
    ):
        bad = {**inputs, "Anchors": anchors[:3], "Variances": var[:3]}
        make(
            "generate_proposals_v2",
            bad,
            {"RpnRois": np.zeros((1, 4)), "RpnRoiProbs": np.zeros((1, 1))},
            a,
        ).check_output()
