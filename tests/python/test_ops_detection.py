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
