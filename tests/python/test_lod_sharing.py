"""Ops that keep a LoDTensor's rows keep its sequences, as Fluid 1.8's do: slice and split along
another axis than 0, matmul (X's rows), reduce_* over dims other than 0. An attention score
computed with them feeds sequence_softmax; where rows are cut or reduced, the LoD is not kept."""

import numpy as np

import tide
from tide import layers


def test_row_keeping_ops_keep_the_sequences(exe):
    x = layers.data(name="x", shape=[4], dtype="float32", lod_level=1)
    kept = [
        layers.slice(x, axes=[1], starts=[0], ends=[1]),
        layers.split(x, 2, dim=1)[0],
        layers.matmul(x, layers.fill_constant([4, 1], "float32", 1.0)),
        layers.reduce_sum(x, dim=1, keep_dim=True),
    ]
    dropped = [layers.slice(x, axes=[0], starts=[0], ends=[2]), layers.reduce_sum(x, dim=0)]
    scores = layers.sequence_softmax(kept[2])  # the attention Fluid models write
    xs = np.arange(12, dtype="float32").reshape(3, 4) / 10
    feed = {"x": tide.create_lod_tensor(xs, [[2, 1]])}
    got = exe.run(feed=feed, fetch_list=kept + dropped + [scores], return_numpy=False)
    assert [t.recursive_sequence_lengths() for t in got[:4]] == [[[2, 1]]] * 4
    assert [t.recursive_sequence_lengths() for t in got[4:6]] == [[], []]
    s = xs.sum(1)
    want = np.concatenate([np.exp(s[:2]) / np.exp(s[:2]).sum(), [1.0]]).reshape(3, 1)
    np.testing.assert_allclose(np.array(got[6]), want, rtol=1e-5)
