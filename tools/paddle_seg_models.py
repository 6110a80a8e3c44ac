#!/usr/bin/env python3
"""Small dense-prediction and generative vision models as PaddleSeg and PaddleMIX (ppdiffusers)
write them in Paddle 3.x: a diffusion UNet (sinusoidal timestep embedding, GroupNorm + SiLU
residual blocks with the time embedding added per channel, strided-conv downsampling, nearest
upsampling, skip concatenations, a spatial transformer with self-attention and cross-attention to a
fed context), DeepLabV3+ (a ResNet-vd backbone with dilated stages padded by `F.pad`, ASPP with
separable dilated convs and image pooling, a decoder with a low-level feature, the bilinear
upsample to the input and PaddleSeg's export argmax), PaddleSeg's UNet (`Conv2DTranspose`
upsampling, BatchNorm, `padding='same'`), PP-LiteSeg's SPPM + UAFM head, and the layers of
`paddle.vision.models`' ShuffleNetV2 / SqueezeNet / DenseNet at tiny sizes. Each has the
interface of tools/paddle_family_models.py (`inputs`, `example(rng)`, `randomize_weights(rng)`)
and `shapes`, other feeds it accepts.

Run with PaddlePaddle 3.x to export them (FIXTURES, or --only NAME) as PIR programs with Paddle's
outputs, its outputs at the `shapes` (others.npz) and its dygraph gradients of sum(out0 * R) for
every parameter (grads.npz: `R` and each parameter by name):

    OMP_NUM_THREADS=1 python tools/paddle_seg_models.py tests/fixtures/paddle/pir [--only NAME]
"""

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


class SegFamily(Family):
    """Family's weights, plus GroupNorm / LayerNorm scales and biases away from 1 / 0."""

    def randomize_weights(self, rng):
        super().randomize_weights(rng)
        with paddle.no_grad():
            for sub in self.sublayers():
                if isinstance(sub, (nn.GroupNorm, nn.LayerNorm)):
                    sub.weight.set_value(rng.uniform(0.5, 1.5, sub.weight.shape).astype("float32"))
                    sub.bias.set_value(rng.uniform(-0.2, 0.2, sub.bias.shape).astype("float32"))


def images(c, h0, w0):
    def example(rng, batch=2, h=h0, w=w0):
        return {"x": rng.standard_normal((batch, c, h, w)).astype(np.float32)}

    return example


# --- ppdiffusers' UNet2DConditionModel, tiny ---------------------------------------------------


def get_timestep_embedding(timesteps, dim, flip_sin_to_cos=True, shift=0, max_period=10000):
    """ppdiffusers' embeddings.get_timestep_embedding."""
    half = dim // 2
    exponent = -math.log(max_period) * paddle.arange(start=0, end=half, dtype="float32")
    exponent = exponent / (half - shift)
    emb = paddle.exp(exponent)
    emb = timesteps[:, None].cast("float32") * emb[None, :]
    emb = paddle.concat([paddle.sin(emb), paddle.cos(emb)], axis=-1)
    if flip_sin_to_cos:
        emb = paddle.concat([emb[:, half:], emb[:, :half]], axis=-1)
    return emb


class TimestepEmbedding(nn.Layer):
    def __init__(self, cin, dim):
        super().__init__()
        self.linear_1 = nn.Linear(cin, dim)
        self.linear_2 = nn.Linear(dim, dim)

    def forward(self, x):
        return self.linear_2(F.silu(self.linear_1(x)))


class ResnetBlock2D(nn.Layer):
    """ppdiffusers' ResnetBlock2D: GroupNorm, SiLU, conv, + the projected time embedding per
    channel, GroupNorm, SiLU, dropout, conv, a 1x1 shortcut where channels change."""

    def __init__(self, cin, cout, temb, groups=4, eps=1e-6):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin, epsilon=eps)
        self.conv1 = nn.Conv2D(cin, cout, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb, cout)
        self.norm2 = nn.GroupNorm(groups, cout, epsilon=eps)
        self.dropout = nn.Dropout(0.0)
        self.conv2 = nn.Conv2D(cout, cout, 3, padding=1)
        self.conv_shortcut = nn.Conv2D(cin, cout, 1) if cin != cout else None

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.time_emb_proj(F.silu(temb))[:, :, None, None]
        h = self.conv2(self.dropout(F.silu(self.norm2(h))))
        if self.conv_shortcut is not None:
            x = self.conv_shortcut(x)
        return x + h


class Attention(nn.Layer):
    """ppdiffusers' Attention: to_q / to_k / to_v, heads by reshape; AttnProcessor's heads-first
    transpose, matmul with transpose_y, scale, softmax, matmul, or (sdpa) AttnProcessor2_5's
    F.scaled_dot_product_attention on [B, S, heads, D]; to_out (linear, dropout)."""

    def __init__(self, dim, heads, context_dim=None, sdpa=False):
        super().__init__()
        self.sdpa = sdpa
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        kv = context_dim or dim
        self.to_q = nn.Linear(dim, dim, bias_attr=False)
        self.to_k = nn.Linear(kv, dim, bias_attr=False)
        self.to_v = nn.Linear(kv, dim, bias_attr=False)
        self.to_out = nn.LayerList([nn.Linear(dim, dim), nn.Dropout(0.0)])

    def heads_first(self, x):
        b, n, c = x.shape
        return x.reshape([0, 0, self.heads, c // self.heads]).transpose([0, 2, 1, 3])

    def forward(self, x, context=None):
        context = x if context is None else context
        if self.sdpa:
            q, k, v = (
                t.reshape([0, 0, self.heads, t.shape[-1] // self.heads])
                for t in (self.to_q(x), self.to_k(context), self.to_v(context))
            )
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0, is_causal=False)
            out = out.reshape([0, 0, out.shape[2] * out.shape[3]])
            return self.to_out[1](self.to_out[0](out))
        q = self.heads_first(self.to_q(x))
        k = self.heads_first(self.to_k(context))
        v = self.heads_first(self.to_v(context))
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3])
        out = out.reshape([0, 0, out.shape[2] * out.shape[3]])
        return self.to_out[1](self.to_out[0](out))


class GEGLU(nn.Layer):
    def __init__(self, dim, inner):
        super().__init__()
        self.proj = nn.Linear(dim, inner * 2)

    def forward(self, x):
        h, gate = self.proj(x).chunk(2, axis=-1)
        return h * F.gelu(gate)


class BasicTransformerBlock(nn.Layer):
    """Self-attention, cross-attention to the context, GEGLU feed-forward, each after a
    LayerNorm, residual. `cross`: "mha" (Paddle's nn.MultiHeadAttention with kdim / vdim of the
    context, as older PaddleMIX UNets wrote it), or "matmul" (ppdiffusers' Attention);
    self-attention by F.scaled_dot_product_attention with `sdpa`, else by matmuls."""

    def __init__(self, dim, heads, context_dim, sdpa=False, cross="mha"):
        super().__init__()
        self.cross = cross
        self.norm1 = nn.LayerNorm(dim)
        self.attn1 = Attention(dim, heads, sdpa=sdpa)
        self.norm2 = nn.LayerNorm(dim)
        if cross == "mha":
            self.attn2 = nn.MultiHeadAttention(dim, heads, kdim=context_dim, vdim=context_dim)
        else:
            self.attn2 = Attention(dim, heads, context_dim)
        self.norm3 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(GEGLU(dim, dim * 2), nn.Dropout(0.0), nn.Linear(dim * 2, dim))

    def forward(self, x, context):
        x = self.attn1(self.norm1(x)) + x
        if self.cross == "mha":
            x = self.attn2(self.norm2(x), context, context) + x
        else:
            x = self.attn2(self.norm2(x), context) + x
        return self.ff(self.norm3(x)) + x


class Transformer2DModel(nn.Layer):
    """GroupNorm, 1x1 proj_in, to tokens (transpose [0, 2, 3, 1] + reshape [B, H*W, C]), the
    block, back (reshape to [B, H, W, C] from paddle.shape + transpose), 1x1 proj_out,
    residual."""

    def __init__(self, c, heads, context_dim, groups=4, **block):
        super().__init__()
        self.norm = nn.GroupNorm(groups, c, epsilon=1e-6)
        self.proj_in = nn.Conv2D(c, c, 1)
        self.block = BasicTransformerBlock(c, heads, context_dim, **block)
        self.proj_out = nn.Conv2D(c, c, 1)

    def forward(self, x, context):
        shape, c = paddle.shape(x), x.shape[1]  # the batch and the size are dynamic
        hs = self.proj_in(self.norm(x))
        hs = hs.transpose([0, 2, 3, 1]).reshape([0, -1, c])
        hs = self.block(hs, context)
        hs = hs.reshape([shape[0], shape[2], shape[3], c]).transpose([0, 3, 1, 2])
        return self.proj_out(hs) + x


class Downsample2D(nn.Layer):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2D(c, c, 3, stride=2, padding=1)

    def forward(self, x):
        return self.conv(x)


class Upsample2D(nn.Layer):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2D(c, c, 3, padding=1)

    def forward(self, x, output_size=None):
        if output_size is None:
            return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))
        return self.conv(F.interpolate(x, size=output_size, mode="nearest"))


CONTEXT_DIM = 12


class DiffusionUNet(SegFamily):
    """ppdiffusers' UNet2DConditionModel at block_out_channels (8, 12), one resnet per block:
    conv_in, time embedding (sinusoidal of the fed timesteps, linear, SiLU, linear), two down
    blocks (strided-conv downsampling), the mid block (resnet, transformer with self- and
    cross-attention, resnet), up blocks with skip concatenations and nearest upsampling,
    GroupNorm, SiLU, conv_out: the predicted noise."""

    inputs = [
        ("x", [None, 4, None, None], "float32"),
        ("timestep", [None], "int64"),
        ("context", [None, None, CONTEXT_DIM], "float32"),
    ]

    @staticmethod
    def example(rng, batch=2, h=8, w=8, ctx=5, one_t=False):
        return {
            "x": rng.standard_normal((batch, 4, h, w)).astype(np.float32),
            "timestep": rng.integers(0, 1000, 1 if one_t else batch).astype(np.int64),
            "context": rng.standard_normal((batch, ctx, CONTEXT_DIM)).astype(np.float32),
        }

    shapes = [dict(batch=1, h=12, w=16, ctx=3), dict(batch=3, h=6, w=10, ctx=7, one_t=True)]

    def __init__(self, c0=8, c1=12, temb=16):
        super().__init__()
        self.c0 = c0
        self.conv_in = nn.Conv2D(4, c0, 3, padding=1)
        self.time_embedding = TimestepEmbedding(c0, temb)
        self.down0 = ResnetBlock2D(c0, c0, temb)
        self.down0_sample = Downsample2D(c0)
        self.down1 = ResnetBlock2D(c0, c1, temb)
        self.down1_sample = Downsample2D(c1)
        self.mid0 = ResnetBlock2D(c1, c1, temb)
        self.mid_attn = Transformer2DModel(c1, 2, CONTEXT_DIM, sdpa=True)
        self.mid1 = ResnetBlock2D(c1, c1, temb)
        self.up1 = ResnetBlock2D(c1 + c1, c1, temb)
        self.up1_sample = Upsample2D(c1)
        self.up0 = ResnetBlock2D(c1 + c1, c0, temb)
        self.up0_sample = Upsample2D(c0)
        self.up_last = ResnetBlock2D(c0 + c0, c0, temb)
        self.conv_norm_out = nn.GroupNorm(4, c0, epsilon=1e-5)
        self.conv_out = nn.Conv2D(c0, 4, 3, padding=1)

    def forward(self, x, timestep, context):
        timestep = timestep.expand([x.shape[0]])  # one timestep for the batch, or one each
        emb = self.time_embedding(get_timestep_embedding(timestep, self.c0))
        s0 = self.conv_in(x)
        s1 = self.down0(s0, emb)
        s3 = self.down1(self.down0_sample(s1), emb)
        s4 = self.down1_sample(s3)
        h = self.mid1(self.mid_attn(self.mid0(s4, emb), context), emb)
        # ppdiffusers' forward_upsample_size: to the skip's size (odd sizes), else by 2.
        h = self.up1_sample(self.up1(paddle.concat([h, s4], axis=1), emb), paddle.shape(s3)[2:])
        h = self.up0_sample(self.up0(paddle.concat([h, s3], axis=1), emb))
        h = self.up_last(paddle.concat([h, s1], axis=1), emb) + s0
        return self.conv_out(F.silu(self.conv_norm_out(h)))


# --- PaddleSeg's layers ------------------------------------------------------------------------


class ConvBNReLU(nn.Layer):
    """PaddleSeg's layers.ConvBNReLU / ConvBN: Conv2D with padding='same' by default (Paddle's
    SAME padding algorithm), BatchNorm (SyncBatchNorm on the CPU), ReLU."""

    def __init__(self, cin, cout, k, relu=True, padding="same", **kwargs):
        super().__init__()
        self._conv = nn.Conv2D(cin, cout, k, padding=padding, **kwargs)
        self._batch_norm = nn.BatchNorm2D(cout)
        self.relu = relu

    def forward(self, x):
        x = self._batch_norm(self._conv(x))
        return F.relu(x) if self.relu else x


class SeparableConvBNReLU(nn.Layer):
    """PaddleSeg's SeparableConvBNReLU: a depthwise ConvBN (dilated in ASPP), a pointwise
    ConvBNReLU."""

    def __init__(self, cin, cout, k, dilation=1):
        super().__init__()
        self.depthwise_conv = ConvBNReLU(
            cin, cin, k, relu=False, groups=cin, dilation=dilation, bias_attr=False
        )
        self.piontwise_conv = ConvBNReLU(cin, cout, 1, groups=1, bias_attr=False)

    def forward(self, x):
        return self.piontwise_conv(self.depthwise_conv(x))


class ResNetConvBN(nn.Layer):
    """PaddleSeg's resnet_vd ConvBNLayer: padding (k-1)/2 undilated, 0 dilated (the block pads
    by F.pad), the vd average pool before a strided shortcut (AvgPool2D ceil_mode)."""

    def __init__(self, cin, cout, k, stride=1, dilation=1, is_vd_mode=False, act=None):
        super().__init__()
        self.is_vd_mode = is_vd_mode
        self._pool2d_avg = nn.AvgPool2D(2, 2, 0, ceil_mode=True)
        self._conv = nn.Conv2D(
            cin,
            cout,
            k,
            stride,
            padding=(k - 1) // 2 if dilation == 1 else 0,
            dilation=dilation,
            bias_attr=False,
        )
        self._batch_norm = nn.BatchNorm2D(cout)
        self.act = act

    def forward(self, x):
        if self.is_vd_mode:
            x = self._pool2d_avg(x)
        y = self._batch_norm(self._conv(x))
        return F.relu(y) if self.act == "relu" else y


class BasicBlockVd(nn.Layer):
    """PaddleSeg's resnet_vd BasicBlock with its dilation: F.pad by the dilation, then the
    unpadded dilated conv."""

    def __init__(self, cin, cout, stride, shortcut, if_first=False, dilation=1):
        super().__init__()
        self.dilation = dilation
        self.conv0 = ResNetConvBN(cin, cout, 3, stride, act="relu")
        self.conv1 = ResNetConvBN(cout, cout, 3, dilation=dilation)
        self.short = None
        if not shortcut:
            self.short = ResNetConvBN(cin, cout, 1, is_vd_mode=not if_first and stride != 1)

    def forward(self, x):
        y = self.conv0(x)
        if self.dilation > 1:
            d = self.dilation
            y = F.pad(y, [d, d, d, d])
        y = self.conv1(y)
        short = x if self.short is None else self.short(x)
        return F.relu(paddle.add(short, y))


class ResNetVdDilated(nn.Layer):
    """ResNet18-vd at output stride 8 (PaddleSeg's dilation_dict {2: 2, 3: 4}), one block per
    stage: the deep stem, max pool, stages of widths `w`; returns the low-level (stride 4)
    feature and the last."""

    def __init__(self, w=(8, 12, 16, 16)):
        super().__init__()
        self.conv1_1 = ResNetConvBN(3, 8, 3, 2, act="relu")
        self.conv1_2 = ResNetConvBN(8, 8, 3, act="relu")
        self.conv1_3 = ResNetConvBN(8, w[0], 3, act="relu")
        self.pool2d_max = nn.MaxPool2D(3, 2, 1)
        blocks, cin = [], w[0]
        for i, cout in enumerate(w):
            dilation = {2: 2, 3: 4}.get(i, 1)
            stride = 2 if i == 1 else 1
            blocks.append(
                BasicBlockVd(cin, cout, stride, cin == cout and stride == 1, i == 0, dilation)
            )
            cin = cout
        self.stages = nn.LayerList(blocks)

    def forward(self, x):
        y = self.pool2d_max(self.conv1_3(self.conv1_2(self.conv1_1(x))))
        feats = []
        for block in self.stages:
            y = block(y)
            feats.append(y)
        return feats[0], feats[-1]


class ASPPModule(nn.Layer):
    """PaddleSeg's ASPPModule (use_sep_conv, image_pooling): a 1x1 ConvBNReLU, separable dilated
    3x3 convs at each rate, image pooling (AdaptiveAvgPool2D(1), ConvBNReLU, bilinear back to
    the feature's size from paddle.shape), concatenated, a 1x1 ConvBNReLU, dropout."""

    def __init__(self, rates, cin, cout):
        super().__init__()
        self.aspp_blocks = nn.LayerList(
            [
                ConvBNReLU(cin, cout, 1, bias_attr=False)
                if r == 1
                else SeparableConvBNReLU(cin, cout, 3, dilation=r)
                for r in rates
            ]
        )
        self.global_avg_pool = nn.Sequential(
            nn.AdaptiveAvgPool2D(output_size=(1, 1)), ConvBNReLU(cin, cout, 1, bias_attr=False)
        )
        self.conv_bn_relu = ConvBNReLU(cout * (len(rates) + 1), cout, 1)
        self.dropout = nn.Dropout(p=0.1)

    def forward(self, x):
        shape = paddle.shape(x)[2:]
        outs = [block(x) for block in self.aspp_blocks]
        img_avg = F.interpolate(
            self.global_avg_pool(x), shape, mode="bilinear", align_corners=False
        )
        outs.append(img_avg)
        return self.dropout(self.conv_bn_relu(paddle.concat(outs, axis=1)))


class DeepLabV3PDecoder(nn.Layer):
    def __init__(self, classes, cin, low_cin):
        super().__init__()
        self.conv_bn_relu1 = ConvBNReLU(low_cin, 8, 1)
        self.conv_bn_relu2 = SeparableConvBNReLU(cin + 8, 16, 3)
        self.conv_bn_relu3 = SeparableConvBNReLU(16, 16, 3)
        self.conv = nn.Conv2D(16, classes, 1)

    def forward(self, x, low):
        low = self.conv_bn_relu1(low)
        x = F.interpolate(x, paddle.shape(low)[-2:], mode="bilinear", align_corners=False)
        x = paddle.concat([x, low], axis=1)
        return self.conv(self.conv_bn_relu3(self.conv_bn_relu2(x)))


class DeepLabV3P(SegFamily):
    """PaddleSeg's DeepLabV3P (ResNet-vd backbone at output stride 8, ASPP rates 1, 2, 3 at this
    size), its logits bilinear to the input's size, as exported by PaddleSeg's export.py with
    output_op 'argmax' added: the logits and paddle.argmax(axis=1, dtype='int32')."""

    inputs = [("x", [None, 3, None, None], "float32")]
    example = staticmethod(images(3, 32, 32))
    shapes = [dict(batch=1, h=29, w=35)]

    def __init__(self, classes=3):
        super().__init__()
        self.backbone = ResNetVdDilated()
        self.aspp = ASPPModule((1, 2, 3), 16, 16)
        self.decoder = DeepLabV3PDecoder(classes, 16, 8)

    def forward(self, x):
        low, feat = self.backbone(x)
        logit = self.decoder(self.aspp(feat), low)
        logit = F.interpolate(logit, paddle.shape(x)[2:], mode="bilinear", align_corners=False)
        return logit, paddle.argmax(logit, axis=1, dtype="int32")


class UNetUp(nn.Layer):
    """PaddleSeg's UNet UpSampling with use_deconv: a 2x2 stride-2 Conv2DTranspose, concat with
    the skip, two ConvBNReLU. The deconv's output_size is the skip's size, so that odd sizes
    work: paddle.shape(skip)[2:] (a tensor), or with `as_list` [skip.shape[2], skip.shape[3]]
    (dynamic dims: a list of tensors)."""

    def __init__(self, cin, cout, as_list=False):
        super().__init__()
        self.as_list = as_list
        self.deconv = nn.Conv2DTranspose(cin, cin // 2, 2, stride=2, padding=0)
        self.double_conv = nn.Sequential(
            ConvBNReLU(cin // 2 + cout, cout, 3), ConvBNReLU(cout, cout, 3)
        )

    def forward(self, x, short_cut):
        if self.as_list:
            size = [short_cut.shape[2], short_cut.shape[3]]
        else:
            size = paddle.shape(short_cut)[2:]
        x = paddle.concat([self.deconv(x, output_size=size), short_cut], axis=1)
        return self.double_conv(x)


class UNet(SegFamily):
    """PaddleSeg's UNet (use_deconv=True) at widths 8 to 32: double ConvBNReLU, max-pool
    downsampling, Conv2DTranspose upsampling to the skips' sizes (any input size), a 3x3
    classifier conv."""

    inputs = [("x", [None, 3, None, None], "float32")]
    example = staticmethod(images(3, 16, 16))
    shapes = [dict(batch=1, h=23, w=30)]

    def __init__(self, classes=3, w=(8, 16, 32)):
        super().__init__()
        self.double_conv = nn.Sequential(ConvBNReLU(3, w[0], 3), ConvBNReLU(w[0], w[0], 3))
        self.down = nn.LayerList(
            [
                nn.Sequential(
                    nn.MaxPool2D(kernel_size=2, stride=2),
                    ConvBNReLU(a, b, 3),
                    ConvBNReLU(b, b, 3),
                )
                for a, b in zip(w[:-1], w[1:])
            ]
        )
        pairs = list(reversed(list(zip(w[:-1], w[1:]))))
        self.up = nn.LayerList([UNetUp(b, a, as_list=i == 1) for i, (a, b) in enumerate(pairs)])
        self.cls = nn.Conv2D(w[0], classes, 3, stride=1, padding=1)

    def forward(self, x):
        x = self.double_conv(x)
        skips = []
        for down in self.down:
            skips.append(x)
            x = down(x)
        for up, skip in zip(self.up, reversed(skips)):
            x = up(x, skip)
        return self.cls(x)


class SPPM(nn.Layer):
    """PP-LiteSeg's simple pyramid pooling module: AdaptiveAvgPool2D at bins 1, 2, 4, each a 1x1
    ConvBNReLU, bilinear to the input's size, summed, a 3x3 ConvBNReLU."""

    def __init__(self, cin, inter, cout, bins=(1, 2, 4)):
        super().__init__()
        self.stages = nn.LayerList(
            [nn.Sequential(nn.AdaptiveAvgPool2D(b), ConvBNReLU(cin, inter, 1)) for b in bins]
        )
        self.conv_out = ConvBNReLU(inter, cout, 3)

    def forward(self, x):
        out = None
        size = paddle.shape(x)[2:]
        for stage in self.stages:
            y = F.interpolate(stage(x), size, mode="bilinear", align_corners=False)
            out = y if out is None else out + y
        return self.conv_out(out)


class UAFMSpAtten(nn.Layer):
    """PP-LiteSeg's UAFM_SpAtten: the deep feature bilinear to the shallow one's size; spatial
    attention from the channel means and maxes of both (concat, ConvBNReLU, ConvBN, sigmoid);
    x * a + y * (1 - a), a 3x3 ConvBNReLU."""

    def __init__(self, x_ch, y_ch, out_ch):
        super().__init__()
        self.conv_x = ConvBNReLU(x_ch, y_ch, 3, bias_attr=False)
        self.conv_xy_atten = nn.Sequential(
            ConvBNReLU(4, 2, 3, bias_attr=False), ConvBNReLU(2, 1, 3, relu=False, bias_attr=False)
        )
        self.conv_out = ConvBNReLU(y_ch, out_ch, 3, bias_attr=False)

    def forward(self, x, y):
        x = self.conv_x(x)
        y = F.interpolate(y, paddle.shape(x)[2:], mode="bilinear")
        feats = [
            paddle.mean(x, axis=1, keepdim=True),
            paddle.max(x, axis=1, keepdim=True),
            paddle.mean(y, axis=1, keepdim=True),
            paddle.max(y, axis=1, keepdim=True),
        ]
        atten = F.sigmoid(self.conv_xy_atten(paddle.concat(feats, axis=1)))
        return self.conv_out(x * atten + y * (1 - atten))


class PPLiteSeg(SegFamily):
    """PP-LiteSeg's decoder on a small strided conv backbone (stride 8, 16, 32 features): SPPM on
    the last, two UAFM_SpAtten fusions up the pyramid, a SegHead (ConvBNReLU, 1x1 conv), the
    logits bilinear to the input's size."""

    inputs = [("x", [None, 3, None, None], "float32")]
    example = staticmethod(images(3, 32, 64))
    shapes = [dict(batch=1, h=64, w=32)]

    def __init__(self, classes=2):
        super().__init__()
        self.stem = nn.Sequential(
            ConvBNReLU(3, 8, 3, stride=2), ConvBNReLU(8, 8, 3, stride=2), ConvBNReLU(8, 12, 3, 2)
        )
        self.stage4 = ConvBNReLU(12, 16, 3, stride=2)
        self.stage5 = ConvBNReLU(16, 16, 3, stride=2)
        self.sppm = SPPM(16, 8, 8)
        self.arm16 = UAFMSpAtten(16, 8, 8)
        self.arm8 = UAFMSpAtten(12, 8, 8)
        self.head = nn.Sequential(ConvBNReLU(8, 8, 3, bias_attr=False), nn.Conv2D(8, classes, 1))

    def forward(self, x):
        f8 = self.stem(x)
        f16 = self.stage4(f8)
        f32 = self.stage5(f16)
        y = self.arm8(f8, self.arm16(f16, self.sppm(f32)))
        return F.interpolate(self.head(y), paddle.shape(x)[2:], mode="bilinear")


# --- paddle.vision.models, tiny ----------------------------------------------------------------


class ShuffleNetV2(SegFamily):
    """paddle.vision.models.shufflenet_v2_x0_25 (its InvertedResidualDS / InvertedResidual and
    channel_shuffle, which reshapes by x.shape: a fixed height and width), each stage cut to its
    strided unit (and the first stage's stride-1 unit: split, concat, shuffle), 10 classes."""

    inputs = [("x", [None, 3, 32, 32], "float32")]
    example = staticmethod(images(3, 32, 32))
    shapes = [dict(batch=3)]

    def __init__(self, act="relu"):
        super().__init__()
        from paddle.vision.models.shufflenetv2 import ShuffleNetV2 as Net

        self.net = Net(scale=0.25, act=act, num_classes=10)
        keep = ["2_1", "2_2", "3_1", "4_1"]
        for name in [n for n in self.net._sub_layers if n[0].isdigit() and n not in keep]:
            del self.net._sub_layers[name]
        self.net._block_list = [self.net._sub_layers[n] for n in keep]

    def forward(self, x):
        return self.net(x)


class SqueezeNet(SegFamily):
    """paddle.vision.models.squeezenet1_1's layers (MakeFire: squeeze 1x1, expand 1x1 and 3x3,
    concat; ceil_mode max pools; dropout, 1x1 conv classifier, adaptive average pool) at 1/8
    width."""

    inputs = [("x", [None, 3, None, None], "float32")]
    example = staticmethod(images(3, 33, 33))
    shapes = [dict(batch=1, h=48, w=40)]

    def __init__(self):
        super().__init__()
        from paddle.vision.models.squeezenet import MakeFire

        self._conv = nn.Conv2D(3, 8, 3, stride=2)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        self._conv1 = MakeFire(8, 2, 8, 8)
        self._conv2 = MakeFire(16, 2, 8, 8)
        self._conv3 = MakeFire(16, 4, 16, 16)
        self._drop = nn.Dropout(p=0.5, mode="downscale_in_infer")
        self._conv9 = nn.Conv2D(32, 10, 1)
        self._avg_pool = nn.AdaptiveAvgPool2D(1)

    def forward(self, x):
        x = F.relu(self._conv(x))
        x = self._pool(x)
        x = self._conv2(self._conv1(x))
        x = F.max_pool2d(x, kernel_size=3, stride=2, padding=0, ceil_mode=True)
        x = self._conv3(x)
        x = F.relu(self._conv9(self._drop(x)))
        return paddle.squeeze(self._avg_pool(x), axis=[2, 3])


class DenseNet(SegFamily):
    """paddle.vision.models.densenet's layers (DenseLayer: BN-ReLU-1x1 conv, BN-ReLU-3x3 conv,
    concat; TransitionLayer: BN-ReLU-1x1 conv, 2x2 average pool) in two dense blocks."""

    inputs = [("x", [None, 3, None, None], "float32")]
    example = staticmethod(images(3, 32, 32))
    shapes = [dict(batch=1, h=24, w=40)]

    def __init__(self, growth=4, bn_size=2):
        super().__init__()
        from paddle.vision.models.densenet import BNACConvLayer, DenseBlock, TransitionLayer

        self.conv1_func = BNACConvLayer(3, 8, 7, stride=2, pad=3, act="relu")
        self.pool2d_max = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.block1 = DenseBlock(8, 2, bn_size, growth, 0.0, "conv2")
        self.trans1 = TransitionLayer(8 + 2 * growth, 8)
        self.block2 = DenseBlock(8, 2, bn_size, growth, 0.0, "conv3")
        self.batch_norm = nn.BatchNorm(8 + 2 * growth, act="relu")
        self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        self.out = nn.Linear(8 + 2 * growth, 10)

    def forward(self, x):
        x = self.pool2d_max(self.conv1_func(x))
        x = self.block2(self.trans1(self.block1(x)))
        x = paddle.flatten(self.pool2d_avg(self.batch_norm(x)), start_axis=1)
        return self.out(x)


# name: constructor. The first four are fixtures (tests/python/test_paddle_seg.py); the
# paddle.vision.models ones load, match and fine-tune in Tide as well but bring no op, attribute or
# shape path that the fixtures lack, so they are not saved (export them with --only).
FIXTURES = ["seg_diffusion_unet", "seg_deeplabv3p", "seg_unet", "seg_ppliteseg"]
SEG_MODELS = {
    "seg_diffusion_unet": DiffusionUNet,
    "seg_deeplabv3p": DeepLabV3P,
    "seg_unet": UNet,
    "seg_ppliteseg": PPLiteSeg,
    "seg_shufflenet_v2": ShuffleNetV2,
    "seg_squeezenet": SqueezeNet,
    "seg_densenet": DenseNet,
}


# --- export ------------------------------------------------------------------------------------


if __name__ == "__main__":  # export (tools/paddle_fixture_export.py)
    import paddle_fixture_export

    paddle_fixture_export.main(SEG_MODELS, FIXTURES, __doc__.split("\n")[0])
