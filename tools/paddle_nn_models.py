"""Small models built from `paddle.nn` layers as users of PaddlePaddle 2.x write them: a BERT-style
encoder, a GPT-style decoder, LSTM / GRU text classifiers and a vision transformer. Reduced widths
(hidden 32, 2 layers, a vocabulary of 100) keep the fixtures small; the ops are those of the full
models. Used by tools/paddle_export.py; each model's `example(rng)` gives its feed."""

import numpy as np
import paddle
from paddle import nn
from paddle.nn import functional as F

VOCAB, HIDDEN, HEADS, FFN, LAYERS, MAX_LEN = 100, 32, 4, 64, 2, 32


def ids_and_lengths(rng, batch=2, seq=12):
    """Random ids in [1, VOCAB) with 0 (the padding id) past each row's length; lengths
    decreasing from seq so that the masks and SequenceLength matter."""
    lengths = np.array([seq - 5 * i for i in range(batch)], dtype=np.int64)
    ids = rng.integers(1, VOCAB, (batch, seq)).astype(np.int64)
    for i, n in enumerate(lengths):
        ids[i, n:] = 0
    return ids, lengths


class BertEncoder(nn.Layer):
    """Word + position + token type embeddings, layer norm, dropout, a post-norm
    nn.TransformerEncoder (gelu) whose attention mask hides the padding, and BERT's pooler (the
    first token through a tanh linear)."""

    inputs = [("ids", [None, None], "int64")]

    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN, padding_idx=0)
        self.position = nn.Embedding(MAX_LEN, HIDDEN)
        self.token_type = nn.Embedding(2, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN)
        self.dropout = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(HIDDEN, HEADS, FFN, dropout=0.1, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, LAYERS)
        self.pooler = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, ids):
        ones = paddle.ones_like(ids)
        positions = paddle.cumsum(ones, axis=-1) - ones
        emb = self.word(ids) + self.position(positions) + self.token_type(paddle.zeros_like(ids))
        x = self.dropout(self.norm(emb))
        # [B, 1, 1, S]: -1e4 where the id is padding, as PaddleNLP's BERT builds it.
        mask = paddle.unsqueeze((ids == 0).astype(x.dtype) * -1e4, axis=[1, 2])
        x = self.encoder(x, mask)
        return paddle.tanh(self.pooler(x[:, 0]))

    @staticmethod
    def example(rng):
        return {"ids": ids_and_lengths(rng)[0]}


class GptDecoder(nn.Layer):
    """Token and position embeddings, a pre-norm nn.TransformerEncoder under a causal mask made
    with paddle.tril / paddle.triu at the run's sequence length, the final layer norm and the tied output
    projection (logits over the vocabulary)."""

    inputs = [("ids", [None, None], "int64")]

    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.position = nn.Embedding(MAX_LEN, HIDDEN)
        layer = nn.TransformerEncoderLayer(
            HIDDEN, HEADS, FFN, dropout=0.1, activation="gelu", normalize_before=True
        )
        self.decoder = nn.TransformerEncoder(layer, LAYERS)
        self.norm = nn.LayerNorm(HIDDEN)

    def forward(self, ids):
        seq = paddle.shape(ids)[1]
        positions = paddle.arange(seq, dtype="int64").unsqueeze(0)  # [1, S], broadcast over B
        x = self.word(ids) + self.position(positions)
        # -1e4 above the diagonal: a position sees itself and those before it.
        causal = (1 - paddle.tril(paddle.ones([seq, seq], x.dtype))) * -1e4
        x = self.decoder(x, paddle.triu(causal, diagonal=1))
        x = self.norm(x)
        return paddle.matmul(x, self.word.weight, transpose_y=True)

    @staticmethod
    def example(rng):
        return {"ids": rng.integers(0, VOCAB, (2, 10)).astype(np.int64)}


class RnnClassifier(nn.Layer):
    """Embedding, a bidirectional 2-layer nn.LSTM / nn.GRU / nn.SimpleRNN over the valid part of
    each sequence (sequence_length), the last layer's final states of both directions and the
    mean of the outputs, then a linear classifier."""

    inputs = [("ids", [None, None], "int64"), ("lengths", [None], "int64")]

    def __init__(self, cell):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, 16, padding_idx=0)
        self.rnn = {"lstm": nn.LSTM, "gru": nn.GRU, "simple_rnn": nn.SimpleRNN}[cell](
            16, 16, num_layers=2, direction="bidirect", dropout=0.1
        )
        self.cell = cell
        self.fc = nn.Linear(16 * 4, 3)

    def forward(self, ids, lengths):
        out, state = self.rnn(self.embedding(ids), sequence_length=lengths)
        h = state[0] if self.cell == "lstm" else state  # [layers * 2, B, H]
        final = paddle.concat([h[-2], h[-1]], axis=-1)
        return self.fc(paddle.concat([final, paddle.mean(out, axis=1)], axis=-1))

    @staticmethod
    def example(rng):
        ids, lengths = ids_and_lengths(rng, batch=3, seq=11)
        return {"ids": ids, "lengths": lengths}


class TinyViT(nn.Layer):
    """A vision transformer: 4x4 patches by a strided conv, a class token expanded to the batch,
    learned position embeddings, a pre-norm nn.TransformerEncoder (gelu), the class token's
    final layer norm and a linear head."""

    inputs = [("x", [None, 3, 16, 16], "float32")]

    def __init__(self, classes=10):
        super().__init__()
        self.patch = nn.Conv2D(3, HIDDEN, 4, stride=4)
        self.cls_token = self.create_parameter([1, 1, HIDDEN])
        self.pos = self.create_parameter([1, 17, HIDDEN])
        layer = nn.TransformerEncoderLayer(
            HIDDEN, HEADS, FFN, dropout=0.1, activation="gelu", normalize_before=True
        )
        self.encoder = nn.TransformerEncoder(layer, LAYERS)
        self.norm = nn.LayerNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose([0, 2, 1])  # [B, 16, HIDDEN]
        cls = self.cls_token.expand([paddle.shape(x)[0], -1, -1])
        x = paddle.concat([cls, x], axis=1) + self.pos
        x = self.norm(self.encoder(x))
        return self.head(x[:, 0])

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 3, 16, 16)).astype(np.float32)}


class ZeroD(nn.Layer):
    """A 0-D (shape []) output, Paddle 2.5+'s scalar: the mean of a linear layer's output, plus
    its max and one element picked by indexing (x[0][1]: slices dropping every dim), so the
    reductions to [], indexing to [] and an element-wise op of 0-D operands all run."""

    inputs = [("x", [3, 4], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        return paddle.mean(y) + y.max() * y[0][1]

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((3, 4)).astype(np.float32)}


class NoParams(nn.Layer):
    """A model without parameters: Paddle saves no .pdiparams for it (Paddle 3.x's PIR form is
    inference.json alone), which the loader must still take by its prefix."""

    inputs = [("x", [None, 4, 6], "float32")]

    def forward(self, x):
        y = paddle.nn.functional.relu(x) * 2.0 + paddle.tanh(x)
        return paddle.transpose(y, [0, 2, 1]).reshape([-1, 24])

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((3, 4, 6)).astype(np.float32)}


class TensorOps(nn.Layer):
    """Tensor operations whose PIR forms translate to Fluid ops Tide has: split by number and by
    sections, gather on an axis, a strided slice, argmax / argsort indices, clip, pow, log, sin,
    cos, logical_and, a float32 arange, and a causal mask filled with -inf (Paddle 3 writes the
    non-finite attribute as a string)."""

    inputs = [("x", [None, 8], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        a, b = paddle.split(y, 2, axis=1)
        c, d, e = paddle.split(y, [2, 2, 4], axis=1)
        g = paddle.gather(e, paddle.to_tensor([3, 0, 1]), axis=1)
        s = y[:, 1:8:3]
        arg = paddle.argmax(y, axis=1, keepdim=True).astype("float32")
        order = paddle.argsort(a, axis=1).astype("float32")
        clipped = paddle.clip(b, -0.2, 0.3)
        pw = paddle.pow(paddle.abs(c) + 1.0, 2.5) + paddle.log(paddle.abs(d) + 1.0)
        both = paddle.logical_and(a > 0, b < 0.1).astype("float32")
        mask = paddle.triu(paddle.full([4, 4], float("-inf")), diagonal=1)
        att = paddle.nn.functional.softmax(a.unsqueeze(1) * a.unsqueeze(2) + mask, axis=-1)
        pos = paddle.arange(4, dtype="float32") * 0.25
        waves = paddle.sin(a + pos) + paddle.cos(b - pos)
        return paddle.concat([g, s, arg, order, clipped, pw, both, att.sum(axis=1), waves], axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((3, 8)).astype(np.float32)}


class SetValue(nn.Layer):
    """Slice assignments, which Paddle writes as set_value (PIR: set_value_ with a constant,
    set_value_with_tensor_ with a tensor): a tensor broadcast over a dropped axis (y[:, 0] = t),
    a constant on a strided box, a tensor at a negative index (y[..., -1]), a vector broadcast
    over a box with a negative start, a constant under a None axis (y[0, None, 2]), a tensor on
    a backwards step, and an int64 tensor's slices (a constant, then a tensor)."""

    inputs = [("x", [None, 6, 8], "float32"), ("ids", [None, 5], "int64")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    # Paddle 2.6's to_static, SOT or AST, drops the assignments into k when it is read inside
    # `paddle.cast(k, ...).sum(...)` (its program reads k as it was before them): t is apart.
    def forward(self, x, ids):
        k = ids + 0
        k[:, 1:4] = 7
        k[:, -1] = k[:, 0] * 2
        y = self.fc(x)  # [B, 6, 8]
        y[:, 0] = y[:, 1] * 2.0
        y[:, 1:5:2, ::3] = 0.5
        y[..., -1] = paddle.tanh(y[..., -2])
        y[:, -2:, 2:4] = paddle.to_tensor([3.0, -3.0])
        y[0, None, 2] = -1.0
        y[:, 5:1:-2, 5] = y[:, 0:2, 6]
        t = paddle.cast(k, "float32")
        return y + t.sum(axis=1).reshape([-1, 1, 1]) * 0.01

    @staticmethod
    def example(rng):
        return {
            "x": rng.standard_normal((3, 6, 8)).astype(np.float32),
            "ids": rng.integers(0, 50, size=(3, 5)).astype(np.int64),
        }


class NewOps(nn.Layer):
    """The ops of ordinary paddle.nn / paddle layers Tide gained from users' models: where,
    tile, topk, log_softmax, silu, mish, bmm, index_select, one_hot, expand_as, p_norm (norm),
    unbind, pad3d (F.pad of a 4-D tensor), max_pool2d_with_index (AdaptiveMaxPool2D), flip, roll,
    logsumexp, erf (gelu's exact form is its own op), take_along_axis; with_cond adds a
    data-dependent `if` (Paddle 2.x: conditional_block + select_input; PIR's pd_op.if Tide does
    not read)."""

    inputs = [("x", [None, 4, 6, 6], "float32"), ("ids", [None], "int64")]

    def __init__(self, with_cond=True):
        super().__init__()
        self.with_cond = with_cond
        self.conv = nn.Conv2D(4, 4, 3, padding=1)
        self.pool = nn.AdaptiveMaxPool2D(3)
        self.fc = nn.Linear(36, 8)

    def forward(self, x, ids):
        f = F.pad(self.conv(x), [1, 0, 0, 1], mode="reflect")  # pad3d
        f = self.pool(F.silu(f))  # [B, 4, 3, 3]
        h = self.fc(f.reshape([-1, 36]))  # [B, 8]
        h = paddle.where(h > 0, h, F.mish(h) * 0.5)
        if self.with_cond:
            if paddle.mean(h) > 0:
                h = h * 2.0
            else:
                h = paddle.erf(h) - 1.0
        sq = paddle.bmm(h.unsqueeze(2), h.unsqueeze(1))  # [B, 8, 8]
        cols = paddle.index_select(sq, paddle.to_tensor([0, 3, 5]), axis=2)  # [B, 8, 3]
        a, b, c = paddle.unbind(cols, axis=2)
        top, idx = paddle.topk(a, 3)
        along = paddle.take_along_axis(b, idx, axis=1)
        hot = F.one_hot(ids % 8, 8)  # [B, 8]
        tiled = paddle.tile(paddle.norm(h, p=2, axis=1, keepdim=True), [1, 2])  # [B, 2]
        grown = paddle.expand_as(tiled[:, :1], h)
        rolled = paddle.roll(paddle.flip(c, axis=[1]), shifts=2, axis=1)
        lse = paddle.logsumexp(h, axis=1, keepdim=True)
        out = [F.log_softmax(h + hot, axis=1), top, along, tiled, grown, rolled, lse]
        return paddle.concat(out, axis=1)

    @staticmethod
    def example(rng):
        return {
            "x": rng.standard_normal((3, 4, 6, 6)).astype(np.float32),
            "ids": rng.integers(0, 50, size=(3,)).astype(np.int64),
        }


class ShapeOps(nn.Layer):
    """Shape and rearrangement ops: pixel_shuffle, pixel_unshuffle (NHWC), channel_shuffle,
    diagonal, trace (axes reversed, below the diagonal), numel (an int64 0-D), amax / amin (over
    axes, keepdim, and everything to a 0-D), cumprod, linspace, meshgrid, kron and
    repeat_interleave (an int and a tensor of counts)."""

    inputs = [("x", [None, 8, 4, 4], "float32")]

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(8, 8, 1)

    def forward(self, x):
        y = self.conv(x)  # [B, 8, 4, 4]
        ps = F.pixel_shuffle(y, 2)  # [B, 2, 8, 8]
        pu = F.pixel_unshuffle(ps, 2, data_format="NHWC")  # [B, 1, 4, 32]
        cs = F.channel_shuffle(y, 4)
        d = paddle.diagonal(cs, offset=1, axis1=2, axis2=3)  # [B, 8, 3]
        t = paddle.trace(y, offset=-1, axis1=3, axis2=2)  # [B, 8]
        n = paddle.numel(y).astype("float32")
        am = paddle.amax(y, axis=[2, 3])  # [B, 8]
        ai = paddle.amin(ps, axis=[1, 3], keepdim=True)  # [B, 1, 8, 1]
        lowest = paddle.amin(y)  # 0-D
        cp = paddle.cumprod(d * 2.0, dim=-1)
        gx, gy = paddle.meshgrid(paddle.linspace(-1, 1, 8), paddle.linspace(0, 1, 3))  # [8, 3]
        a = (cp + d * gx + gy).reshape([-1, 24])
        b = t + am + n * 0.001 + lowest
        k = paddle.kron(am[:, :2], paddle.linspace(0.5, 2.0, 3))  # [B, 6]
        r = paddle.repeat_interleave(am[:, :3], 2, axis=1)  # [B, 6]
        rt = paddle.repeat_interleave(am[:, :3], paddle.to_tensor([2, 0, 1]), axis=1)  # [B, 3]
        out = [a, b, ai.reshape([-1, 8]), pu.mean(axis=[1, 2]), k, r, rt]
        return paddle.concat(out, axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((3, 8, 4, 4)).astype(np.float32)}


class VisionOps(nn.Layer):
    """Vision ops: F.affine_grid (align_corners off) feeding F.grid_sample (bilinear, zeros; and
    nearest with reflection), F.interpolate(mode="bicubic") (a size, and a scale_factor with
    align_corners), F.unfold (stride, padding, dilation), paddle.put_along_axis (assign and add, at
    top-k's indices) and paddle.searchsorted (right, and int32)."""

    inputs = [("x", [None, 4, 6, 6], "float32")]

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(4, 4, 1)
        self.fc = nn.Linear(4, 6)

    def forward(self, x):
        y = self.conv(x)  # [B, 4, 6, 6]
        theta = self.fc(y.mean(axis=[2, 3])).reshape([-1, 2, 3])
        grid = F.affine_grid(theta, [x.shape[0], 4, 5, 3], align_corners=False)  # [B, 5, 3, 2]
        gs = F.grid_sample(y, grid, align_corners=False)  # [B, 4, 5, 3]
        gn = F.grid_sample(y, grid * 1.5, mode="nearest", padding_mode="reflection")
        bc = F.interpolate(y, size=[4, 9], mode="bicubic")  # [B, 4, 4, 9]
        bs = F.interpolate(y, scale_factor=1.5, mode="bicubic", align_corners=True)  # 9 x 9
        uf = F.unfold(y, [3, 2], strides=2, paddings=1, dilations=[1, 2])  # [B, 24, 12]
        flat = y.reshape([-1, 4, 36])
        top, ti = paddle.topk(flat, 5, axis=2)
        pa = paddle.put_along_axis(flat, ti, top * 2.0, axis=2, broadcast=False)
        pd = paddle.put_along_axis(flat, ti % 3, top, axis=2, reduce="add", broadcast=False)
        seq = paddle.sort(flat, axis=2)
        ss = paddle.searchsorted(seq, flat * 0.5, right=True)
        s32 = paddle.searchsorted(seq, flat, out_int32=True)
        parts = [gs, gn, bc, bs, uf, pa, pd, ss.astype("float32"), s32.astype("float32")]
        sizes = [60, 60, 144, 324, 216, 144, 144, 144, 144]  # each part's elements per sample
        return paddle.concat([p.reshape([-1, n]) for p, n in zip(parts, sizes)], axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 4, 6, 6)).astype(np.float32)}


class VolumetricOps(nn.Layer):
    """Volumetric (NCDHW) ops of 3-D CNNs (vol3d): Conv3D (padding, groups), Conv3DTranspose
    (stride 2, output_padding), F.max_pool3d (ceil_mode, and return_mask), F.avg_pool3d
    (exclusive=False), F.adaptive_avg_pool3d, F.adaptive_max_pool3d, F.interpolate on 5-D
    (trilinear by a scale and by a size with align_corners; nearest) and F.local_response_norm,
    which Paddle builds from pool3d over the padded channel axis; F.affine_grid of a 5-D shape
    (the batch from x.shape[0]) feeding F.grid_sample of a 5-D tensor (trilinear / border with
    align_corners, nearest / reflection without). The larger parts are averaged over their
    channels (a small fixture)."""

    inputs = [("x", [None, 2, 2, 4, 4], "float32")]

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3D(2, 4, 3, padding=1, groups=2)
        self.up = nn.Conv3DTranspose(4, 2, 2, stride=2, output_padding=1)

    def forward(self, x):
        y = self.conv(x)  # [B, 4, 2, 4, 4]
        small = F.adaptive_avg_pool3d(y, [2, 2, 2])
        val, idx = F.max_pool3d(y, 2, 2, return_mask=True)  # [B, 4, 1, 2, 2]
        parts = [
            self.up(small).mean(axis=1),  # [B, 5, 5, 5]
            F.max_pool3d(y, 3, 2, 1, ceil_mode=True),  # [B, 4, 2, 3, 3]
            F.avg_pool3d(y, [2, 3, 3], 2, [1, 1, 0], exclusive=False),  # [B, 4, 2, 2, 1]
            F.adaptive_avg_pool3d(y, [2, 3, 3]),
            F.adaptive_max_pool3d(y, [1, 3, 2]),
            F.interpolate(y, scale_factor=[1.5, 0.5, 1.5], mode="trilinear").mean(axis=1),
            F.interpolate(y, size=[3, 3, 5], mode="trilinear", align_corners=True).mean(axis=1),
            F.interpolate(y, size=[3, 6, 5], mode="nearest").mean(axis=1),
            F.local_response_norm(y.reshape([-1, 8, 4, 4]), 5),
            val,
            idx.astype("float32"),
        ]
        theta = paddle.tanh(small.reshape([-1, 32])[:, :12]).reshape([-1, 3, 4])
        grid = F.affine_grid(theta, [x.shape[0], 1, 2, 3, 3], align_corners=False)  # [B,2,3,3,3]
        parts += [
            grid,
            F.grid_sample(y, grid * 1.4, padding_mode="border"),  # [B, 4, 2, 3, 3]
            F.grid_sample(
                y, grid * 1.4, mode="nearest", padding_mode="reflection", align_corners=False
            ),
        ]
        return paddle.concat([p.flatten(1) for p in parts], axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 2, 2, 4, 4)).astype(np.float32)}


class UnaryOps(nn.Layer):
    """Elementwise math and activations whose PIR forms Tide reads (the "unary" ops): log1p ...
    digamma, logit, selu / celu, isnan / isinf / isfinite, hardtanh, elu, reciprocal, rsqrt, sign,
    logsigmoid, softsign, tanh_shrink, and gather_nd, scatter, group_norm and instance_norm; each
    input kept in its op's domain."""

    inputs = [("x", [None, 8], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.gn = nn.GroupNorm(2, 4)
        self.inorm = nn.InstanceNorm1D(4)

    def forward(self, x):
        y = self.fc(x) * 3.0  # [B, 8], about +-2
        a, t = paddle.abs(y), paddle.tanh(y) * 0.9  # a >= 0, |t| < 1
        math_ops = [
            paddle.log1p(a), paddle.expm1(y * 0.5), paddle.sinh(y), paddle.cosh(y),
            paddle.asinh(y), paddle.acosh(a + 1.1), paddle.atanh(t), paddle.trunc(y * 3.0),
            F.selu(y), F.celu(y, alpha=0.7), paddle.logit(F.sigmoid(y * 4.0), eps=0.05),
            paddle.erfinv(t), paddle.lgamma(a + 0.3), paddle.digamma(a + 0.3),
        ]  # fmt: skip
        inf_nan = paddle.log(F.relu(y)) + paddle.sqrt(y)  # -inf, NaN where y <= 0 / y < 0
        tests = [paddle.isnan(inf_nan), paddle.isinf(inf_nan), paddle.isfinite(inf_nan)]
        acts = [
            F.hardtanh(y, -0.5, 0.5), F.elu(y, alpha=0.8), paddle.reciprocal(a + 1.0),
            paddle.rsqrt(a + 1.0), paddle.sign(y), F.log_sigmoid(y), F.softsign(y),
            F.tanhshrink(y),
        ]  # fmt: skip
        picked = paddle.gather_nd(y, paddle.to_tensor([[0, 1], [2, 3], [1, 7]]))  # [3]
        rows = paddle.scatter(y, paddle.to_tensor([2, 0]), y[:2] * 2.0)  # [B, 8]
        grouped = self.gn(y.reshape([-1, 4, 2])).reshape([-1, 8])
        inst = self.inorm(y.reshape([-1, 4, 2])).reshape([-1, 8])
        out = math_ops + [v.astype("float32") for v in tests] + acts + [rows, grouped, inst]
        return paddle.concat(out + [picked.unsqueeze(0).expand([y.shape[0], 3])], axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((3, 8)).astype(np.float32)}


class BinaryOps(nn.Layer):
    """Binary and selection math ops (plugins/ops_math's atan2, dist, logcumsumexp and
    elementwise_fmax / fmin / heaviside): atan2, fmax / fmin with NaNs on one side, heaviside
    with exact zeros in X, logcumsumexp (along an axis, and flattened), dist (p 2, inf, 0.5),
    and on rounded values (ties) kthvalue, mode (keepdim) and median ('avg', 'min' over every
    element, and an odd count)."""

    inputs = [("x", [None, 8], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x) * 2.0  # [B, 8]
        a, b = y[:, :4], y[:, 4:]  # [B, 4] each
        at = paddle.atan2(a, b)
        nans = paddle.sqrt(a)  # NaN where a < 0
        fx, fn = paddle.fmax(nans, b), paddle.fmin(b, nans)
        hv = paddle.heaviside(F.relu(a), b)  # X == 0 where a <= 0
        lc = paddle.logcumsumexp(y * 3.0, axis=1)
        lx = paddle.logcumsumexp(a, axis=0)
        lf = paddle.logcumsumexp(b).reshape([-1, 4])  # axis None: flattened
        d2, di = paddle.dist(a, b), paddle.dist(a, b, float("inf"))
        dh = paddle.dist(a, b, 0.5)
        ds = paddle.stack([d2, di, dh]).unsqueeze(0).expand([y.shape[0], 3])
        r = (y * 2.0).astype("int32").astype("float32")  # ties for mode / median / kthvalue
        kv, ki = paddle.kthvalue(r, 3, axis=1)
        mv, mi = paddle.mode(r, axis=1, keepdim=True)
        md = paddle.median(r, axis=1, keepdim=True)  # mean of the middle two
        mm = paddle.median(r[:, :6], mode="min").expand([y.shape[0]])  # every element
        mc = paddle.median(r, axis=0)  # odd count (batch 3)
        ids = paddle.stack([ki, mi[:, 0]], axis=1).astype("float32")
        picks = [kv.unsqueeze(1), mv, md, mm.unsqueeze(1), mc.unsqueeze(0).expand([y.shape[0], 8])]
        return paddle.concat([at, fx, fn, hv, lc, lx, lf, ds, ids] + picks, axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((3, 8)).astype(np.float32)}


def randomize(net, rng):
    """Weights from a fixed seed; layer norms' scales and biases away from 1 and 0 so that a kernel
    ignoring one shows."""
    with paddle.no_grad():
        for p in net.parameters():
            p.set_value(rng.normal(0, 0.2, p.shape).astype(np.float32))
        for sub in net.sublayers():
            if isinstance(sub, nn.LayerNorm):
                sub.weight.set_value(rng.uniform(0.5, 1.5, sub.weight.shape).astype(np.float32))


class MiscOps(nn.Layer):
    """Math ops with PIR rows of their own (mathmisc): round (decimals 0, 1, -1), floor, ceil,
    square, asin, acos, atan, softplus (default and beta / threshold), softshrink, hardshrink,
    prelu (channel), stanh, thresholded_relu (with value), clip_by_norm, prod, nonzero, argsort,
    p_norm; tan, log2, log10, frac (Paddle's trunc and subtract); bitwise_and / or / xor / not on
    int32 (broadcasting) and bool; eye, diag (vector -> matrix with an offset and padding, matrix
    -> diagonal), dot (1-D and 2-D), mv, cross (the default axis and 1), lerp, addmm."""

    inputs = [("x", [None, 8], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.prelu = nn.PReLU(8, 0.1)

    def forward(self, x):
        y = self.fc(x) * 2.0  # [B, 8]
        t = paddle.tanh(y) * 0.9  # |t| < 1
        a = paddle.abs(y) + 0.1  # > 0
        outs = [
            paddle.round(y * 3.0),
            paddle.round(y, decimals=1),
            paddle.round(y * 30.0, decimals=-1),
            paddle.floor(y),
            paddle.ceil(y),
            paddle.square(y),
            paddle.asin(t),
            paddle.acos(t),
            paddle.atan(y),
            F.softplus(y),
            F.softplus(y, beta=2.0, threshold=1.5),
            F.softshrink(y, 0.3),
            F.hardshrink(y, 0.4),
            self.prelu(y),
            paddle.stanh(y),
            F.thresholded_relu(y, 0.5, 0.25),
            paddle.nn.clip.clip_by_norm(y, 1.5),
            paddle.prod(t + 1.0, axis=1, keepdim=True),
            paddle.tan(t),
            paddle.log2(a),
            paddle.log10(a),
            paddle.frac(y * 3.0),
        ]
        nz = paddle.nonzero(x > 0.0).astype("float32")  # [count, 2] coordinates
        nz = (nz * paddle.to_tensor([8.0, 1.0])).sum(axis=1)  # flat indices
        nzs = paddle.stack([nz.sum(), nz.max(), (nz * nz).sum()]).unsqueeze(0)
        i = (y * 20.0).astype("int32")
        bits = [
            paddle.bitwise_and(i, i[:1]),
            paddle.bitwise_or(i, i[:, :1]),
            paddle.bitwise_xor(i, i[:1]),
            paddle.bitwise_not(i),
        ]  # int32: and with a broadcast row, or with a broadcast column
        bits = paddle.concat(bits, axis=1).astype("float32")
        bs = (y > 0).astype("bool")
        b0 = y[:1] < 0.5  # [1, 8] bool, broadcast
        bbits = [paddle.bitwise_and(bs, b0), paddle.bitwise_not(bs)]
        bbits = paddle.concat([b.astype("float32") for b in bbits], axis=1)
        n = y.shape[0]
        lin = [
            paddle.matmul(
                y, paddle.eye(8) + paddle.eye(8, 10, dtype="float64")[:, 1:9].astype("float32")
            ),
            paddle.diag(y[0, :4], offset=1, padding_value=0.5)
            .reshape([-1, 25])[:1]
            .expand([n, 25]),
            paddle.diag(y[:, :5], offset=-1).unsqueeze(0).expand([n, 2]),
            paddle.dot(y, t).unsqueeze(1),
            paddle.dot(y[0], t[1]).reshape([1, 1]).expand([n, 1]),
            paddle.mv(y, t[0]).unsqueeze(1),
            paddle.cross(y[:, :3], t[:, 3:6]),
            paddle.cross(y[:, 2:5], t[:, 5:8], axis=1),
            paddle.lerp(y, t, a[:1] * 0.3),
            paddle.addmm(y[:, :3], y, self.fc.weight[:, :3], beta=0.5, alpha=2.0),
        ]
        srt = paddle.argsort(y, axis=1).astype("float32")
        pn = paddle.linalg.norm(y, p=3, axis=1, keepdim=True)
        nzs = nzs.expand([y.shape[0], 3])
        return paddle.concat(outs + [srt, pn, nzs, bits, bbits] + lin, axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((3, 8)).astype(np.float32)}


class EinsumOps(nn.Layer):
    """Linear-algebra ops with PIR rows of their own: einsum (attention "bhqd,bhkd->bhqk", a
    batched matmul, a reduction, an outer product, a diagonal, '...' against a weight),
    frobenius_norm (over two axes, keepdim), baddbmm (alpha / beta), renorm and matrix_power
    (n 3, 0 and -2)."""

    inputs = [("x", [None, 4, 6], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        y = self.fc(x)  # [B, 4, 6]
        yt = y.transpose([0, 2, 1])  # [B, 6, 4]
        q = y.reshape([-1, 2, 2, 6])  # [B, heads, queries, dims]
        sq = y[:, :, :4] * 0.5  # [B, 4, 4]
        eye = paddle.eye(4)
        mm = paddle.einsum("bij,bjk->bik", y, yt)
        outs = [
            paddle.einsum("bhqd,bhkd->bhqk", q, q * 0.5),
            mm,
            paddle.einsum("bij->bj", y),
            paddle.einsum("bi,bj->bij", y[:, 0], y[:, 1]),
            paddle.einsum("bii->bi", sq),
            paddle.einsum("...ij,jk->...ik", y, self.fc.weight),
            paddle.linalg.norm(y, "fro", axis=[1, 2], keepdim=True),
            paddle.baddbmm(mm, y, yt, beta=0.5, alpha=2.0),
            paddle.renorm(y, 2.0, 1, 1.0),
        ]
        # matrix_power refuses an unknown batch dim when saved: the first sample's matrix, added to
        # a zero column for the batch.
        zero, m = y[:, 0, :1] * 0.0, sq[0]
        for p in (
            paddle.linalg.matrix_power(m, 3),
            paddle.linalg.matrix_power(m, 0),
            paddle.linalg.matrix_power(m + eye * 2.0, -2),
        ):
            outs.append(p.reshape([1, 16]) + zero)
        return paddle.concat([o.reshape([0, -1]) for o in outs], axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((3, 4, 6)).astype(np.float32)}


# detect's model (plugins/ops_detection):
class DetectOps(nn.Layer):
    """Detectors' ends (helper detect's ops): a YOLOv3 head decoded by paddle.vision.ops.yolo_box
    (2 anchors, 2 classes, scale_x_y, clip_bbox) and multiclass_nms3 as PaddleDetection calls it
    (paddle._C_ops inside to_static: pixel boxes, no background class, nms_top_k and keep_top_k);
    an SSD head's deltas decoded against prior_box's priors by box_coder; roi_align (aligned,
    RoisNum) of the first YOLO boxes; a DCNv2 layer (deform_conv2d with an offset and a mask from
    convs). Flattened and concatenated."""

    inputs = [("x", [None, 8, 4, 4], "float32")]

    def __init__(self):
        super().__init__()
        self.head = nn.Conv2D(8, 14, 1)  # 2 anchors x (5 + 2 classes)
        self.deltas = nn.Conv2D(8, 12, 1)  # 3 priors x 4 offsets per cell
        self.offset = nn.Conv2D(8, 18, 3, padding=1)
        self.mask = nn.Conv2D(8, 9, 3, padding=1)
        self.dcn = paddle.vision.ops.DeformConv2D(8, 4, 3, padding=1)

    def forward(self, x):
        head = self.head(x)
        ones = x[:, :2, 0, 0] * 0.0 + 1.0  # [B, 2]
        img_size = (ones * 64.0).astype("int32")  # 64 x 64 images
        boxes, scores = paddle.vision.ops.yolo_box(
            head, img_size, [10, 13, 16, 30], 2, 0.01, 16, clip_bbox=True, scale_x_y=1.05
        )
        out, index, nums = paddle._C_ops.multiclass_nms3(
            boxes, scores.transpose([0, 2, 1]), None, 0.05, 20, 12, 0.45, False, 1.0, -1
        )
        image = paddle.zeros([1, 3, 64, 64])
        priors, variances = paddle.vision.ops.prior_box(
            x,
            image,
            min_sizes=[16.0],
            max_sizes=[32.0],
            aspect_ratios=[2.0],
            flip=False,
            variance=[0.1, 0.1, 0.2, 0.2],
            clip=True,
        )  # [4, 4, 3, 4]
        deltas = self.deltas(x).reshape([-1, 3, 4, 16]).transpose([0, 3, 1, 2]).reshape([-1, 48, 4])
        decoded = paddle.vision.ops.box_coder(
            priors.reshape([-1, 4]), variances.reshape([-1, 4]), deltas, "decode_center_size"
        )
        rois = boxes[:, :3].reshape([-1, 4])
        rois_num = (ones[:, 0] * 3.0).astype("int32")
        pooled = paddle.vision.ops.roi_align(x, rois, rois_num, 2, 4.0 / 64.0, aligned=True)
        dcn = self.dcn(x, self.offset(x), F.sigmoid(self.mask(x)))
        parts = [out, index.astype("float32"), nums.astype("float32"), decoded, pooled, dcn]
        return paddle.concat([p.reshape([-1]) for p in parts])

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 8, 4, 4)).astype(np.float32)}


# (end of detect's model)


# indexops's model (plugins/ops_nn/cummax_cummin_op.cc ..., plugins/ops_math/unique_op.cc ...):
class IndexOps(nn.Layer):
    """Indexing, scattering and counting ops with PIR rows of their own (helper indexops): cummax /
    cummin (values and indices), masked_fill (a broadcast mask), index_add, index_put (a tuple of
    index tensors, with and without accumulate), scatter_nd_add, diag_embed, bincount (minlength),
    histogram, unique (Out, Indices, Counts), triu_indices / tril_indices, and the reductions over
    bool and int tensors that paddle.nansum, paddle.quantile, paddle.sum of a mask and paddle.mean
    of ints export (paddle.any of ints fails in Paddle 3.3.1's own executor)."""

    inputs = [("x", [None, 6], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        y = self.fc(x) * 2.0  # [B, 6]
        n = y.shape[0]
        vmax, imax = paddle.cummax(y, axis=1)
        vmin, imin = paddle.cummin(y, axis=0)
        rows = paddle.to_tensor([0, 1, 0])
        cols = paddle.to_tensor([1, 4, 5])
        nd_index = paddle.to_tensor([[0, 1], [1, 2], [0, 1]])
        zero = y * 0.0
        nan = zero / zero  # computed: Paddle 3.3.1 cannot reload a NaN constant it saved
        outs = [
            vmax,
            imax.astype("float32"),
            vmin,
            imin.astype("float32"),
            paddle.masked_fill(y, y[:1] > 0.3, 0.5),
            paddle.index_add(y, paddle.to_tensor([0, 2, 0]), 1, y[:, 3:] * 2.0),
            paddle.index_put(y, (rows, cols), y[1, 1:4]),
            paddle.index_put(y, (rows, cols), y[2, :3] * 3.0, accumulate=True),
            paddle.scatter_nd_add(y, nd_index, y[0, :3] * 3.0),
            paddle.diag_embed(y[:, :3], offset=1).reshape([-1, 16]),
            paddle.quantile(y, 0.3, axis=1, keepdim=True),
            paddle.nansum(paddle.where(y > 1.0, nan, y), axis=1, keepdim=True),
            paddle.sum(y > 0.0, axis=1, keepdim=True).astype("float32"),
            paddle.mean((y * 5.0).astype("int32"), axis=1, keepdim=True).astype("float32"),
        ]
        ints = paddle.clip(paddle.abs(y) * 3.0, 0.0, 7.5).astype("int64").flatten()
        # unique's inverse is left out: Paddle 3.3.1's PIR program declares it float32, and its
        # executor fails on the int64 it holds once the program is reloaded.
        u, first, _, counts = paddle.unique(
            paddle.round(y * 2.0), return_index=True, return_inverse=True, return_counts=True
        )
        fixed = [
            paddle.bincount(ints, minlength=8).astype("float32"),
            paddle.histogram(y, 5, -1.0, 1.0).astype("float32"),
            paddle.stack(
                [
                    u.sum(),
                    (u * u).sum(),
                    first.astype("float32").sum(),
                    (counts.astype("float32") * counts.astype("float32")).sum(),
                ]
            ),
            paddle.triu_indices(4, 5, 1).astype("float32").flatten(),
            paddle.tril_indices(4, 3, -1).astype("float32").flatten(),
        ]
        fixed = paddle.concat(fixed).unsqueeze(0).expand([n, -1])
        return paddle.concat(outs + [fixed], axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((3, 6)).astype(np.float32)}


# (end of indexops's model)


class LinalgOps(nn.Layer):
    """Dense linear algebra with PIR rows of their own (helper linalg, plugins/ops_linalg): det,
    slogdet, inv, cholesky (lower and upper), triangular_solve (lower, transposed, unit
    diagonal), solve (matrix and vector right-hand sides), cholesky_solve, svd (S, |U|, |VH| and
    U S VH; full_matrices), qr (reduced R and Q, complete, 'r'), eigh (L and U; |eigenvectors|),
    eigvalsh and pinv, on a batch of 4 x 3 matrices and square ones made from them. Eigenvector
    signs are not unique: their absolute values (Tide's agree with Paddle's as saved anyway)."""

    inputs = [("x", [None, 4, 3], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x)  # [B, 4, 3]
        a = y[:, :3, :] + paddle.eye(3) * 3.0  # well conditioned [B, 3, 3]
        spd = a @ a.transpose([0, 2, 1]) + paddle.eye(3)
        low = paddle.linalg.cholesky(spd)
        b = y[:, 1:, :2]  # [B, 3, 2]
        u, s, vh = paddle.linalg.svd(y)
        q, r = paddle.linalg.qr(y)
        w, v = paddle.linalg.eigh(spd)
        outs = [
            paddle.linalg.det(a),
            paddle.linalg.slogdet(a),
            paddle.linalg.inv(a),
            low,
            paddle.linalg.cholesky(spd, upper=True),
            paddle.linalg.triangular_solve(a, b, upper=False, transpose=True, unitriangular=True),
            paddle.linalg.triangular_solve(a, b),
            paddle.linalg.solve(a, b),
            paddle.linalg.solve(a, y[:, 0, :]),  # a vector per matrix
            paddle.linalg.cholesky_solve(b, low),
            s,
            paddle.abs(u),
            paddle.abs(vh),
            (u * s.unsqueeze(1)) @ vh,
            paddle.abs(paddle.linalg.svd(y, full_matrices=True)[0]),
            q,
            r,
            paddle.linalg.qr(y, mode="complete")[1],
            paddle.linalg.qr(y, mode="r"),
            w,
            paddle.abs(v),
            paddle.linalg.eigh(spd, UPLO="U")[0],
            paddle.linalg.eigvalsh(spd),
            paddle.linalg.pinv(y),
        ]
        # reshape, not flatten: Paddle 3.3.1 declares slogdet's and a vector solve's results with
        # wrong ranks, and flatten's saved stop_axis follows the declaration.
        return paddle.concat([o.reshape([-1]) for o in outs])

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 4, 3)).astype(np.float32)}


# (end of linalg's model)


# (linalg2's model)
class Linalg2Ops(nn.Layer):
    """Dense linear algebra and statistics with PIR rows of their own (helper linalg2): lu (square
    and tall; Pivots, Infos) and lu_unpack (P, L, U), lstsq (gelsy, gels, gelsd, gelss: Solution,
    Residuals, SingularValues), multi_dot (a vector first; three matrices), corrcoef (cov's
    conj) and nanmedian ('avg' over one axis, 'min' over two with keepdim, over all) of an input
    with NaNs, on a batch of 4 x 3 matrices and square ones made from them. Not matrix_rank nor
    lstsq's Rank: Paddle 3.3.1 declares them float32 but writes int64 / int32, and its executor
    then fails in any op reading them (Linalg2Rank fetches one as it is)."""

    inputs = [("x", [None, 4, 3], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x)  # [B, 4, 3]
        a = y[:, :3, :] + paddle.eye(3) * 0.5  # [B, 3, 3]
        b = y[:, :, :2] * 2.0 + 1.0  # [B, 4, 2]
        lu, piv, info = paddle.linalg.lu(a, get_infos=True)
        lu_t, piv_t = paddle.linalg.lu(y)
        p, l, u = paddle.linalg.lu_unpack(lu, piv)
        p_t, l_t, u_t = paddle.linalg.lu_unpack(lu_t, piv_t)
        m0 = y[0]  # [4, 3]: the ops that take one matrix
        # NaN where y > 1 (0 / 0: Paddle 3.3.1 cannot read back a NaN constant it saved).
        masked = paddle.where(y > 1.0, (y - y) / (y - y), y)
        outs = [
            lu,
            piv,
            info,
            lu_t,
            piv_t,
            p,
            l,
            u,
            p_t @ l_t @ u_t,
            l_t,
            u_t,
        ]
        # The results Paddle gives non-empty: gelsy no Residuals nor SingularValues, gels no Rank.
        outs.append(paddle.linalg.lstsq(y, b)[0])  # gelsy
        sol, res, _, _ = paddle.linalg.lstsq(y, b, rcond=1e-4, driver="gels")
        outs += [sol, res]
        for driver in ("gelsd", "gelss"):
            sol, res, _, sv = paddle.linalg.lstsq(y, b, driver=driver)
            outs += [sol, res, sv]
        outs += [
            paddle.linalg.multi_dot([m0[0], m0.T, m0, self.fc.weight]),
            paddle.linalg.multi_dot([m0, self.fc.weight, m0.T]),
            paddle.linalg.corrcoef(m0),
            paddle.nanmedian(masked, axis=1),
            paddle.nanmedian(masked, axis=[1, 2], keepdim=True, mode="min"),
            paddle.nanmedian(masked),
        ]
        return paddle.concat([o.astype("float32").reshape([-1]) for o in outs])

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 4, 3)).astype(np.float32)}


class Linalg2Rank(nn.Layer):
    """paddle.linalg.matrix_rank with a tolerance tensor (pd_op.matrix_rank_tol) of full-rank
    and rank-2 matrices, fetched as it is: its result, declared float32 by Paddle 3.3.1 but
    int64 in Paddle's kernel, is something no op of Paddle's executor can read."""

    inputs = [("x", [None, 4, 3], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x)  # [B, 4, 3]
        m = paddle.concat([y, y[:, :, :2] @ y[:, :2, :]])  # [2B, 4, 3], the second half rank 2
        s = paddle.linalg.svd(m)[1]
        return paddle.linalg.matrix_rank(m, tol=s[:, 0] * 1e-4)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 4, 3)).astype(np.float32)}


# (end of linalg2's model)


class GraphOps(nn.Layer):
    """paddle.geometric's message passing with PIR rows of their own (helper graph,
    plugins/ops_graph): segment_sum / mean / max / min (sorted ids, an empty segment),
    send_u_recv (sum, mean, max, min; out_size a constant and a tensor; int32 indices),
    send_ue_recv (add, mul, and sub / div as Paddle rewrites them; edge features of the nodes'
    width and of width 1) and send_uv (add, mul, a broadcast width-1 operand), on the first
    sample's 6 nodes x 3 features over 8 edges; and reindex_graph of 3 centre nodes."""

    inputs = [("x", [None, 6, 3], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        from paddle import geometric as G

        h = self.fc(x)[0]  # [6, 3] node features
        seg = paddle.to_tensor(np.array([0, 0, 1, 3, 3, 3], "int64"))  # segment 2 empty
        src = paddle.to_tensor(np.array([0, 1, 2, 3, 4, 5, 0, 2], "int64"))
        dst = paddle.to_tensor(np.array([1, 2, 0, 0, 3, 3, 5, 1], "int64"))  # node 4 gets none
        src32 = src.astype("int32")
        near = paddle.to_tensor(np.array([1, 2, 0, 0, 3, 3, 2, 1], "int32"))  # rows < 4
        w = paddle.concat([h, h[:2]]) * 0.5  # [8, 3] edge features
        w1 = paddle.abs(w[:, :1]) + 0.5  # [8, 1]
        outs = [
            G.segment_sum(h, seg),
            G.segment_mean(h, seg),
            G.segment_max(h, seg),
            G.segment_min(h, seg.astype("int32")),
            G.send_u_recv(h, src, dst, "sum"),
            G.send_u_recv(h, src, dst, "mean"),
            G.send_u_recv(h, src, dst, "max"),
            G.send_u_recv(h, src, dst, "min"),
            G.send_u_recv(h, src32, near, "max", out_size=4),
            G.send_u_recv(h, src32, near, "mean", out_size=paddle.max(near) + 1),
            G.send_ue_recv(h, w, src, dst, "add", "sum"),
            G.send_ue_recv(h, w, src, dst, "mul", "mean"),
            G.send_ue_recv(h, w1, src, dst, "sub", "max"),
            G.send_ue_recv(h, w1, src32, near, "div", "min", out_size=4),
            G.send_uv(h, h, src, dst, "add"),
            G.send_uv(h, h, src32, near.astype("int32"), "mul"),
            G.send_uv(h, h[:, 1:2], src, dst, "sub"),
        ]
        # reindex_graph: the first 3 sources as centre nodes, dst as their 2, 3 and 3 neighbours.
        count = paddle.to_tensor(np.array([2, 3, 3], "int32"))
        outs += [o.astype("float32") for o in G.reindex_graph(src[:3], dst, count)]
        return paddle.concat([o.reshape([-1]) for o in outs])

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 6, 3)).astype(np.float32)}


# (end of graph's model)


class LossActOps(nn.Layer):
    """Losses and special functions with PIR rows of their own (helper lossact): F.cross_entropy
    (pd_op.cross_entropy_with_softmax: hard labels, and use_softmax=False on probabilities),
    mean_all (losses' reduction 'mean'), F.kl_div (kldiv_loss; 'none' with log_target, mean,
    batchmean), F.smooth_l1_loss (huber_loss), F.binary_cross_entropy_with_logits with a pos_weight
    (sigmoid_cross_entropy_with_logits), F.label_smooth, F.maxout, F.sequence_mask (max_len a
    constant and a tensor), F.temporal_shift (NCHW and NHWC), i0 / i0e / i1 / i1e, polygamma
    (n 1 and 2), swiglu (with y and split) and fused_rms_norm (plain; with residual, bias and
    norm_bias), on a batch of 4 frames (2 clips of 2) of 4 x 2 x 3."""

    inputs = [("x", [None, 4, 2, 3], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        from paddle.incubate.nn.functional import fused_rms_norm, swiglu

        y = self.fc(x)  # [B, 4, 2, 3]
        n = y.shape[0]
        logits = y.mean(axis=[2, 3])  # [B, 4]
        label = paddle.argmax(logits, axis=1, keepdim=True)
        probs = F.softmax(logits * 2.0, axis=1)
        flat = y.reshape([-1, 24])  # [B, 24]
        target = F.sigmoid(flat * 3.0)
        lengths = (paddle.abs(y[:, 0, 0, :]) * 4.0).astype("int64")  # [B, 3]
        maxlen = (paddle.abs(y).max() > -1.0).astype("int64") * 5  # a tensor, not a constant
        rows = y.reshape([-1, 6])
        losses = [
            F.cross_entropy(logits, label, reduction="none"),
            F.cross_entropy(probs, label, use_softmax=False, reduction="none"),
            F.kl_div(F.log_softmax(flat, axis=1), target, reduction="mean").expand([n, 1]),
            F.kl_div(F.log_softmax(flat, axis=1), flat, reduction="none", log_target=True),
            F.kl_div(F.log_softmax(logits, axis=1), probs, reduction="batchmean").expand([n, 1]),
            F.smooth_l1_loss(flat, flat * 0.3 + 0.5, reduction="none", delta=0.4),
            F.binary_cross_entropy_with_logits(
                flat * 2.0, target, pos_weight=paddle.linspace(0.5, 2.0, 24), reduction="none"
            ),
            F.mse_loss(flat, target).expand([n, 1]),
            F.binary_cross_entropy_with_logits(flat, target).expand([n, 1]),  # mean_all
        ]
        acts = [
            F.label_smooth(probs, epsilon=0.1),
            F.maxout(y, 2, axis=1).reshape([-1, 12]),
            F.sequence_mask(lengths, 6, dtype="float32").reshape([-1, 18]),
            F.sequence_mask(lengths, maxlen, dtype="float32").reshape([-1, 15]),
            F.temporal_shift(y, 2, 0.25).reshape([-1, 24]),
            F.temporal_shift(y.transpose([0, 2, 3, 1]), 2, 0.3, data_format="NHWC").reshape(
                [-1, 24]
            ),
            paddle.i0(flat * 3.0),
            paddle.i0e(flat * 3.0),
            paddle.i1(flat * 3.0),
            paddle.i1e(flat * 3.0),
            paddle.polygamma(paddle.abs(flat) + 0.5, 1),
            paddle.polygamma(paddle.abs(flat) + 0.5, 2),
            swiglu(flat, target).reshape([-1, 24]),
            swiglu(flat).reshape([-1, 12]),
            fused_rms_norm(rows, self.fc.weight[0].tile([2]), None, 1e-6, 1)[0].reshape([-1, 24]),
            fused_rms_norm(
                rows,
                self.fc.weight[1].tile([2]),
                self.fc.bias.tile([2]),
                1e-5,
                1,
                bias=self.fc.weight[2].tile([2]),
                residual=rows * 0.5,
            )[0].reshape([-1, 24]),
        ]
        return paddle.concat([o.astype("float32") for o in losses + acts], axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((4, 4, 2, 3)).astype(np.float32)}


# (end of lossact's model)


# (lossseq's model)
class LossSeqOps(nn.Layer):
    """Probability losses and sequence decoding with PIR rows of their own (helper lossseq):
    F.binary_cross_entropy (pd_op.bce_loss; 'none' and mean_all), F.log_loss, F.nll_loss
    (weighted with an ignore_index on [N, C, 2, 3] ('none'), plain 'mean', weighted 'sum'; an
    ignored label under a reduction makes Paddle's CPU kernel write past its 0-D Out),
    F.ctc_loss (pd_op.warpctc: blank 0 and 4, lengths and labels of each sequence from the input)
    and F.gather_tree, on a batch of 3 sequences of 6 steps of 5 classes. viterbi_decode is
    ViterbiOps: Paddle 3.3.1's PIR types its results wrongly (Scores int64, Path float32 0-D), so
    Paddle's own executor fails on any op that reads them."""

    inputs = [("x", [None, 6, 5], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x):
        y = self.fc(x)  # [B, 6, 5]
        probs = F.sigmoid(y)
        target = F.sigmoid(x * 2.0)
        logp = F.log_softmax(y, axis=2)  # [B, 6, 5]
        label = paddle.argmax(x, axis=2)  # [B, 6] int64
        ctc_in = y.transpose([1, 0, 2])  # [T 6, B, C 5]
        steps = 6 - (paddle.abs(x[:, 0, 0]) * 2.0).astype("int64").clip(0, 2)  # 4 ... 6
        label_len = 1 + (paddle.abs(x[:, 0, 1]) * 2.0).astype("int64").clip(0, 2)  # 1 ... 3
        ctc_label = (label[:, :3] % 4 + 1).astype("int32")  # 1 ... 4, blank 0
        ids = (paddle.abs(y) * 10.0).astype("int64").transpose([1, 0, 2])  # [6, B, beam 5]
        parents = (paddle.abs(x) * 7.0).astype("int64").transpose([1, 0, 2]) % 5
        outs = [
            F.binary_cross_entropy(probs, target, reduction="none").reshape([-1, 30]),
            F.binary_cross_entropy(probs, target).expand([y.shape[0], 1]),
            F.log_loss(probs[:, :, :1].reshape([-1, 1]), target[:, :, :1].reshape([-1, 1])).reshape(
                [-1, 6]
            ),
            F.nll_loss(
                logp.reshape([-1, 2, 3, 5]).transpose([0, 3, 1, 2]),  # [N, C, d1, d2]
                label.reshape([-1, 2, 3]),
                weight=paddle.linspace(0.5, 1.5, 5),
                ignore_index=2,
                reduction="none",
            ).reshape([-1, 6]),
            F.nll_loss(logp.reshape([-1, 5]), label.reshape([-1])).expand([y.shape[0], 1]),
            F.nll_loss(
                logp.reshape([-1, 5]),
                label.reshape([-1]),
                weight=paddle.linspace(1.5, 0.5, 5),
                reduction="sum",
            ).expand([y.shape[0], 1]),
            F.ctc_loss(ctc_in, ctc_label, steps, label_len, reduction="none").reshape([-1, 1]),
            F.ctc_loss(ctc_in, ctc_label - 1, steps, label_len, blank=4, reduction="none").reshape(
                [-1, 1]
            ),
            F.ctc_loss(ctc_in, ctc_label, steps, label_len).expand([y.shape[0], 1]),
        ]
        # Each step's [B, beam] (Paddle's oneDNN predictor fails on a transpose then a reshape).
        outs += paddle.unbind(F.gather_tree(ids, parents), axis=0)
        return paddle.concat([o.astype("float32") for o in outs], axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((3, 6, 5)).astype(np.float32)}


class ViterbiOps(nn.Layer):
    """paddle.text.viterbi_decode with the start / stop tags (helper lossseq), its Scores fetched
    as they come (Paddle 3.3.1's PIR types them int64, so no op may read them in Paddle), on 3
    sequences of up to 6 steps of 5 tags with lengths from the input."""

    inputs = [("x", [None, 6, 5], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x):
        lengths = 1 + (paddle.abs(x[:, 1, 0]) * 4.0).astype("int64").clip(0, 5)  # 1 ... 6
        potentials = F.softmax(self.fc(x), axis=2) * 4.0  # softmax: a oneDNN kernel to run
        return paddle.text.viterbi_decode(potentials, self.fc.weight, lengths, True)[0]

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((3, 6, 5)).astype(np.float32)}


# (end of lossseq's model)


# (random's model)
class RandomOps(nn.Layer):
    """Paddle's random ops with PIR rows of their own (helper random), each feeding something its
    draw cannot change, so the output is deterministic and Paddle's executor gives it: the ranges
    of paddle.uniform (pd_op.uniform, dims from the batch: a shape tensor), paddle.randn
    (pd_op.gaussian: finite, times 0) and paddle.randint; the sorted paddle.randperm; paddle.bernoulli
    of 0 / 1 probabilities; paddle.multinomial of rows with one non-zero weight (with replacement)
    and sorted without replacement over every category; F.gumbel_softmax's sums along axes 1 and
    -1 (soft and hard) and its hard one-hot of logits 60 apart (Gumbel noise spans less than 20);
    F.rrelu in test mode (the mean slope), on a batch of 4 x 3 x 5."""

    inputs = [("x", [None, 3, 5], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x):
        y = self.fc(x)  # [B, 3, 5]
        n = y.shape[0]
        flat = y.reshape([-1, 15])
        u = paddle.uniform([n, 15], min=-2.0, max=3.0)
        g = paddle.randn([n, 15])
        r = paddle.randint(-3, 4, [n, 15])
        in_range = [
            ((u >= -2.0) & (u < 3.0)).astype("float32"),
            paddle.isfinite(g).astype("float32") + g * 0.0,
            ((r >= -3) & (r < 4)).astype("float32"),
        ]
        perm = paddle.sort(paddle.randperm(15)).astype("float32").expand([n, 15])
        coins = paddle.bernoulli((flat > 0).astype("float32"))
        hot = F.one_hot(paddle.argmax(flat, axis=1), 15)  # one non-zero weight per row
        picks = paddle.multinomial(hot + 0.0, 4, replacement=True).astype("float32")
        every = paddle.sort(paddle.multinomial(F.softmax(flat, axis=1), 15), axis=1)
        soft = F.gumbel_softmax(y, temperature=0.5, axis=1).sum(axis=1)  # [B, 5] of ones
        hard = F.gumbel_softmax(flat, hard=True).sum(axis=-1, keepdim=True)
        onehot = F.gumbel_softmax(hot * 60.0, temperature=2.0, hard=True)
        leaky = F.rrelu(flat, 0.1, 0.3, training=False)
        outs = in_range + [perm, coins, picks, every.astype("float32"), soft, hard, onehot, leaky]
        return paddle.concat(outs, axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((4, 3, 5)).astype(np.float32)}


# (end of random's model)


# (elem's model)
class ElemExtraOps(nn.Layer):
    """Paddle's extra element-wise and tensor ops with PIR rows of their own (helper elem):
    isclose (tolerances as tensors), allclose, angle, copysign (broadcast), nextafter,
    bitwise_left_shift / bitwise_right_shift (arithmetic and logical), logspace,
    broadcast_tensors, unique_consecutive (flat, and along an axis with its inverse and counts),
    diagonal_scatter (fill_diagonal_tensor, with an offset over dims 1 and 2), unstack and clip of
    int64, on a batch of 3 x 4 rows; every result flattened into one float32 vector. Not
    equal_all: Paddle 3.3.1 declares its result float32, and its own executor then reads the bool
    as float32 in whatever follows (the trial's equal_all program, fetching it, checks it)."""

    inputs = [("x", [None, 3, 4], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)  # [B, 3, 4]
        b = y[0]  # [3, 4]
        ints = (y * 10.0).astype("int64")
        counts = (paddle.abs(y) * 4.0).astype("int64") % 5
        small = (paddle.abs(y) * 3.0).astype("int64")  # runs of equal values once sorted
        flat_sorted = paddle.sort(small.reshape([-1]))
        rows = paddle.sort(small[:, :, 0], axis=1)  # [B, 3]
        uc_out, _, _ = paddle.unique_consecutive(
            rows, return_inverse=True, return_counts=True, axis=1
        )
        bt = paddle.broadcast_tensors([y[:, :1, :], b[:, :1]])
        outs = [
            paddle.isclose(y, y * 1.0000001),
            paddle.isclose(y, y + 1e-3, rtol=0.0, atol=2e-3),
            paddle.isclose(y, y + 1e-3, rtol=1e-4, atol=1e-4),
            paddle.allclose(y, y + 1e-9),
            paddle.allclose(y, y + 1e-2),
            paddle.angle(y),
            paddle.copysign(y, b[0]),
            (paddle.nextafter(y, b) - y) * 1e6,
            paddle.bitwise_left_shift(ints, counts),
            paddle.bitwise_right_shift(ints, counts),
            paddle.bitwise_right_shift(ints.astype("int32"), counts.astype("int32"), False),
            paddle.logspace(0, 2, 5, base=2.0),
            paddle.logspace(-1.0, 1.5, 4, dtype="float64"),
            bt[0],
            bt[1],
            paddle.unique_consecutive(flat_sorted),
            uc_out,  # Paddle 3.3.1 declares uc_index / uc_counts float32 (run: int64), unusable
            paddle.diagonal_scatter(y, y[:, :, 0] * 5.0, offset=1, axis1=1, axis2=2),
            paddle.unstack(y, axis=1)[2],
            paddle.clip(ints, -3, 5),
        ]
        return paddle.concat([o.astype("float32").reshape([-1]) for o in outs])

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((4, 3, 4)).astype(np.float32)}


# (end of elem's model)


# (nnextra's model)
class NnExtraOps(nn.Layer):
    """More nn ops with PIR rows of their own (helper nnextra): F.fold (plain and with strides,
    paddings and dilations), F.max_unpool2d / max_unpool3d (pd_op.unpool /
    unpool3d, after max pools with masks), F.lp_pool2d (p 2; p 3 with padding and ceil_mode),
    F.interpolate mode 'linear' (pd_op.linear_interp: NCW with a size, NWC with a scale and
    align_corners), F.pad's constant pad of a 2-D tensor (pd_op.pad) and pad3d of a 3-D one
    (reflect) and 4-D (circular), paddle.crop (pd_op.crop), nn.SpectralNorm (dim 1, 2 power
    iterations), F.bilinear (pd_op.bilinear, with bias), paddle.multiplex and paddle.shard_index,
    on a batch of 2 x 4 x 4 images."""

    inputs = [("x", [None, 2, 4, 4], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.sn = nn.SpectralNorm([3, 4, 2], dim=1, power_iters=2)
        self.sn_weight = self.create_parameter([3, 4, 2])
        self.bl = nn.Bilinear(8, 8, 3)
        # fold's input: patches of a known batch (F.fold refuses an unknown one), scaled by x.
        self.cols = self.create_parameter([1, 8, 9])
        self.cols2 = self.create_parameter([1, 12, 3])

    def forward(self, x):
        y = self.fc(x)  # [B, 2, 4, 4]
        n = y.shape[0]
        rows = y.reshape([-1, 32])
        seq = y.reshape([-1, 2, 16])
        label = (paddle.abs(rows[:, :1]) * 7).astype("int64") % 20  # [B, 1] in [0, 20)
        pooled, mask = F.max_pool2d(y, 2, return_mask=True)
        pooled3, mask3 = F.max_pool3d(y.reshape([-1, 2, 2, 2, 4]), 2, return_mask=True)
        a, b = rows[:, :8], rows[:, 8:16]
        ids = (a.sum(axis=1, keepdim=True) > b.sum(axis=1, keepdim=True)).astype("int32")
        outs = [
            y + F.fold(self.cols * y.mean(), [4, 4], 2),
            y + F.fold(self.cols2 * y.mean(), [4, 4], [2, 3], 2, 1, [1, 2]),
            F.max_unpool2d(pooled, mask, 2),
            F.max_unpool3d(pooled3, mask3, 2),
            F.lp_pool2d(paddle.abs(y) + 0.1, 2, 2),
            F.lp_pool2d(paddle.abs(y) + 0.1, 3.0, 3, stride=2, padding=1, ceil_mode=True),
            F.interpolate(seq, size=[9], mode="linear", data_format="NCW"),
            F.interpolate(
                seq.transpose([0, 2, 1]),
                scale_factor=1.5,
                mode="linear",
                align_corners=True,
                data_format="NWC",
            ),
            F.pad(rows, [1, 2, 3, 1], value=2.0),
            F.pad(seq, [2, 1], mode="reflect", data_format="NCL"),
            F.pad(y, [1, 1, 2, 0], mode="circular"),
            paddle.crop(y, shape=[-1, 2, 3, 2], offsets=[0, 0, 1, 2]),
            rows[:, :24].reshape([-1, 3, 8]).matmul(self.sn(self.sn_weight).reshape([3, 8, 1])),
            self.bl(a, b),
            paddle.multiplex([a, b], ids),
            paddle.shard_index(label, 20, 3, 1),
        ]
        return paddle.concat([o.astype("float32").reshape([n, -1]) for o in outs], axis=1)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((3, 2, 4, 4)).astype(np.float32)}


# (end of nnextra's model)


class SpectralOps(nn.Layer):
    """paddle.fft and paddle.signal (plugins/ops_fft: fft_r2c, fft_c2c, fft_c2r, frame,
    overlap_add), on a batch of 4 x 16 signals: rfft (|X|; 'ortho' real and imaginary parts of an
    odd length), irfft (n given, and an odd n with 'forward'), fft / ifft of a complex signal,
    fft2 and fftn, rfft2 -> irfft2, hfft, ihfft, frame and overlap_add, stft (no window) and
    istft; every result real, flattened into one float32 vector. (Not fftshift: Paddle 3.3.1
    cannot save it for an input with a batch dim unknown, and it is a roll.)"""

    inputs = [("x", [None, 4, 16], "float32")]

    def forward(self, x):
        fft, signal = paddle.fft, paddle.signal
        r = fft.rfft(x[:, :, :15], norm="ortho")
        c = paddle.complex(x, x * 0.5)
        outs = [
            fft.rfft(x).abs(),
            paddle.real(r) + 2 * paddle.imag(r),
            fft.irfft(fft.rfft(x) * 2, n=16),
            fft.irfft(fft.rfft(x[:, :, :9]), n=9, norm="forward"),
            paddle.real(fft.ifft(fft.fft(c) * 3)),
            paddle.imag(fft.fft(c, n=20, axis=1)),
            paddle.real(fft.fft2(x)),
            paddle.abs(fft.fftn(x, axes=[0, 2], norm="ortho")),
            fft.irfft2(fft.rfft2(x) * 0.5, s=[4, 16]),
            fft.hfft(c[:, :, :5], n=8),
            paddle.imag(fft.ihfft(x)),
            signal.overlap_add(signal.frame(x, 6, 3) * 0.5, 3),
            signal.stft(x[:, 0], n_fft=8, hop_length=2).abs(),
            signal.istft(signal.stft(x[:, 1], n_fft=8, hop_length=2), n_fft=8, hop_length=2),
        ]
        return paddle.concat([o.reshape([-1]) for o in outs])

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 4, 16)).astype(np.float32)}


class AudioFeatures(nn.Layer):
    """paddle.audio's LogMelSpectrogram and MFCC (a Hann-windowed stft: pad3d's reflection,
    frame, fft_r2c, |.|^2, the mel filter bank's matmul, log10, the DCT) on 2 x 800 samples at
    8 kHz; joined along the feature axis ([N, 30, frames])."""

    inputs = [("x", [None, 800], "float32")]

    def __init__(self):
        super().__init__()
        features = paddle.audio.features
        self.logmel = features.LogMelSpectrogram(sr=8000, n_fft=128, hop_length=32, n_mels=20)
        self.mfcc = features.MFCC(sr=8000, n_mfcc=10, n_fft=128, hop_length=32, n_mels=20)

    def forward(self, x):
        return paddle.concat([self.logmel(x), self.mfcc(x)], axis=1)

    @staticmethod
    def example(rng):
        t = np.arange(800) / 8000.0
        tone = np.sin(2 * np.pi * 440 * t) + 0.3 * np.sin(2 * np.pi * 1250 * t)
        return {"x": (tone + 0.1 * rng.standard_normal((2, 800))).astype(np.float32)}


class ComplexOps(nn.Layer):
    """Complex numbers (plugins/ops_math): complex, real, imag, as_complex, as_real, polar, abs,
    angle, conj, exp; add, subtract, multiply, divide (broadcast), scale, sum, mean, matmul and
    cast of complex64, on a batch of 3 x 4 rows, every result real, flattened into one float32
    vector."""

    inputs = [("x", [None, 3, 4], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        h = self.fc(x)  # [N, 3, 8]
        c = paddle.complex(h[:, :, :4], h[:, :, 4:])  # [N, 3, 4]
        p = paddle.polar(paddle.abs(x) + 0.5, x)
        z = paddle.as_complex(h.reshape([-1, 3, 4, 2]))
        d = c / (c + 2) - z * 2 + p[:, :1]
        w = paddle.complex(x[0].T, x[0].T * 2)  # [4, 3]
        outs = [
            paddle.real(d),
            paddle.imag(d),
            paddle.abs(c),
            paddle.angle(c),
            paddle.real(paddle.conj(c) * c),
            paddle.as_real(paddle.exp(c * 0.1)),
            paddle.abs(c.sum(axis=1)) + paddle.abs(c.mean()),
            paddle.abs(paddle.matmul(c, w)),
            paddle.real(x.astype("complex64") * (2 - 1j) * 0.5),
        ]
        return paddle.concat([o.reshape([-1]) for o in outs])

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 3, 4)).astype(np.float32)}


class SpectralConv(nn.Layer):
    """A Fourier neural operator's spectral convolution (as PaddleScience writes it): rfft2, an
    einsum of the lowest modes with complex weights built from two real parameters, written into
    a zero complex spectrum (set_value) and back by irfft2, plus a 3x3 convolution."""

    inputs = [("x", [None, 3, 16, 16], "float32")]

    def __init__(self, modes=4):
        super().__init__()
        self.modes = modes
        self.wr = self.create_parameter([3, 4, modes, modes])
        self.wi = self.create_parameter([3, 4, modes, modes])
        self.conv = nn.Conv2D(3, 4, 3, padding=1)

    def forward(self, x):
        m = self.modes
        xf = paddle.fft.rfft2(x)
        o = paddle.einsum("bixy,ioxy->boxy", xf[:, :, :m, :m], paddle.complex(self.wr, self.wi))
        out = paddle.zeros([paddle.shape(x)[0], 4, 16, 9], dtype="complex64")
        out[:, :, :m, :m] = o
        return paddle.fft.irfft2(out, s=[16, 16]) + self.conv(x)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 3, 16, 16)).astype(np.float32)}


# (end of the complex / spectral models)
