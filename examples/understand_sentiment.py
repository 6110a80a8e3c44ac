"""An LSTM sequence classifier in the style of Fluid's understand_sentiment (stacked/dynamic LSTM
on word ids), on generated data so it needs no download: variable-length token sequences, each
holding one token A and one token B among random filler; the label says whether A comes before B.
The order matters, so a bag of words cannot solve it: the net must remember across steps.

    embedding -> fc -> dynamic_lstm -> sequence_pool(max) -> fc(softmax)

Batches are LoDTensors (no padding); the LSTM runs SequenceToBatch over them.

    python examples/understand_sentiment.py [--passes 6] [--hidden 32]
"""

import argparse

import numpy as np

import tide

VOCAB, TOKEN_A, TOKEN_B = 40, 1, 2


def make_data(n, seed, min_len=4, max_len=24):
    """(sequences of int64 token ids, labels [n, 1]): label 1 when A occurs before B."""
    rng = np.random.RandomState(seed)
    seqs, labels = [], []
    for _ in range(n):
        length = rng.randint(min_len, max_len + 1)
        s = rng.randint(3, VOCAB, size=length)
        a, b = rng.choice(length, 2, replace=False)
        s[a], s[b] = TOKEN_A, TOKEN_B
        seqs.append(s.astype("int64"))
        labels.append(int(a < b))
    return seqs, np.array(labels, dtype="int64").reshape(-1, 1)


def to_lod_tensor(seqs):
    t = tide.LoDTensor(np.concatenate(seqs).reshape(-1, 1))
    t.set_recursive_sequence_lengths([[len(s) for s in seqs]])
    return t


def lstm_net(words, emb_dim=16, hidden=32):
    emb = tide.layers.embedding(input=words, size=[VOCAB, emb_dim])
    proj = tide.layers.fc(input=emb, size=4 * hidden)
    lstm, _ = tide.layers.dynamic_lstm(input=proj, size=4 * hidden, use_peepholes=False)
    pooled = tide.layers.sequence_pool(input=lstm, pool_type="max")
    return tide.layers.fc(input=pooled, size=2, act="softmax")


def bow_net(words, emb_dim=16, hidden=32):
    """The baseline without order: a bag of words (the same layers minus the LSTM)."""
    emb = tide.layers.embedding(input=words, size=[VOCAB, emb_dim])
    proj = tide.layers.fc(input=emb, size=hidden, act="tanh")
    pooled = tide.layers.sequence_pool(input=proj, pool_type="max")
    return tide.layers.fc(input=pooled, size=2, act="softmax")


NETS = {"lstm": lstm_net, "bow": bow_net}


def train(
    passes=6,
    batch_size=32,
    hidden=32,
    learning_rate=0.01,
    n_train=2000,
    n_test=500,
    seed=1,
    net="lstm",
    verbose=True,
):
    """Returns the test accuracy."""
    train_x, train_y = make_data(n_train, seed)
    test_x, test_y = make_data(n_test, seed + 1000)
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = seed
    with tide.program_guard(main, startup), tide.unique_name.guard():
        words = tide.layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
        label = tide.layers.data(name="label", shape=[1], dtype="int64")
        prediction = NETS[net](words, hidden=hidden)
        loss = tide.layers.mean(tide.layers.cross_entropy(input=prediction, label=label))
        acc = tide.layers.accuracy(input=prediction, label=label)
        test_program = main.clone(for_test=True)
        tide.optimizer.Adam(learning_rate=learning_rate).minimize(loss)
    exe = tide.Executor(tide.CPUPlace())
    rng = np.random.RandomState(seed)
    test_feed = {"words": to_lod_tensor(test_x), "label": test_y}
    with tide.scope_guard(tide.Scope()):
        exe.run(startup)
        for pass_id in range(passes):
            order = rng.permutation(n_train)
            for i in range(0, n_train, batch_size):
                b = order[i : i + batch_size]
                exe.run(
                    main,
                    feed={"words": to_lod_tensor([train_x[j] for j in b]), "label": train_y[b]},
                    fetch_list=[loss],
                )
            test_loss, test_acc = exe.run(test_program, feed=test_feed, fetch_list=[loss, acc])
            if verbose:
                print(
                    "pass %d  test loss %.4f  test accuracy %.4f"
                    % (
                        pass_id,
                        float(np.asarray(test_loss).reshape(-1)[0]),
                        float(np.asarray(test_acc).reshape(-1)[0]),
                    )
                )
    return float(np.asarray(test_acc).reshape(-1)[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", type=int, default=6)
    ap.add_argument("--batch_size", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--learning_rate", type=float, default=0.01)
    ap.add_argument(
        "--net",
        choices=sorted(NETS),
        default="lstm",
        help="bow: the order-blind baseline, near chance on this task",
    )
    args = ap.parse_args()
    acc = train(args.passes, args.batch_size, args.hidden, args.learning_rate, net=args.net)
    print("test accuracy: %.4f" % acc)


if __name__ == "__main__":
    main()
