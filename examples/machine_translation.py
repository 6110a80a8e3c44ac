"""Machine translation in miniature (the Fluid book's encoder-decoder, on generated data): learn
to reverse short token sequences. The encoder and the training decoder are DynamicRNNs over LoD
sequences of different lengths, each with a GRU cell written from fc layers; the decoder starts
from the encoder's last state and reads it at every step (static_input). Translation is a beam
search in a While loop (beam_search, beam_search_decode) with the trained weights. Run:

    PYTHONPATH=build/python python examples/machine_translation.py
"""

import argparse
import time

import numpy as np

import tide
from tide import layers

START, END = 0, 1  # the target's start and end tokens; the other ids are words


def gru_cell(x, h, size, prefix):
    """h' = u * h + (1 - u) * tanh(W [x, r * h]) with u, r = sigmoid(U [x, h]): a GRU from fc
    layers, its weights named so the decoder loop can share them."""
    gates = layers.fc(
        input=[x, h],
        size=2 * size,
        act="sigmoid",
        param_attr=[prefix + ".gate_x", prefix + ".gate_h"],
        bias_attr=prefix + ".gate_b",
    )
    u, r = layers.split(gates, 2, dim=1)
    c = layers.fc(
        input=[x, layers.elementwise_mul(r, h)],
        size=size,
        act="tanh",
        param_attr=[prefix + ".cand_x", prefix + ".cand_h"],
        bias_attr=prefix + ".cand_b",
    )
    return layers.elementwise_add(
        layers.elementwise_mul(u, h), layers.elementwise_mul(layers.scale(u, -1.0, bias=1.0), c)
    )


def encoder(vocab, emb_dim, hidden):
    src = layers.data(name="src", shape=[1], dtype="int64", lod_level=1)
    emb = layers.embedding(src, size=[vocab, emb_dim], param_attr="src_emb")
    rnn = layers.DynamicRNN()
    with rnn.block():
        word = rnn.step_input(emb)
        prev = rnn.memory(shape=[hidden], value=0.0)
        h = gru_cell(word, prev, hidden, "enc")
        rnn.update_memory(prev, h)
        rnn.output(h)
    return layers.sequence_last_step(rnn())


def decoder_step(word_emb, prev, context, vocab, hidden):
    """One decoder step, shared by the training decoder and the beam search loop."""
    h = gru_cell(layers.concat([word_emb, context], axis=1), prev, hidden, "dec")
    return h, layers.fc(input=h, size=vocab, act="softmax", param_attr="out.w", bias_attr="out.b")


def train_program(vocab, emb_dim, hidden):
    context = encoder(vocab, emb_dim, hidden)
    trg = layers.data(name="trg", shape=[1], dtype="int64", lod_level=1)
    label = layers.data(name="label", shape=[1], dtype="int64", lod_level=1)
    trg_emb = layers.embedding(trg, size=[vocab, emb_dim], param_attr="trg_emb")
    rnn = layers.DynamicRNN()
    with rnn.block():
        word = rnn.step_input(trg_emb)
        ctx = rnn.static_input(context)
        prev = rnn.memory(init=context, need_reorder=True)
        h, probs = decoder_step(word, prev, ctx, vocab, hidden)
        rnn.update_memory(prev, h)
        rnn.output(probs)
    loss = layers.mean(layers.cross_entropy(rnn(), label))
    return loss


def translate_program(vocab, emb_dim, hidden, beam_size, max_len):
    """Beam search over the decoder, from the encoder's last state (the Fluid book's decode)."""
    context = encoder(vocab, emb_dim, hidden)
    init_ids = layers.data(name="init_ids", shape=[1], dtype="int64", lod_level=2)
    init_scores = layers.data(name="init_scores", shape=[1], dtype="float32", lod_level=2)
    counter = layers.fill_constant([1], "int64", 0)
    limit = layers.fill_constant([1], "int64", max_len)
    ids_array = layers.array_write(init_ids, counter)
    scores_array = layers.array_write(init_scores, counter)
    state_array = layers.array_write(context, counter)
    context_array = layers.array_write(context, counter)
    cond = layers.less_than(counter, limit)
    loop = layers.While(cond, is_test=True)
    with loop.block():
        pre_ids = layers.array_read(ids_array, counter)
        pre_scores = layers.array_read(scores_array, counter)
        # Each beam kept at the last step continues its prefix's state and context.
        prev = layers.sequence_expand(layers.array_read(state_array, counter), pre_scores)
        ctx = layers.sequence_expand(layers.array_read(context_array, counter), pre_scores)
        word = layers.embedding(pre_ids, size=[vocab, emb_dim], param_attr="trg_emb")
        h, probs = decoder_step(word, prev, ctx, vocab, hidden)
        top_probs, top_ids = layers.topk(probs, k=beam_size)
        sel_ids, sel_scores = layers.beam_search(
            pre_ids,
            pre_scores,
            top_ids,
            top_probs,
            beam_size=beam_size,
            end_id=END,
            is_accumulated=False,
        )
        layers.increment(counter, in_place=True)
        layers.array_write(sel_ids, counter, array=ids_array)
        layers.array_write(sel_scores, counter, array=scores_array)
        layers.array_write(h, counter, array=state_array)
        layers.array_write(ctx, counter, array=context_array)
        going = layers.logical_not(layers.is_empty(sel_ids))
        layers.logical_and(layers.less_than(counter, limit), going, out=cond)
    return layers.beam_search_decode(ids_array, scores_array, beam_size=beam_size, end_id=END)


def make_batch(rng, n, vocab, min_len, max_len):
    """n random word sequences and their reversals (target in: START + reversed; out: reversed + END)."""
    lens = rng.randint(min_len, max_len + 1, size=n).tolist()
    seqs = [rng.randint(2, vocab, size=k) for k in lens]
    return seqs, lens


def lod_tensor(rows, lens):
    t = tide.LoDTensor(np.asarray(rows, dtype="int64").reshape(-1, 1))
    t.set_recursive_sequence_lengths(lens)
    return t


def train_feed(seqs, lens):
    rev = [s[::-1] for s in seqs]
    return {
        "src": lod_tensor(np.concatenate(seqs), [lens]),
        "trg": lod_tensor(np.concatenate([np.r_[START, r] for r in rev]), [[k + 1 for k in lens]]),
        "label": lod_tensor(np.concatenate([np.r_[r, END] for r in rev]), [[k + 1 for k in lens]]),
    }


def translate(exe, program, sentence_ids, seqs, lens):
    n = len(seqs)
    feed = {
        "src": lod_tensor(np.concatenate(seqs), [lens]),
        "init_ids": lod_tensor(np.full(n, START), [[1] * n, [1] * n]),
        "init_scores": tide.LoDTensor(np.zeros((n, 1), "float32")),
    }
    feed["init_scores"].set_recursive_sequence_lengths([[1] * n, [1] * n])
    (got,) = exe.run(program, feed=feed, fetch_list=[sentence_ids], return_numpy=False)
    ids = np.array(got).ravel()
    per_source, per_sentence = got.recursive_sequence_lengths()
    offsets = np.cumsum([0] + per_sentence)
    best, sentence = [], 0
    for k in per_source:  # the first sentence of each source is its best
        words = ids[offsets[sentence] : offsets[sentence + 1]].tolist() if k else []
        best.append([w for w in words if w not in (START, END)])
        sentence += k
    return best


def train(
    vocab=12,
    emb_dim=24,
    hidden=64,
    min_len=2,
    max_len=8,
    batch_size=64,
    steps=3000,
    beam_size=3,
    seed=1,
    verbose=True,
):
    """Trains for `steps` batches; returns the share of held-out sequences translated exactly
    (the best beam)."""
    rng = np.random.RandomState(seed)
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = seed
    with tide.unique_name.guard(), tide.program_guard(main, startup):
        loss = train_program(vocab, emb_dim, hidden)
        tide.optimizer.Adam(learning_rate=0.01).minimize(loss)
    infer, infer_startup = tide.Program(), tide.Program()
    with tide.unique_name.guard(), tide.program_guard(infer, infer_startup):
        sentence_ids, _ = translate_program(vocab, emb_dim, hidden, beam_size, max_len + 2)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    with tide.scope_guard(scope):
        exe.run(startup)
        start = time.time()
        for step in range(1, steps + 1):
            seqs, lens = make_batch(rng, batch_size, vocab, min_len, max_len)
            (out,) = exe.run(main, feed=train_feed(seqs, lens), fetch_list=[loss])
            if verbose and step % 250 == 0:
                print(
                    "step %d (%.0fs): loss %.4f"
                    % (step, time.time() - start, float(np.asarray(out).ravel()[0]))
                )
        seqs, lens = make_batch(np.random.RandomState(seed + 1000), 200, vocab, min_len, max_len)
        got = translate(exe, infer, sentence_ids, seqs, lens)
    exact = float(np.mean([g == s[::-1].tolist() for g, s in zip(got, seqs)]))
    if verbose:
        print(
            "%d steps in %.0fs; held-out sequences reversed exactly: %.1f%%"
            % (steps, time.time() - start, 100 * exact)
        )
        for s, g in list(zip(seqs, got))[:3]:
            print("  %s -> %s" % (s.tolist(), g))
    return exact


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="training batches")
    parser.add_argument("--max_len", type=int, default=8, help="longest source sequence")
    parser.add_argument("--beam_size", type=int, default=3)
    args = parser.parse_args()
    train(steps=args.steps, max_len=args.max_len, beam_size=args.beam_size)
