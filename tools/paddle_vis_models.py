"""Small versions of today's image backbones as PaddleClas writes them in Paddle 3.x
(ppcls/arch/backbone: swin_transformer.py, convnext.py, efficientnet.py, mobilenet_v3.py's SE) and
of two time-series forecasters (PatchTST with RevIN, N-BEATS), at 2 stages and few channels, so
that each fixture stays a few hundred KB. Each model has the interface of paddle_family_models
(`inputs`, `example(rng)`, `randomize_weights(rng)`) and `alt_examples(rng)`, feeds of other batch
sizes and image / series sizes where the model allows them.

    python tools/paddle_vis_models.py OUT [NAME ...]   # Paddle 3.x: OUT/<name>/, PIR programs

saves each model by paddle.jit.save and records Paddle's executor's outputs as
tools/paddle_export.py's record does (input.npy / inputs.npz, expected.npy / .npz, info.json,
which also holds the gap of Paddle's plain predictor), plus `alt.npz` (for each alt example i, its
feed "i/in/<name>" and Paddle's outputs "i/out/<j>") and `grads.npz`: Paddle's dygraph gradients
of sum(out0 * R) w.r.t. every parameter ("grad/<name>") and every input ("xgrad/<feed name>"),
and R ("R"), for the fine-tuning check."""

import json
import os
import sys

# PIR programs (Paddle 3.x's default), before paddle (and paddle_export) is imported.
os.environ.setdefault("FLAGS_enable_pir_api", "1")

import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.nn.functional as F  # noqa: E402
from paddle import nn  # noqa: E402


class Vis(nn.Layer):
    """Random weights with activations of a sane scale: convolutions and linear layers by He's
    normal (fan-in), other parameters normal 0.2, normalisation scales in [0.5, 1.5], batch norm
    statistics away from 0 / 1, so that a kernel ignoring one of them shows."""

    def randomize_weights(self, rng):
        def put(p, a):
            p.set_value(a.astype(np.float32))

        with paddle.no_grad():
            for p in self.parameters():
                put(p, rng.normal(0, 0.2, p.shape))
            for sub in self.sublayers():
                if isinstance(sub, (nn.Conv2D, nn.Linear)):
                    w = sub.weight
                    fan_in = int(np.prod(w.shape[1:])) if isinstance(sub, nn.Conv2D) else w.shape[0]
                    put(w, rng.normal(0, np.sqrt(2.0 / fan_in), w.shape))
                    if sub.bias is not None:
                        put(sub.bias, rng.uniform(-0.1, 0.1, sub.bias.shape))
                elif isinstance(sub, (nn.BatchNorm, nn.BatchNorm1D, nn.BatchNorm2D)):
                    c = sub.weight.shape[0]
                    put(sub.weight, rng.uniform(0.5, 1.5, c))
                    put(sub.bias, rng.uniform(-0.2, 0.2, c))
                    put(sub._mean, rng.uniform(-0.2, 0.2, c))
                    put(sub._variance, rng.uniform(0.5, 1.5, c))
                elif isinstance(sub, RevIN):  # its denormalisation divides by the weight
                    put(sub.affine_weight, rng.uniform(0.5, 1.5, sub.affine_weight.shape))
                elif isinstance(sub, (nn.LayerNorm, LayerNorm2d)):
                    put(sub.weight, rng.uniform(0.5, 1.5, sub.weight.shape))
                    put(sub.bias, rng.uniform(-0.2, 0.2, sub.bias.shape))


def images(*shapes):
    """example: the first shape; alt_examples: the others."""

    def make(shape):
        return lambda rng: {"x": rng.standard_normal(shape).astype(np.float32)}

    return staticmethod(make(shapes[0])), staticmethod(
        lambda rng: [make(s)(rng) for s in shapes[1:]]
    )


def drop_path(x, drop_prob=0.0, training=False):
    """PaddleClas's drop_path (stochastic depth): identity in eval."""
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = paddle.to_tensor(1 - drop_prob, dtype=x.dtype)
    shape = (paddle.shape(x)[0],) + (1,) * (x.ndim - 1)
    random_tensor = paddle.floor(keep_prob + paddle.rand(shape, dtype=x.dtype))
    return x.divide(keep_prob) * random_tensor


class DropPath(nn.Layer):
    def __init__(self, drop_prob=None):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training)


class Mlp(nn.Layer):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))


# --- Swin Transformer (PaddleClas swin_transformer.py; PaddleDetection's padded form) ----------


def window_partition(x, window_size):
    """[B, H, W, C] -> [B * nW, ws, ws, C]."""
    B, H, W, C = x.shape
    x = x.reshape([-1, H // window_size, window_size, W // window_size, window_size, C])
    return x.transpose([0, 1, 3, 2, 4, 5]).reshape([-1, window_size, window_size, C])


def window_reverse(windows, window_size, H, W, C):
    x = windows.reshape([-1, H // window_size, W // window_size, window_size, window_size, C])
    return x.transpose([0, 1, 3, 2, 4, 5]).reshape([-1, H, W, C])


def shifted_window_mask(H, W, window_size, shift_size):
    """Swin's attention mask of a shifted window partition: the regions written into a zero
    image by slice assignments, partitioned, compared pairwise, -100 where they differ.
    PaddleClas computes it once (a buffer), PaddleDetection in forward (set_value ops)."""
    img_mask = paddle.zeros([1, H, W, 1], dtype="float32")
    h_slices = (
        slice(0, -window_size),
        slice(-window_size, -shift_size),
        slice(-shift_size, None),
    )
    w_slices = h_slices
    cnt = 0
    for h in h_slices:
        for w in w_slices:
            img_mask[:, h, w, :] = cnt
            cnt += 1
    mask_windows = window_partition(img_mask, window_size)
    mask_windows = mask_windows.reshape([-1, window_size * window_size])
    attn_mask = mask_windows.unsqueeze(1) - mask_windows.unsqueeze(2)
    huns = -100.0 * paddle.ones_like(attn_mask)
    return huns * (attn_mask != 0).astype("float32")


class WindowAttention(nn.Layer):
    """Window multi-head self attention with the relative position bias: a parameter table
    [(2ws-1)^2, heads] gathered by `paddle.index_select` at a precomputed int64 index buffer."""

    def __init__(self, dim, window_size, num_heads):
        super().__init__()
        self.dim, self.window_size, self.num_heads = dim, window_size, num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.relative_position_bias_table = self.create_parameter(
            shape=((2 * window_size - 1) * (2 * window_size - 1), num_heads),
            default_initializer=nn.initializer.Constant(0.0),
        )
        coords_h = paddle.arange(window_size)
        coords_w = paddle.arange(window_size)
        coords = paddle.stack(paddle.meshgrid([coords_h, coords_w]))  # 2, Wh, Ww
        coords_flatten = paddle.flatten(coords, 1)
        relative_coords = coords_flatten.unsqueeze(2) - coords_flatten.unsqueeze(1)
        relative_coords = relative_coords.transpose([1, 2, 0])
        relative_coords[:, :, 0] += window_size - 1
        relative_coords[:, :, 1] += window_size - 1
        relative_coords[:, :, 0] *= 2 * window_size - 1
        self.register_buffer("relative_position_index", relative_coords.sum(-1))
        self.qkv = nn.Linear(dim, dim * 3)
        self.attn_drop = nn.Dropout(0.1)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(0.1)
        self.softmax = nn.Softmax(axis=-1)

    def forward(self, x, mask=None):
        B_, N, C = x.shape
        qkv = (
            self.qkv(x)
            .reshape([-1, N, 3, self.num_heads, C // self.num_heads])
            .transpose([2, 0, 3, 1, 4])
        )
        q, k, v = qkv[0], qkv[1], qkv[2]
        q = q * self.scale
        attn = paddle.mm(q, k.transpose([0, 1, 3, 2]))
        index = self.relative_position_index.reshape([-1])
        bias = paddle.index_select(self.relative_position_bias_table, index)
        ws2 = self.window_size * self.window_size
        bias = bias.reshape([ws2, ws2, -1]).transpose([2, 0, 1])
        attn = attn + bias.unsqueeze(0)
        if mask is not None:
            nW = mask.shape[0]
            attn = attn.reshape([-1, nW, self.num_heads, N, N]) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.reshape([-1, self.num_heads, N, N])
        attn = self.attn_drop(self.softmax(attn))
        x = paddle.mm(attn, v).transpose([0, 2, 1, 3]).reshape([-1, N, C])
        return self.proj_drop(self.proj(x))


class WindowAttentionV2(nn.Layer):
    """Swin V2's (PaddleClas swin_transformer_v2.py): cosine attention (F.normalize of q and k)
    scaled by exp of a learned logit scale clipped from above, the continuous relative position
    bias (an MLP over a log-spaced coordinate table buffer, gathered by indexing with the index
    buffer, 16 * sigmoid), and the qkv bias made of q_bias, zeros_like(v_bias), v_bias by
    concat into F.linear."""

    def __init__(self, dim, window_size, num_heads, cpb_hidden=32):
        super().__init__()
        self.dim, self.window_size, self.num_heads = dim, window_size, num_heads
        self.logit_scale = self.create_parameter(
            [num_heads, 1, 1], default_initializer=nn.initializer.Constant(np.log(10.0))
        )
        self.cpb_mlp = nn.Sequential(
            nn.Linear(2, cpb_hidden), nn.ReLU(), nn.Linear(cpb_hidden, num_heads, bias_attr=False)
        )
        rel = paddle.arange(-(window_size - 1), window_size, dtype="float32")
        table = paddle.stack(paddle.meshgrid([rel, rel])).transpose([1, 2, 0]).unsqueeze(0)
        table[:, :, :, 0] /= window_size - 1
        table[:, :, :, 1] /= window_size - 1
        table *= 8  # normalize to -8, 8
        table = paddle.sign(table) * paddle.log2(paddle.abs(table) + 1.0) / np.log2(8)
        self.register_buffer("relative_coords_table", table)
        coords = paddle.stack(paddle.meshgrid([paddle.arange(window_size)] * 2))
        coords_flatten = paddle.flatten(coords, 1)
        relative_coords = coords_flatten.unsqueeze(2) - coords_flatten.unsqueeze(1)
        relative_coords = relative_coords.transpose([1, 2, 0])
        relative_coords[:, :, 0] += window_size - 1
        relative_coords[:, :, 1] += window_size - 1
        relative_coords[:, :, 0] *= 2 * window_size - 1
        self.register_buffer("relative_position_index", relative_coords.sum(-1))
        self.qkv = nn.Linear(dim, dim * 3, bias_attr=False)
        self.q_bias = self.create_parameter([dim], default_initializer=nn.initializer.Constant(0.0))
        self.v_bias = self.create_parameter([dim], default_initializer=nn.initializer.Constant(0.0))
        self.proj = nn.Linear(dim, dim)
        self.softmax = nn.Softmax(axis=-1)

    def forward(self, x, mask=None):
        B_, N, C = x.shape
        qkv_bias = paddle.concat((self.q_bias, paddle.zeros_like(self.v_bias), self.v_bias))
        qkv = F.linear(x=x, weight=self.qkv.weight, bias=qkv_bias)
        qkv = qkv.reshape([-1, N, 3, self.num_heads, C // self.num_heads]).transpose(
            [2, 0, 3, 1, 4]
        )
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = F.normalize(q, axis=-1) @ F.normalize(k, axis=-1).transpose([0, 1, 3, 2])
        logit_scale = paddle.clip(self.logit_scale, max=float(np.log(1.0 / 0.01))).exp()
        attn = attn * logit_scale
        table = self.cpb_mlp(self.relative_coords_table).reshape([-1, self.num_heads])
        ws2 = self.window_size * self.window_size
        bias = table[self.relative_position_index.reshape([-1])].reshape([ws2, ws2, -1])
        bias = 16 * F.sigmoid(bias.transpose([2, 0, 1]))
        attn = attn + bias.unsqueeze(0)
        if mask is not None:
            nW = mask.shape[0]
            attn = attn.reshape([-1, nW, self.num_heads, N, N]) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.reshape([-1, self.num_heads, N, N])
        attn = self.softmax(attn)
        x = (attn @ v).transpose([0, 2, 1, 3]).reshape([-1, N, C])
        return self.proj(x)


class SwinTransformerBlock(nn.Layer):
    """Pre-norm window attention (shifted by `paddle.roll` when shift_size > 0) and MLP, with
    DropPath. `padded` (PaddleDetection): the map is padded to window multiples by F.pad and the
    shifted-window mask made in forward; else (PaddleClas) the resolution is fixed and the mask a
    buffer."""

    def __init__(
        self, dim, input_resolution, num_heads, window_size, shift_size, padded=False, v2=False
    ):
        super().__init__()
        self.dim, self.input_resolution, self.padded, self.v2 = dim, input_resolution, padded, v2
        self.window_size, self.shift_size = window_size, shift_size
        if not padded and min(input_resolution) <= window_size:
            self.shift_size, self.window_size = 0, min(input_resolution)
        self.norm1 = nn.LayerNorm(dim)
        attention = WindowAttentionV2 if v2 else WindowAttention
        self.attn = attention(dim, self.window_size, num_heads)
        self.drop_path = DropPath(0.1)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, dim * 2)
        if self.shift_size > 0 and not padded:
            H, W = input_resolution
            attn_mask = shifted_window_mask(H, W, self.window_size, self.shift_size)
        else:
            attn_mask = None
        self.register_buffer("attn_mask", attn_mask)

    def forward(self, x):
        H, W = self.input_resolution
        B, L, C = x.shape
        ws = self.window_size
        shortcut = x
        if not self.v2:  # V2 normalises after attention and MLP (res-post-norm)
            x = self.norm1(x)
        x = x.reshape([-1, H, W, C])
        mask = self.attn_mask
        Hp, Wp = H, W
        if self.padded:
            pad_r, pad_b = (ws - W % ws) % ws, (ws - H % ws) % ws
            x = F.pad(x, [0, 0, 0, pad_r, 0, pad_b, 0, 0])  # NHWC: W then H at the end
            Hp, Wp = H + pad_b, W + pad_r
            if self.shift_size > 0:
                mask = shifted_window_mask(Hp, Wp, ws, self.shift_size)
        if self.shift_size > 0:
            x = paddle.roll(x, shifts=(-self.shift_size, -self.shift_size), axis=(1, 2))
        x_windows = window_partition(x, ws).reshape([-1, ws * ws, C])
        attn_windows = self.attn(x_windows, mask=mask).reshape([-1, ws, ws, C])
        x = window_reverse(attn_windows, ws, Hp, Wp, C)
        if self.shift_size > 0:
            x = paddle.roll(x, shifts=(self.shift_size, self.shift_size), axis=(1, 2))
        if self.padded and (Hp > H or Wp > W):
            x = x[:, :H, :W, :]
        x = x.reshape([-1, H * W, C])
        if self.v2:
            x = shortcut + self.drop_path(self.norm1(x))
            return x + self.drop_path(self.norm2(self.mlp(x)))
        x = shortcut + self.drop_path(x)
        return x + self.drop_path(self.mlp(self.norm2(x)))


class PatchMerging(nn.Layer):
    """The four strided slices x[:, i::2, j::2, :] concatenated on channels, LayerNorm, a linear
    reduction 4C -> 2C."""

    def __init__(self, input_resolution, dim):
        super().__init__()
        self.input_resolution = input_resolution
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias_attr=False)
        self.norm = nn.LayerNorm(4 * dim)

    def forward(self, x):
        H, W = self.input_resolution
        B, L, C = x.shape
        x = x.reshape([-1, H, W, C])
        x0 = x[:, 0::2, 0::2, :]
        x1 = x[:, 1::2, 0::2, :]
        x2 = x[:, 0::2, 1::2, :]
        x3 = x[:, 1::2, 1::2, :]
        x = paddle.concat([x0, x1, x2, x3], -1).reshape([-1, H * W // 4, 4 * C])
        return self.reduction(self.norm(x))


class PatchEmbed(nn.Layer):
    def __init__(self, patch_size, in_chans, embed_dim):
        super().__init__()
        self.proj = nn.Conv2D(in_chans, embed_dim, patch_size, stride=patch_size)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose([0, 2, 1])  # B Ph*Pw C
        return self.norm(x)


class SwinTransformer(Vis):
    """PaddleClas's SwinTransformer at 2 stages: patch embedding (4x4 conv, LayerNorm), an
    absolute-position-free stage of a plain and a shifted window block (window 4, shift 2, 2
    heads), patch merging, a second stage of one block (its resolution equals the window: no
    shift, as PaddleClas sets it), LayerNorm, AdaptiveAvgPool1D over tokens, flatten, the head.
    `padded` (PaddleDetection's form): a 40x40 image, 10x10 tokens padded to 12x12 by F.pad in
    each block (5x5 padded to 8x8 in the second stage, two blocks there), the shifted-window
    mask made in forward by slice assignments (set_value)."""

    def __init__(
        self, padded=False, img=32, patch=4, dims=(16, 32), heads=(2, 4), classes=10, v2=False
    ):
        super().__init__()
        self.padded = padded
        self.patch_embed = PatchEmbed(patch, 3, dims[0])
        self.pos_drop = nn.Dropout(0.1)
        r = img // patch
        self.stage1 = nn.LayerList(
            SwinTransformerBlock(dims[0], (r, r), heads[0], 4, s, padded, v2) for s in (0, 2)
        )
        self.merge = PatchMerging((r, r), dims[0])
        r //= 2
        # At 4x4 (the window) PaddleClas turns the shift off: one block; padded to 8x8, two.
        shifts = (0, 2) if padded else (0,)
        self.stage2 = nn.LayerList(
            SwinTransformerBlock(dims[1], (r, r), heads[1], 4, s, padded, v2) for s in shifts
        )
        self.norm = nn.LayerNorm(dims[1])
        self.avgpool = nn.AdaptiveAvgPool1D(1)
        self.head = nn.Linear(dims[1], classes)
        self.inputs = [("x", [None, 3, img, img], "float32")]
        self.shape = [3, img, img]

    def forward(self, x):
        x = self.pos_drop(self.patch_embed(x))
        for blk in self.stage1:
            x = blk(x)
        x = self.merge(x)
        for blk in self.stage2:
            x = blk(x)
        x = self.norm(x)  # B L C
        x = self.avgpool(x.transpose([0, 2, 1]))  # B C 1
        return self.head(paddle.flatten(x, 1))

    def example(self, rng):
        return {"x": rng.standard_normal([2] + self.shape).astype(np.float32)}

    def alt_examples(self, rng):
        batches = (3,) if self.padded else (1, 3)
        return [{"x": rng.standard_normal([b] + self.shape).astype(np.float32)} for b in batches]


class SwinPadded(SwinTransformer):
    def __init__(self):
        super().__init__(padded=True, img=40, dims=(8, 16), heads=(2, 2))


class SwinV2(SwinTransformer):
    """PaddleClas's SwinTransformerV2 at the same size: WindowAttentionV2, post-norm blocks."""

    def __init__(self):
        super().__init__(v2=True)

    def randomize_weights(self, rng):
        super().randomize_weights(rng)
        with paddle.no_grad():  # a logit scale (log) around log 10, one head above the clip
            for sub in self.sublayers():
                if isinstance(sub, WindowAttentionV2):
                    ls = rng.uniform(1.5, 3.0, sub.logit_scale.shape)
                    ls[0] = 5.0
                    sub.logit_scale.set_value(ls.astype(np.float32))


# --- ConvNeXt (PaddleClas convnext.py) ---------------------------------------------------------


class LayerNorm2d(nn.Layer):
    """ConvNeXt's LayerNorm: channels_last by F.layer_norm, channels_first written out (mean and
    variance over axis 1 with keepdim, weight[:, None, None])."""

    def __init__(self, normalized_shape, epsilon=1e-6, data_format="channels_last"):
        super().__init__()
        self.weight = self.create_parameter(
            shape=[normalized_shape], default_initializer=nn.initializer.Constant(1.0)
        )
        self.bias = self.create_parameter(
            shape=[normalized_shape], default_initializer=nn.initializer.Constant(0.0)
        )
        self.epsilon, self.data_format = epsilon, data_format
        self.normalized_shape = (normalized_shape,)

    def forward(self, x):
        if self.data_format == "channels_last":
            return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.epsilon)
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / paddle.sqrt(s + self.epsilon)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class GRN(nn.Layer):
    """ConvNeXt V2's global response normalization (channels last): the L2 norm over H, W
    (paddle.norm, keepdim), divided by its mean over channels, gamma * (x * Nx) + beta + x."""

    def __init__(self, dim):
        super().__init__()
        zeros = nn.initializer.Constant(0.0)
        self.gamma = self.create_parameter([1, 1, 1, dim], default_initializer=zeros)
        self.beta = self.create_parameter([1, 1, 1, dim], default_initializer=zeros)

    def forward(self, x):
        Gx = paddle.norm(x, p=2, axis=(1, 2), keepdim=True)
        Nx = Gx / (Gx.mean(axis=-1, keepdim=True) + 1e-6)
        return self.gamma * (x * Nx) + self.beta + x


class ConvNeXtBlock(nn.Layer):
    """7x7 depthwise conv, to channels-last by transpose [0, 2, 3, 1], LayerNorm, pointwise
    Linear 4x, GELU, Linear back, layer scale gamma * x, back to NCHW, DropPath, residual.
    `v2`: ConvNeXt V2's block, GRN after GELU and no layer scale."""

    def __init__(self, dim, layer_scale_init_value=1e-6, v2=False):
        super().__init__()
        self.grn = GRN(4 * dim) if v2 else None
        self.dwconv = nn.Conv2D(dim, dim, 7, padding=3, groups=dim)
        self.norm = LayerNorm2d(dim, epsilon=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = None
        if not v2:
            self.gamma = self.create_parameter(
                shape=[dim], default_initializer=nn.initializer.Constant(layer_scale_init_value)
            )
        self.drop_path = DropPath(0.1)

    def forward(self, x):
        inp = x
        x = self.dwconv(x).transpose([0, 2, 3, 1])  # (N, C, H, W) -> (N, H, W, C)
        x = self.act(self.pwconv1(self.norm(x)))
        if self.grn is not None:
            x = self.grn(x)
        x = self.pwconv2(x)
        if self.gamma is not None:
            x = self.gamma * x
        x = x.transpose([0, 3, 1, 2])
        return inp + self.drop_path(x)


class ConvNeXt(Vis):
    """PaddleClas's ConvNeXt at 2 stages (dims 16, 32; depths 2, 1): the stem (4x4 stride-4
    conv, channels-first LayerNorm), the downsampling layer (channels-first LayerNorm, 2x2
    stride-2 conv), the blocks (the second stage's is ConvNeXt V2's, with GRN), global average by
    x.mean([-2, -1]), nn.LayerNorm, the head (its weight and bias scaled by head_init_scale as
    PaddleClas does). Any image size that is a multiple of 8."""

    inputs = [("x", [None, 3, None, None], "float32")]
    example, alt_examples = images([2, 3, 32, 32], [1, 3, 48, 48], [1, 3, 64, 64], [1, 3, 40, 56])

    def __init__(self, dims=(16, 32), depths=(2, 1), classes=10, head_init_scale=1.0):
        super().__init__()
        self.downsample_layers = nn.LayerList()
        self.downsample_layers.append(
            nn.Sequential(
                nn.Conv2D(3, dims[0], 4, stride=4),
                LayerNorm2d(dims[0], epsilon=1e-6, data_format="channels_first"),
            )
        )
        self.downsample_layers.append(
            nn.Sequential(
                LayerNorm2d(dims[0], epsilon=1e-6, data_format="channels_first"),
                nn.Conv2D(dims[0], dims[1], 2, stride=2),
            )
        )
        self.stages = nn.LayerList(
            nn.Sequential(*[ConvNeXtBlock(d, v2=i == 1) for _ in range(n)])
            for i, (d, n) in enumerate(zip(dims, depths))
        )
        self.norm = nn.LayerNorm(dims[-1], epsilon=1e-6)
        self.head = nn.Linear(dims[-1], classes)
        self.head_init_scale = head_init_scale

    def randomize_weights(self, rng):
        super().randomize_weights(rng)
        with paddle.no_grad():
            self.head.weight.set_value(self.head.weight * self.head_init_scale)
            self.head.bias.set_value(self.head.bias * self.head_init_scale)
            for blk in self.sublayers():
                if isinstance(blk, ConvNeXtBlock) and blk.gamma is not None:  # not 1e-6
                    blk.gamma.set_value(rng.uniform(0.5, 1.5, blk.gamma.shape).astype(np.float32))

    def forward(self, x):
        for down, stage in zip(self.downsample_layers, self.stages):
            x = stage(down(x))
        return self.head(
            self.norm(x.mean([-2, -1]))
        )  # global average pooling, (N, C, H, W) -> (N, C)


# --- EfficientNet-B0-like (PaddleClas efficientnet.py) with MobileNetV3's SE ---------------------


class ConvBNAct(nn.Layer):
    def __init__(self, cin, cout, k, stride=1, groups=1, act="swish", same=False, fmt="NCHW"):
        super().__init__()
        pad = "SAME" if same else (k - 1) // 2
        self.conv = nn.Conv2D(
            cin, cout, k, stride, pad, groups=groups, bias_attr=False, data_format=fmt
        )
        self.bn = nn.BatchNorm2D(cout, momentum=0.99, epsilon=1e-3, data_format=fmt)
        self.act = act

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.act == "swish":
            x = F.swish(x)
        elif self.act == "silu":
            x = F.silu(x)
        elif self.act == "hardswish":
            x = F.hardswish(x)
        return x


class SqueezeExcitation(nn.Layer):
    """EfficientNet's SE: AdaptiveAvgPool2D(1), 1x1 reduce (bias), swish, 1x1 expand,
    F.sigmoid, multiply; `hard`: MobileNetV3's (relu, F.hardsigmoid slope 0.2 offset 0.5)."""

    def __init__(self, c, squeezed, hard=False, fmt="NCHW"):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2D(1, data_format=fmt)
        self.reduce = nn.Conv2D(c, squeezed, 1, data_format=fmt)
        self.expand = nn.Conv2D(squeezed, c, 1, data_format=fmt)
        self.hard = hard

    def forward(self, x):
        s = self.pool(x)
        if self.hard:
            s = F.hardsigmoid(self.expand(F.relu(self.reduce(s))), slope=0.2, offset=0.5)
        else:
            s = F.sigmoid(self.expand(F.swish(self.reduce(s))))
        return paddle.multiply(x, s)


class MBConv(nn.Layer):
    """Inverted residual: 1x1 expand (when the ratio is not 1), depthwise k x k (stride 2 with
    'SAME' padding: TensorFlow's asymmetric padding, as EfficientNet's ported weights need), SE
    (squeezed to a quarter of the input channels), 1x1 project with BN and no activation, stochastic
    depth (drop connect, identity in eval) and the shortcut where the shape allows."""

    def __init__(self, cin, cout, k, stride, expand, act="swish", hard_se=False, fmt="NCHW"):
        super().__init__()
        mid = cin * expand
        self.expand = ConvBNAct(cin, mid, 1, act=act, fmt=fmt) if expand != 1 else None
        self.dw = ConvBNAct(mid, mid, k, stride, groups=mid, act=act, same=stride == 2, fmt=fmt)
        self.se = SqueezeExcitation(mid, max(1, cin // 4), hard=hard_se, fmt=fmt)
        self.project = ConvBNAct(mid, cout, 1, act=None, fmt=fmt)
        self.shortcut = stride == 1 and cin == cout
        self.drop = 0.1

    def forward(self, x):
        y = x if self.expand is None else self.expand(x)
        y = self.project(self.se(self.dw(y)))
        if self.shortcut:
            y = drop_path(y, self.drop, self.training) + x
        return y


class EfficientNet(Vis):
    """EfficientNet-B0's structure at 1/4 width and one block per stage group: the stem (3x3
    stride 2 'SAME', BN, swish), MBConv blocks (ratio 1 k3; ratio 4 k3 stride 2; ratio 4 k5 stride
    2 with silu; ratio 4 k3 with MobileNetV3's hardswish and hard-sigmoid SE, a residual), the head
    (1x1 conv, BN, swish), global average pool, dropout, flatten, fc. Any image size. `fmt`
    "NHWC": every conv, batch norm and pool channels-last (PaddleClas's data_format option)."""

    inputs = [("x", [None, 3, None, None], "float32")]
    example, alt_examples = images([2, 3, 32, 32], [1, 3, 48, 48], [3, 3, 64, 64], [2, 3, 33, 47])

    def __init__(self, classes=10, fmt="NCHW"):
        super().__init__()
        self.stem = ConvBNAct(3, 8, 3, 2, same=True, fmt=fmt)
        self.blocks = nn.Sequential(
            MBConv(8, 8, 3, 1, 1, fmt=fmt),
            MBConv(8, 12, 3, 2, 4, fmt=fmt),
            MBConv(12, 16, 5, 2, 4, act="silu", fmt=fmt),
            MBConv(16, 16, 3, 1, 4, act="hardswish", hard_se=True, fmt=fmt),
        )
        self.head = ConvBNAct(16, 32, 1, fmt=fmt)
        self.pool = nn.AdaptiveAvgPool2D(1, data_format=fmt)
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.pool(self.head(self.blocks(self.stem(x))))
        return self.fc(self.dropout(paddle.flatten(x, 1)))


class EfficientNetNHWC(EfficientNet):
    inputs = [("x", [None, None, None, 3], "float32")]
    example, alt_examples = images([2, 32, 32, 3], [1, 48, 48, 3], [2, 33, 47, 3])

    def __init__(self):
        super().__init__(fmt="NHWC")


# --- PatchTST with RevIN (PaddleTS) ------------------------------------------------------------


class RevIN(nn.Layer):
    """Reversible instance normalization: mean and standard deviation over time (keepdim,
    detached), a learnable affine; `denorm` undoes it with the same statistics. PaddleTS keeps the
    statistics on the layer (self.mean, self.stdev); Paddle 3.3.1's paddle.jit.save then saves
    the tensors a dygraph call before the save left there as parameters and denormalises with
    them (a program right at the traced batch only), so they are returned and passed here."""

    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.affine_weight = self.create_parameter(
            [num_features], default_initializer=nn.initializer.Constant(1.0)
        )
        self.affine_bias = self.create_parameter(
            [num_features], default_initializer=nn.initializer.Constant(0.0)
        )

    def forward(self, x, mode, stats=None):
        if mode == "norm":
            mean = paddle.mean(x, axis=1, keepdim=True).detach()
            stdev = paddle.sqrt(
                paddle.var(x, axis=1, keepdim=True, unbiased=False) + self.eps
            ).detach()
            x = (x - mean) / stdev
            return x * self.affine_weight + self.affine_bias, (mean, stdev)
        mean, stdev = stats
        x = (x - self.affine_bias) / (self.affine_weight + self.eps * self.eps)
        return x * stdev + mean


class TSTEncoderLayer(nn.Layer):
    """PatchTST's encoder layer: multi-head attention (q, k, v projections, scaled matmul,
    softmax), residual, BatchNorm1D over d_model (transposed in and out), a GELU feed-forward,
    residual, BatchNorm1D."""

    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.n_heads = n_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.to_out = nn.Linear(d_model, d_model)
        self.norm_attn = nn.BatchNorm1D(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.norm_ffn = nn.BatchNorm1D(d_model)
        self.dropout = nn.Dropout(0.1)

    def forward(self, src):
        bs, n, d = src.shape
        h, dk = self.n_heads, d // self.n_heads
        q = self.W_Q(src).reshape([-1, n, h, dk]).transpose([0, 2, 1, 3])
        k = self.W_K(src).reshape([-1, n, h, dk]).transpose([0, 2, 3, 1])
        v = self.W_V(src).reshape([-1, n, h, dk]).transpose([0, 2, 1, 3])
        attn = F.softmax(paddle.matmul(q, k) * (dk**-0.5), axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([-1, n, d])
        src = src + self.dropout(self.to_out(out))
        src = self.norm_attn(src.transpose([0, 2, 1])).transpose([0, 2, 1])
        src = src + self.dropout(self.ff(src))
        return self.norm_ffn(src.transpose([0, 2, 1])).transpose([0, 2, 1])


class PatchTST(Vis):
    """PatchTST (channel independent): RevIN, [B, L, C] -> [B, C, L], the end padded by
    replicating the last value (nn.Pad1D 'replicate'), patches of 8 every 4 by F.unfold of
    [B*C, 1, 1, L] (Paddle's Tensor.unfold is dygraph-only), a linear patch embedding plus a
    learned positional table, a 2-layer encoder over the patches, the flatten head
    (nn.Flatten(start_axis=-2), Linear to the horizon), RevIN's denormalisation. Input
    [B, 32, 3], forecast [B, 8, 3]; the series length is fixed by the head, the batch is not."""

    SEQ, CH, PATCH, STRIDE, D, PRED = 32, 3, 8, 4, 16, 8
    inputs = [("x", [None, SEQ, CH], "float32")]

    def __init__(self, layers=2):
        super().__init__()
        self.revin = RevIN(self.CH)
        self.padding = nn.Pad1D((0, self.STRIDE), mode="replicate")
        self.n = (self.SEQ + self.STRIDE - self.PATCH) // self.STRIDE + 1
        self.W_P = nn.Linear(self.PATCH, self.D)
        self.W_pos = self.create_parameter(
            [self.n, self.D], default_initializer=nn.initializer.Uniform(-0.02, 0.02)
        )
        self.layers = nn.LayerList(TSTEncoderLayer(self.D, 2, 32) for _ in range(layers))
        self.flatten = nn.Flatten(start_axis=-2)
        self.linear = nn.Linear(self.D * self.n, self.PRED)

    def forward(self, x):
        x, stats = self.revin(x, "norm")
        x = x.transpose([0, 2, 1])  # B C L
        x = self.padding(x)
        c = self.CH
        p = F.unfold(x.reshape([-1, 1, 1, x.shape[-1]]), [1, self.PATCH], strides=[1, self.STRIDE])
        p = p.transpose([0, 2, 1])  # [B*C, N, P]
        z = self.W_P(p) + self.W_pos
        for layer in self.layers:
            z = layer(z)
        z = z.reshape([-1, c, self.n, self.D]).transpose([0, 1, 3, 2])  # B C D N
        y = self.linear(self.flatten(z))  # B C PRED
        return self.revin(y.transpose([0, 2, 1]), "denorm", stats)

    @staticmethod
    def example(rng, batch=2):
        t = np.arange(PatchTST.SEQ)[None, :, None]
        x = 3.0 + np.sin(t * np.array([0.3, 0.5, 0.9]) + rng.uniform(0, 6, [batch, 1, 3]))
        return {"x": (x + 0.3 * rng.standard_normal(x.shape)).astype(np.float32)}

    @staticmethod
    def alt_examples(rng):
        return [PatchTST.example(rng, 1), PatchTST.example(rng, 5)]


# --- N-BEATS ----------------------------------------------------------------------------------


class NBeatsBlock(nn.Layer):
    """A 4-layer ReLU MLP to theta, then a basis: generic (linear backcast / forecast heads),
    trend (theta times a fixed polynomial basis, register_buffer) or seasonality (fixed cos / sin
    basis buffers)."""

    def __init__(self, kind, backcast, forecast, width=32, degree=2, harmonics=2):
        super().__init__()
        self.kind = kind
        self.fc = nn.LayerList(
            [nn.Linear(backcast, width)] + [nn.Linear(width, width) for _ in range(3)]
        )
        if kind == "generic":
            self.theta_b, self.theta_f = nn.Linear(width, 8), nn.Linear(width, 8)
            self.back, self.fore = nn.Linear(8, backcast), nn.Linear(8, forecast)
            return
        tb = np.arange(backcast) / backcast
        tf = np.arange(forecast) / forecast
        if kind == "trend":
            basis_b = np.stack([tb**i for i in range(degree + 1)])
            basis_f = np.stack([tf**i for i in range(degree + 1)])
        else:
            basis_b = np.concatenate(
                [np.cos(2 * np.pi * k * tb)[None] for k in range(harmonics)]
                + [np.sin(2 * np.pi * k * tb)[None] for k in range(1, harmonics + 1)]
            )
            basis_f = np.concatenate(
                [np.cos(2 * np.pi * k * tf)[None] for k in range(harmonics)]
                + [np.sin(2 * np.pi * k * tf)[None] for k in range(1, harmonics + 1)]
            )
        self.theta = nn.Linear(width, 2 * basis_b.shape[0], bias_attr=False)
        self.register_buffer("basis_b", paddle.to_tensor(basis_b.astype(np.float32)))
        self.register_buffer("basis_f", paddle.to_tensor(basis_f.astype(np.float32)))
        self.p = basis_b.shape[0]

    def forward(self, x):
        h = x
        for fc in self.fc:
            h = F.relu(fc(h))
        if self.kind == "generic":
            return self.back(self.theta_b(h)), self.fore(self.theta_f(h))
        theta = self.theta(h)
        tb, tf = paddle.split(theta, 2, axis=-1)
        return paddle.matmul(tb, self.basis_b), paddle.matmul(tf, self.basis_f)


class NBeats(Vis):
    """N-BEATS: generic, trend and seasonality blocks, each removing its backcast from the
    residual series and adding its forecast; input [B, 24], outputs the forecast [B, 8] and the
    last residual [B, 24]."""

    BACK, FORE = 24, 8
    inputs = [("x", [None, BACK], "float32")]

    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList(
            NBeatsBlock(k, self.BACK, self.FORE) for k in ("generic", "trend", "seasonality")
        )

    def forward(self, x):
        residuals = x
        forecast = paddle.zeros([paddle.shape(x)[0], self.FORE], dtype=x.dtype)
        for block in self.blocks:
            backcast, f = block(residuals)
            residuals = residuals - backcast
            forecast = forecast + f
        return forecast, residuals

    @staticmethod
    def example(rng, batch=2):
        t = np.arange(NBeats.BACK)[None, :]
        x = np.sin(t * 0.4 + rng.uniform(0, 6, [batch, 1])) + 0.05 * t
        return {"x": (x + 0.1 * rng.standard_normal(x.shape)).astype(np.float32)}

    @staticmethod
    def alt_examples(rng):
        return [NBeats.example(rng, 1), NBeats.example(rng, 7)]


# name: constructor; the vis fixtures (PIR programs, Paddle 3.x).
VIS_MODELS = {
    "vis_swin": SwinTransformer,
    "vis_swin_padded": SwinPadded,
    "vis_swinv2": SwinV2,
    "vis_convnext": ConvNeXt,
    "vis_efficientnet": EfficientNet,
    "vis_efficientnet_nhwc": EfficientNetNHWC,
    "vis_patchtst": PatchTST,
    "vis_nbeats": NBeats,
}


def grads(net, feed, seed):
    """Paddle's dygraph gradients of sum(out0 * R) w.r.t. each parameter of `net` (the layer
    that was saved, in eval mode), keyed "grad/<parameter name>", w.r.t. each input
    ("xgrad/<feed name>": a saliency map's, or an attack's), and R (`R`)."""
    paddle.disable_static()
    xs = [paddle.to_tensor(feed[n], stop_gradient=False) for n, _, _ in net.inputs]
    outs = net(*xs)
    out = outs[0] if isinstance(outs, (list, tuple)) else outs
    r = np.random.default_rng(seed + 1).standard_normal(out.shape).astype(np.float32)
    loss = (out * paddle.to_tensor(r)).sum()
    params = [p for p in net.parameters() if not p.stop_gradient]
    res = {"R": r, "dygraph_out0": out.numpy()}
    gs = paddle.grad(loss, params + xs)
    for p, g in zip(params, gs):
        res["grad/" + p.name] = g.numpy()
    for (n, _, _), g in zip(net.inputs, gs[len(params) :]):
        res["xgrad/" + n] = g.numpy()
    paddle.enable_static()
    return res


def main(out_root, names):
    """Each model as paddle_export.export_nn saves it (paddle.jit.save, Paddle's reference
    outputs), plus grads.npz and alt.npz."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import paddle_export as pe

    # Paddle 3.3.1's oneDNN predictor corrupts the heap on pd_op.pad (malloc aborts), as
    # paddle_export's NO_ONEDNN_PREDICTOR says, and fails on the NHWC net (its fused
    # elementwise_add broadcasts a [N, C, 1, 1]-laid bias against NHWC: 'Broadcast dimension
    # mismatch'): those cross-check Paddle's plain predictor only.
    pe.NO_ONEDNN_PREDICTOR = pe.NO_ONEDNN_PREDICTOR | {"vis_swin_padded", "vis_efficientnet_nhwc"}
    for name in names or list(VIS_MODELS):
        out_dir = pe.fresh_dir(out_root, name)
        seed = pe.SEED + sum(map(ord, name))
        rng = np.random.default_rng(seed)
        paddle.disable_static()
        paddle.seed(pe.SEED)
        net = VIS_MODELS[name]()
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
        d = os.path.join(out_dir, "expected.npy")
        first = np.load(d) if os.path.exists(d) else np.load(d[:-1] + "z")["out0"]
        gap = pe.rel_gap(g.pop("dygraph_out0"), first)
        print("%-18s dygraph vs executor gap %.2e" % (name, gap))
        assert gap < 1e-5, gap
        plain = pe.predict(prefix + ".json", prefix + ".pdiparams", feed, False)
        if os.path.exists(d):
            want = [first]
        else:
            with np.load(d[:-1] + "z") as f:
                want = [f["out%d" % i] for i in range(len(f.files))]
        info_path = os.path.join(out_dir, "info.json")
        with open(info_path) as f:
            info = json.load(f)
        info["plain_predictor_rel_gap"] = max(pe.rel_gap(w, o) for w, o in zip(want, plain))
        with open(info_path, "w") as f:
            json.dump(info, f, indent=1)
        print("%-18s plain predictor gap %.2e" % (name, info["plain_predictor_rel_gap"]))
        np.savez_compressed(os.path.join(out_dir, "grads.npz"), **g)
        alt = {}
        for i, feed in enumerate(net.alt_examples(rng)):
            outs, _ = pe.reference(prefix, "pir", feed)
            alt.update({"%d/in/%s" % (i, k): v for k, v in feed.items()})
            alt.update({"%d/out/%d" % (i, j): o for j, o in enumerate(outs)})
        np.savez(os.path.join(out_dir, "alt.npz"), **alt)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
