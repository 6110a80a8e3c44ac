// plugin.cc: the ops_sequence op pack's entry points. The ops register themselves from their files.
#include <tide/plugin.hpp>

TIDE_PLUGIN("ops_sequence", "0.1.0",
            "sequence (LoD) ops: sequence_pool/softmax/expand/expand_as/concat/reshape/slice/pad/"
            "unpad/mask/reverse, lod_reset, beam_search, beam_search_decode; lstm, gru, lstm_unit, "
            "gru_unit, rnn (Paddle 2.x), sequence_conv; linear_chain_crf, crf_decoding, "
            "chunk_eval; edit_distance, "
            "sequence_erase");
