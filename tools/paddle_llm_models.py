"""Small versions of today's large-language-model decoders as PaddleNLP writes LLaMA, Qwen2 and
Mistral in Paddle 3.x (paddlenlp/transformers/llama, qwen2, mistral modeling.py): token embedding,
RMSNorm, rotary position embeddings, grouped-query attention, a SwiGLU MLP and the LM head, at
hidden 32, 4 heads, 2 KV heads, 2 layers, vocabulary 64 (~90 KB of parameters); plus one decode
step with a KV cache and a sampling tail, and one over a preallocated (static) cache. Each model
has the interface of paddle_family_models (`inputs`, `example(rng)`, `randomize_weights(rng)`)
and `alt_examples(rng)`, feeds of other batch sizes and lengths.

    python tools/paddle_llm_models.py OUT [NAME ...]   # Paddle 3.x: OUT/<name>/, PIR programs

saves each model by paddle.jit.save and records Paddle's executor's outputs as
tools/paddle_export.py's record does (inputs.npz, expected.npy / .npz, info.json, which also
holds the gap of Paddle's plain predictor), plus `alt.npz` (for each alt example i, its feed
"i/in/<name>" and Paddle's outputs "i/out/<j>") and `grads.npz`: Paddle's dygraph gradients of
sum(out0 * R) w.r.t. every parameter ("grad/<name>") and R ("R"), for the fine-tuning check."""

import json
import os
import sys

# PIR programs (Paddle 3.x's default), before paddle (and paddle_export, which would set the
# legacy format without --pir) is imported.
os.environ.setdefault("FLAGS_enable_pir_api", "1")

import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.nn.functional as F  # noqa: E402
from paddle import nn  # noqa: E402

VOCAB, HIDDEN, HEADS, KV_HEADS, INTER, LAYERS, MAX_POS = 64, 32, 4, 2, 64, 2, 64
HEAD_DIM = HIDDEN // HEADS
EPS = 1e-6
ROPE_BASE = 10000.0


class Llm(nn.Layer):
    """Random weights: every parameter normal 0.2, RMSNorm scales in [0.5, 1.5]."""

    def randomize_weights(self, rng):
        with paddle.no_grad():
            for p in self.parameters():
                p.set_value(rng.normal(0, 0.2, p.shape).astype(np.float32))
            for sub in self.sublayers():
                if isinstance(sub, RMSNorm):
                    sub.weight.set_value(rng.uniform(0.5, 1.5, sub.weight.shape).astype(np.float32))


# --- RMSNorm ---------------------------------------------------------------------------------


class RMSNorm(nn.Layer):
    """LlamaRMSNorm: written out (`fused=False`) in float32, or paddle.incubate's
    fused_rms_norm (PaddleNLP's use_fused_rms_norm)."""

    def __init__(self, fused=False):
        super().__init__()
        self.weight = self.create_parameter(
            [HIDDEN], default_initializer=nn.initializer.Constant(1.0)
        )
        self.fused = fused

    def forward(self, x):
        if self.fused:
            from paddle.incubate.nn.functional import fused_rms_norm

            return fused_rms_norm(x, self.weight, None, EPS, begin_norm_axis=2)[0]
        variance = x.astype("float32").pow(2).mean(-1, keepdim=True)
        return x * paddle.rsqrt(variance + EPS) * self.weight


# --- rotary position embeddings --------------------------------------------------------------


def inv_freq():
    return 1.0 / (ROPE_BASE ** (paddle.cast(paddle.arange(0, HEAD_DIM, 2), "float32") / HEAD_DIM))


def rope_tables(seq_len):
    """LlamaRotaryEmbedding's cos / sin at positions 0 .. seq_len - 1, [seq, head_dim]: the
    outer product of the positions and the inverse frequencies (einsum 'i,j->ij'), twice."""
    t = paddle.arange(seq_len, dtype="float32")
    freqs = paddle.einsum("i,j->ij", t, inv_freq())
    emb = paddle.concat([freqs, freqs], axis=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return paddle.concat([-x2, x1], axis=-1)


def apply_rotary(q, k, cos, sin):
    """q, k: [B, S, heads, D]; cos, sin: [B or 1, S, 1, D]."""
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def apply_rotary_interleaved(x, cos, sin):
    """The GPT-J / ChatGLM form (PaddleNLP's use_neox_rotary_style=False): pairs (x[2i],
    x[2i+1]) rotated by angle i; x: [B, S, heads, D], cos / sin: [1, S, 1, D / 2]."""
    pairs = x.reshape([0, 0, x.shape[2], HEAD_DIM // 2, 2])
    x1, x2 = pairs[..., 0], pairs[..., 1]
    out = paddle.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    return out.reshape([0, 0, x.shape[2], HEAD_DIM])


# --- grouped-query attention -----------------------------------------------------------------


def repeat_kv(x, n_rep):
    """PaddleNLP's repeat_kv: [B, S, kv_heads, D] -> [B, S, kv_heads * n_rep, D], each kv head
    repeated n_rep times in place (unsqueeze, expand, reshape)."""
    x = x.unsqueeze(-2).expand([-1, -1, KV_HEADS, n_rep, HEAD_DIM])
    return x.reshape([0, 0, KV_HEADS * n_rep, HEAD_DIM])


def make_causal_mask(batch, tgt_len, past_len):
    """PaddleNLP's _make_causal_mask: [B, 1, S, P + S] bool, True where a query (at P + i) may
    see a key (j <= P + i)."""
    mask = paddle.tril(paddle.ones([tgt_len, tgt_len], dtype="bool"))
    mask = paddle.concat([paddle.ones([tgt_len, past_len], dtype="bool"), mask], axis=-1)
    return mask[None, None, :, :].expand([batch, 1, tgt_len, tgt_len + past_len])


def expand_2d_mask(mask, tgt_len):
    """PaddleNLP's _expand_2d_mask: [B, L] (1 keep, 0 pad) -> [B, 1, S, L] bool."""
    mask = mask[:, None, None, :].astype("bool")
    mask.stop_gradient = True  # as PaddleNLP: Paddle expands a bool only without a gradient
    return mask.expand([-1, 1, tgt_len, -1])


def decoder_mask(attention_mask, batch, tgt_len, past_len):
    """_prepare_decoder_attention_mask: causal & padding, as an additive float mask (0 where
    seen, the float32 minimum elsewhere)."""
    mask = make_causal_mask(batch, tgt_len, past_len) & expand_2d_mask(attention_mask, tgt_len)
    return paddle.where(mask, 0.0, paddle.finfo(paddle.float32).min).astype("float32")


class Attention(nn.Layer):
    """LlamaAttention / Qwen2Attention / MistralAttention at 4 query heads over 2 KV heads.
    `rope`: 'half' (rotate_half) or 'interleaved'; `gqa`: 'expand' (repeat_kv),
    'repeat_interleave', or 'sdpa' (2 KV heads into F.scaled_dot_product_attention, whose
    enable_gqa repeats them); `core`: 'sdpa_causal' (F.scaled_dot_product_attention, is_causal),
    'sdpa_mask' (with an attn_mask), 'matmul' (softmax(q k^T / sqrt(d) + mask) v)."""

    def __init__(self, bias=False, rope="half", gqa="expand", core="matmul"):
        super().__init__()
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias_attr=bias)
        self.k_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias_attr=bias)
        self.v_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias_attr=bias)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias_attr=False)
        self.rope, self.gqa, self.core = rope, gqa, core

    def forward(self, x, cos, sin, mask=None, past=None):
        q = self.q_proj(x).reshape([0, 0, HEADS, HEAD_DIM])
        k = self.k_proj(x).reshape([0, 0, KV_HEADS, HEAD_DIM])
        v = self.v_proj(x).reshape([0, 0, KV_HEADS, HEAD_DIM])
        if self.rope == "half":
            q, k = apply_rotary(q, k, cos, sin)
        else:
            q, k = apply_rotary_interleaved(q, cos, sin), apply_rotary_interleaved(k, cos, sin)
        if past is not None:  # [B, P, kv_heads, D] each, the new keys after them
            k = paddle.concat([past[0], k], axis=1)
            v = paddle.concat([past[1], v], axis=1)
        present = (k, v)
        n_rep = HEADS // KV_HEADS
        if self.gqa == "expand":
            k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
        elif self.gqa == "repeat_interleave":
            k = paddle.repeat_interleave(k, n_rep, axis=2)
            v = paddle.repeat_interleave(v, n_rep, axis=2)
        if self.core == "sdpa_causal":
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        elif self.core == "sdpa_mask":
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:  # PaddleNLP's scaled_dot_product_attention without flash attention
            q, k, v = (t.transpose([0, 2, 1, 3]) for t in (q, k, v))
            scores = paddle.matmul(q / (HEAD_DIM**0.5), k, transpose_y=True) + mask
            probs = F.softmax(scores.astype("float32"), axis=-1)
            out = paddle.matmul(probs, v).transpose([0, 2, 1, 3])
        return self.o_proj(out.reshape([0, 0, HIDDEN])), present


class MLP(nn.Layer):
    """LlamaMLP: down(silu(gate(x)) * up(x)); `fused`: one gate_up projection through
    paddle.incubate's swiglu (PaddleNLP's fuse_attention_ffn)."""

    def __init__(self, fused=False):
        super().__init__()
        self.fused = fused
        if fused:
            self.gate_up_fused_proj = nn.Linear(HIDDEN, 2 * INTER, bias_attr=False)
        else:
            self.gate_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
            self.up_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.down_proj = nn.Linear(INTER, HIDDEN, bias_attr=False)

    def forward(self, x):
        if self.fused:
            from paddle.incubate.nn.functional import swiglu

            return self.down_proj(swiglu(self.gate_up_fused_proj(x)))
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Layer):
    def __init__(self, fused_norm=False, fused_mlp=False, **attn):
        super().__init__()
        self.input_layernorm = RMSNorm(fused_norm)
        self.self_attn = Attention(**attn)
        self.post_attention_layernorm = RMSNorm(fused_norm)
        self.mlp = MLP(fused_mlp)

    def forward(self, x, cos, sin, mask=None, past=None):
        h, present = self.self_attn(self.input_layernorm(x), cos, sin, mask, past)
        x = x + h
        return x + self.mlp(self.post_attention_layernorm(x)), present


def token_ids(rng, batch=2, seq=10):
    return rng.integers(0, VOCAB, (batch, seq)).astype(np.int64)


# --- LLaMA -----------------------------------------------------------------------------------


class Llama(Llm):
    """LlamaForCausalLM: hand-written RMSNorm, cos / sin computed from paddle.arange at the run's
    length, rotate_half, repeat_kv by expand + reshape, F.scaled_dot_product_attention with
    is_causal (`core`), SwiGLU by F.silu, an untied lm_head."""

    inputs = [("input_ids", [None, None], "int64")]

    def __init__(self, core="sdpa_causal"):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList(
            [DecoderLayer(rope="half", gqa="expand", core=core) for _ in range(LAYERS)]
        )
        self.norm = RMSNorm()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)
        self.core = core

    def forward(self, input_ids):
        seq_len = paddle.shape(input_ids)[1]
        x = self.embed_tokens(input_ids)
        cos, sin = rope_tables(seq_len)
        cos, sin = cos[None, :, None, :], sin[None, :, None, :]
        mask = None
        if self.core == "matmul":
            mask = paddle.triu(paddle.full([seq_len, seq_len], float("-inf")), diagonal=1)
        for layer in self.layers:
            x, _ = layer(x, cos, sin, mask)
        return self.lm_head(self.norm(x))

    @staticmethod
    def example(rng):
        return {"input_ids": token_ids(rng)}

    @staticmethod
    def alt_examples(rng):
        return [{"input_ids": token_ids(rng, 3, 7)}, {"input_ids": token_ids(rng, 1, 1)}]


# --- Qwen2 -----------------------------------------------------------------------------------


class Qwen2(Llm):
    """Qwen2ForCausalLM: q / k / v with biases, fused_rms_norm, cos / sin caches built in
    __init__ (max_position_embeddings rows) and gathered at position_ids from the attention
    mask's cumsum, 2 KV heads into F.scaled_dot_product_attention (its enable_gqa) with the 4-D
    additive mask of
    _prepare_decoder_attention_mask (causal and padding), paddle.incubate's swiglu on a fused
    gate_up projection, the LM head tied to the embedding."""

    inputs = [("input_ids", [None, None], "int64"), ("attention_mask", [None, None], "int64")]

    def __init__(self, core="sdpa_mask"):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList(
            [
                DecoderLayer(fused_norm=True, fused_mlp=True, bias=True, gqa="sdpa", core=core)
                for _ in range(LAYERS)
            ]
        )
        self.norm = RMSNorm(fused=True)
        cos, sin = rope_tables(MAX_POS)
        self.register_buffer("cos_cached", cos, persistable=False)
        self.register_buffer("sin_cached", sin, persistable=False)

    def forward(self, input_ids, attention_mask):
        batch, seq_len = paddle.shape(input_ids)[0], paddle.shape(input_ids)[1]
        position_ids = paddle.clip(paddle.cumsum(attention_mask, axis=-1) - 1, min=0)
        cos = paddle.index_select(self.cos_cached, position_ids.flatten()).reshape(
            [batch, seq_len, 1, HEAD_DIM]
        )
        sin = paddle.index_select(self.sin_cached, position_ids.flatten()).reshape(
            [batch, seq_len, 1, HEAD_DIM]
        )
        mask = decoder_mask(attention_mask, batch, seq_len, 0)
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x, _ = layer(x, cos, sin, mask)
        x = self.norm(x)
        return paddle.matmul(x, self.embed_tokens.weight, transpose_y=True)

    @staticmethod
    def example(rng, batch=2, seq=10):
        """Right padding: row i has seq - 3 i tokens."""
        mask = np.ones((batch, seq), np.int64)
        for i in range(batch):
            mask[i, seq - 3 * i :] = 0
        return {"input_ids": token_ids(rng, batch, seq), "attention_mask": mask}

    @staticmethod
    def alt_examples(rng):
        return [Qwen2.example(rng, 3, 13), Qwen2.example(rng, 1, 3)]


# --- Mistral ---------------------------------------------------------------------------------

WINDOW = 4


class Mistral(Llm):
    """MistralForCausalLM's sliding-window attention (window 4) with the interleaved rotary form:
    the -inf causal mask by paddle.triu(paddle.full(-inf)) plus paddle.tril(diagonal=-window) of
    another; k / v repeated by paddle.repeat_interleave; softmax(q k^T / sqrt(d) + mask) v;
    hand-written RMSNorm, SwiGLU by F.silu, an untied lm_head."""

    inputs = [("input_ids", [None, None], "int64")]

    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList(
            [
                DecoderLayer(rope="interleaved", gqa="repeat_interleave", core="matmul")
                for _ in range(LAYERS)
            ]
        )
        self.norm = RMSNorm()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        seq_len = paddle.shape(input_ids)[1]
        t = paddle.arange(seq_len, dtype="float32")
        freqs = paddle.outer(t, inv_freq())  # [S, D / 2]
        cos, sin = freqs.cos()[None, :, None, :], freqs.sin()[None, :, None, :]
        neg = paddle.full([seq_len, seq_len], float("-inf"))
        mask = paddle.triu(neg, diagonal=1) + paddle.tril(neg, diagonal=-WINDOW)
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x, _ = layer(x, cos, sin, mask)
        return self.lm_head(self.norm(x))

    @staticmethod
    def example(rng):
        return {"input_ids": token_ids(rng, 2, 9)}

    @staticmethod
    def alt_examples(rng):
        return [{"input_ids": token_ids(rng, 1, 16)}, {"input_ids": token_ids(rng, 3, 3)}]


# --- one decode step with a KV cache, and sampling ---------------------------------------------

TOP_K, TEMPERATURE = 5, 0.7


class LlamaDecodeStep(Llm):
    """LlamaForCausalLM's forward with past_key_values (use_cache): the new tokens' ids and
    position_ids, the attention mask over past and new tokens, each layer's past key and value
    [B, P, kv_heads, D] (P, the past length, dynamic); the new keys concatenated after the past,
    rotary tables gathered at position_ids, the causal mask offset by P (PaddleNLP's
    _make_causal_mask with past_key_values_length), matmul attention. Outputs: the logits, each
    layer's present key and value, then a sampling tail on the last position's logits: greedy
    paddle.argmax, softmax(logits / temperature), paddle.topk of it, and the top-k filtered
    logits (where below the k-th: -inf)."""

    inputs = [
        ("input_ids", [None, None], "int64"),
        ("position_ids", [None, None], "int64"),
        ("attention_mask", [None, None], "int64"),
    ] + [
        ("past_%s_%d" % (kv, i), [None, None, KV_HEADS, HEAD_DIM], "float32")
        for i in range(LAYERS)
        for kv in ("key", "value")
    ]

    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList([DecoderLayer(core="matmul") for _ in range(LAYERS)])
        self.norm = RMSNorm()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(
        self,
        input_ids,
        position_ids,
        attention_mask,
        past_key_0,
        past_value_0,
        past_key_1,
        past_value_1,
    ):
        past = [past_key_0, past_value_0, past_key_1, past_value_1]
        batch, seq_len = paddle.shape(input_ids)[0], paddle.shape(input_ids)[1]
        past_len = paddle.shape(past[0])[1]
        cos_all, sin_all = rope_tables(MAX_POS)
        cos = paddle.gather(cos_all, position_ids.flatten()).reshape([batch, seq_len, 1, HEAD_DIM])
        sin = paddle.gather(sin_all, position_ids.flatten()).reshape([batch, seq_len, 1, HEAD_DIM])
        mask = decoder_mask(attention_mask, batch, seq_len, past_len)
        x = self.embed_tokens(input_ids)
        presents = []
        for i, layer in enumerate(self.layers):
            x, present = layer(x, cos, sin, mask, (past[2 * i], past[2 * i + 1]))
            presents += present
        logits = self.lm_head(self.norm(x))
        last = logits[:, -1, :]
        greedy = paddle.argmax(last, axis=-1)
        probs = F.softmax(last / TEMPERATURE, axis=-1)
        top_probs, top_ids = paddle.topk(probs, k=TOP_K)
        kth = paddle.topk(last, k=TOP_K)[0][:, -1:]
        filtered = paddle.where(last < kth, paddle.full_like(last, float("-inf")), last)
        return [logits, *presents, greedy, probs, top_probs, top_ids, filtered]

    @staticmethod
    def example(rng, batch=2, past=6, new=1):
        """`past` cached positions (random keys and values), `new` tokens after them; row 1's
        first position is padding."""
        mask = np.ones((batch, past + new), np.int64)
        mask[1:, 0] = 0
        positions = np.maximum(np.cumsum(mask, axis=-1) - 1, 0)[:, past:]
        feed = {
            "input_ids": token_ids(rng, batch, new),
            "position_ids": positions.astype(np.int64),
            "attention_mask": mask,
        }
        for i in range(LAYERS):
            for kv in ("key", "value"):
                feed["past_%s_%d" % (kv, i)] = rng.normal(
                    0, 1, (batch, past, KV_HEADS, HEAD_DIM)
                ).astype(np.float32)
        return feed

    @staticmethod
    def alt_examples(rng):
        """The prompt's step (no past, 5 tokens), a longer past for 3 rows."""
        ex = LlamaDecodeStep.example
        return [ex(rng, batch=2, past=0, new=5), ex(rng, batch=3, past=11, new=1)]


CACHE = 12


class LlamaStaticCacheStep(Llm):
    """A decode step over a preallocated KV cache (a static cache, as exported for fixed-shape
    serving): each layer's cache [B, CACHE, kv_heads, D] gets the new keys and values written at
    `cache_position` by a slice assignment with tensor bounds (cache[:, p:p + S] = k), and the
    queries attend to the whole cache under the mask key <= query position (arange against
    cache_position + arange(S)); written-out RMSNorm, rotate_half, repeat_kv, matmul attention.
    Outputs: the logits, then each layer's updated key and value caches."""

    inputs = [
        ("input_ids", [None, None], "int64"),
        ("cache_position", [1], "int64"),
    ] + [
        ("cache_%s_%d" % (kv, i), [None, CACHE, KV_HEADS, HEAD_DIM], "float32")
        for i in range(LAYERS)
        for kv in ("key", "value")
    ]

    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList([DecoderLayer(core="matmul") for _ in range(LAYERS)])
        self.norm = RMSNorm()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(
        self, input_ids, cache_position, cache_key_0, cache_value_0, cache_key_1, cache_value_1
    ):
        caches = [cache_key_0, cache_value_0, cache_key_1, cache_value_1]
        seq_len = paddle.shape(input_ids)[1]
        start = cache_position[0]
        positions = start + paddle.arange(seq_len, dtype="int64")  # [S]
        cos_all, sin_all = rope_tables(MAX_POS)
        cos = paddle.gather(cos_all, positions)[None, :, None, :]
        sin = paddle.gather(sin_all, positions)[None, :, None, :]
        keys = paddle.arange(CACHE, dtype="int64")
        mask = paddle.where(
            keys[None, :] <= positions[:, None],
            paddle.zeros([1], "float32"),
            paddle.full([1], float("-inf"), "float32"),
        )
        x = self.embed_tokens(input_ids)
        updated = []
        for i, layer in enumerate(self.layers):
            attn = layer.self_attn
            h = layer.input_layernorm(x)
            q = attn.q_proj(h).reshape([0, 0, HEADS, HEAD_DIM])
            k = attn.k_proj(h).reshape([0, 0, KV_HEADS, HEAD_DIM])
            v = attn.v_proj(h).reshape([0, 0, KV_HEADS, HEAD_DIM])
            q, k = apply_rotary(q, k, cos, sin)
            k_cache, v_cache = caches[2 * i].clone(), caches[2 * i + 1].clone()
            k_cache[:, start : start + seq_len] = k
            v_cache[:, start : start + seq_len] = v
            updated += [k_cache, v_cache]
            kr, vr = repeat_kv(k_cache, HEADS // KV_HEADS), repeat_kv(v_cache, HEADS // KV_HEADS)
            qt, kt, vt = (t.transpose([0, 2, 1, 3]) for t in (q, kr, vr))
            probs = F.softmax(paddle.matmul(qt / (HEAD_DIM**0.5), kt, transpose_y=True) + mask)
            out = paddle.matmul(probs, vt).transpose([0, 2, 1, 3]).reshape([0, 0, HIDDEN])
            x = x + attn.o_proj(out)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return [self.lm_head(self.norm(x)), *updated]

    @staticmethod
    def example(rng, batch=2, start=5, new=1):
        """Positions below `start` cached (random), the rest of the cache zeros."""
        feed = {
            "input_ids": token_ids(rng, batch, new),
            "cache_position": np.array([start], np.int64),
        }
        for i in range(LAYERS):
            for kv in ("key", "value"):
                c = np.zeros((batch, CACHE, KV_HEADS, HEAD_DIM), np.float32)
                c[:, :start] = rng.normal(0, 1, (batch, start, KV_HEADS, HEAD_DIM))
                feed["cache_%s_%d" % (kv, i)] = c
        return feed

    @staticmethod
    def alt_examples(rng):
        ex = LlamaStaticCacheStep.example
        return [ex(rng, batch=1, start=0, new=4), ex(rng, batch=3, start=11, new=1)]


NEW_TOKENS = 4


class LlamaGreedyGenerate(Llm):
    """Greedy generation inside the saved program, as a to_static `generate` exports it: the
    prompt's step (causal mask, KV caches made), then a `while` loop of NEW_TOKENS - 1 decode
    steps, each feeding back the last paddle.argmax token at the next position and growing the
    caches by concat (loop-carried values whose length changes every iteration); the tokens
    concatenated. Outputs: the last step's logits [B, V] and the generated tokens [B, NEW]."""

    inputs = [("input_ids", [None, None], "int64")]

    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList([DecoderLayer(core="matmul") for _ in range(LAYERS)])
        self.norm = RMSNorm()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def step(self, ids, start, past):
        """ids [B, S] at positions start .. start + S - 1 after `past` ([k, v] per layer, or
        None): the last position's logits and the caches."""
        seq_len = paddle.shape(ids)[1]
        positions = start + paddle.arange(seq_len, dtype="int64")
        cos_all, sin_all = rope_tables(MAX_POS)
        cos = paddle.gather(cos_all, positions)[None, :, None, :]
        sin = paddle.gather(sin_all, positions)[None, :, None, :]
        keys = paddle.arange(start + seq_len, dtype="int64")
        mask = paddle.where(
            keys[None, :] <= positions[:, None],
            paddle.zeros([1], "float32"),
            paddle.full([1], float("-inf"), "float32"),
        )
        x = self.embed_tokens(ids)
        caches = []
        for i, layer in enumerate(self.layers):
            x, present = layer(x, cos, sin, mask, None if past is None else past[2 * i : 2 * i + 2])
            caches += present
        return self.lm_head(self.norm(x[:, -1, :])), caches

    def forward(self, input_ids):
        prompt = paddle.shape(input_ids)[1]
        logits, caches = self.step(input_ids, paddle.zeros([], "int64"), None)
        token = paddle.argmax(logits, axis=-1, keepdim=True)  # [B, 1]
        tokens = token
        i = paddle.zeros([], "int64")
        while i < NEW_TOKENS - 1:
            logits, caches = self.step(token, prompt.astype("int64") + i, caches)
            token = paddle.argmax(logits, axis=-1, keepdim=True)
            tokens = paddle.concat([tokens, token], axis=1)
            i = i + 1
        return logits, tokens

    @staticmethod
    def example(rng):
        return {"input_ids": token_ids(rng, 2, 6)}

    @staticmethod
    def alt_examples(rng):
        return [{"input_ids": token_ids(rng, 3, 3)}, {"input_ids": token_ids(rng, 1, 9)}]


# name: constructor; the LLM fixtures (PIR programs, Paddle 3.x).
LLM_MODELS = {
    "llm_llama": Llama,
    "llm_qwen2": Qwen2,
    "llm_mistral": Mistral,
    "llm_decode": LlamaDecodeStep,
    "llm_static_cache": LlamaStaticCacheStep,
    "llm_generate": LlamaGreedyGenerate,
}


def grads(net, feed, seed):
    """Paddle's dygraph gradients of sum(out0 * R) w.r.t. each parameter of `net` (the layer
    that was saved), keyed "grad/<parameter name>", and R (`R`)."""
    paddle.disable_static()
    # Paddle 3.3.1 has no CPU kernel for fused_rms_norm's grad (fused_rms_norm_quant_grad):
    # the written-out RMSNorm, the same function, in its place for the gradients.
    fused = [sub for sub in net.sublayers() if isinstance(sub, RMSNorm) and sub.fused]
    for sub in fused:
        sub.fused = False
    outs = net(*[paddle.to_tensor(feed[n]) for n, _, _ in net.inputs])
    for sub in fused:
        sub.fused = True
    out = outs[0] if isinstance(outs, (list, tuple)) else outs
    r = np.random.default_rng(seed + 1).standard_normal(out.shape).astype(np.float32)
    loss = (out * paddle.to_tensor(r)).sum()
    params = net.parameters()
    res = {"R": r, "dygraph_out0": out.numpy()}
    for p, g in zip(params, paddle.grad(loss, params)):
        res["grad/" + p.name] = g.numpy()
    paddle.enable_static()
    return res


def main(out_root, names):
    """Each model as paddle_export.export_nn saves it (paddle.jit.save, Paddle's reference
    outputs), plus grads.npz."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import paddle_export as pe

    for name in names or list(LLM_MODELS):
        out_dir = pe.fresh_dir(out_root, name)
        seed = pe.SEED + sum(map(ord, name))
        rng = np.random.default_rng(seed)
        paddle.disable_static()
        paddle.seed(pe.SEED)
        net = LLM_MODELS[name]()
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
        # Paddle's executor on the saved program (expected) against its dygraph forward.
        d = os.path.join(out_dir, "expected.npy")
        first = np.load(d) if os.path.exists(d) else np.load(d[:-1] + "z")["out0"]
        gap = pe.rel_gap(g.pop("dygraph_out0"), first)
        print("%-15s dygraph vs executor gap %.2e" % (name, gap))
        assert gap < 1e-5, gap
        # Paddle 3.3.1's predictor with oneDNN (record's predictor_rel_gap) computes most of
        # these models differently; its plain predictor agrees with its executor.
        plain = pe.predict(prefix + ".json", prefix + ".pdiparams", feed, False)
        if os.path.exists(d):
            want = [first]
        else:
            with np.load(d[:-1] + "z") as f:
                want = [f["out%d" % i] for i in range(len(f.files))]
        info_path = os.path.join(out_dir, "info.json")
        with open(info_path) as f:
            info = json.load(f)
        info["plain_predictor_rel_gap"] = max(
            pe.rel_gap(np.nan_to_num(w, neginf=0.0), np.nan_to_num(o, neginf=0.0))
            for w, o in zip(want, plain)
        )
        with open(info_path, "w") as f:
            json.dump(info, f, indent=1)
        print("%-15s plain predictor gap %.2e" % (name, info["plain_predictor_rel_gap"]))
        np.savez_compressed(os.path.join(out_dir, "grads.npz"), **g)
        # Other batch sizes and lengths than the example's: Paddle's executor's outputs.
        alt = {}
        for i, feed in enumerate(net.alt_examples(rng)):
            outs, _ = pe.reference(prefix, "pir", feed)
            alt.update({"%d/in/%s" % (i, k): v for k, v in feed.items()})
            alt.update({"%d/out/%d" % (i, j): o for j, o in enumerate(outs)})
        np.savez(os.path.join(out_dir, "alt.npz"), **alt)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
