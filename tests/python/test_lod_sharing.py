"""Ops that keep a LoDTensor's rows keep its sequences, as Fluid 1.8's do: slice along another
axis than 0, matmul (X's rows), reduce_* over dims other than 0. An attention score computed with
them feeds sequence_softmax; where rows are cut or reduced, the LoD is not kept. split does not
keep it (Fluid's does along another axis): a GRU's gates split from an fc over beam-search ids
(a 2-level LoD) would carry that LoD into the state, which sequence_expand then refuses
(examples/machine_translation.py); lod_reset gives a part the LoD where it is wanted."""

import numpy as np

import tide
from tide import layers


def test_row_keeping_ops_keep_the_sequences(exe):
    x = layers.data(name="x", shape=[4], dtype="float32", lod_level=1)
    kept = [
        layers.slice(x, axes=[1], starts=[0], ends=[1]),
        layers.matmul(x, layers.fill_constant([4, 1], "float32", 1.0)),
        layers.reduce_sum(x, dim=1, keep_dim=True),
    ]
    dropped = [layers.slice(x, axes=[0], starts=[0], ends=[2]), layers.reduce_sum(x, dim=0)]
    scores = layers.sequence_softmax(kept[1])  # the attention Fluid models write
    xs = np.arange(12, dtype="float32").reshape(3, 4) / 10
    feed = {"x": tide.create_lod_tensor(xs, [[2, 1]])}
    got = exe.run(feed=feed, fetch_list=kept + dropped + [scores], return_numpy=False)
    assert [t.recursive_sequence_lengths() for t in got[:3]] == [[[2, 1]]] * 3
    assert [t.recursive_sequence_lengths() for t in got[3:5]] == [[], []]
    s = xs.sum(1)
    want = np.concatenate([np.exp(s[:2]) / np.exp(s[:2]).sum(), [1.0]]).reshape(3, 1)
    np.testing.assert_allclose(np.array(got[5]), want, rtol=1e-5)
