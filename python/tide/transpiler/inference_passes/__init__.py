"""InferenceTranspiler's passes for transformers, in the order they run (each a function of a
Graph that rewrites one match and returns True, or returns False when nothing is left):

- delete_dropout: inference dropouts that pass their input through;
- fold_repeat_kv: grouped-query attention's keys / values repeated per query head (unsqueeze2,
  expand_v2 or tile, reshape2, transpose2) -> each group of query heads as rows of one product
  with its key / value head;
- fuse_rms_norm: RMS normalisation written out (pow, reduce_mean, + eps, rsqrt, the products
  with x and a weight) -> rms_norm;
- drop_unread_outputs: an RMS normalisation's statistics and residual sum that nothing reads
  (Paddle's saved rms_norm / fused_rms_norm_quant) -> not written;
- fuse_rotary: rotary position embedding written out with rotate_half (two slices, a negation,
  a concat, the products with sin and cos, their sum) -> fused_rotary_position_embedding;
- fuse_fc: matmul_v2 [+ bias add] (+ an activation, gelu in both forms, silu) -> fc;
- fuse_qkv: fc ops on the same input (Q, K, V projections) -> one fc + split;
- fuse_attention: reshape / transpose / scale / Q K^T / mask add / softmax / P V / transpose /
  reshape -> fused_multihead_attention; attention_reads_qkv: its Q, K, V from fuse_qkv's split
  -> the projection's output as QKV;
- fuse_causal_softmax: a causal mask made from the scores (fill_any_like, tril_triu), added,
  then softmax -> fused_softmax_mask_upper_triangle (after fuse_attention, which takes a mask
  add with the rest of an attention);
- fuse_skip_layernorm: residual add + layer_norm -> skip_layernorm;
- fuse_preln_skip_layernorm: a pre-norm model's residual add, whose sum later ops read too, +
  layer_norm -> preln_skip_layernorm (writing the normalised sum and the sum).

`PASSES` names them for InferenceTranspiler.transpile(skip_passes=...)."""

from .attention import attention_reads_qkv, fuse_attention
from .causal_softmax import fuse_causal_softmax
from .dropout import delete_dropout
from .fc import fuse_fc
from .graph import Graph
from .preln_skip_layernorm import fuse_preln_skip_layernorm
from .qkv import fuse_qkv
from .repeat_kv import fold_repeat_kv
from .rms_norm import fuse_rms_norm
from .rotary import fuse_rotary
from .skip_layernorm import fuse_skip_layernorm
from .unread_outputs import drop_unread_outputs

PASSES = (
    ("delete_dropout", delete_dropout),
    ("fold_repeat_kv", fold_repeat_kv),
    ("fuse_rms_norm", fuse_rms_norm),
    ("drop_unread_outputs", drop_unread_outputs),
    ("fuse_rotary", fuse_rotary),
    ("fuse_fc", fuse_fc),
    ("fuse_qkv", fuse_qkv),
    ("fuse_attention", fuse_attention),
    ("attention_reads_qkv", attention_reads_qkv),
    ("fuse_causal_softmax", fuse_causal_softmax),
    ("fuse_skip_layernorm", fuse_skip_layernorm),
    ("fuse_preln_skip_layernorm", fuse_preln_skip_layernorm),
)

__all__ = ["Graph", "PASSES"]
