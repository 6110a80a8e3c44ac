"""Small versions of the PaddleOCR, PaddleClas and PaddleNLP model families, written from their
published definitions (PaddleOCR's ppocr/modeling, PaddleClas's ppcls/arch/backbone, PaddleNLP's
ernie and uie models) with `paddle.nn`: the same layers, ops and forward passes at reduced widths
and depths, so that each fixture stays a few hundred KB. Used by tools/paddle_export.py like
paddle_nn_models: each model has `inputs`, `example(rng)` and `randomize_weights(rng)`."""

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

# --- weights ---------------------------------------------------------------------------------


class Family(nn.Layer):
    """Random weights with activations of a sane scale through deep conv stacks: convolutions by
    He's normal (fan-in), other parameters normal 0.2, normalisation scales in [0.5, 1.5] and
    batch norm statistics away from 0 / 1, so that a kernel ignoring one of them shows."""

    def randomize_weights(self, rng):
        def put(p, a):
            p.set_value(a.astype(np.float32))

        with paddle.no_grad():
            for p in self.parameters():
                put(p, rng.normal(0, 0.2, p.shape))
            for sub in self.sublayers():
                if isinstance(sub, (nn.Conv2D, nn.Conv2DTranspose)):
                    w = sub.weight
                    fan_in = int(np.prod(w.shape[1:]))
                    if isinstance(sub, nn.Conv2DTranspose):
                        fan_in = int(w.shape[0] * np.prod(w.shape[2:]) / sub._stride[0] ** 2)
                    put(w, rng.normal(0, np.sqrt(2.0 / fan_in), w.shape))
                    if sub.bias is not None:
                        put(sub.bias, rng.uniform(-0.1, 0.1, sub.bias.shape))
                elif isinstance(sub, (nn.BatchNorm, nn.BatchNorm2D)):
                    c = sub.weight.shape[0]
                    put(sub.weight, rng.uniform(0.5, 1.5, c))
                    put(sub.bias, rng.uniform(-0.2, 0.2, c))
                    put(sub._mean, rng.uniform(-0.2, 0.2, c))
                    put(sub._variance, rng.uniform(0.5, 1.5, c))
                elif isinstance(sub, nn.LayerNorm):
                    put(sub.weight, rng.uniform(0.5, 1.5, sub.weight.shape))


def image(shape):
    return staticmethod(lambda rng: {"x": rng.standard_normal(shape).astype(np.float32)})


def make_divisible(v, divisor=8, min_value=None):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


# --- MobileNetV3 (PaddleClas / PaddleOCR) ------------------------------------------------------


class ConvBN(nn.Layer):
    """Conv2D without bias, batch norm, an optional activation: PaddleClas / PaddleOCR's
    ConvBNLayer."""

    def __init__(self, cin, cout, k, stride=1, groups=1, act=None, padding=None):
        super().__init__()
        pad = (k - 1) // 2 if padding is None else padding
        self.conv = nn.Conv2D(cin, cout, k, stride, pad, groups=groups, bias_attr=False)
        self.bn = nn.BatchNorm(cout)
        self.act = act

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.act == "relu":
            x = F.relu(x)
        elif self.act == "hardswish":
            x = F.hardswish(x)
        elif self.act == "gelu":
            x = F.gelu(x)
        return x


class SE(nn.Layer):
    """Squeeze-and-excitation: average pool, 1x1 reduce, relu, 1x1 expand, hard sigmoid (slope
    0.2, offset 0.5 in MobileNetV3; Paddle's default 1/6 in PP-LCNet), scale."""

    def __init__(self, c, reduction=4, slope=0.2):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.conv1 = nn.Conv2D(c, c // reduction, 1)
        self.conv2 = nn.Conv2D(c // reduction, c, 1)
        self.slope = slope

    def forward(self, x):
        s = self.conv2(F.relu(self.conv1(self.pool(x))))
        return x * F.hardsigmoid(s, slope=self.slope, offset=0.5)


class ResidualUnit(nn.Layer):
    """MobileNetV3's inverted residual: 1x1 expand, depthwise k x k, optional SE, 1x1 linear,
    the shortcut where shapes allow."""

    def __init__(self, cin, mid, cout, k, stride, use_se, act):
        super().__init__()
        self.shortcut = stride == 1 and cin == cout
        self.expand = ConvBN(cin, mid, 1, act=act)
        self.dw = ConvBN(mid, mid, k, stride, groups=mid, act=act)
        self.se = SE(mid) if use_se else None
        self.linear = ConvBN(mid, cout, 1)

    def forward(self, x):
        y = self.dw(self.expand(x))
        if self.se is not None:
            y = self.se(y)
        y = self.linear(y)
        return paddle.add(x, y) if self.shortcut else y


# MobileNetV3-small's blocks (k, expansion, out, SE, activation, stride), PaddleClas NET_CONFIG
# without its last block (the fixtures stay small).
MV3_SMALL = [
    [3, 16, 16, True, "relu", 2],
    [3, 72, 24, False, "relu", 2],
    [3, 88, 24, False, "relu", 1],
    [5, 96, 40, True, "hardswish", 2],
    [5, 240, 40, True, "hardswish", 1],
    [5, 120, 48, True, "hardswish", 1],
    [5, 288, 96, True, "hardswish", 2],
]


class MobileNetV3Blocks(nn.Layer):
    """The stem (3x3 stride 2, hardswish) and the residual units of a config at `scale`; `strides`
    overrides the config's (PaddleOCR's recognition backbone strides (2, 1): height only);
    `taps` are the block indices whose outputs the detection backbone returns."""

    def __init__(self, cfg, scale, strides=None, taps=()):
        super().__init__()
        c = make_divisible(16 * scale)
        self.stem = ConvBN(3, c, 3, 2, act="hardswish")
        blocks = []
        self.taps, self.tap_channels = taps, []
        for i, (k, exp, out, se, act, s) in enumerate(cfg):
            out_c = make_divisible(out * scale)
            stride = strides[i] if strides else s
            blocks.append(ResidualUnit(c, make_divisible(exp * scale), out_c, k, stride, se, act))
            c = out_c
            if i in taps:
                self.tap_channels.append(c)
        self.blocks = nn.LayerList(blocks)
        self.out_channels = c

    def forward(self, x):
        x = self.stem(x)
        outs = []
        for i, block in enumerate(self.blocks):
            x = block(x)
            if i in self.taps:
                outs.append(x)
        return (x, outs) if self.taps else x


class MobileNetV3(Family):
    """PaddleClas MobileNetV3_small_x0_25: blocks, last 1x1 conv + BN + hardswish, global average
    pool, the 1x1 'last_conv' (bias, no BN) + hardswish + dropout (downscale_in_infer), flatten,
    fc."""

    inputs = [("x", [None, 3, 32, 32], "float32")]
    example = image([2, 3, 32, 32])

    def __init__(self, scale=0.25, classes=10, class_expand=32):
        super().__init__()
        self.body = MobileNetV3Blocks(MV3_SMALL, scale)
        c = make_divisible(576 * scale)
        self.last_second_conv = ConvBN(self.body.out_channels, c, 1, act="hardswish")
        self.avg_pool = nn.AdaptiveAvgPool2D(1)
        self.last_conv = nn.Conv2D(c, class_expand, 1)
        self.dropout = nn.Dropout(p=0.2, mode="downscale_in_infer")
        self.flatten = nn.Flatten(start_axis=1, stop_axis=-1)
        self.fc = nn.Linear(class_expand, classes)

    def forward(self, x):
        x = self.avg_pool(self.last_second_conv(self.body(x)))
        x = self.dropout(F.hardswish(self.last_conv(x)))
        return self.fc(self.flatten(x))


# --- PP-LCNet (PaddleClas) ---------------------------------------------------------------------

# (k, in, out, stride, SE) per depthwise-separable block, PP-LCNet's NET_CONFIG with one block
# per stage where it has five and one of blocks6's two (its SE).
LCNET = [
    [3, 16, 32, 1, False],
    [3, 32, 64, 2, False],
    [3, 64, 64, 1, False],
    [3, 64, 128, 2, False],
    [3, 128, 128, 1, False],
    [3, 128, 256, 2, False],
    [5, 256, 256, 1, False],
    [5, 256, 512, 2, True],
]


class DepthwiseSeparable(nn.Layer):
    def __init__(self, cin, cout, k, stride, use_se):
        super().__init__()
        self.dw = ConvBN(cin, cin, k, stride, groups=cin, act="hardswish")
        self.se = SE(cin, slope=1.0 / 6) if use_se else None
        self.pw = ConvBN(cin, cout, 1, act="hardswish")

    def forward(self, x):
        x = self.dw(x)
        if self.se is not None:
            x = self.se(x)
        return self.pw(x)


class PPLCNet(Family):
    """PaddleClas PP-LCNet_x0_25: stem, depthwise-separable blocks (hardswish, SE in the last
    stage), global average pool, 1x1 conv (no bias) + hardswish + dropout, flatten, fc."""

    inputs = [("x", [None, 3, 32, 32], "float32")]
    example = image([2, 3, 32, 32])

    def __init__(self, scale=0.25, classes=10, class_expand=32):
        super().__init__()
        self.stem = ConvBN(3, make_divisible(16 * scale), 3, 2, act="hardswish")
        self.blocks = nn.Sequential(
            *[
                DepthwiseSeparable(make_divisible(i * scale), make_divisible(o * scale), k, s, se)
                for k, i, o, s, se in LCNET
            ]
        )
        self.avg_pool = nn.AdaptiveAvgPool2D(1)
        self.last_conv = nn.Conv2D(make_divisible(512 * scale), class_expand, 1, bias_attr=False)
        self.dropout = nn.Dropout(p=0.2, mode="downscale_in_infer")
        self.flatten = nn.Flatten(start_axis=1, stop_axis=-1)
        self.fc = nn.Linear(class_expand, classes)

    def forward(self, x):
        x = self.avg_pool(self.blocks(self.stem(x)))
        x = self.dropout(F.hardswish(self.last_conv(x)))
        return self.fc(self.flatten(x))


# --- ResNet-vd (PaddleClas) --------------------------------------------------------------------


class ConvBNvd(nn.Layer):
    """ResNet-vd's ConvBNLayer: in vd mode a 2x2 average pool (ceil_mode) before a stride-1 conv
    replaces the strided 1x1 shortcut; batch norm with its activation."""

    def __init__(self, cin, cout, k, stride=1, act=None, vd=False):
        super().__init__()
        self.pool = nn.AvgPool2D(2, 2, 0, ceil_mode=True) if vd else None
        self.conv = nn.Conv2D(cin, cout, k, stride, (k - 1) // 2, bias_attr=False)
        self.bn = nn.BatchNorm(cout, act=act)

    def forward(self, x):
        if self.pool is not None:
            x = self.pool(x)
        return self.bn(self.conv(x))


class BasicBlockVd(nn.Layer):
    def __init__(self, cin, cout, stride, first):
        super().__init__()
        self.conv0 = ConvBNvd(cin, cout, 3, stride, act="relu")
        self.conv1 = ConvBNvd(cout, cout, 3)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = ConvBNvd(cin, cout, 1, 1 if not first else stride, vd=not first)

    def forward(self, x):
        y = self.conv1(self.conv0(x))
        short = x if self.short is None else self.short(x)
        return F.relu(paddle.add(short, y))


class ResNetVdBody(nn.Layer):
    """ResNet18-vd at `base` channels for 64: the three 3x3 convs of the vd stem, max pool, 4
    stages of 2 basic blocks."""

    def __init__(self, base=4):
        super().__init__()
        self.stem = nn.Sequential(
            ConvBNvd(3, base // 2, 3, 2, act="relu"),
            ConvBNvd(base // 2, base // 2, 3, act="relu"),
            ConvBNvd(base // 2, base, 3, act="relu"),
        )
        self.pool = nn.MaxPool2D(3, 2, 1)
        stages, c = [], base
        for i, out in enumerate([base, base * 2, base * 4, base * 8]):
            blocks = []
            for j in range(2):
                stride = 2 if j == 0 and i != 0 else 1
                blocks.append(BasicBlockVd(c, out, stride, first=i == 0 and j == 0))
                c = out
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.LayerList(stages)
        self.stage_channels = [base, base * 2, base * 4, base * 8]

    def forward(self, x):
        x = self.pool(self.stem(x))
        outs = []
        for stage in self.stages:
            x = stage(x)
            outs.append(x)
        return outs


class ResNetVd(Family):
    """PaddleClas ResNet18_vd at 1/16 width: body, global average pool, flatten, fc."""

    inputs = [("x", [None, 3, 30, 30], "float32")]  # odd sizes on the way: ceil_mode pools
    example = image([2, 3, 30, 30])

    def __init__(self, classes=10):
        super().__init__()
        self.body = ResNetVdBody()
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(self.body.stage_channels[-1], classes)

    def forward(self, x):
        x = self.pool(self.body(x)[-1])
        return self.fc(paddle.flatten(x, 1))


# --- PaddleOCR detection: DB ------------------------------------------------------------------


class DBFPN(nn.Layer):
    """PaddleOCR's DBFPN: 1x1 lateral convs, a top-down path of 2x upsampling and adds, 3x3
    convs to a quarter of the channels, each upsampled to the finest level, concatenated."""

    def __init__(self, in_channels, out_channels, mode="nearest"):
        super().__init__()
        self.lateral = nn.LayerList(
            [nn.Conv2D(c, out_channels, 1, bias_attr=False) for c in in_channels]
        )
        self.smooth = nn.LayerList(
            [
                nn.Conv2D(out_channels, out_channels // 4, 3, padding=1, bias_attr=False)
                for _ in in_channels
            ]
        )
        self.mode = mode

    def up(self, x, factor):
        if self.mode == "nearest":
            return F.upsample(x, scale_factor=factor, mode="nearest", align_mode=1)
        return F.upsample(x, scale_factor=factor, mode="bilinear", align_corners=False)

    def forward(self, feats):
        c2, c3, c4, c5 = [conv(f) for conv, f in zip(self.lateral, feats)]
        out4 = c4 + self.up(c5, 2)
        out3 = c3 + self.up(out4, 2)
        out2 = c2 + self.up(out3, 2)
        p5, p4, p3, p2 = [conv(f) for conv, f in zip(self.smooth[::-1], [c5, out4, out3, out2])]
        return paddle.concat([self.up(p5, 8), self.up(p4, 4), self.up(p3, 2), p2], axis=1)


class DBHead(nn.Layer):
    """PaddleOCR's DBHead at inference: 3x3 conv + BN relu, two 2x2 stride-2 transposed convs
    (the first + BN relu), sigmoid: the shrink map at the input's resolution."""

    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2D(c, c // 4, 3, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm(c // 4, act="relu")
        self.conv2 = nn.Conv2DTranspose(c // 4, c // 4, 2, stride=2)
        self.bn2 = nn.BatchNorm(c // 4, act="relu")
        self.conv3 = nn.Conv2DTranspose(c // 4, 1, 2, stride=2)

    def forward(self, x):
        x = self.bn2(self.conv2(self.bn1(self.conv1(x))))
        return F.sigmoid(self.conv3(x))


# MobileNetV3-large's det config (PaddleOCR det_mobilenet_v3), shortened: a stage's first block,
# and the stride-4 and stride-16 stages' last.
MV3_LARGE_DET = [
    [3, 16, 16, False, "relu", 1],
    [3, 64, 24, False, "relu", 2],
    [3, 72, 24, False, "relu", 1],
    [5, 72, 40, True, "relu", 2],
    [3, 240, 80, False, "hardswish", 2],
    [3, 480, 112, True, "hardswish", 1],
    [5, 672, 160, True, "hardswish", 2],
]


class DBMobileNetV3(Family):
    """PaddleOCR DB (det_mv3_db): MobileNetV3-large x0.25 backbone returning the strides 4, 8, 16
    and 32, DBFPN with nearest upsampling, DBHead; the shrink map [B, 1, H, W]."""

    inputs = [("x", [None, 3, None, None], "float32")]
    example = image([1, 3, 32, 64])

    def __init__(self):
        super().__init__()
        self.backbone = MobileNetV3Blocks(MV3_LARGE_DET, 0.25, taps=(2, 3, 5, 6))
        self.neck = DBFPN(self.backbone.tap_channels, 24)
        self.head = DBHead(24)

    def forward(self, x):
        return self.head(self.neck(self.backbone(x)[1]))


class DBResNetVd(Family):
    """DB with a ResNet18-vd backbone (det_r18_vd_db) and a bilinear-upsampling DBFPN."""

    inputs = [("x", [None, 3, None, None], "float32")]
    example = image([1, 3, 32, 64])

    def __init__(self):
        super().__init__()
        self.backbone = ResNetVdBody()
        self.neck = DBFPN(self.backbone.stage_channels, 24, mode="bilinear")
        self.head = DBHead(24)

    def forward(self, x):
        return self.head(self.neck(self.backbone(x)))


# --- PaddleOCR recognition: CRNN and SVTR ------------------------------------------------------

# MobileNetV3-small's rec config (PaddleOCR rec_mobilenet_v3, small_stride [2, 2, 2, 2]):
# strided blocks reduce the height only.
MV3_SMALL_REC_STRIDES = [(2, 1), (2, 1), 1, (2, 1), 1, 1, (2, 1)]


def im2seq(x):
    """PaddleOCR's Im2Seq: [B, C, 1, W] -> [B, W, C]."""
    return x.squeeze(axis=2).transpose([0, 2, 1])


class CTCHead(nn.Layer):
    """A linear layer over the sequence, softmax over the characters at inference."""

    def __init__(self, c, classes):
        super().__init__()
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return F.softmax(self.fc(x), axis=2)


class CRNN(Family):
    """PaddleOCR rec_mv3_none_bilstm_ctc: MobileNetV3-small x0.25 backbone with height-only
    strides and a final 2x2 max pool, Im2Seq, a 2-layer bidirectional nn.LSTM, CTC head."""

    inputs = [("x", [None, 3, 32, None], "float32")]
    example = image([2, 3, 32, 40])

    def __init__(self, classes=20):
        super().__init__()
        self.backbone = MobileNetV3Blocks(MV3_SMALL, 0.25, strides=MV3_SMALL_REC_STRIDES)
        self.pool = nn.MaxPool2D(2, 2, 0)
        self.lstm = nn.LSTM(self.backbone.out_channels, 16, direction="bidirectional", num_layers=2)
        self.head = CTCHead(32, classes)

    def forward(self, x):
        x = im2seq(self.pool(self.backbone(x)))
        x, _ = self.lstm(x)
        return self.head(x)


class ConvMixer(nn.Layer):
    """SVTR's local mixer: the tokens back to [B, C, H, W], a grouped 3x3 conv, back to tokens."""

    def __init__(self, dim, heads, hw):
        super().__init__()
        self.hw, self.dim = hw, dim
        self.conv = nn.Conv2D(dim, dim, 3, 1, 1, groups=heads)

    def forward(self, x):
        x = x.transpose([0, 2, 1]).reshape([0, self.dim, self.hw[0], self.hw[1]])
        return self.conv(x).flatten(2).transpose([0, 2, 1])


class Attention(nn.Layer):
    """SVTR's global mixer: multi-head self-attention as SVTR writes it (one qkv linear,
    reshape and transpose to [3, B, heads, N, d], scaled q, softmax, proj)."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.dim, self.scale = heads, dim, (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        qkv = self.qkv(x).reshape((0, -1, 3, self.heads, self.dim // self.heads))
        qkv = qkv.transpose((2, 0, 3, 1, 4))
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = F.softmax(q.matmul(k.transpose((0, 1, 3, 2))), axis=-1)
        x = attn.matmul(v).transpose((0, 2, 1, 3)).reshape((0, -1, self.dim))
        return self.proj(x)


class SvtrBlock(nn.Layer):
    """A mixing block, SVTR's prenorm form: norm1(x + mixer(x)), norm2(x + mlp(x))."""

    def __init__(self, dim, heads, mixer, hw):
        super().__init__()
        self.mixer = ConvMixer(dim, heads, hw) if mixer == "Conv" else Attention(dim, heads)
        self.norm1 = nn.LayerNorm(dim, epsilon=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))
        self.norm2 = nn.LayerNorm(dim, epsilon=1e-6)

    def forward(self, x):
        x = self.norm1(x + self.mixer(x))
        return self.norm2(x + self.mlp(x))


class SubSample(nn.Layer):
    """Between stages: 3x3 conv of stride (2, 1) on the token map, layer norm."""

    def __init__(self, cin, cout, hw):
        super().__init__()
        self.hw, self.cin = hw, cin
        self.conv = nn.Conv2D(cin, cout, 3, (2, 1), 1)
        self.norm = nn.LayerNorm(cout)

    def forward(self, x):
        x = x.transpose([0, 2, 1]).reshape([0, self.cin, self.hw[0], self.hw[1]])
        return self.norm(self.conv(x).flatten(2).transpose([0, 2, 1]))


class SVTRTiny(Family):
    """PaddleOCR SVTR-tiny style recogniser: a patch embedding of two 3x3 stride-2 conv + BN +
    gelu layers, position embeddings, a stage of conv mixers, two of global attention with
    (2, 1) subsampling between, then SVTR's last stage (adaptive average pool to one row, 1x1
    conv, hardswish, dropout), Im2Seq and a CTC head. Input 32 x 64: 8 x 16 tokens."""

    inputs = [("x", [None, 3, 32, 64], "float32")]
    example = image([2, 3, 32, 64])

    def __init__(self, classes=20, dims=(16, 24, 32), heads=(2, 2, 4)):
        super().__init__()
        self.patch = nn.Sequential(
            ConvBN(3, dims[0] // 2, 3, 2, act="gelu"),
            ConvBN(dims[0] // 2, dims[0], 3, 2, act="gelu"),
        )
        self.pos = self.create_parameter([1, 8 * 16, dims[0]])
        hws = [(8, 16), (4, 16), (2, 16)]
        mixers = ["Conv", "Global", "Global"]
        self.stages = nn.LayerList(
            [SvtrBlock(d, h, m, hw) for d, h, m, hw in zip(dims, heads, mixers, hws)]
        )
        self.subs = nn.LayerList([SubSample(dims[i], dims[i + 1], hws[i]) for i in range(2)])
        self.avg_pool = nn.AdaptiveAvgPool2D([1, 16])
        self.last_conv = nn.Conv2D(dims[2], 32, 1, bias_attr=False)
        self.dropout = nn.Dropout(p=0.1, mode="downscale_in_infer")
        self.head = CTCHead(32, classes)
        self.dims = dims

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose([0, 2, 1]) + self.pos
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i < 2:
                x = self.subs[i](x)
        x = self.avg_pool(x.transpose([0, 2, 1]).reshape([0, self.dims[2], 2, 16]))
        x = self.dropout(F.hardswish(self.last_conv(x)))
        return self.head(im2seq(x))


# --- PaddleNLP: ERNIE 3.0 and UIE -------------------------------------------------------------

VOCAB, HIDDEN, HEADS, FFN, LAYERS, MAX_POS, TYPES, TASKS = 120, 32, 4, 64, 2, 64, 4, 3


class Ernie(Family):
    """PaddleNLP's ErnieModel (ERNIE 3.0: use_task_id): word (pad id 0), position, token type and
    task type embeddings summed, layer norm, dropout; post-norm nn.TransformerEncoder (gelu)
    under the padding mask PaddleNLP builds from the ids; the tanh pooler on the first token."""

    def __init__(self, task_id=0):
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN, padding_idx=0)
        self.position = nn.Embedding(MAX_POS, HIDDEN)
        self.token_type = nn.Embedding(TYPES, HIDDEN)
        self.task_type = nn.Embedding(TASKS, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN)
        self.dropout = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(
            HIDDEN, HEADS, FFN, dropout=0.1, activation="gelu", attn_dropout=0.1, act_dropout=0
        )
        self.encoder = nn.TransformerEncoder(layer, LAYERS)
        self.pooler = nn.Linear(HIDDEN, HIDDEN)
        self.task_id = task_id

    def forward(self, input_ids, token_type_ids):
        ones = paddle.ones_like(input_ids, dtype="int64")
        position_ids = paddle.cumsum(ones, axis=-1) - ones
        task_type_ids = paddle.ones_like(input_ids) * self.task_id
        emb = (
            self.word(input_ids)
            + self.position(position_ids)
            + self.token_type(token_type_ids)
            + self.task_type(task_type_ids)
        )
        x = self.dropout(self.norm(emb))
        mask = paddle.unsqueeze(
            (input_ids == 0).astype(self.pooler.weight.dtype) * -1e4, axis=[1, 2]
        )
        seq = self.encoder(x, mask)
        return seq, F.tanh(self.pooler(seq[:, 0]))


def ernie_example(rng, batch=2, seq=14):
    """Ids with padding (0) after each row's length, token types 0 then 1 (two segments)."""
    ids = rng.integers(1, VOCAB, (batch, seq)).astype(np.int64)
    types = np.zeros((batch, seq), dtype=np.int64)
    for i in range(batch):
        n = seq - 4 * i
        ids[i, n:] = 0
        types[i, n // 2 : n] = 1
    return {"input_ids": ids, "token_type_ids": types}


ERNIE_INPUTS = [("input_ids", [None, None], "int64"), ("token_type_ids", [None, None], "int64")]


class ErnieSequenceClassification(Family):
    """ErnieForSequenceClassification: the pooled output, dropout, a linear classifier."""

    inputs = ERNIE_INPUTS
    example = staticmethod(ernie_example)

    def __init__(self, classes=3):
        super().__init__()
        self.ernie = Ernie(task_id=0)
        self.cls_dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(HIDDEN, classes)

    def forward(self, input_ids, token_type_ids):
        _, pooled = self.ernie(input_ids, token_type_ids)
        return self.classifier(self.cls_dropout(pooled))


class UIE(Family):
    """PaddleNLP's UIE: ERNIE's sequence output through linear_start / linear_end, squeezed,
    sigmoid: the start and end probabilities [B, S] (two outputs)."""

    inputs = ERNIE_INPUTS
    example = staticmethod(ernie_example)

    def __init__(self):
        super().__init__()
        self.ernie = Ernie(task_id=1)
        self.linear_start = nn.Linear(HIDDEN, 1)
        self.linear_end = nn.Linear(HIDDEN, 1)

    def forward(self, input_ids, token_type_ids):
        seq, _ = self.ernie(input_ids, token_type_ids)
        start = F.sigmoid(paddle.squeeze(self.linear_start(seq), -1))
        end = F.sigmoid(paddle.squeeze(self.linear_end(seq), -1))
        return start, end


# name: constructor; tools/paddle_export.py saves each with Paddle 2.6 (legacy) and 3.x (PIR).
FAMILIES = {
    "ocr_db_mv3": DBMobileNetV3,
    "ocr_db_r18vd": DBResNetVd,
    "ocr_crnn": CRNN,
    "ocr_svtr": SVTRTiny,
    "clas_mobilenet_v3": MobileNetV3,
    "clas_pplcnet": PPLCNet,
    "clas_resnet_vd": ResNetVd,
    "nlp_ernie_cls": ErnieSequenceClassification,
    "nlp_uie": UIE,
}
