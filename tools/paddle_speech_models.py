"""Small speech and sequence-to-sequence models written as PaddleSpeech and PaddleNLP write them in
Paddle 3.x: a Conformer CTC encoder (PaddleSpeech's u2: Conv2dSubsampling4, relative or absolute
positional encoding, macaron feed-forward with Swish, multi-head self-attention under a padding
mask made from the fed lengths, the convolution module with GLU and a depthwise Conv1D, batch or
layer norm, causal or not, a static chunk mask, the final layer norm and a CTC head; and the
same encoder exported for streaming with attention and convolution caches as inputs), a temporal
convolution net (TCN blocks with weight norm and a chomp, WaveNet blocks with a left `F.pad`,
gated tanh * sigmoid, residual and skip sums), an `nn.Transformer` encoder-decoder with greedy
decode loops (a `for` over a fed length, pd_op.while; one re-reading the prefix, one carrying the
decoder's caches), and GRU / LSTM seq2seq models with Bahdanau / Luong attention (cells stepped
by hand, unrolled or over a fed target length, a length mask). Widths and depths are tiny so each fixture stays
small; the ops are the full models'. Used like tools/paddle_family_models.py: each model has
`inputs`, `example(rng)` and `randomize_weights(rng)`.

    OMP_NUM_THREADS=1 /tmp/paddle3/bin/python tools/paddle_speech_models.py tests/fixtures/paddle

exports the models of FIXTURES (`--only NAME`: any of SPEECH_MODELS) to OUT/pir/<name>/ as
tools/paddle_export.py does (--pir: inference.json, inference.pdiparams, the feed, expected.npz),
plus grads.npz: Paddle's dygraph gradients of sum(out0 * R) with respect to every parameter at
the example feed (R: the `loss_weight` array in the same file), for the fine-tuning test, and
cases.npz: other batch sizes / sequence lengths with Paddle's outputs (`<feed>_<i>`,
`out<k>_<i>`; dygraph's, checked against Paddle's executor on the saved program)."""

import json
import math
import os
import sys

import numpy as np

os.environ.setdefault("FLAGS_enable_pir_api", "1")  # PIR programs (Paddle 3.x's default)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import paddle  # noqa: E402
import paddle.nn.functional as F  # noqa: E402
from paddle import nn  # noqa: E402


class Speech(nn.Layer):
    """Random weights: convolutions by He's normal (fan-in), other parameters normal 0.2, norm
    scales in [0.5, 1.5], batch norm statistics away from 0 / 1."""

    def randomize_weights(self, rng):
        def put(p, a):
            p.set_value(a.astype(np.float32))

        with paddle.no_grad():
            for p in self.parameters():
                put(p, rng.normal(0, 0.2, p.shape))
            for sub in self.sublayers():
                if isinstance(sub, (nn.Conv1D, nn.Conv2D)) and hasattr(sub, "weight"):
                    w = sub.weight
                    fan_in = int(np.prod(w.shape[1:]))
                    put(w, rng.normal(0, np.sqrt(2.0 / fan_in), w.shape))
                if isinstance(sub, (nn.BatchNorm1D, nn.BatchNorm2D, nn.BatchNorm)):
                    c = sub.weight.shape[0]
                    put(sub.weight, rng.uniform(0.5, 1.5, c))
                    put(sub.bias, rng.uniform(-0.2, 0.2, c))
                    put(sub._mean, rng.uniform(-0.2, 0.2, c))
                    put(sub._variance, rng.uniform(0.5, 1.5, c))
                elif isinstance(sub, nn.LayerNorm):
                    put(sub.weight, rng.uniform(0.5, 1.5, sub.weight.shape))


# --- Conformer (PaddleSpeech s2t u2) ----------------------------------------------------------

IDIM, D_MODEL, HEADS, FFN, CONV_K, VOCAB = 20, 16, 2, 32, 5, 12


class Swish(nn.Layer):
    """PaddleSpeech's activation.Swish: x * sigmoid(x)."""

    def forward(self, x):
        return x * F.sigmoid(x)


def sinusoids(max_len, d):
    pe = np.zeros((max_len, d), np.float32)
    pos = np.arange(max_len, dtype=np.float32)[:, None]
    div = np.exp(np.arange(0, d, 2, dtype=np.float32) * -(math.log(10000.0) / d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(pos * div), np.cos(pos * div)
    return pe[None]


class PositionalEncoding(nn.Layer):
    """embedding.PositionalEncoding: x * sqrt(d) + pe[:, :T] (and pe[:, :T] as pos_emb);
    RelPositionalEncoding (rel=True): x * sqrt(d), and pe[:, :T] as the positions to attend."""

    def __init__(self, d, rel, max_len=64):
        super().__init__()
        self.xscale, self.rel = math.sqrt(d), rel
        self.register_buffer("pe", paddle.to_tensor(sinusoids(max_len, d)))
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        pos_emb = self.pe[:, : paddle.shape(x)[1]]
        x = x * self.xscale
        if not self.rel:
            x = x + pos_emb
        return self.dropout(x), self.dropout(pos_emb)


class Conv2dSubsampling4(nn.Layer):
    """subsampling.Conv2dSubsampling4: two 3x3 stride-2 Conv2D + ReLU on [B, 1, T, F], a Linear
    over channels x frequencies, the positional encoding; the mask subsampled by [:, :, :-2:2]
    twice."""

    def __init__(self, idim, odim, rel):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2D(1, odim, 3, 2), nn.ReLU(), nn.Conv2D(odim, odim, 3, 2), nn.ReLU()
        )
        self.out = nn.Linear(odim * (((idim - 1) // 2 - 1) // 2), odim)
        self.pos_enc = PositionalEncoding(odim, rel)

    def forward(self, x, x_mask):
        x = self.conv(x.unsqueeze(1))  # [B, C, T', F']
        b, c, t, f = paddle.shape(x)
        x = self.out(x.transpose([0, 2, 1, 3]).reshape([b, t, c * f]))
        x, pos_emb = self.pos_enc(x)
        return x, pos_emb, x_mask[:, :, :-2:2][:, :, :-2:2]


class MultiHeadedAttention(nn.Layer):
    """attention.MultiHeadedAttention; with rel=True RelPositionMultiHeadedAttention (linear_pos,
    pos_bias_u / pos_bias_v, matrix_ac + matrix_bd without rel_shift, as PaddleSpeech)."""

    def __init__(self, n_head, n_feat, rel):
        super().__init__()
        self.d_k, self.h, self.rel = n_feat // n_head, n_head, rel
        self.linear_q = nn.Linear(n_feat, n_feat)
        self.linear_k = nn.Linear(n_feat, n_feat)
        self.linear_v = nn.Linear(n_feat, n_feat)
        self.linear_out = nn.Linear(n_feat, n_feat)
        self.dropout = nn.Dropout(0.1)
        if rel:
            self.linear_pos = nn.Linear(n_feat, n_feat, bias_attr=False)
            self.pos_bias_u = self.create_parameter([self.h, self.d_k])
            self.pos_bias_v = self.create_parameter([self.h, self.d_k])

    def forward_qkv(self, query, key, value):
        n_batch = paddle.shape(query)[0]
        q = self.linear_q(query).reshape([n_batch, -1, self.h, self.d_k])
        k = self.linear_k(key).reshape([n_batch, -1, self.h, self.d_k])
        v = self.linear_v(value).reshape([n_batch, -1, self.h, self.d_k])
        return q.transpose([0, 2, 1, 3]), k.transpose([0, 2, 1, 3]), v.transpose([0, 2, 1, 3])

    def forward_attention(self, value, scores, mask):
        n_batch = paddle.shape(value)[0]
        mask = mask.unsqueeze(1).equal(0)  # [B, 1, 1, T2]: True where padding
        scores = scores.masked_fill(mask, -float("inf"))
        attn = paddle.nn.functional.softmax(scores, axis=-1).masked_fill(mask, 0.0)
        x = paddle.matmul(self.dropout(attn), value)
        x = x.transpose([0, 2, 1, 3]).reshape([n_batch, -1, self.h * self.d_k])
        return self.linear_out(x)

    def forward(self, query, key, value, pos_emb, mask, cache=None):
        q, k, v = self.forward_qkv(query, key, value)
        if cache is not None:  # streaming: the keys / values of earlier chunks in front
            key_cache, value_cache = paddle.split(cache, 2, axis=-1)
            k = paddle.concat([key_cache, k], axis=2)
            v = paddle.concat([value_cache, v], axis=2)
            new_cache = paddle.concat([k, v], axis=-1)
            q = q.transpose([0, 2, 1, 3])
            p = self.linear_pos(pos_emb).reshape([1, -1, self.h, self.d_k]).transpose([0, 2, 1, 3])
            matrix_ac = paddle.matmul(
                (q + self.pos_bias_u).transpose([0, 2, 1, 3]), k, transpose_y=True
            )
            matrix_bd = paddle.matmul(
                (q + self.pos_bias_v).transpose([0, 2, 1, 3]), p, transpose_y=True
            )
            attn = F.softmax((matrix_ac + matrix_bd) / math.sqrt(self.d_k), axis=-1)
            x = paddle.matmul(attn, v).transpose([0, 2, 1, 3])
            return self.linear_out(
                x.reshape([paddle.shape(x)[0], -1, self.h * self.d_k])
            ), new_cache
        if not self.rel:
            scores = paddle.matmul(q, k.transpose([0, 1, 3, 2])) / math.sqrt(self.d_k)
            return self.forward_attention(v, scores, mask)
        q = q.transpose([0, 2, 1, 3])  # [B, T1, H, d_k]
        p = self.linear_pos(pos_emb).reshape([paddle.shape(pos_emb)[0], -1, self.h, self.d_k])
        p = p.transpose([0, 2, 1, 3])
        q_with_bias_u = (q + self.pos_bias_u).transpose([0, 2, 1, 3])
        q_with_bias_v = (q + self.pos_bias_v).transpose([0, 2, 1, 3])
        matrix_ac = paddle.matmul(q_with_bias_u, k.transpose([0, 1, 3, 2]))
        matrix_bd = paddle.matmul(q_with_bias_v, p.transpose([0, 1, 3, 2]))
        scores = (matrix_ac + matrix_bd) / math.sqrt(self.d_k)
        return self.forward_attention(v, scores, mask)


class PositionwiseFeedForward(nn.Layer):
    def __init__(self, d, hidden, activation):
        super().__init__()
        self.w_1, self.w_2 = nn.Linear(d, hidden), nn.Linear(hidden, d)
        self.activation, self.dropout = activation, nn.Dropout(0.1)

    def forward(self, x):
        return self.w_2(self.dropout(self.activation(self.w_1(x))))


class ConvolutionModule(nn.Layer):
    """conformer_convolution.ConvolutionModule: pointwise Conv1D to 2C, GLU over channels, a
    depthwise Conv1D (groups=C; symmetric padding, or causal: F.pad on the left, NCL), batch norm
    or layer norm (over a transpose), the activation, a pointwise Conv1D; padding frames zeroed
    by masked_fill before and after."""

    def __init__(self, channels, kernel_size, activation, norm, causal):
        super().__init__()
        self.pointwise_conv1 = nn.Conv1D(channels, 2 * channels, 1)
        self.lorder = kernel_size - 1 if causal else 0
        padding = 0 if causal else (kernel_size - 1) // 2
        self.depthwise_conv = nn.Conv1D(
            channels, channels, kernel_size, padding=padding, groups=channels
        )
        self.use_layer_norm = norm == "layer_norm"
        self.norm = nn.LayerNorm(channels) if self.use_layer_norm else nn.BatchNorm1D(channels)
        self.pointwise_conv2 = nn.Conv1D(channels, channels, 1)
        self.activation = activation

    def forward_chunk(self, x, cache):
        """Streaming (causal): the last lorder frames of the previous chunk in front of x."""
        x = paddle.concat([cache, x.transpose([0, 2, 1])], axis=2)
        new_cache = x[:, :, -self.lorder :]
        x = self.depthwise_conv(F.glu(self.pointwise_conv1(x), axis=1))
        if self.use_layer_norm:
            x = self.activation(self.norm(x.transpose([0, 2, 1]))).transpose([0, 2, 1])
        else:
            x = self.activation(self.norm(x))
        return self.pointwise_conv2(x).transpose([0, 2, 1]), new_cache

    def forward(self, x, mask_pad):
        x = x.transpose([0, 2, 1])  # [B, C, T]
        x = x.masked_fill(~mask_pad, 0.0)
        if self.lorder > 0:
            x = F.pad(x, [self.lorder, 0], "constant", 0.0, data_format="NCL")
        x = F.glu(self.pointwise_conv1(x), axis=1)
        x = self.depthwise_conv(x)
        if self.use_layer_norm:
            x = x.transpose([0, 2, 1])
        x = self.activation(self.norm(x))
        if self.use_layer_norm:
            x = x.transpose([0, 2, 1])
        x = self.pointwise_conv2(x)
        x = x.masked_fill(~mask_pad, 0.0)
        return x.transpose([0, 2, 1])


class ConformerEncoderLayer(nn.Layer):
    """encoder_layer.ConformerEncoderLayer, normalize_before: macaron FFN (half-step residual),
    self-attention, the convolution module, FFN (half step), the final layer norm."""

    def __init__(self, d, rel, norm, causal):
        super().__init__()
        self.self_attn = MultiHeadedAttention(HEADS, d, rel)
        self.feed_forward = PositionwiseFeedForward(d, FFN, Swish())
        self.feed_forward_macaron = PositionwiseFeedForward(d, FFN, nn.Swish())
        self.conv_module = ConvolutionModule(d, CONV_K, Swish(), norm, causal)
        self.norm_ff, self.norm_mha = nn.LayerNorm(d, 1e-12), nn.LayerNorm(d, 1e-12)
        self.norm_ff_macaron, self.norm_conv = nn.LayerNorm(d, 1e-12), nn.LayerNorm(d, 1e-12)
        self.norm_final = nn.LayerNorm(d, 1e-12)
        self.dropout, self.ff_scale = nn.Dropout(0.1), 0.5

    def forward(self, x, mask, pos_emb, mask_pad):
        residual = x
        x = residual + self.ff_scale * self.dropout(
            self.feed_forward_macaron(self.norm_ff_macaron(x))
        )
        residual = x
        x = self.norm_mha(x)
        x = residual + self.dropout(self.self_attn(x, x, x, pos_emb, mask))
        residual = x
        x = residual + self.dropout(self.conv_module(self.norm_conv(x), mask_pad))
        residual = x
        x = residual + self.ff_scale * self.dropout(self.feed_forward(self.norm_ff(x)))
        return self.norm_final(x)

    def forward_chunk(self, x, pos_emb, att_cache, cnn_cache):
        """ConformerEncoderLayer.forward with caches (streaming decoding, no padding)."""
        x = x + self.ff_scale * self.feed_forward_macaron(self.norm_ff_macaron(x))
        y = self.norm_mha(x)
        y, new_att_cache = self.self_attn(y, y, y, pos_emb, None, att_cache)
        x = x + y
        y, new_cnn_cache = self.conv_module.forward_chunk(self.norm_conv(x), cnn_cache)
        x = x + y
        x = x + self.ff_scale * self.feed_forward(self.norm_ff(x))
        return self.norm_final(x), new_att_cache, new_cnn_cache


def make_non_pad_mask(lengths, max_len):
    """mask.make_non_pad_mask: True within each sequence's length, [B, T]."""
    return paddle.arange(max_len, dtype=lengths.dtype).unsqueeze(0) < lengths.unsqueeze(-1)


def subsequent_chunk_mask(size, chunk_size):
    """mask.subsequent_chunk_mask (wenet's vectorised form): frame i sees the frames up to the
    end of its chunk, [T, T] bool."""
    pos_idx = paddle.arange(size)
    block_value = (pos_idx // chunk_size + 1) * chunk_size
    return pos_idx.unsqueeze(0) < block_value.unsqueeze(1)


class ConformerCTC(Speech):
    """A u2 Conformer encoder under a CTC head: Conv2dSubsampling4 of [B, T, IDIM] features,
    two ConformerEncoderLayers (the first with batch norm in a symmetric convolution module, or
    a causal one with `causal`, the second with layer norm in a causal one), the after-norm,
    Linear + log_softmax. With `chunk`, attention within the padding mask and a static chunk mask
    (decoding_chunk_size). Outputs the log-probabilities [B, T', VOCAB] and the subsampled
    lengths."""

    inputs = [("feats", [None, None, IDIM], "float32"), ("lengths", [None], "int64")]

    def __init__(self, rel=True, chunk=0, causal=False):
        super().__init__()
        self.chunk = chunk
        self.embed = Conv2dSubsampling4(IDIM, D_MODEL, rel)
        self.encoders = nn.LayerList(
            [
                ConformerEncoderLayer(D_MODEL, rel, "batch_norm", causal),
                ConformerEncoderLayer(D_MODEL, rel, "layer_norm", True),
            ]
        )
        self.after_norm = nn.LayerNorm(D_MODEL, 1e-12)
        self.ctc_lo = nn.Linear(D_MODEL, VOCAB)

    def forward(self, feats, lengths):
        masks = make_non_pad_mask(lengths, paddle.shape(feats)[1]).unsqueeze(1)  # [B, 1, T]
        xs, pos_emb, masks = self.embed(feats, masks)
        att_mask = masks
        if self.chunk:  # a static decoding chunk: mask.add_optional_chunk_mask's chunk mask
            att_mask = masks & subsequent_chunk_mask(paddle.shape(xs)[1], self.chunk).unsqueeze(0)
        for layer in self.encoders:
            xs = layer(xs, att_mask, pos_emb, masks)
        xs = self.after_norm(xs)
        out_lens = masks.squeeze(1).astype("int64").sum(-1)
        return F.log_softmax(self.ctc_lo(xs), axis=2), out_lens

    @staticmethod
    def example(rng, batch=2, frames=27):
        lengths = np.array([frames - 7 * i for i in range(batch)], np.int64)
        return {
            "feats": rng.standard_normal((batch, frames, IDIM)).astype(np.float32),
            "lengths": lengths,
        }

    @staticmethod
    def cases(rng):
        return [ConformerCTC.example(rng, 3, 40), ConformerCTC.example(rng, 1, 15)]


# --- TCN / WaveNet ----------------------------------------------------------------------------


class TemporalBlock(nn.Layer):
    """locuslab's TCN TemporalBlock (as Paddle ports write it): two weight-normed dilated Conv1Ds
    padded (k-1)*d on both sides with the right end chomped off, ReLU, dropout, a 1x1 downsample
    on the residual where the widths differ, ReLU of the sum."""

    def __init__(self, cin, cout, k, d):
        super().__init__()
        pad = (k - 1) * d
        self.chomp = pad
        self.conv1 = nn.utils.weight_norm(nn.Conv1D(cin, cout, k, padding=pad, dilation=d))
        self.conv2 = nn.utils.weight_norm(nn.Conv1D(cout, cout, k, padding=pad, dilation=d))
        self.dropout = nn.Dropout(0.2)
        self.downsample = nn.Conv1D(cin, cout, 1) if cin != cout else None

    def forward(self, x):
        out = self.dropout(F.relu(self.conv1(x)[:, :, : -self.chomp]))
        out = self.dropout(F.relu(self.conv2(out)[:, :, : -self.chomp]))
        res = x if self.downsample is None else self.downsample(x)
        return F.relu(out + res)


class WaveNetBlock(nn.Layer):
    """A WaveNet residual block (Parakeet / PaddleSpeech t2s style): the dilated causal Conv1D
    after F.pad([(k-1)*d, 0], data_format='NCL'), a 1x1 projection of the conditioning features
    added, the gate tanh(a) * sigmoid(b) of its channel halves, 1x1 residual and skip convs, the
    residual sum scaled by sqrt(0.5)."""

    def __init__(self, res_ch, gate_ch, skip_ch, aux_ch, k, d):
        super().__init__()
        self.pad = (k - 1) * d
        self.conv = nn.Conv1D(res_ch, gate_ch, k, dilation=d)
        self.conv1x1_aux = nn.Conv1D(aux_ch, gate_ch, 1, bias_attr=False)
        self.conv1x1_out = nn.Conv1D(gate_ch // 2, res_ch, 1)
        self.conv1x1_skip = nn.Conv1D(gate_ch // 2, skip_ch, 1)

    def forward(self, x, c):
        h = self.conv(F.pad(x, [self.pad, 0], data_format="NCL"))
        h = h + self.conv1x1_aux(c)
        a, b = paddle.split(h, 2, axis=1)
        h = paddle.tanh(a) * F.sigmoid(b)
        skip = self.conv1x1_skip(h)
        return (self.conv1x1_out(h) + x) * math.sqrt(0.5), skip


class TemporalConvNet(Speech):
    """TCN blocks (dilations 1, 2) on a [B, 4, L] signal, then WaveNet blocks (dilations 1, 2, 4,
    1) conditioned on [B, 3, L] features, the skips summed, ReLU, 1x1, ReLU, 1x1 to 6 classes;
    out0 [B, 6, L], out1 the TCN's features pooled over time."""

    inputs = [("x", [None, 4, None], "float32"), ("c", [None, 3, None], "float32")]

    def __init__(self):
        super().__init__()
        self.tcn = nn.LayerList([TemporalBlock(4, 8, 3, 1), TemporalBlock(8, 8, 3, 2)])
        self.blocks = nn.LayerList([WaveNetBlock(8, 12, 8, 3, 2, d) for d in (1, 2, 4, 1)])
        self.last = nn.Sequential(nn.ReLU(), nn.Conv1D(8, 8, 1), nn.ReLU(), nn.Conv1D(8, 6, 1))

    def forward(self, x, c):
        for block in self.tcn:
            x = block(x)
        pooled = x.mean(axis=2)
        skips = 0
        for block in self.blocks:
            x, s = block(x, c)
            skips = skips + s
        return self.last(skips * math.sqrt(1.0 / len(self.blocks))), pooled

    @staticmethod
    def example(rng, batch=2, length=17):
        return {
            "x": rng.standard_normal((batch, 4, length)).astype(np.float32),
            "c": rng.standard_normal((batch, 3, length)).astype(np.float32),
        }

    @staticmethod
    def cases(rng):
        return [TemporalConvNet.example(rng, 3, 30), TemporalConvNet.example(rng, 1, 9)]


# --- nn.Transformer with greedy decoding ----------------------------------------------------

TVOCAB, TD, BOS, PAD = 16, 16, 1, 0


class TransformerSeq2Seq(Speech):
    """PaddleNLP's transformer translation model, tiny: word embeddings scaled by sqrt(d) plus
    sinusoid positions, nn.Transformer (1 + 2 layers, post-norm) with the source padding bias
    (-1e9 at pad ids, [B, 1, 1, S]) on the encoder self-attention and the decoder's memory
    attention and the causal mask of nn.Transformer.generate_square_subsequent_mask on the
    decoder; out0: teacher-forced logits [B, T, V] of `tgt`; out1: greedy decoding of
    `max_len` tokens from BOS (a `for` over a fed length: pd_op.while, the prefix growing by
    concat, argmax each step); out2: the same decoding with the decoder's caches (incremental
    keys / values) carried through the loop."""

    inputs = [
        ("src", [None, None], "int64"),
        ("tgt", [None, None], "int64"),
        ("max_len", [1], "int64"),
    ]

    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(TVOCAB, TD, padding_idx=PAD)
        self.tgt_emb = nn.Embedding(TVOCAB, TD, padding_idx=PAD)
        self.register_buffer("pe", paddle.to_tensor(sinusoids(32, TD)[0]))
        self.transformer = nn.Transformer(
            TD, 2, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=32, dropout=0.1
        )
        self.project = nn.Linear(TD, TVOCAB)

    def embed(self, emb, ids):
        return emb(ids) * math.sqrt(TD) + self.pe[: paddle.shape(ids)[1]]

    def decode(self, ys, memory, src_bias):
        t = paddle.shape(ys)[1]
        tgt_mask = self.transformer.generate_square_subsequent_mask(t)
        out = self.transformer.decoder(self.embed(self.tgt_emb, ys), memory, tgt_mask, src_bias)
        return self.project(out)

    def forward(self, src, tgt, max_len):
        src_bias = paddle.cast(src == PAD, "float32").unsqueeze([1, 2]) * -1e9
        memory = self.transformer.encoder(self.embed(self.src_emb, src), src_bias)
        logits = self.decode(tgt, memory, src_bias)
        ys = paddle.full([paddle.shape(src)[0], 1], BOS, "int64")
        for _ in range(max_len[0]):
            step = self.decode(ys, memory, src_bias)[:, -1]
            ys = paddle.concat([ys, paddle.argmax(step, axis=-1, keepdim=True)], axis=1)
        # The same decoding incrementally, as PaddleNLP's generation does: the decoder's caches
        # (gen_cache: each layer's self-attention keys / values growing by concat, the memory's
        # projected once) carried through the loop, one token in per step.
        cache = self.transformer.decoder.gen_cache(memory)
        tok = paddle.full([paddle.shape(src)[0], 1], BOS, "int64")
        cached = tok
        for i in range(max_len[0]):
            x = self.tgt_emb(tok) * math.sqrt(TD) + self.pe[i : i + 1]
            out, cache = self.transformer.decoder(x, memory, None, src_bias, cache)
            tok = paddle.argmax(self.project(out)[:, -1], axis=-1, keepdim=True)
            cached = paddle.concat([cached, tok], axis=1)
        return logits, ys, cached

    @staticmethod
    def example(rng, batch=2, s=7, t=5, n=4):
        src = rng.integers(2, TVOCAB, (batch, s)).astype(np.int64)
        for i in range(1, batch):
            src[i, s - 2 * i :] = PAD
        tgt = rng.integers(2, TVOCAB, (batch, t)).astype(np.int64)
        tgt[:, 0] = BOS
        return {"src": src, "tgt": tgt, "max_len": np.array([n], np.int64)}

    @staticmethod
    def cases(rng):
        return [
            TransformerSeq2Seq.example(rng, 3, 9, 3, 6),
            TransformerSeq2Seq.example(rng, 1, 4, 6, 0),
        ]


# --- RNN seq2seq with attention -------------------------------------------------------------

SVOCAB, EMB, HID, TGT_LEN = 14, 8, 12, 5


class RnnAttnSeq2Seq(Speech):
    """A PaddleNLP / Paddle-tutorial seq2seq: embeddings, an nn.GRU (bidirectional) or nn.LSTM
    encoder over the fed lengths, and a decoder cell (nn.GRUCell or nn.LSTMCell) stepped by hand
    over the TGT_LEN target tokens (teacher forcing, an unrolled Python loop), attention each step
    under the length mask `paddle.arange(S) < lengths[:, None]`: Bahdanau's additive
    v^T tanh(W enc + U h) (GRU) or Luong's general h^T W enc with input feeding (LSTM); scores by
    matmul, paddle.where on the mask, softmax, the context by matmul. Out0: logits [B, T, V];
    out1: the attention weights of the last step."""

    # Paddle 3.3.1's dygraph backward through nn.GRU / nn.LSTM in eval mode fails ("Tensor holds
    # no memory": the rnn op keeps no Reserve when is_test); without dropout, train mode computes
    # the same outputs.
    grads_in_train_mode = True

    def __init__(self, cell="gru", dynamic=False):
        super().__init__()
        self.cell_type, self.dynamic = cell, dynamic
        self.inputs = [
            ("src", [None, None], "int64"),
            ("src_len", [None], "int64"),
            ("tgt", [None, None if dynamic else TGT_LEN], "int64"),
        ]
        self.src_emb = nn.Embedding(SVOCAB, EMB)
        self.tgt_emb = nn.Embedding(SVOCAB, EMB)
        if cell == "gru":
            self.encoder = nn.GRU(EMB, HID // 2, direction="bidirect")
            self.cell = nn.GRUCell(EMB + HID, HID)
            self.w_enc = nn.Linear(HID, HID, bias_attr=False)
            self.w_dec = nn.Linear(HID, HID)
            self.v = nn.Linear(HID, 1, bias_attr=False)
            self.bridge = nn.Linear(HID, HID)
        else:
            self.encoder = nn.LSTM(EMB, HID, num_layers=1)
            self.cell = nn.LSTMCell(EMB + HID, HID)
            self.w_att = nn.Linear(HID, HID, bias_attr=False)
            self.concat = nn.Linear(2 * HID, HID, bias_attr=False)
        self.out = nn.Linear(HID, SVOCAB)

    def attend(self, enc, enc_keys, h, mask):
        if self.cell_type == "gru":  # Bahdanau
            e = self.v(paddle.tanh(enc_keys + self.w_dec(h).unsqueeze(1))).squeeze(-1)
        else:  # Luong, general
            e = paddle.matmul(enc_keys, h.unsqueeze(-1)).squeeze(-1)
        e = paddle.where(mask, e, paddle.full_like(e, -1e9))
        a = F.softmax(e, axis=-1)
        return paddle.matmul(a.unsqueeze(1), enc).squeeze(1), a

    def forward(self, src, src_len, tgt):
        enc, final = self.encoder(self.src_emb(src), sequence_length=src_len)
        mask = paddle.arange(paddle.shape(src)[1]).unsqueeze(0) < src_len.unsqueeze(1)
        b = paddle.shape(src)[0]
        ctx = paddle.zeros([b, HID], "float32")
        if self.cell_type == "gru":
            h = paddle.tanh(self.bridge(paddle.concat([final[0], final[1]], axis=-1)))
            state, keys = h, self.w_enc(enc)
        else:
            h, c = final[0][0], final[1][0]
            state, keys = (h, c), self.w_att(enc)
        emb = self.tgt_emb(tgt)
        logits = []
        a = paddle.zeros_like(mask, "float32")
        # dynamic: a loop over the fed target length, pd_op.while (logits a tensor array).
        for t in range(paddle.shape(tgt)[1] if self.dynamic else TGT_LEN):
            inp = paddle.concat([emb[:, t], ctx], axis=-1)
            if self.cell_type == "gru":
                h, state = self.cell(inp, state)
                ctx, a = self.attend(enc, keys, h, mask)
                logits.append(self.out(h + ctx))
            else:
                h, state = self.cell(inp, state)
                c_t, a = self.attend(enc, keys, h, mask)
                ctx = paddle.tanh(self.concat(paddle.concat([c_t, h], axis=-1)))  # input feeding
                logits.append(self.out(ctx))
        return paddle.stack(logits, axis=1), a

    def example(self, rng, batch=3, s=6, t=TGT_LEN):
        src_len = np.array([s - 2 * i for i in range(batch)], np.int64)
        src = rng.integers(1, SVOCAB, (batch, s)).astype(np.int64)
        for i, n in enumerate(src_len):
            src[i, n:] = 0
        tgt = rng.integers(1, SVOCAB, (batch, t)).astype(np.int64)
        return {"src": src, "src_len": src_len, "tgt": tgt}

    def cases(self, rng):
        if self.dynamic:
            return [self.example(rng, 4, 9, 7), self.example(rng, 1, 3, 1)]
        return [self.example(rng, 4, 9), self.example(rng, 1, 3)]


class ConformerStream(ConformerCTC):
    """The same Conformer (relative positions, causal convolutions) exported for streaming as
    PaddleSpeech exports u2's `forward_encoder_chunk`: one chunk of features [1, T, IDIM], the
    offset of its first subsampled frame, the cache size to keep, the attention cache [layers,
    heads, T_cache, 2 d_k] (keys and values; T_cache 0 for the first chunk: a zero-size tensor)
    and the convolution cache [layers, 1, D, K - 1]. Outputs the CTC log-probabilities of the
    chunk and both new caches: positions from pe[offset - T_cache : offset + T], the keys and
    values concatenated to the cache, the kept part sliced from clip(keys - required, min=0)."""

    inputs = [
        ("xs", [1, None, IDIM], "float32"),
        ("offset", [1], "int32"),
        ("required_cache_size", [1], "int32"),
        ("att_cache", [None, None, None, None], "float32"),
        ("cnn_cache", [None, None, None, None], "float32"),
    ]

    def __init__(self):
        super().__init__(rel=True, causal=True)

    def forward(self, xs, offset, required_cache_size, att_cache, cnn_cache):
        masks = paddle.ones([1, 1, paddle.shape(xs)[1]], "bool")
        xs, _, _ = self.embed(xs, masks)
        cache_t1 = paddle.shape(att_cache)[2]
        key_size = cache_t1 + paddle.shape(xs)[1]
        start = offset.astype("int64")[0] - cache_t1
        pos_emb = self.embed.pos_enc.pe[:, start : start + key_size]
        next_cache_start = paddle.clip(key_size - required_cache_size.astype("int64")[0], min=0)
        r_att_cache, r_cnn_cache = [], []
        for i, layer in enumerate(self.encoders):
            xs, new_att, new_cnn = layer.forward_chunk(
                xs, pos_emb, att_cache[i : i + 1], cnn_cache[i]
            )
            r_att_cache.append(new_att[:, :, next_cache_start:, :])
            r_cnn_cache.append(new_cnn.unsqueeze(0))
        xs = self.after_norm(xs)
        return (
            F.log_softmax(self.ctc_lo(xs), axis=2),
            paddle.concat(r_att_cache, axis=0),
            paddle.concat(r_cnn_cache, axis=0),
        )

    @staticmethod
    def example(rng, frames=19, cache=8, offset=8, required=8):
        return {
            "xs": rng.standard_normal((1, frames, IDIM)).astype(np.float32),
            "offset": np.array([offset], np.int32),
            "required_cache_size": np.array([required], np.int32),
            "att_cache": rng.standard_normal((2, HEADS, cache, 2 * D_MODEL // HEADS)).astype(
                np.float32
            ),
            "cnn_cache": rng.standard_normal((2, 1, D_MODEL, CONV_K - 1)).astype(np.float32),
        }

    @staticmethod
    def cases(rng):
        """The first chunk (empty attention cache, zero convolution cache), a longer chunk with
        a short cache."""
        first = ConformerStream.example(rng, 19, 0, 0, 8)
        first["cnn_cache"][:] = 0
        return [first, ConformerStream.example(rng, 27, 3, 3, 4)]


SPEECH_MODELS = {
    "speech_conformer": lambda: ConformerCTC(rel=True, chunk=2),
    "speech_conformer_stream": ConformerStream,
    "speech_conformer_abs": lambda: ConformerCTC(rel=False),
    "speech_tcn": TemporalConvNet,
    "speech_transformer": TransformerSeq2Seq,
    "speech_gru_attn": lambda: RnnAttnSeq2Seq("gru"),
    "speech_lstm_attn": lambda: RnnAttnSeq2Seq("lstm"),
    "speech_gru_attn_dyn": lambda: RnnAttnSeq2Seq("gru", dynamic=True),
}
# The models saved as fixtures (tests/python/test_paddle_speech.py); the others (absolute
# positions, the unrolled GRU decoder) load and fine-tune too but add no op or path of their own.
FIXTURES = [
    "speech_conformer",
    "speech_conformer_stream",
    "speech_tcn",
    "speech_transformer",
    "speech_gru_attn_dyn",
    "speech_lstm_attn",
]


def first_output(outs):
    return outs[0] if isinstance(outs, (tuple, list)) else outs


def dygraph_grads(net, feed, rng):
    """Paddle's dygraph gradients of sum(out0 * R) for every parameter, R fixed random."""
    paddle.disable_static()
    tensors = {k: paddle.to_tensor(v) for k, v in feed.items()}
    for p in net.parameters():
        p.clear_gradient()
    if getattr(net, "grads_in_train_mode", False):
        net.train()  # see RnnAttnSeq2Seq
    out = first_output(net(**tensors))
    net.eval()
    r = rng.standard_normal(out.shape).astype(np.float32)
    loss = (out * paddle.to_tensor(r)).sum()
    # nn.utils.weight_norm's hook computes `weight` from weight_g and weight_v before each call;
    # paddle.jit.save does not trace the hook but saves that tensor (an `eager_tmp_<n>`
    # parameter), so the saved program's parameter is the effective weight: its gradient too.
    normed = [s for s in net.sublayers() if hasattr(s, "weight_g")]
    params = [p for p in net.parameters() if not p.stop_gradient]
    got = paddle.grad(loss, params + [s.weight for s in normed], allow_unused=True)
    grads = {p.name: g.numpy() for p, g in zip(params, got) if g is not None}
    weights = {id(s): g.numpy() for s, g in zip(normed, got[len(params) :])}
    return r, grads, float(loss), lambda: {s.weight.name: weights[id(s)] for s in normed}


def export(name, out_root):
    import paddle_export as pe

    rng = np.random.default_rng(pe.SEED + sum(map(ord, name)))
    out_dir = pe.fresh_dir(os.path.join(out_root, "pir"), name)
    paddle.disable_static()
    paddle.seed(pe.SEED)
    net = SPEECH_MODELS[name]()
    net.eval()
    net.randomize_weights(rng)
    spec = [paddle.static.InputSpec(shape, dtype, n) for n, shape, dtype in net.inputs]
    prefix = os.path.join(out_dir, "inference")
    feed = net.example(rng)
    r, grads, loss, normed_grads = dygraph_grads(net, feed, rng)
    paddle.jit.save(net, prefix, input_spec=spec)
    grads.update(normed_grads())  # the names the saved weights took
    with open(prefix + ".json") as f:
        ops = json.load(f)["program"]["regions"][0]["blocks"][0]["ops"]
    saved = {op["A"][3] for op in ops if op["#"] == "p"}
    # weight_norm's weight_g / weight_v are not in the program (above).
    grads = {n: g for n, g in grads.items() if n in saved}
    print(
        name, "parameters without gradients (buffers, batch norm statistics):", saved - set(grads)
    )
    np.savez(os.path.join(out_dir, "grads.npz"), loss_weight=r, **grads)
    cases = {}
    for i, case in enumerate(net.cases(rng)):
        outs = net(**{k: paddle.to_tensor(v) for k, v in case.items()})
        outs = outs if isinstance(outs, (tuple, list)) else [outs]
        cases.update({"%s_%d" % (k, i): v for k, v in case.items()})
        cases.update({"out%d_%d" % (k, i): o.numpy() for k, o in enumerate(outs)})
    paddle.enable_static()
    if os.path.exists(prefix + ".pdiparams.info"):
        os.remove(prefix + ".pdiparams.info")
    pe.record(name, "pir", out_dir, prefix, feed, extra={"dygraph_loss": loss})
    # The extra shapes through the saved program too (Paddle's executor), against dygraph.
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        prog, feeds, fetches = paddle.static.load_inference_model(prefix, exe)
        for i in range(len(net.cases(np.random.default_rng(0)))):
            got = exe.run(
                prog, feed={k: cases["%s_%d" % (k, i)] for k in feeds}, fetch_list=fetches
            )
            for k, g in enumerate(got):
                want = cases["out%d_%d" % (k, i)]
                gap = np.max(np.abs(g - want)) / (np.max(np.abs(want)) + 1e-12) if g.size else 0
                assert g.shape == want.shape and gap < 1e-4, (name, i, k, g.shape, want.shape, gap)
    np.savez(os.path.join(out_dir, "cases.npz"), **cases)


def main():
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="output directory (tests/fixtures/paddle)")
    ap.add_argument("--only", action="append", help="export only these models")
    args = ap.parse_args()
    for name in args.only or FIXTURES:
        export(name, args.out)


if __name__ == "__main__":
    main()
