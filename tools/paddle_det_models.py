"""Small object detectors as PaddleDetection writes them in Paddle 3.x (ppdet/modeling), with
`paddle.nn` at tiny widths and depths (8 channels, two feature levels, 16x16 to 48x32 images),
so each fixture stays under ~450 KB:

- `det_ppyoloe`: PP-YOLOE: a CSPResNet backbone (ConvBN + swish, RepVgg blocks, CSP stages with
  effective SE attention), a CustomCSPPAN neck (SPP by max pools, `F.interpolate(scale_factor=2)`
  and concat up, stride-2 ConvBN down), the PPYOLOEHead (ESE attention stems, anchor-free
  distribution focal loss decoding: softmax over reg_max + 1 bins and the fixed `proj_conv`
  (stop_gradient), anchor points by `paddle.arange` + `paddle.meshgrid` + `stack` from the
  features' dynamic shapes, `batch_distance2bbox`, sigmoid scores), the boxes scaled back by the
  `scale_factor` input and `paddle._C_ops.multiclass_nms3` as ppdet's MultiClassNMS calls it
  (normalized=True, its default). The image's height and width are dynamic (multiples of 8:
  features at strides 4 and 8, where ppdet has 8, 16, 32 at 640x640). The same logits
  also go through the integral as GFL / PP-YOLOE-R / YOLOv8 write it: softmax over the bins,
  then a matmul with `paddle.arange(reg_max + 1)`.
- `det_rtdetr`: RT-DETR: a HybridEncoder (input projections, one AIFI transformer layer over the
  flattened top level with a 2-D sine-cosine position embedding, the CCFF fusion with
  interpolate / concat / CSPRepLayer) over a plain ConvBN backbone (strides 8, 16 of 32x32
  images), RTDETRTransformer's decoder (encoder anchors by
  arange / meshgrid and a logit, `paddle.where` of the valid mask, `paddle.topk` query selection
  and `paddle.gather_nd` of the top-k, detached (`pd_op.share_data_`), a query position MLP, one
  decoder layer (ppdet: six, eval_idx the last) of self attention and
  multi-scale deformable attention written as ppdet's `deformable_attention_core_func`:
  sampling offsets and attention weights by Linear, `F.grid_sample` per level (bilinear, zeros,
  align_corners=False), softmax over levels x points, `inverse_sigmoid`), and DETRPostProcess
  (`topk` over classes x queries, `take_along_axis` of the boxes).
- `det_two_stage`: Faster / Cascade R-CNN pieces: a backbone with `DeformConv2D` with a mask
  (DCNv2) and `deform_conv2d` without one (DCNv1), a two-level FPN, an RPN head, anchors by
  arange / meshgrid, `paddle.vision.ops.generate_proposals`, `distribute_fpn_proposals`,
  `roi_align` per level (aligned, sampling_ratio 2, boxes_num), the restore index gathered, a
  bbox head, `box_coder` decoding (a variance list, axis 1) and `paddle.vision.ops.nms` by
  category with scores (its `paddle.where` of an int32 mask is a `pd_op.nonzero`). Paddle
  3.3.1's roi_align_grad takes a RoI as at least one pixel wide and high even when `aligned`,
  which its forward does not, so its gradient of a smaller RoI is not its forward's derivative:
  the RPN keeps proposals of 6 pixels or more (TwoStage.randomize_weights).

Each model has the interface of paddle_family_models (`inputs`, `example(rng)`,
`randomize_weights(rng)`) and `alt_examples(rng)`, feeds of other batch sizes (and image sizes).
The first output of each is differentiable (the heads before NMS), for the fine-tuning check.

    OMP_NUM_THREADS=1 python tools/paddle_det_models.py OUT [NAME ...]  # Paddle 3.x: OUT/<name>/

saves each model by paddle.jit.save (PIR) and records Paddle's executor's outputs as
paddle_export's record does (inputs.npz, expected.npz, info.json with the predictors' gaps), plus
alt.npz (for each alt example i, its feed "i/in/<name>" and Paddle's outputs "i/out/<j>") and
grads.npz: Paddle's dygraph gradients of sum(out0 * R) w.r.t. every trainable parameter
("grad/<name>") and R ("R")."""

import json
import math
import os
import sys

os.environ.setdefault("FLAGS_enable_pir_api", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.nn.functional as F  # noqa: E402
from paddle import nn  # noqa: E402
from paddle_family_models import Family  # noqa: E402

# --- PP-YOLOE (ppdet/modeling/backbones/cspresnet.py, necks/custom_pan.py, heads/ppyoloe_head.py)


def act_fn(act, x):
    if act == "swish":
        return F.swish(x)
    if act == "relu":
        return F.relu(x)
    if act == "silu":
        return F.silu(x)
    if act == "hardsigmoid":
        return F.hardsigmoid(x)
    return x


class ConvBNLayer(nn.Layer):
    def __init__(self, ch_in, ch_out, filter_size=3, stride=1, groups=1, padding=0, act=None):
        super().__init__()
        self.conv = nn.Conv2D(
            ch_in, ch_out, filter_size, stride, padding, groups=groups, bias_attr=False
        )
        self.bn = nn.BatchNorm2D(ch_out)
        self.act = act

    def forward(self, x):
        return act_fn(self.act, self.bn(self.conv(x)))


class RepVggBlock(nn.Layer):
    def __init__(self, ch_in, ch_out, act="relu", alpha=False):
        super().__init__()
        self.conv1 = ConvBNLayer(ch_in, ch_out, 3, stride=1, padding=1, act=None)
        self.conv2 = ConvBNLayer(ch_in, ch_out, 1, stride=1, padding=0, act=None)
        self.act = act
        if alpha:
            self.alpha = self.create_parameter(
                shape=[1], default_initializer=nn.initializer.Constant(1.0), dtype="float32"
            )
        else:
            self.alpha = None

    def forward(self, x):
        if self.alpha is not None:
            y = self.conv1(x) + self.alpha * self.conv2(x)
        else:
            y = self.conv1(x) + self.conv2(x)
        return act_fn(self.act, y)


class BasicBlock(nn.Layer):
    def __init__(self, ch_in, ch_out, act="relu", shortcut=True, use_alpha=False):
        super().__init__()
        self.conv1 = ConvBNLayer(ch_in, ch_out, 3, stride=1, padding=1, act=act)
        self.conv2 = RepVggBlock(ch_out, ch_out, act=act, alpha=use_alpha)
        self.shortcut = shortcut

    def forward(self, x):
        y = self.conv2(self.conv1(x))
        return paddle.add(x, y) if self.shortcut else y


class EffectiveSELayer(nn.Layer):
    def __init__(self, channels, act="hardsigmoid"):
        super().__init__()
        self.fc = nn.Conv2D(channels, channels, kernel_size=1, padding=0)
        self.act = act

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        x_se = self.fc(x_se)
        return x * act_fn(self.act, x_se)


class CSPResStage(nn.Layer):
    def __init__(self, ch_in, ch_out, n, stride, act="swish", attn="eca", use_alpha=True):
        super().__init__()
        ch_mid = (ch_in + ch_out) // 2
        self.conv_down = (
            ConvBNLayer(ch_in, ch_mid, 3, stride=2, padding=1, act=act) if stride == 2 else None
        )
        self.conv1 = ConvBNLayer(ch_mid, ch_mid // 2, 1, act=act)
        self.conv2 = ConvBNLayer(ch_mid, ch_mid // 2, 1, act=act)
        self.blocks = nn.Sequential(
            *[
                BasicBlock(ch_mid // 2, ch_mid // 2, act=act, shortcut=True, use_alpha=use_alpha)
                for _ in range(n)
            ]
        )
        self.attn = EffectiveSELayer(ch_mid, act="hardsigmoid") if attn else None
        self.conv3 = ConvBNLayer(ch_mid, ch_out, 1, act=act)

    def forward(self, x):
        if self.conv_down is not None:
            x = self.conv_down(x)
        y1 = self.conv1(x)
        y2 = self.blocks(self.conv2(x))
        y = paddle.concat([y1, y2], axis=1)
        if self.attn is not None:
            y = self.attn(y)
        return self.conv3(y)


class CSPResNet(nn.Layer):
    """Stem of two 3x3 ConvBN (the first of stride 2), CSP stages of stride 2 (ppdet: four,
    features of return_idx 1, 2, 3 at strides 8, 16, 32; here two, both returned: strides 4, 8,
    for tiny images)."""

    def __init__(self, channels=(8, 8, 8), layers=(1, 1), act="swish", return_idx=(0, 1)):
        super().__init__()
        self.stem = nn.Sequential(
            ConvBNLayer(3, channels[0] // 2, 3, stride=2, padding=1, act=act),
            ConvBNLayer(channels[0] // 2, channels[0], 3, stride=1, padding=1, act=act),
        )
        self.stages = nn.LayerList(
            [
                CSPResStage(channels[i], channels[i + 1], layers[i], 2, act=act)
                for i in range(len(channels) - 1)
            ]
        )
        self.return_idx = return_idx

    def forward(self, x):
        x = self.stem(x)
        outs = []
        for idx, stage in enumerate(self.stages):
            x = stage(x)
            if idx in self.return_idx:
                outs.append(x)
        return outs


class ConvBackbone(nn.Layer):
    """Plain ConvBN + swish layers of stride 2 (RT-DETR's tiny backbone): strides 8, 16."""

    def __init__(self, ch=8):
        super().__init__()
        self.stem = nn.Sequential(
            ConvBNLayer(3, ch, 3, stride=2, padding=1, act="swish"),
            ConvBNLayer(ch, ch, 3, stride=2, padding=1, act="swish"),
        )
        self.stages = nn.LayerList(
            [ConvBNLayer(ch, ch, 3, stride=2, padding=1, act="swish") for _ in range(2)]
        )

    def forward(self, x):
        x = self.stem(x)
        outs = []
        for stage in self.stages:
            x = stage(x)
            outs.append(x)
        return outs


class SPP(nn.Layer):
    def __init__(self, ch_in, ch_out, k, pool_size, act="swish"):
        super().__init__()
        self.pool = nn.LayerList(
            [
                nn.MaxPool2D(kernel_size=s, stride=1, padding=s // 2, ceil_mode=False)
                for s in pool_size
            ]
        )
        self.conv = ConvBNLayer(ch_in, ch_out, k, padding=k // 2, act=act)

    def forward(self, x):
        outs = [x] + [pool(x) for pool in self.pool]
        return self.conv(paddle.concat(outs, axis=1))


class CSPStage(nn.Layer):
    def __init__(self, ch_in, ch_out, n, act="swish", spp=False):
        super().__init__()
        ch_mid = int(ch_out // 2)
        self.conv1 = ConvBNLayer(ch_in, ch_mid, 1, act=act)
        self.conv2 = ConvBNLayer(ch_in, ch_mid, 1, act=act)
        self.convs = nn.Sequential()
        next_ch_in = ch_mid
        for i in range(n):
            self.convs.add_sublayer(str(i), BasicBlock(next_ch_in, ch_mid, act=act, shortcut=False))
            if i == (n - 1) // 2 and spp:
                self.convs.add_sublayer("spp", SPP(ch_mid * 4, ch_mid, 1, [5, 9, 13], act=act))
            next_ch_in = ch_mid
        self.conv3 = ConvBNLayer(ch_mid * 2, ch_out, 1, act=act)

    def forward(self, x):
        y1 = self.conv1(x)
        y2 = self.convs(self.conv2(x))
        return self.conv3(paddle.concat([y1, y2], axis=1))


class CustomCSPPAN(nn.Layer):
    def __init__(self, in_channels=(16, 16, 16), out_channels=(16, 16, 8), act="swish"):
        super().__init__()
        in_channels = in_channels[::-1]
        self.fpn_stages = nn.LayerList()
        self.fpn_routes = nn.LayerList()
        ch_pre = 0
        for i, (ch_in, ch_out) in enumerate(zip(in_channels, out_channels)):
            if i > 0:
                ch_in += ch_pre // 2
            self.fpn_stages.append(CSPStage(ch_in, ch_out, 1, act=act, spp=(i == 0)))
            if i < len(in_channels) - 1:
                self.fpn_routes.append(ConvBNLayer(ch_out, ch_out // 2, 1, act=act))
            ch_pre = ch_out
        self.pan_stages = nn.LayerList()
        self.pan_routes = nn.LayerList()
        for i in reversed(range(len(in_channels) - 1)):
            self.pan_routes.append(
                ConvBNLayer(
                    out_channels[i + 1], out_channels[i + 1], 3, stride=2, padding=1, act=act
                )
            )
            ch_in = out_channels[i] + out_channels[i + 1]
            self.pan_stages.append(CSPStage(ch_in, out_channels[i], 1, act=act))
        self.pan_stages = self.pan_stages[::-1]
        self.pan_routes = self.pan_routes[::-1]
        self.num_blocks = len(in_channels)

    def forward(self, blocks):
        blocks = blocks[::-1]
        fpn_feats = []
        route = None
        for i, block in enumerate(blocks):
            if i > 0:
                block = paddle.concat([route, block], axis=1)
            route = self.fpn_stages[i](block)
            fpn_feats.append(route)
            if i < self.num_blocks - 1:
                route = self.fpn_routes[i](route)
                route = F.interpolate(route, scale_factor=2.0)
        pan_feats = [fpn_feats[-1]]
        route = fpn_feats[-1]
        for i in reversed(range(self.num_blocks - 1)):
            block = fpn_feats[i]
            route = self.pan_routes[i](route)
            block = paddle.concat([route, block], axis=1)
            route = self.pan_stages[i](block)
            pan_feats.append(route)
        return pan_feats[::-1]


class ESEAttn(nn.Layer):
    def __init__(self, feat_channels, act="swish"):
        super().__init__()
        self.fc = nn.Conv2D(feat_channels, feat_channels, 1)
        self.conv = ConvBNLayer(feat_channels, feat_channels, 1, act=act)

    def forward(self, feat, avg_feat):
        weight = F.sigmoid(self.fc(avg_feat))
        return self.conv(feat * weight)


def batch_distance2bbox(points, distance, max_shapes=None):
    lt, rb = paddle.split(distance, 2, -1)
    x1y1 = -lt + points
    x2y2 = rb + points
    return paddle.concat([x1y1, x2y2], -1)


class PPYOLOEHead(nn.Layer):
    """ppdet's PPYOLOEHead in eval (forward_eval + post_process): the distribution focal loss
    integral by its use_shared_conv `proj_conv` (weights linspace(0, reg_max), stop_gradient) and,
    from the same logits, as GFL's Integral / PP-YOLOE-R / YOLOv8 write it: softmax over the
    bins, then a matmul with paddle.arange(reg_max + 1)."""

    def __init__(
        self,
        in_channels=(8, 8, 8),
        num_classes=4,
        act="swish",
        fpn_strides=(32, 16, 8),
        grid_cell_offset=0.5,
        reg_max=4,
    ):
        super().__init__()
        self.in_channels, self.num_classes = in_channels, num_classes
        self.fpn_strides, self.grid_cell_offset, self.reg_max = (
            fpn_strides,
            grid_cell_offset,
            reg_max,
        )
        self.stem_cls = nn.LayerList([ESEAttn(c, act=act) for c in in_channels])
        self.stem_reg = nn.LayerList([ESEAttn(c, act=act) for c in in_channels])
        self.pred_cls = nn.LayerList([nn.Conv2D(c, num_classes, 3, padding=1) for c in in_channels])
        self.pred_reg = nn.LayerList(
            [nn.Conv2D(c, 4 * (reg_max + 1), 3, padding=1) for c in in_channels]
        )
        self.proj_conv = nn.Conv2D(reg_max + 1, 1, 1, bias_attr=False)
        self.fix_proj()

    def fix_proj(self):
        proj = paddle.linspace(0, self.reg_max, self.reg_max + 1)
        self.proj_conv.weight.set_value(proj.reshape([1, self.reg_max + 1, 1, 1]))
        self.proj_conv.weight.stop_gradient = True

    def _generate_anchors(self, feats, dtype="float32"):
        anchor_points, stride_tensor = [], []
        for i, stride in enumerate(self.fpn_strides):
            _, _, h, w = feats[i].shape
            shift_x = paddle.arange(end=w) + self.grid_cell_offset
            shift_y = paddle.arange(end=h) + self.grid_cell_offset
            shift_y, shift_x = paddle.meshgrid(shift_y, shift_x)
            anchor_point = paddle.cast(paddle.stack([shift_x, shift_y], axis=-1), dtype=dtype)
            anchor_points.append(anchor_point.reshape([-1, 2]))
            stride_tensor.append(paddle.full([h * w, 1], stride, dtype=dtype))
        return paddle.concat(anchor_points), paddle.concat(stride_tensor)

    def forward(self, feats):
        """Scores [B, classes, A], the distances by proj_conv [B, A, 4] and by the matmul."""
        anchor_points, stride_tensor = self._generate_anchors(feats)
        cls_score_list, reg_dist_list, reg_mm_list = [], [], []
        for i, feat in enumerate(feats):
            _, _, h, w = feat.shape
            l = h * w  # noqa: E741 (ppdet's name)
            avg_feat = F.adaptive_avg_pool2d(feat, (1, 1))
            cls_logit = self.pred_cls[i](self.stem_cls[i](feat, avg_feat) + feat)
            reg_logit = self.pred_reg[i](self.stem_reg[i](feat, avg_feat))
            reg_dist = reg_logit.reshape([-1, 4, self.reg_max + 1, l]).transpose([0, 2, 3, 1])
            reg_dist = self.proj_conv(F.softmax(reg_dist, axis=1)).squeeze(1)
            reg_mm_list.append(
                reg_logit.reshape([-1, 4, self.reg_max + 1, l]).transpose([0, 3, 1, 2])
            )
            cls_score = F.sigmoid(cls_logit)
            cls_score_list.append(cls_score.reshape([-1, self.num_classes, l]))
            reg_dist_list.append(reg_dist)
        cls_score_list = paddle.concat(cls_score_list, axis=-1)
        reg_dist_list = paddle.concat(reg_dist_list, axis=1)
        proj = paddle.arange(self.reg_max + 1, dtype="float32")
        reg_mm = F.softmax(paddle.concat(reg_mm_list, axis=1), axis=-1).matmul(proj)
        return cls_score_list, reg_dist_list, reg_mm, anchor_points, stride_tensor


class PPYOLOE(Family):
    """YOLOv3 architecture of ppdet with CSPResNet / CustomCSPPAN / PPYOLOEHead; eval forward and
    post_process. Outputs: the boxes and scores before NMS ([B, A, 4 + classes + 4]: ppdet's
    exclude_post_process form, then the boxes of the matmul integral), bbox [K, 6] and bbox_num
    [B] of multiclass_nms3."""

    inputs = [
        ("image", [None, 3, None, None], "float32"),
        ("scale_factor", [None, 2], "float32"),
    ]

    def __init__(self):
        super().__init__()
        self.backbone = CSPResNet()
        self.neck = CustomCSPPAN(in_channels=(8, 8), out_channels=(8, 8))
        self.head = PPYOLOEHead(in_channels=(8, 8), fpn_strides=(8, 4))

    def randomize_weights(self, rng):
        super().randomize_weights(rng)
        self.head.fix_proj()

    def forward(self, image, scale_factor):
        feats = self.neck(self.backbone(image))
        pred_scores, pred_dist, pred_mm, anchor_points, stride_tensor = self.head(feats)
        pred_bboxes = batch_distance2bbox(anchor_points, pred_dist)
        pred_bboxes *= stride_tensor
        mm_bboxes = batch_distance2bbox(anchor_points, pred_mm) * stride_tensor
        dense = paddle.concat([pred_bboxes, pred_scores.transpose([0, 2, 1]), mm_bboxes], axis=-1)
        scale_y, scale_x = paddle.split(scale_factor, 2, axis=-1)
        scale_factor = paddle.concat([scale_x, scale_y, scale_x, scale_y], axis=-1).reshape(
            [-1, 1, 4]
        )
        pred_bboxes /= scale_factor
        # ppdet's MultiClassNMS (normalized=True, its default) through ops.multiclass_nms.
        bbox_pred, nms_keep_idx, bbox_num = paddle._C_ops.multiclass_nms3(
            pred_bboxes, pred_scores, None, 0.6, 100, 30, 0.6, True, 1.0, -1
        )
        return dense, bbox_pred, bbox_num

    @staticmethod
    def example(rng, batch=2, h=32, w=32):
        return {
            "image": rng.standard_normal((batch, 3, h, w)).astype(np.float32),
            "scale_factor": rng.uniform(0.5, 2.0, (batch, 2)).astype(np.float32),
        }

    def alt_examples(self, rng):
        return [self.example(rng, 1, 48, 32), self.example(rng, 3, 16, 16)]


# --- RT-DETR (ppdet/modeling/transformers/hybrid_encoder.py, rtdetr_transformer.py, utils.py,
# post_process.py DETRPostProcess)


def inverse_sigmoid(x, eps=1e-5):
    x = x.clip(min=0.0, max=1.0)
    return paddle.log(x.clip(min=eps) / (1 - x).clip(min=eps))


def bbox_cxcywh_to_xyxy(x):
    cxcy, wh = paddle.split(x, 2, axis=-1)
    return paddle.concat([cxcy - 0.5 * wh, cxcy + 0.5 * wh], axis=-1)


def deformable_attention_core_func(
    value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights
):
    bs, _, n_head, c = value.shape
    _, Len_q, _, n_levels, n_points, _ = sampling_locations.shape
    split_shape = [h * w for h, w in value_spatial_shapes]
    value_list = value.split(split_shape, axis=1)
    sampling_grids = 2 * sampling_locations - 1
    sampling_value_list = []
    for level, (h, w) in enumerate(value_spatial_shapes):
        value_l_ = value_list[level].flatten(2).transpose([0, 2, 1]).reshape([bs * n_head, c, h, w])
        sampling_grid_l_ = sampling_grids[:, :, :, level].transpose([0, 2, 1, 3, 4]).flatten(0, 1)
        sampling_value_l_ = F.grid_sample(
            value_l_, sampling_grid_l_, mode="bilinear", padding_mode="zeros", align_corners=False
        )
        sampling_value_list.append(sampling_value_l_)
    attention_weights = attention_weights.transpose([0, 2, 1, 3, 4]).reshape(
        [bs * n_head, 1, Len_q, n_levels * n_points]
    )
    output = (
        (paddle.stack(sampling_value_list, axis=-2).flatten(-2) * attention_weights)
        .sum(-1)
        .reshape([bs, n_head * c, Len_q])
    )
    return output.transpose([0, 2, 1])


class MSDeformableAttention(nn.Layer):
    def __init__(self, embed_dim=8, num_heads=2, num_levels=3, num_points=2):
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.num_levels, self.num_points = num_levels, num_points
        self.total_points = num_heads * num_levels * num_points
        self.head_dim = embed_dim // num_heads
        self.sampling_offsets = nn.Linear(embed_dim, self.total_points * 2)
        self.attention_weights = nn.Linear(embed_dim, self.total_points)
        self.value_proj = nn.Linear(embed_dim, embed_dim)
        self.output_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, query, reference_points, value, spatial_shapes, level_start_index):
        bs, Len_q = query.shape[:2]
        Len_v = value.shape[1]
        value = self.value_proj(value)
        value = value.reshape([bs, Len_v, self.num_heads, self.head_dim])
        sampling_offsets = self.sampling_offsets(query).reshape(
            [bs, Len_q, self.num_heads, self.num_levels, self.num_points, 2]
        )
        attention_weights = self.attention_weights(query).reshape(
            [bs, Len_q, self.num_heads, self.num_levels * self.num_points]
        )
        attention_weights = F.softmax(attention_weights).reshape(
            [bs, Len_q, self.num_heads, self.num_levels, self.num_points]
        )
        sampling_locations = (
            reference_points[:, :, None, :, None, :2]
            + sampling_offsets / self.num_points * reference_points[:, :, None, :, None, 2:] * 0.5
        )
        output = deformable_attention_core_func(
            value, spatial_shapes, level_start_index, sampling_locations, attention_weights
        )
        return self.output_proj(output)


class MLP(nn.Layer):
    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        h = [hidden_dim] * (num_layers - 1)
        self.layers = nn.LayerList(
            nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim])
        )
        self.num_layers = num_layers

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
        return x


class TransformerEncoderLayer(nn.Layer):
    """hybrid_encoder's TransformerLayer (normalize_before False, relu, dropout 0 in eval)."""

    def __init__(self, d_model, nhead, dim_feedforward):
        super().__init__()
        self.self_attn = nn.MultiHeadAttention(d_model, nhead, 0.0)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, src, pos_embed=None):
        q = k = src if pos_embed is None else src + pos_embed
        src = self.norm1(src + self.self_attn(q, k, value=src))
        return self.norm2(src + self.linear2(F.relu(self.linear1(src))))


class RepVggBlockB(nn.Layer):
    """hybrid_encoder's CSPRepLayer block (RepVggBlock with act)."""

    def __init__(self, ch_in, ch_out, act="silu"):
        super().__init__()
        self.conv1 = ConvBNLayer(ch_in, ch_out, 3, padding=1, act=None)
        self.conv2 = ConvBNLayer(ch_in, ch_out, 1, padding=0, act=None)
        self.act = act

    def forward(self, x):
        return act_fn(self.act, self.conv1(x) + self.conv2(x))


class CSPRepLayer(nn.Layer):
    def __init__(self, in_channels, out_channels, num_blocks=1, act="silu"):
        super().__init__()
        self.conv1 = ConvBNLayer(in_channels, out_channels, 1, act=act)
        self.conv2 = ConvBNLayer(in_channels, out_channels, 1, act=act)
        self.bottlenecks = nn.Sequential(
            *[RepVggBlockB(out_channels, out_channels, act=act) for _ in range(num_blocks)]
        )

    def forward(self, x):
        return self.bottlenecks(self.conv1(x)) + self.conv2(x)


class HybridEncoder(nn.Layer):
    def __init__(self, in_channels=(8, 8), hidden_dim=8, nhead=2, dim_ff=16, act="silu"):
        super().__init__()
        self.hidden_dim, self.pe_temperature = hidden_dim, 10000.0
        self.input_proj = nn.LayerList(
            [
                nn.Sequential(
                    ("conv", nn.Conv2D(c, hidden_dim, 1, bias_attr=False)),
                    ("norm", nn.BatchNorm2D(hidden_dim)),
                )
                for c in in_channels
            ]
        )
        self.encoder = TransformerEncoderLayer(hidden_dim, nhead, dim_ff)
        n = len(in_channels)
        self.lateral_convs = nn.LayerList(
            [ConvBNLayer(hidden_dim, hidden_dim, 1, 1, act=act) for _ in range(n - 1)]
        )
        self.fpn_blocks = nn.LayerList(
            [CSPRepLayer(hidden_dim * 2, hidden_dim, act=act) for _ in range(n - 1)]
        )
        self.downsample_convs = nn.LayerList(
            [
                ConvBNLayer(hidden_dim, hidden_dim, 3, stride=2, padding=1, act=act)
                for _ in range(n - 1)
            ]
        )
        self.pan_blocks = nn.LayerList(
            [CSPRepLayer(hidden_dim * 2, hidden_dim, act=act) for _ in range(n - 1)]
        )

    @staticmethod
    def build_2d_sincos_position_embedding(w, h, embed_dim=256, temperature=10000.0):
        grid_w = paddle.arange(int(w), dtype=paddle.float32)
        grid_h = paddle.arange(int(h), dtype=paddle.float32)
        grid_w, grid_h = paddle.meshgrid(grid_w, grid_h)
        pos_dim = embed_dim // 4
        omega = paddle.arange(pos_dim, dtype=paddle.float32) / pos_dim
        omega = 1.0 / (temperature**omega)
        out_w = grid_w.flatten()[..., None] @ omega[None]
        out_h = grid_h.flatten()[..., None] @ omega[None]
        return paddle.concat(
            [paddle.sin(out_w), paddle.cos(out_w), paddle.sin(out_h), paddle.cos(out_h)], axis=1
        )[None, :, :]

    def forward(self, feats):
        proj_feats = [self.input_proj[i](feat) for i, feat in enumerate(feats)]
        # AIFI on the top level (ppdet's use_encoder_idx [2] of 3; here the last of 2).
        h, w = proj_feats[-1].shape[2:]
        src_flatten = proj_feats[-1].flatten(2).transpose([0, 2, 1])
        pos_embed = self.build_2d_sincos_position_embedding(
            w, h, self.hidden_dim, self.pe_temperature
        )
        memory = self.encoder(src_flatten, pos_embed=pos_embed)
        proj_feats[-1] = memory.transpose([0, 2, 1]).reshape([-1, self.hidden_dim, h, w])
        # CCFF: top-down, then bottom-up.
        n = len(proj_feats)
        inner_outs = [proj_feats[-1]]
        for idx in range(n - 1, 0, -1):
            feat_high = inner_outs[0]
            feat_low = proj_feats[idx - 1]
            feat_high = self.lateral_convs[n - 1 - idx](feat_high)
            inner_outs[0] = feat_high
            upsample_feat = F.interpolate(feat_high, scale_factor=2.0, mode="nearest")
            inner_out = self.fpn_blocks[n - 1 - idx](
                paddle.concat([upsample_feat, feat_low], axis=1)
            )
            inner_outs.insert(0, inner_out)
        outs = [inner_outs[0]]
        for idx in range(n - 1):
            downsample_feat = self.downsample_convs[idx](outs[-1])
            out = self.pan_blocks[idx](
                paddle.concat([downsample_feat, inner_outs[idx + 1]], axis=1)
            )
            outs.append(out)
        return outs


class DeformableTransformerDecoderLayer(nn.Layer):
    def __init__(self, d_model=8, n_head=2, dim_ff=16, n_levels=3, n_points=2):
        super().__init__()
        self.self_attn = nn.MultiHeadAttention(d_model, n_head, dropout=0.0)
        self.norm1 = nn.LayerNorm(d_model)
        self.cross_attn = MSDeformableAttention(d_model, n_head, n_levels, n_points)
        self.norm2 = nn.LayerNorm(d_model)
        self.linear1 = nn.Linear(d_model, dim_ff)
        self.linear2 = nn.Linear(dim_ff, d_model)
        self.norm3 = nn.LayerNorm(d_model)

    def forward(self, tgt, reference_points, memory, spatial_shapes, level_start_index, query_pos):
        q = k = tgt + query_pos
        tgt = self.norm1(tgt + self.self_attn(q, k, value=tgt))
        tgt2 = self.cross_attn(
            tgt + query_pos, reference_points, memory, spatial_shapes, level_start_index
        )
        tgt = self.norm2(tgt + tgt2)
        tgt2 = self.linear2(F.relu(self.linear1(tgt)))
        return self.norm3(tgt + tgt2)


class RTDETRTransformer(nn.Layer):
    def __init__(
        self,
        num_classes=4,
        hidden_dim=8,
        num_queries=6,
        feat_channels=(8, 8),
        num_levels=2,
        num_decoder_layers=1,
        eps=1e-2,
    ):
        super().__init__()
        self.num_classes, self.hidden_dim, self.num_queries = num_classes, hidden_dim, num_queries
        self.num_levels, self.eps = num_levels, eps
        self.input_proj = nn.LayerList(
            [
                nn.Sequential(
                    ("conv", nn.Conv2D(c, hidden_dim, 1, bias_attr=False)),
                    ("norm", nn.BatchNorm2D(hidden_dim)),
                )
                for c in feat_channels
            ]
        )
        self.layers = nn.LayerList(
            [
                DeformableTransformerDecoderLayer(hidden_dim, 2, 16, num_levels, 2)
                for _ in range(num_decoder_layers)
            ]
        )
        self.query_pos_head = MLP(4, 2 * hidden_dim, hidden_dim, num_layers=2)
        self.enc_output = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.LayerNorm(hidden_dim))
        self.enc_score_head = nn.Linear(hidden_dim, num_classes)
        self.enc_bbox_head = MLP(hidden_dim, hidden_dim, 4, num_layers=3)
        self.dec_score_head = nn.LayerList(
            [nn.Linear(hidden_dim, num_classes) for _ in range(num_decoder_layers)]
        )
        self.dec_bbox_head = nn.LayerList(
            [MLP(hidden_dim, hidden_dim, 4, num_layers=3) for _ in range(num_decoder_layers)]
        )
        self.eval_idx = num_decoder_layers - 1

    def _get_encoder_input(self, feats):
        proj_feats = [self.input_proj[i](feat) for i, feat in enumerate(feats)]
        feat_flatten, spatial_shapes, level_start_index = [], [], [0]
        for feat in proj_feats:
            _, _, h, w = feat.shape
            feat_flatten.append(feat.flatten(2).transpose([0, 2, 1]))
            spatial_shapes.append([h, w])
            level_start_index.append(h * w + level_start_index[-1])
        feat_flatten = paddle.concat(feat_flatten, 1)
        level_start_index.pop()
        return feat_flatten, spatial_shapes, level_start_index

    def _generate_anchors(self, spatial_shapes, grid_size=0.05, dtype="float32"):
        anchors = []
        for lvl, (h, w) in enumerate(spatial_shapes):
            grid_y, grid_x = paddle.meshgrid(
                paddle.arange(end=h, dtype=dtype), paddle.arange(end=w, dtype=dtype)
            )
            grid_xy = paddle.stack([grid_x, grid_y], -1)
            valid_WH = paddle.to_tensor([h, w]).astype(dtype)
            grid_xy = (grid_xy.unsqueeze(0) + 0.5) / valid_WH
            wh = paddle.ones_like(grid_xy) * grid_size * (2.0**lvl)
            anchors.append(paddle.concat([grid_xy, wh], -1).reshape([-1, h * w, 4]))
        anchors = paddle.concat(anchors, 1)
        valid_mask = ((anchors > self.eps) * (anchors < 1 - self.eps)).all(-1, keepdim=True)
        anchors = paddle.log(anchors / (1 - anchors))
        anchors = paddle.where(valid_mask, anchors, paddle.to_tensor(float("inf")))
        return anchors, valid_mask

    def forward(self, feats):
        memory, spatial_shapes, level_start_index = self._get_encoder_input(feats)
        bs = memory.shape[0]
        anchors, valid_mask = self._generate_anchors(spatial_shapes)
        output_memory = paddle.where(valid_mask, memory, paddle.to_tensor(0.0))
        output_memory = self.enc_output(output_memory)
        enc_outputs_class = self.enc_score_head(output_memory)
        enc_outputs_coord_unact = self.enc_bbox_head(output_memory) + anchors
        _, topk_ind = paddle.topk(enc_outputs_class.max(-1), self.num_queries, axis=1)
        batch_ind = paddle.arange(end=bs, dtype=topk_ind.dtype)
        batch_ind = batch_ind.unsqueeze(-1).tile([1, self.num_queries])
        topk_ind = paddle.stack([batch_ind, topk_ind], axis=-1)
        reference_points_unact = paddle.gather_nd(enc_outputs_coord_unact, topk_ind)
        target = paddle.gather_nd(output_memory, topk_ind).detach()
        ref_points_unact = reference_points_unact.detach()
        # The decoder (eval: up to eval_idx).
        output = target
        ref_points_detach = F.sigmoid(ref_points_unact)
        for i, layer in enumerate(self.layers):
            ref_points_input = ref_points_detach.unsqueeze(2)
            query_pos_embed = self.query_pos_head(ref_points_detach)
            output = layer(
                output,
                ref_points_input,
                memory,
                spatial_shapes,
                level_start_index,
                query_pos_embed,
            )
            inter_ref_bbox = F.sigmoid(
                self.dec_bbox_head[i](output) + inverse_sigmoid(ref_points_detach)
            )
            if i == self.eval_idx:
                return inter_ref_bbox, self.dec_score_head[i](output)
            ref_points_detach = inter_ref_bbox


class RTDETR(Family):
    """DETR architecture of ppdet: a small conv backbone (strides 8, 16 of 32x32 images), HybridEncoder,
    RTDETRTransformer, DETRPostProcess (focal loss form: sigmoid scores, topk over all classes).
    Outputs: [B, queries, 4 + classes] (boxes cxcywh and logits, before post-processing), bbox
    [B * top, 6] (label, score, x1 y1 x2 y2 in the original image) and bbox_num [B]."""

    inputs = [
        ("image", [None, 3, 32, 32], "float32"),
        ("im_shape", [None, 2], "float32"),
        ("scale_factor", [None, 2], "float32"),
    ]

    def __init__(self, num_top_queries=5):
        super().__init__()
        self.backbone = ConvBackbone()
        self.encoder = HybridEncoder(in_channels=(8, 8))
        self.transformer = RTDETRTransformer()
        self.num_top_queries, self.num_classes = num_top_queries, 4

    def forward(self, image, im_shape, scale_factor):
        feats = self.encoder(self.backbone(image))
        bboxes, logits = self.transformer(feats)
        dense = paddle.concat([bboxes, logits], axis=-1)
        # DETRPostProcess.
        bbox_pred = bbox_cxcywh_to_xyxy(bboxes)
        origin_shape = paddle.floor(im_shape / scale_factor + 0.5)
        img_h, img_w = paddle.split(origin_shape, 2, axis=-1)
        origin_shape = paddle.concat([img_w, img_h, img_w, img_h], axis=-1).reshape([-1, 1, 4])
        bbox_pred *= origin_shape
        scores = F.sigmoid(logits)
        scores, index = paddle.topk(scores.flatten(1), self.num_top_queries, axis=-1)
        labels = index % self.num_classes
        index = index // self.num_classes
        bbox_pred = paddle.take_along_axis(bbox_pred, index.unsqueeze(-1).tile([1, 1, 4]), axis=1)
        bbox_pred = paddle.concat(
            [labels.unsqueeze(-1).astype("float32"), scores.unsqueeze(-1), bbox_pred], axis=-1
        )
        bbox_num = paddle.to_tensor(self.num_top_queries, dtype="int32").tile([bbox_pred.shape[0]])
        return dense, bbox_pred.reshape([-1, 6]), bbox_num

    @staticmethod
    def example(rng, batch=2):
        return {
            "image": rng.standard_normal((batch, 3, 32, 32)).astype(np.float32),
            "im_shape": np.full((batch, 2), 32.0, np.float32),
            "scale_factor": rng.uniform(0.5, 2.0, (batch, 2)).astype(np.float32),
        }

    def alt_examples(self, rng):
        return [self.example(rng, 1), self.example(rng, 3)]


# --- Two-stage pieces (ppdet/modeling/proposal_generator, heads/roi_extractor.py, ops.py,
# backbones' DCN)


class DeformableConvV2(nn.Layer):
    """ppdet's DeformableConvV2: offsets and mask by one conv (3 * k * k channels), split, the
    mask by sigmoid, paddle.vision.ops.DeformConv2D."""

    def __init__(self, cin, cout, k=3, stride=1):
        super().__init__()
        self.offset_channel = 2 * k * k
        self.mask_channel = k * k
        self.conv_offset = nn.Conv2D(cin, 3 * k * k, k, stride=stride, padding=(k - 1) // 2)
        self.conv_dcn = paddle.vision.ops.DeformConv2D(
            cin, cout, k, stride=stride, padding=(k - 1) // 2, bias_attr=False
        )

    def forward(self, x):
        offset_mask = self.conv_offset(x)
        offset, mask = paddle.split(
            offset_mask, num_or_sections=[self.offset_channel, self.mask_channel], axis=1
        )
        return self.conv_dcn(x, offset, mask=F.sigmoid(mask))


class DeformConvV1(nn.Layer):
    """DCNv1: paddle.vision.ops.deform_conv2d without a mask, with a bias and groups 1."""

    def __init__(self, cin, cout, k=3):
        super().__init__()
        self.conv_offset = nn.Conv2D(cin, 2 * k * k, k, padding=1)
        self.weight = self.create_parameter([cout, cin, k, k])
        self.bias = self.create_parameter([cout], is_bias=True)

    def forward(self, x):
        return paddle.vision.ops.deform_conv2d(
            x, self.conv_offset(x), self.weight, self.bias, stride=1, padding=1
        )


def anchor_grid(h, w, stride, sizes, offset=0.5):
    """ppdet's AnchorGenerator for one level: base anchors (one aspect ratio per size), shifted by
    arange / meshgrid over the feature map: [h * w * len(sizes), 4]."""
    base = paddle.to_tensor(
        [[-s / 2.0, -s / 2.0, s / 2.0, s / 2.0] for s in sizes], dtype="float32"
    )
    shift_x = (paddle.arange(0, w, dtype="float32") + offset) * stride
    shift_y = (paddle.arange(0, h, dtype="float32") + offset) * stride
    shift_y, shift_x = paddle.meshgrid(shift_y, shift_x)
    shift_x, shift_y = shift_x.reshape([-1]), shift_y.reshape([-1])
    shifts = paddle.stack((shift_x, shift_y, shift_x, shift_y), axis=1)
    return (shifts.reshape([-1, 1, 4]) + base.reshape([1, -1, 4])).reshape([-1, 4])


class TwoStage(Family):
    """A Faster R-CNN with FPN, tiny: DCN backbone, FPN (P2 at stride 4 ... P3 at stride 8), RPN
    head, generate_proposals (batched), distribute_fpn_proposals, roi_align per level and the
    restore index, a two-fc bbox head, box_coder decoding, per-class nms with scores.
    Outputs: the dense head values (RPN logits and deltas, then every RoI's class logits and
    deltas, flattened and concatenated: the differentiable part), the decoded boxes of each RoI
    [R, 4], the nms keep indices, the RoIs per image."""

    inputs = [("image", [None, 3, 32, 32], "float32"), ("im_shape", [None, 2], "float32")]

    def __init__(self, num_classes=3):
        super().__init__()
        self.stem = ConvBNLayer(3, 8, 3, stride=2, padding=1, act="relu")  # 16x16
        self.dcn2 = DeformableConvV2(8, 8, 3, stride=2)  # 8x8, stride 4
        self.c3 = ConvBNLayer(8, 8, 3, stride=2, padding=1, act="relu")  # 4x4, stride 8
        self.dcn1 = DeformConvV1(8, 8)
        self.lat2 = nn.Conv2D(8, 8, 1)
        self.lat3 = nn.Conv2D(8, 8, 1)
        self.rpn_conv = nn.Conv2D(8, 8, 3, padding=1)
        self.rpn_sizes = [8.0, 12.0, 20.0]
        self.rpn_cls = nn.Conv2D(8, 3, 1)
        self.rpn_reg = nn.Conv2D(8, 12, 1)
        self.fc6 = nn.Linear(8 * 2 * 2, 16)
        self.cls = nn.Linear(16, num_classes + 1)
        self.reg = nn.Linear(16, 4)
        self.num_classes = num_classes

    def forward(self, image, im_shape):
        c2 = self.dcn2(self.stem(image))
        c3 = F.relu(self.dcn1(self.c3(c2)))
        p3 = self.lat3(c3)
        p2 = self.lat2(c2) + F.interpolate(p3, scale_factor=2.0)
        feats, strides = [p2, p3], [4, 8]
        # The RPN on P2 (3 anchor sizes), batched: ppdet's RPNHead runs generate_proposals image
        # by image (a Python loop over the batch), the op itself takes the batch.
        t = F.relu(self.rpn_conv(p2))
        logits, deltas = self.rpn_cls(t), self.rpn_reg(t)
        dense = [logits.flatten(), deltas.flatten()]
        _, _, h, w = p2.shape
        anchors = anchor_grid(h, w, 4, self.rpn_sizes).reshape([h, w, 3, 4])
        variances = paddle.ones_like(anchors)
        rois, _, rois_num = paddle.vision.ops.generate_proposals(
            logits,
            deltas,
            im_shape,
            anchors,
            variances,
            pre_nms_top_n=30,
            post_nms_top_n=8,
            nms_thresh=0.7,
            min_size=6.0,
            eta=1.0,
            pixel_offset=False,
            return_rois_num=True,
        )
        multi_rois, restore_index, rois_num_per_level = paddle.vision.ops.distribute_fpn_proposals(
            rois, 2, 3, 3, 16, pixel_offset=False, rois_num=rois_num
        )
        pooled = []
        for lvl, (feat, stride) in enumerate(zip(feats, strides)):
            pooled.append(
                paddle.vision.ops.roi_align(
                    feat,
                    multi_rois[lvl],
                    rois_num_per_level[lvl],
                    2,
                    1.0 / stride,
                    sampling_ratio=2,
                    aligned=True,
                )
            )
        feat = paddle.gather(paddle.concat(pooled), restore_index)
        h = F.relu(self.fc6(feat.flatten(1)))
        cls, reg = self.cls(h), self.reg(h)
        dense += [cls.flatten(), reg.flatten()]
        boxes = paddle.vision.ops.box_coder(
            rois,
            [0.1, 0.1, 0.2, 0.2],
            reg.unsqueeze(1),
            "decode_center_size",
            box_normalized=False,
            axis=1,
        ).squeeze(1)
        scores = F.softmax(cls)[:, 1:]
        best = scores.max(-1)
        category = scores.argmax(-1)
        keep = paddle.vision.ops.nms(boxes, 0.5, best, category, list(range(self.num_classes)))
        return paddle.concat(dense), boxes, keep, rois_num

    def randomize_weights(self, rng):
        """Small RPN deltas (proposals near their anchors, so each image keeps several): with
        min_size 6 every RoI spans a feature pixel or more on its level. Paddle 3.3.1's
        roi_align_grad takes a RoI's size as at least 1 pixel even when `aligned` (its forward
        does not), so on a smaller RoI (or the zero box generate_proposals gives an image with
        no proposal) its gradient is not its forward's derivative."""
        super().randomize_weights(rng)
        with paddle.no_grad():
            self.rpn_reg.weight.set_value(self.rpn_reg.weight * 0.1)

    @staticmethod
    def example(rng, batch=2):
        return {
            "image": rng.standard_normal((batch, 3, 32, 32)).astype(np.float32),
            "im_shape": np.full((batch, 2), 32.0, np.float32),
        }

    def alt_examples(self, rng):
        return [self.example(rng, 1), self.example(rng, 3)]


# name: constructor; the detector fixtures (PIR programs, Paddle 3.x).
DET_MODELS = {
    "det_ppyoloe": PPYOLOE,
    "det_rtdetr": RTDETR,
    "det_two_stage": TwoStage,
}


def grads(net, feed, seed):
    """Paddle's dygraph gradients of sum(out0 * R) w.r.t. each trainable parameter of `net`,
    keyed "grad/<parameter name>", and R ("R")."""
    paddle.disable_static()
    outs = net(*[paddle.to_tensor(feed[n]) for n, _, _ in net.inputs])
    out = outs[0] if isinstance(outs, (list, tuple)) else outs
    r = np.random.default_rng(seed + 1).standard_normal(out.shape).astype(np.float32)
    loss = (out * paddle.to_tensor(r)).sum()
    params = [p for p in net.parameters() if not p.stop_gradient]
    res = {"R": r, "dygraph_out0": out.numpy()}
    for p, g in zip(params, paddle.grad(loss, params, allow_unused=True)):
        res["grad/" + p.name] = np.zeros(p.shape, np.float32) if g is None else g.numpy()
    paddle.enable_static()
    return res


def main(out_root, names):
    import paddle_export as pe

    for name in names or list(DET_MODELS):
        out_dir = pe.fresh_dir(out_root, name)
        seed = pe.SEED + sum(map(ord, name))
        rng = np.random.default_rng(seed)
        paddle.disable_static()
        paddle.seed(pe.SEED)
        net = DET_MODELS[name]()
        net.eval()
        net.randomize_weights(rng)
        feed = net.example(rng)
        g = grads(net, feed, seed)
        paddle.disable_static()
        spec = [paddle.static.InputSpec(s, d, n) for n, s, d in net.inputs]
        prefix = os.path.join(out_dir, "inference")
        paddle.jit.save(net, prefix, input_spec=spec)
        paddle.enable_static()
        pe.record(name, "pir", out_dir, prefix, feed)
        with np.load(os.path.join(out_dir, "expected.npz")) as f:
            want = [f["out%d" % i] for i in range(len(f.files))]
        gap = pe.rel_gap(g.pop("dygraph_out0"), want[0])
        print("%-15s dygraph vs executor gap %.2e" % (name, gap))
        assert gap < 1e-5, gap
        plain = pe.predict(prefix + ".json", prefix + ".pdiparams", feed, False)
        info_path = os.path.join(out_dir, "info.json")
        with open(info_path) as f:
            info = json.load(f)
        info["plain_predictor_rel_gap"] = max(
            pe.rel_gap(w.astype(np.float64), o.astype(np.float64))
            if w.shape == o.shape
            else math.inf
            for w, o in zip(want, plain)
        )
        with open(info_path, "w") as f:
            json.dump(info, f, indent=1)
        print("%-15s plain predictor gap %.2e" % (name, info["plain_predictor_rel_gap"]))
        np.savez_compressed(os.path.join(out_dir, "grads.npz"), **g)
        alt = {}
        for i, feed in enumerate(net.alt_examples(rng)):
            outs, _ = pe.reference(prefix, "pir", feed)
            alt.update({"%d/in/%s" % (i, k): v for k, v in feed.items()})
            alt.update({"%d/out/%d" % (i, j): o for j, o in enumerate(outs)})
        np.savez(os.path.join(out_dir, "alt.npz"), **alt)


if __name__ == "__main__":
    sys.argv.insert(1, "--pir")  # paddle_export reads it before it imports paddle
    args = [a for a in sys.argv[1:] if a != "--pir"]
    main(args[0], args[1:])
