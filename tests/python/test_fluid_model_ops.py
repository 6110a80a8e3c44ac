"""The Fluid book's models (Fluid 1.8's book train.py and python/paddle/fluid/tests/book/*.py):
each is built with tide.layers / tide.nets as the book builds it, the optimizer's minimize adds
backward, clipping, regularisation and updates, and every op type of the main and startup
programs (every block: forward, *_grad, optimizer and initializer ops) must be registered by a
loaded plugin (tide._C.registered_ops()). A few characteristic op types per model guard the
builders against drifting from the book. Sizes are small: the programs are built, and a few run
one training step on generated data. Run against a build with every plugin of the tree (ctest
does)."""

import numpy as np
import pytest

import tide
from tide import layers, nets


# ---------------------------------------------------------------------------------------------
# The models, as the book's train.py builds them (smaller dictionaries and widths).
def fit_a_line():
    x = layers.data(name="x", shape=[13], dtype="float32")
    y = layers.data(name="y", shape=[1], dtype="float32")
    y_predict = layers.fc(input=x, size=1, act=None)
    avg_loss = layers.mean(layers.square_error_cost(input=y_predict, label=y))
    tide.optimizer.SGD(learning_rate=0.001).minimize(avg_loss)
    return avg_loss


def _classify(prediction):
    label = layers.data(name="label", shape=[1], dtype="int64")
    avg_cost = layers.mean(layers.cross_entropy(input=prediction, label=label))
    layers.accuracy(input=prediction, label=label)
    return avg_cost


def recognize_digits_mlp():
    img = layers.data(name="img", shape=[1, 28, 28], dtype="float32")
    hidden = layers.fc(input=img, size=200, act="relu")
    hidden = layers.fc(input=hidden, size=200, act="relu")
    avg_cost = _classify(layers.fc(input=hidden, size=10, act="softmax"))
    tide.optimizer.Adam(learning_rate=0.001).minimize(avg_cost)
    return avg_cost


def recognize_digits_conv_prediction():
    """The conv net's forward part: its softmax over the 10 digits (test_aot.py freezes it)."""
    img = layers.data(name="img", shape=[1, 28, 28], dtype="float32")
    conv_pool_1 = nets.simple_img_conv_pool(
        input=img, filter_size=5, num_filters=20, pool_size=2, pool_stride=2, act="relu"
    )
    conv_pool_1 = layers.batch_norm(conv_pool_1)
    conv_pool_2 = nets.simple_img_conv_pool(
        input=conv_pool_1, filter_size=5, num_filters=50, pool_size=2, pool_stride=2, act="relu"
    )
    return layers.fc(input=conv_pool_2, size=10, act="softmax")


def recognize_digits_conv():
    avg_cost = _classify(recognize_digits_conv_prediction())
    tide.optimizer.Adam(learning_rate=0.001).minimize(avg_cost)
    return avg_cost


def _resnet_cifar10(input, depth=8):
    def conv_bn_layer(input, ch_out, filter_size, stride, padding, act="relu", bias_attr=False):
        tmp = layers.conv2d(
            input=input,
            filter_size=filter_size,
            num_filters=ch_out,
            stride=stride,
            padding=padding,
            act=None,
            bias_attr=bias_attr,
        )
        return layers.batch_norm(input=tmp, act=act)

    def shortcut(input, ch_in, ch_out, stride):
        if ch_in != ch_out:
            return conv_bn_layer(input, ch_out, 1, stride, 0, None)
        return input

    def basicblock(input, ch_in, ch_out, stride):
        tmp = conv_bn_layer(input, ch_out, 3, stride, 1)
        tmp = conv_bn_layer(tmp, ch_out, 3, 1, 1, act=None, bias_attr=True)
        short = shortcut(input, ch_in, ch_out, stride)
        return layers.elementwise_add(x=tmp, y=short, act="relu")

    def layer_warp(block_func, input, ch_in, ch_out, count, stride):
        tmp = block_func(input, ch_in, ch_out, stride)
        for _ in range(1, count):
            tmp = block_func(tmp, ch_out, ch_out, 1)
        return tmp

    n = (depth - 2) // 6
    conv1 = conv_bn_layer(input=input, ch_out=16, filter_size=3, stride=1, padding=1)
    res1 = layer_warp(basicblock, conv1, 16, 16, n, 1)
    res2 = layer_warp(basicblock, res1, 16, 32, n, 2)
    res3 = layer_warp(basicblock, res2, 32, 64, n, 2)
    return layers.pool2d(input=res3, pool_size=8, pool_type="avg", pool_stride=1)


def _vgg16_bn_drop(input):
    def conv_block(input, num_filter, groups, dropouts):
        return nets.img_conv_group(
            input=input,
            pool_size=2,
            pool_stride=2,
            conv_num_filter=[num_filter] * groups,
            conv_filter_size=3,
            conv_act="relu",
            conv_with_batchnorm=True,
            conv_batchnorm_drop_rate=dropouts,
            pool_type="max",
        )

    conv1 = conv_block(input, 64, 2, [0.3, 0])
    conv2 = conv_block(conv1, 128, 2, [0.4, 0])
    conv3 = conv_block(conv2, 256, 3, [0.4, 0.4, 0])
    conv4 = conv_block(conv3, 512, 3, [0.4, 0.4, 0])
    conv5 = conv_block(conv4, 512, 3, [0.4, 0.4, 0])
    drop = layers.dropout(x=conv5, dropout_prob=0.5)
    fc1 = layers.fc(input=drop, size=512, act=None)
    bn = layers.batch_norm(input=fc1, act="relu")
    drop2 = layers.dropout(x=bn, dropout_prob=0.5)
    return layers.fc(input=drop2, size=512, act=None)


def _image_classification(net):
    images = layers.data(name="pixel", shape=[3, 32, 32], dtype="float32")
    avg_cost = _classify(layers.fc(input=net(images), size=10, act="softmax"))
    tide.optimizer.Adam(learning_rate=0.001).minimize(avg_cost)
    return avg_cost


def image_classification_resnet():
    return _image_classification(_resnet_cifar10)


def image_classification_vgg():
    return _image_classification(_vgg16_bn_drop)


def word2vec(dict_size=60, embed_size=32, hidden_size=64, n=5):
    words = [
        layers.data(name=w, shape=[1], dtype="int64")
        for w in ("firstw", "secondw", "thirdw", "forthw", "nextw")
    ]
    embeds = [
        layers.embedding(
            input=w,
            size=[dict_size, embed_size],
            dtype="float32",
            is_sparse=True,
            param_attr="shared_w",
        )
        for w in words[: n - 1]
    ]
    concat_embed = layers.concat(input=embeds, axis=1)
    hidden1 = layers.fc(input=concat_embed, size=hidden_size, act="sigmoid")
    predict_word = layers.fc(input=hidden1, size=dict_size, act="softmax")
    avg_cost = layers.mean(layers.cross_entropy(input=predict_word, label=words[n - 1]))
    tide.optimizer.SGD(learning_rate=0.001).minimize(avg_cost)
    return avg_cost


def recommender_system():
    def id_feature(name, size, dim, table=None):
        uid = layers.data(name=name, shape=[1], dtype="int64")
        emb = layers.embedding(input=uid, size=[size, dim], param_attr=table, is_sparse=True)
        return layers.fc(input=emb, size=dim)

    usr = layers.concat(
        input=[
            id_feature("user_id", 50, 32, "user_table"),
            id_feature("gender_id", 2, 16, "gender_table"),
            id_feature("age_id", 7, 16, "age_table"),
            id_feature("job_id", 21, 16, "job_table"),
        ],
        axis=1,
    )
    usr_combined = layers.fc(input=usr, size=200, act="tanh")
    mov_fc = id_feature("movie_id", 40, 32, "movie_table")
    category_id = layers.data(name="category_id", shape=[1], dtype="int64", lod_level=1)
    mov_categories = layers.sequence_pool(
        input=layers.embedding(input=category_id, size=[19, 32], is_sparse=True), pool_type="sum"
    )
    mov_title_id = layers.data(name="movie_title", shape=[1], dtype="int64", lod_level=1)
    mov_title_conv = nets.sequence_conv_pool(
        input=layers.embedding(input=mov_title_id, size=[80, 32], is_sparse=True),
        num_filters=32,
        filter_size=3,
        act="tanh",
        pool_type="sum",
    )
    mov = layers.concat(input=[mov_fc, mov_categories, mov_title_conv], axis=1)
    mov_combined = layers.fc(input=mov, size=200, act="tanh")
    scale_infer = layers.scale(x=layers.cos_sim(X=usr_combined, Y=mov_combined), scale=5.0)
    label = layers.data(name="score", shape=[1], dtype="float32")
    avg_cost = layers.mean(layers.square_error_cost(input=scale_infer, label=label))
    tide.optimizer.SGD(learning_rate=0.2).minimize(avg_cost)
    return avg_cost


def _sentiment(net):
    data = layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
    emb = layers.embedding(input=data, size=[100, 32], is_sparse=True)
    return _classify(net(emb))


def understand_sentiment_conv():
    def convolution_net(emb):
        conv_3 = nets.sequence_conv_pool(
            input=emb, num_filters=16, filter_size=3, act="tanh", pool_type="sqrt"
        )
        conv_4 = nets.sequence_conv_pool(
            input=emb, num_filters=16, filter_size=4, act="tanh", pool_type="sqrt"
        )
        return layers.fc(input=[conv_3, conv_4], size=2, act="softmax")

    avg_cost = _sentiment(convolution_net)
    tide.optimizer.Adagrad(learning_rate=0.002).minimize(avg_cost)
    return avg_cost


def understand_sentiment_stacked_lstm(hid_dim=32, stacked_num=3):
    def stacked_lstm_net(emb):
        fc1 = layers.fc(input=emb, size=hid_dim)
        lstm1, _ = layers.dynamic_lstm(input=fc1, size=hid_dim)
        inputs = [fc1, lstm1]
        for i in range(2, stacked_num + 1):
            fc = layers.fc(input=inputs, size=hid_dim)
            lstm, _ = layers.dynamic_lstm(input=fc, size=hid_dim, is_reverse=(i % 2) == 0)
            inputs = [fc, lstm]
        fc_last = layers.sequence_pool(input=inputs[0], pool_type="max")
        lstm_last = layers.sequence_pool(input=inputs[1], pool_type="max")
        return layers.fc(input=[fc_last, lstm_last], size=2, act="softmax")

    avg_cost = _sentiment(stacked_lstm_net)
    tide.optimizer.Adam(learning_rate=0.002).minimize(avg_cost)
    return avg_cost


def label_semantic_roles(
    word_dict_len=60,
    pred_dict_len=20,
    label_dict_len=9,
    mark_dict_len=2,
    word_dim=16,
    mark_dim=5,
    hidden_dim=32,
    depth=8,
):
    def seq(name):
        return layers.data(name=name, shape=[1], dtype="int64", lod_level=1)

    word, predicate, mark, target = (
        seq("word_data"),
        seq("verb_data"),
        seq("mark_data"),
        seq("target"),
    )
    ctxs = [
        seq(n) for n in ("ctx_n2_data", "ctx_n1_data", "ctx_0_data", "ctx_p1_data", "ctx_p2_data")
    ]
    predicate_embedding = layers.embedding(
        input=predicate,
        size=[pred_dict_len, word_dim],
        dtype="float32",
        is_sparse=True,
        param_attr="vemb",
    )
    mark_embedding = layers.embedding(
        input=mark, size=[mark_dict_len, mark_dim], dtype="float32", is_sparse=True
    )
    emb_layers = [
        layers.embedding(
            size=[word_dict_len, word_dim],
            input=x,
            param_attr=tide.ParamAttr(name="emb", trainable=False),
        )
        for x in [word] + ctxs
    ]
    emb_layers += [predicate_embedding, mark_embedding]
    hidden_0 = layers.sums(input=[layers.fc(input=emb, size=hidden_dim) for emb in emb_layers])
    lstm_0, _ = layers.dynamic_lstm(
        input=hidden_0,
        size=hidden_dim,
        candidate_activation="relu",
        gate_activation="sigmoid",
        cell_activation="sigmoid",
    )
    input_tmp = [hidden_0, lstm_0]
    for i in range(1, depth):
        mix_hidden = layers.sums(
            input=[
                layers.fc(input=input_tmp[0], size=hidden_dim),
                layers.fc(input=input_tmp[1], size=hidden_dim),
            ]
        )
        lstm, _ = layers.dynamic_lstm(
            input=mix_hidden,
            size=hidden_dim,
            candidate_activation="relu",
            gate_activation="sigmoid",
            cell_activation="sigmoid",
            is_reverse=((i % 2) == 1),
        )
        input_tmp = [mix_hidden, lstm]
    feature_out = layers.sums(
        input=[
            layers.fc(input=input_tmp[0], size=label_dict_len, act="tanh"),
            layers.fc(input=input_tmp[1], size=label_dict_len, act="tanh"),
        ]
    )
    crf_cost = layers.linear_chain_crf(
        input=feature_out, label=target, param_attr=tide.ParamAttr(name="crfw", learning_rate=1e-3)
    )
    avg_cost = layers.mean(crf_cost)
    sgd = tide.optimizer.SGD(
        learning_rate=layers.exponential_decay(
            learning_rate=0.01, decay_steps=100000, decay_rate=0.5, staircase=True
        )
    )
    sgd.minimize(avg_cost)
    crf_decode = layers.crf_decoding(input=feature_out, param_attr=tide.ParamAttr(name="crfw"))
    layers.chunk_eval(
        input=crf_decode,
        label=target,
        chunk_scheme="IOB",
        num_chunk_types=(label_dict_len - 1) // 2,
    )
    return avg_cost


# machine_translation (book 08): a bidirectional GRU encoder, an attention decoder stepped by
# DynamicRNN for training and by a While loop with beam search for decoding.
MT = dict(dict_size=50, word_dim=16, hidden_dim=16, max_length=8, beam_size=3)


def _mt_encoder():
    src_word_id = layers.data(name="src_word_id", shape=[1], dtype="int64", lod_level=1)
    src_embedding = layers.embedding(
        input=src_word_id, size=[MT["dict_size"], MT["word_dim"]], dtype="float32", is_sparse=True
    )
    fc_forward = layers.fc(input=src_embedding, size=MT["hidden_dim"] * 3, bias_attr=False)
    src_forward = layers.dynamic_gru(input=fc_forward, size=MT["hidden_dim"])
    fc_backward = layers.fc(input=src_embedding, size=MT["hidden_dim"] * 3, bias_attr=False)
    src_backward = layers.dynamic_gru(input=fc_backward, size=MT["hidden_dim"], is_reverse=True)
    return layers.concat(input=[src_forward, src_backward], axis=1)


def _mt_cell(x, hidden, encoder_out, encoder_out_proj):
    decoder_size = MT["hidden_dim"]

    def simple_attention(encoder_vec, encoder_proj, decoder_state):
        decoder_state_proj = layers.fc(input=decoder_state, size=decoder_size, bias_attr=False)
        decoder_state_expand = layers.sequence_expand(x=decoder_state_proj, y=encoder_proj)
        mixed_state = layers.elementwise_add(encoder_proj, decoder_state_expand)
        attention_weights = layers.fc(input=mixed_state, size=1, bias_attr=False)
        attention_weights = layers.sequence_softmax(input=attention_weights)
        weigths_reshape = layers.reshape(x=attention_weights, shape=[-1])
        scaled = layers.elementwise_mul(x=encoder_vec, y=weigths_reshape, axis=0)
        return layers.sequence_pool(input=scaled, pool_type="sum")

    context = simple_attention(encoder_out, encoder_out_proj, hidden)
    out = layers.fc(input=[x, context], size=decoder_size * 3, bias_attr=False)
    out = layers.gru_unit(input=out, hidden=hidden, size=decoder_size * 3)[0]
    return out, out


def _mt_decoder_inputs(encoder_out):
    encoder_last = layers.sequence_last_step(input=encoder_out)
    encoder_last_proj = layers.fc(input=encoder_last, size=MT["hidden_dim"], act="tanh")
    encoder_out_proj = layers.fc(input=encoder_out, size=MT["hidden_dim"], bias_attr=False)
    return encoder_last_proj, encoder_out_proj


def machine_translation_train():
    encoder_out = _mt_encoder()
    encoder_last_proj, encoder_out_proj = _mt_decoder_inputs(encoder_out)
    trg_language_word = layers.data(
        name="target_language_word", shape=[1], dtype="int64", lod_level=1
    )
    trg_embedding = layers.embedding(
        input=trg_language_word,
        size=[MT["dict_size"], MT["word_dim"]],
        dtype="float32",
        is_sparse=True,
    )
    rnn = layers.DynamicRNN()
    with rnn.block():
        x = rnn.step_input(trg_embedding)
        pre_state = rnn.memory(init=encoder_last_proj, need_reorder=True)
        enc_out = rnn.static_input(encoder_out)
        enc_out_proj = rnn.static_input(encoder_out_proj)
        out, current_state = _mt_cell(x, pre_state, enc_out, enc_out_proj)
        prob = layers.fc(input=out, size=MT["dict_size"], act="softmax")
        rnn.update_memory(pre_state, current_state)
        rnn.output(prob)
    label = layers.data(name="target_language_next_word", shape=[1], dtype="int64", lod_level=1)
    avg_cost = layers.mean(layers.cross_entropy(input=rnn(), label=label))
    tide.clip.set_gradient_clip(clip=tide.clip.GradientClipByGlobalNorm(clip_norm=5.0))
    lr_decay = layers.learning_rate_scheduler.noam_decay(MT["hidden_dim"], 1000)
    tide.optimizer.Adam(
        learning_rate=lr_decay,
        regularization=tide.regularizer.L2DecayRegularizer(regularization_coeff=1e-4),
    ).minimize(avg_cost)
    return avg_cost


def machine_translation_decode():
    encoder_out = _mt_encoder()
    encoder_last_proj, encoder_out_proj = _mt_decoder_inputs(encoder_out)
    max_len = layers.fill_constant(shape=[1], dtype="int64", value=MT["max_length"])
    counter = layers.zeros(shape=[1], dtype="int64", force_cpu=True)
    init_ids = layers.data(name="init_ids", shape=[1], dtype="int64", lod_level=2)
    init_scores = layers.data(name="init_scores", shape=[1], dtype="float32", lod_level=2)
    ids_array = layers.array_write(init_ids, i=counter)
    scores_array = layers.array_write(init_scores, i=counter)
    state_array = layers.array_write(encoder_last_proj, i=counter)
    cond = layers.less_than(x=counter, y=max_len)
    while_op = layers.While(cond=cond)
    with while_op.block():
        pre_ids = layers.array_read(array=ids_array, i=counter)
        pre_score = layers.array_read(array=scores_array, i=counter)
        pre_state = layers.array_read(array=state_array, i=counter)
        pre_ids_emb = layers.embedding(
            input=pre_ids, size=[MT["dict_size"], MT["word_dim"]], dtype="float32", is_sparse=True
        )
        out, current_state = _mt_cell(pre_ids_emb, pre_state, encoder_out, encoder_out_proj)
        prob = layers.fc(input=current_state, size=MT["dict_size"], act="softmax")
        topk_scores, topk_indices = layers.topk(prob, k=MT["beam_size"])
        accu_scores = layers.elementwise_add(
            x=layers.log(topk_scores), y=layers.reshape(pre_score, shape=[-1]), axis=0
        )
        accu_scores = layers.lod_reset(x=accu_scores, y=pre_ids)
        selected_ids, selected_scores = layers.beam_search(
            pre_ids, pre_score, topk_indices, accu_scores, MT["beam_size"], end_id=1
        )
        layers.increment(x=counter, value=1, in_place=True)
        layers.array_write(selected_ids, array=ids_array, i=counter)
        layers.array_write(selected_scores, array=scores_array, i=counter)
        current_state = layers.sequence_expand(current_state, selected_ids)
        layers.array_write(current_state, array=state_array, i=counter)
        layers.assign(layers.sequence_expand(encoder_out, selected_ids), encoder_out)
        layers.assign(layers.sequence_expand(encoder_out_proj, selected_ids), encoder_out_proj)
        length_cond = layers.less_than(x=counter, y=max_len)
        finish_cond = layers.logical_not(layers.is_empty(x=selected_ids))
        layers.logical_and(x=length_cond, y=finish_cond, out=cond)
    return layers.beam_search_decode(
        ids=ids_array, scores=scores_array, beam_size=MT["beam_size"], end_id=1
    )


# Op types each model must hold (besides everything being registered): the book's
# characteristic forward ops, their gradients and the optimizer.
MODELS = {
    fit_a_line: ["mul", "square", "mean_grad", "elementwise_sub_grad", "sgd"],
    recognize_digits_mlp: ["cross_entropy2_grad", "top_k", "accuracy", "adam"],
    recognize_digits_conv: ["conv2d_grad", "pool2d_grad", "batch_norm_grad", "adam"],
    image_classification_resnet: [
        "conv2d_grad",
        "batch_norm_grad",
        "elementwise_add_grad",
        "relu_grad",
        "pool2d_grad",
        "cross_entropy2_grad",
    ],
    image_classification_vgg: ["conv2d_grad", "dropout_grad", "batch_norm_grad", "pool2d_grad"],
    word2vec: ["lookup_table_grad", "concat_grad", "sigmoid_grad", "softmax_grad", "sgd"],
    recommender_system: [
        "sequence_conv_grad",
        "sequence_pool_grad",
        "cos_sim_grad",
        "lookup_table_grad",
        "sgd",
    ],
    understand_sentiment_conv: ["sequence_conv_grad", "sequence_pool_grad", "adagrad"],
    understand_sentiment_stacked_lstm: ["lstm_grad", "sequence_pool_grad", "adam"],
    label_semantic_roles: [
        "linear_chain_crf_grad",
        "lstm_grad",
        "sum",
        "crf_decoding",
        "chunk_eval",
        "floor",
        "elementwise_pow",
        "increment",
        "sgd",
    ],
    machine_translation_train: [
        "gru_grad",
        "gru_unit_grad",
        "sequence_softmax_grad",
        "reshape2_grad",
        "elementwise_mul_grad",
        "sequence_expand_grad",
        "sequence_pool_grad",
        "while_grad",
        "lod_rank_table",
        "squared_l2_norm",
        "sqrt",
        "elementwise_max",
        "elementwise_div",
        "elementwise_pow",
        "elementwise_min",
        "adam",
    ],
    machine_translation_decode: [
        "while",
        "top_k",
        "log",
        "lod_reset",
        "beam_search",
        "beam_search_decode",
        "is_empty",
        "logical_not",
        "logical_and",
        "assign",
        "sequence_expand",
        "write_to_array",
        "read_from_array",
    ],
}


def build(model):
    main, startup = tide.Program(), tide.Program()
    with tide.unique_name.guard(), tide.program_guard(main, startup):
        loss = model()
    return main, startup, loss


def op_types(program):
    desc = program.desc
    return {op.type for i in range(desc.num_blocks()) for op in desc.block(i).all_ops()}


@pytest.mark.parametrize("model", list(MODELS), ids=[m.__name__ for m in MODELS])
def test_book_model_ops_are_registered(model):
    main, startup, _ = build(model)
    used = op_types(main) | op_types(startup)
    missing = sorted(used - set(tide._C.registered_ops()))
    assert not missing, "%s needs op types no loaded plugin registers: %s" % (
        model.__name__,
        missing,
    )
    absent = sorted(set(MODELS[model]) - used)
    assert not absent, "%s's programs lack %s (the builder no longer matches the book)" % (
        model.__name__,
        absent,
    )


# ---------------------------------------------------------------------------------------------
# One training step of a few of them, on generated data: the loss is finite and the parameters
# move.
def _lod(rng, high, lens):
    t = tide.LoDTensor(rng.randint(0, high, (sum(lens), 1)).astype("int64"))
    t.set_recursive_sequence_lengths([lens])
    return t


def _feeds(model, rng):
    if model is fit_a_line:
        return {"x": rng.rand(4, 13).astype("float32"), "y": rng.rand(4, 1).astype("float32")}
    if model is recognize_digits_conv:
        return {
            "img": rng.rand(2, 1, 28, 28).astype("float32"),
            "label": rng.randint(0, 10, (2, 1)).astype("int64"),
        }
    if model is understand_sentiment_stacked_lstm:
        return {"words": _lod(rng, 100, [3, 5]), "label": rng.randint(0, 2, (2, 1)).astype("int64")}
    assert model is machine_translation_train
    return {
        "src_word_id": _lod(rng, MT["dict_size"], [4, 2, 3]),
        "target_language_word": _lod(rng, MT["dict_size"], [3, 4, 2]),
        "target_language_next_word": _lod(rng, MT["dict_size"], [3, 4, 2]),
    }


# machine_translation_train clips by global norm over the sparse (SelectedRows) gradients of its
# is_sparse embeddings: merged first, as Fluid's clip.py (tide/clip.py).
@pytest.mark.parametrize(
    "model",
    [
        fit_a_line,
        recognize_digits_conv,
        understand_sentiment_stacked_lstm,
        machine_translation_train,
    ],
    ids=lambda m: m.__name__,
)
def test_book_model_trains_a_step(model):
    main, startup, loss = build(model)
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    feed = _feeds(model, np.random.RandomState(0))
    param = sorted(p.name for p in main.global_block().all_parameters() if p.trainable)[0]
    with tide.scope_guard(scope):
        exe.run(startup)
        before = np.array(scope.find_var(param).get_tensor())
        (first,) = exe.run(main, feed=feed, fetch_list=[loss])
        (second,) = exe.run(main, feed=feed, fetch_list=[loss])
        after = np.array(scope.find_var(param).get_tensor())
    assert np.isfinite(first).all() and np.isfinite(second).all()
    assert not np.array_equal(before, after), "%s: %s did not move" % (model.__name__, param)


def test_registered_ops_lists_what_has_op_finds():
    ops = tide._C.registered_ops()
    assert len(ops) == len(set(ops)) and len(ops) > 100
    assert all(tide._C.has_op(o) for o in ops)
    assert not tide._C.has_op("no_such_op")
