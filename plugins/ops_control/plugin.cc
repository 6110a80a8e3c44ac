// plugin.cc: the ops_control op pack's entry points. The ops register themselves from their files.
#include <tide/plugin.hpp>

TIDE_PLUGIN(
    "ops_control", "0.1.0",
    "control flow: while, conditional_block, tensor arrays, IfElse's split/merge, "
    "comparisons, logical ops, increment, is_empty, fill_constant_batch_size_like, print; "
    "recurrent (StaticRNN); DynamicRNN's lod_rank_table, max_sequence_len, "
    "lod_tensor_to_array, array_to_lod_tensor, shrink_rnn_memory, reorder_lod_tensor_by_rank");
