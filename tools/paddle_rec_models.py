"""Small versions of PaddleRec's ranking and retrieval models, written from PaddleRec's
models/rank (DeepFM, Wide&Deep, DLRM, DIN, DCN-v2), models/multitask (MMoE) and models/match
(a two-tower model) with `paddle.nn`: the same layers and functional calls at tiny widths, int64
feature ids in, so each fixture stays a few KB. Used by tools/paddle_export.py like
paddle_family_models: each model has `inputs`, `example(rng)` and `randomize_weights(rng)`; the
constructor's `sparse` picks the embeddings' `sparse=` (PaddleRec trains with sparse gradients),
which Paddle saves as `pd_op.embedding`'s `sparse` attribute.

Ids run over the whole vocabulary in the examples: 0 (the padding id where there is one) and
VOCAB - 1 are always among them.

Run as a script (Paddle 3.x) it exports the fixtures OUT/pir/rec_* (tests/python/test_paddle_rec.py):

    OMP_NUM_THREADS=1 /tmp/paddle3/bin/python tools/paddle_rec_models.py tests/fixtures/paddle

each with paddle_export's files (inference.json / .pdiparams, inputs.npz, expected.npy or .npz,
info.json) and Paddle's references for training: inputs2.npz -> expected2.npz (another batch, and
DIN's history length: `second`), grads.npz (R<i>, and grad:<param>, the gradients of
sum_i sum(out_i * R_i) over the float outputs at the example), train.npz (models with `train`:
5 SGD steps, learning rate 0.5, of F.binary_cross_entropy(out0, label) from the saved weights on
batches of the second shape: <step>/<feed>, <step>/label, loss, param:<name> after the steps).
Paddle's references take the dense embedding gradient: Paddle 3.3.1's sparse one (SelectedRows)
gives a padding_idx row the padded positions' gradients, its dense one zero (Tide's both ways)."""

import os
import sys

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB = 37  # sparse feature ids (one shared vocabulary, PaddleRec's sparse_feature_number)
FIELDS = 5  # sparse fields
DENSE = 3  # dense features
EMB = 4  # embedding width
MIN_FLOAT = -1e9  # DLRM's mask value (PaddleRec's MIN_FLOAT)


class Rec(nn.Layer):
    """Weights normal 0.3 (embeddings 0.5), so every path's contribution shows in the output."""

    def randomize_weights(self, rng):
        with paddle.no_grad():
            for p in self.parameters():
                scale = 0.5 if p.name.startswith("embedding") else 0.3
                p.set_value(rng.normal(0, scale, p.shape).astype(np.float32))


def sparse_ids(rng, batch, fields, vocab=VOCAB):
    """[batch, fields] int64 ids with 0 and vocab - 1 among them (the ends of the vocabulary)."""
    ids = rng.integers(0, vocab, (batch, fields)).astype(np.int64)
    ids[0, 0], ids[-1, -1] = vocab - 1, 0
    if batch > 1:
        ids[1, 1] = vocab - 1
    return ids


def dense(rng, batch):
    return rng.uniform(0, 1, (batch, DENSE)).astype(np.float32)


# --- DeepFM (PaddleRec models/rank/deepfm/net.py) ----------------------------------------------


class DeepFM(Rec):
    """FM's first-order weights (an embedding of width 1, plus a weight per dense feature) and
    second-order term 0.5 * ((sum e)^2 - sum e^2) over the sparse and the dense features'
    embeddings, a ReLU DNN over the flattened embeddings, sigmoid of the sum. The first-order
    lookup is `F.embedding` on a parameter with padding_idx 0 (an id 0 contributes nothing)."""

    inputs = [("sparse_ids", [None, FIELDS], "int64"), ("dense", [None, DENSE], "float32")]
    second, trains = {"batch": 7}, True
    # Paddle 3.3.1's own oneDNN predictor, recorded in info.json.
    predictor_note = (
        "Paddle 3.3.1's oneDNN predictor differs by ~2% (on the sum of the FM second-order term "
        "and the DNN's last linear layer; each alone agrees); its executor, plain predictor and "
        "dygraph agree"
    )

    def __init__(self, sparse=True, layers=(8, 8)):
        super().__init__()
        self.embedding_one = self.create_parameter([VOCAB, 1], dtype="float32")
        self.embedding = nn.Embedding(VOCAB, EMB, sparse=sparse)
        self.dense_w_one = self.create_parameter([DENSE], dtype="float32")
        self.dense_w = self.create_parameter([1, DENSE, EMB], dtype="float32")
        sizes = [(FIELDS + DENSE) * EMB, *layers, 1]
        self.dnn = nn.LayerList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.sparse = sparse

    def forward(self, sparse_ids, dense):
        # first order
        sparse_emb_one = F.embedding(sparse_ids, self.embedding_one, padding_idx=0, sparse=False)
        dense_emb_one = paddle.unsqueeze(paddle.multiply(dense, self.dense_w_one), axis=2)
        y_first_order = paddle.sum(sparse_emb_one, 1) + paddle.sum(dense_emb_one, 1)
        # second order
        sparse_embeddings = self.embedding(sparse_ids)
        dense_embeddings = paddle.multiply(paddle.unsqueeze(dense, axis=2), self.dense_w)
        feat = paddle.concat([sparse_embeddings, dense_embeddings], 1)
        summed_square = paddle.square(paddle.sum(feat, 1))
        squared_sum = paddle.sum(paddle.square(feat), 1)
        y_second_order = 0.5 * paddle.sum(summed_square - squared_sum, 1, keepdim=True)
        # DNN
        y = paddle.reshape(feat, [-1, (FIELDS + DENSE) * EMB])
        for i, layer in enumerate(self.dnn):
            y = layer(y)
            if i < len(self.dnn) - 1:
                y = F.relu(y)
        return F.sigmoid(y_first_order + y_second_order + y)

    @staticmethod
    def example(rng, batch=4):
        return {"sparse_ids": sparse_ids(rng, batch, FIELDS), "dense": dense(rng, batch)}


# --- Wide&Deep (PaddleRec models/rank/wide_deep/net.py) ----------------------------------------


class WideDeep(Rec):
    """The wide part a linear layer over the dense features; the deep part each sparse field's
    embedding (one `F.embedding` table with padding_idx 0, looked up field by field from a slice
    of the ids, as PaddleRec's list of sparse inputs), concatenated with the dense features into
    a ReLU MLP; sigmoid of wide + deep."""

    inputs = [("sparse_ids", [None, FIELDS], "int64"), ("dense", [None, DENSE], "float32")]
    second, trains = {"batch": 1}, True

    def __init__(self, sparse=False, layers=(8, 6)):
        super().__init__()
        self.wide_part = nn.Linear(DENSE, 1)
        self.emb_table = self.create_parameter([VOCAB, EMB], dtype="float32")
        sizes = [FIELDS * EMB + DENSE, *layers, 1]
        self.mlp = nn.LayerList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.sparse = sparse

    def forward(self, sparse_ids, dense):
        wide = self.wide_part(dense)
        embs = []
        for i in range(FIELDS):
            emb = F.embedding(
                sparse_ids[:, i : i + 1], self.emb_table, padding_idx=0, sparse=self.sparse
            )
            embs.append(paddle.reshape(emb, [-1, EMB]))
        deep = paddle.concat(embs + [dense], axis=1)
        for i, layer in enumerate(self.mlp):
            deep = layer(deep)
            if i < len(self.mlp) - 1:
                deep = F.relu(deep)
        return F.sigmoid(paddle.add(wide, deep))

    example = staticmethod(DeepFM.example)


# --- DLRM (PaddleRec models/rank/dlrm/net.py) --------------------------------------------------


class DLRM(Rec):
    """A bottom MLP on the dense features to the embedding width, the sparse fields' embeddings,
    the pairwise dot interactions of all FIELDS + 1 vectors by `paddle.bmm(T, T^T)`, their upper
    triangle taken twice: PaddleRec's way (`triu(Z, 1) + tril(ones * MIN_FLOAT)` and
    `masked_select` of the entries above MIN_FLOAT) and by `paddle.triu_indices` into the
    flattened matrix (`index_select`), averaged; a top MLP, sigmoid."""

    inputs = [("sparse_ids", [None, FIELDS], "int64"), ("dense", [None, DENSE], "float32")]
    second, trains = {"batch": 9}, True
    predictor_note = (
        "Paddle 3.3.1's oneDNN predictor fails: its masked_select returns 23 elements, not 60, "
        "which the reshape to [-1, 15] refuses; its executor, plain predictor and dygraph agree"
    )

    def __init__(self, sparse=True, bot=(6,), top=(8,)):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, EMB, sparse=sparse)
        sizes = [DENSE, *bot, EMB]
        self.bot_mlp = nn.LayerList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        n = FIELDS + 1
        self.pairs = n * (n - 1) // 2
        sizes = [EMB + self.pairs, *top, 1]
        self.top_mlp = nn.LayerList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, sparse_ids, dense):
        x = dense
        for layer in self.bot_mlp:
            x = F.relu(layer(x))
        n = FIELDS + 1
        emb = self.embedding(sparse_ids)  # [B, F, EMB]
        T = paddle.concat([emb, paddle.unsqueeze(x, 1)], axis=1)  # [B, n, EMB]
        Z = paddle.bmm(T, paddle.transpose(T, perm=[0, 2, 1]))  # [B, n, n]
        masked = paddle.triu(Z, 1) + paddle.tril(paddle.ones_like(Z) * MIN_FLOAT, 0)
        z1 = paddle.reshape(
            paddle.masked_select(
                masked, paddle.greater_than(masked, paddle.ones_like(Z) * MIN_FLOAT)
            ),
            [-1, self.pairs],
        )
        rows_cols = paddle.triu_indices(n, n, 1)  # [2, pairs]
        flat_index = rows_cols[0] * n + rows_cols[1]
        z2 = paddle.index_select(paddle.reshape(Z, [-1, n * n]), flat_index, axis=1)
        y = paddle.concat([x, 0.5 * (z1 + z2)], axis=1)
        for i, layer in enumerate(self.top_mlp):
            y = layer(y)
            if i < len(self.top_mlp) - 1:
                y = F.relu(y)
        return F.sigmoid(y)

    example = staticmethod(DeepFM.example)


# --- DIN (PaddleRec models/rank/din/net.py) ----------------------------------------------------

ITEMS, CATS, HIST = 29, 7, 6  # item and category vocabularies, the example's history length


class DIN(Rec):
    """Deep interest network: a behaviour sequence of item ids (and their categories) padded with
    0, the target item's embedding against each behaviour: concat(q, k, q - k, q * k) into a
    sigmoid MLP to a score, masked by `ids != 0` with `paddle.where` (-1e9) and scaled, softmax
    over the sequence, the weighted sum by matmul (PaddleRec's DIN); plus a sigmoid-weighted sum
    pooling with the padding zeroed by `masked_fill`; concatenated with the target into a
    sigmoid MLP, the item bias added, sigmoid. The history length is dynamic."""

    inputs = [
        ("hist_item", [None, None], "int64"),
        ("hist_cat", [None, None], "int64"),
        ("target_item", [None], "int64"),
        ("target_cat", [None], "int64"),
    ]
    second, trains = {"batch": 5, "length": 11}, True

    def __init__(self, sparse=True, att=(8, 4), con=(8, 4)):
        super().__init__()
        self.item_emb = nn.Embedding(ITEMS, EMB, sparse=sparse, padding_idx=0)
        self.cat_emb = nn.Embedding(CATS, EMB, sparse=sparse, padding_idx=0)
        self.item_b = nn.Embedding(ITEMS, 1, sparse=sparse)
        d = 2 * EMB
        self.d = d
        sizes = [4 * d, *att, 1]
        self.attention = nn.LayerList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.fir = nn.Linear(2 * d, 2 * d)
        sizes = [3 * d, *con, 1]
        self.con = nn.LayerList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, hist_item, hist_cat, target_item, target_cat):
        hist = paddle.concat([self.item_emb(hist_item), self.cat_emb(hist_cat)], axis=2)  # [B,L,d]
        target = paddle.concat([self.item_emb(target_item), self.cat_emb(target_cat)], axis=1)
        q = paddle.expand_as(paddle.unsqueeze(target, 1), hist)
        concat = paddle.concat([q, hist, q - hist, q * hist], axis=2)
        for i, layer in enumerate(self.attention):
            concat = layer(concat)
            if i < len(self.attention) - 1:
                concat = F.sigmoid(concat)
        score = paddle.squeeze(concat, -1)  # [B, L]
        valid = hist_item != 0
        masked = paddle.where(valid, score, paddle.full_like(score, -1e9))
        weight = F.softmax(paddle.scale(masked, scale=self.d**-0.5), axis=-1)
        attended = paddle.squeeze(paddle.matmul(paddle.unsqueeze(weight, 1), hist), 1)
        gate = paddle.masked_fill(F.sigmoid(score), paddle.logical_not(valid), 0.0)
        pooled = paddle.sum(hist * paddle.unsqueeze(gate, -1), axis=1)
        interest = self.fir(paddle.concat([attended, pooled], axis=1))
        y = paddle.concat([interest, target], axis=1)
        for i, layer in enumerate(self.con):
            y = layer(y)
            if i < len(self.con) - 1:
                y = F.sigmoid(y)
        return F.sigmoid(y + self.item_b(target_item))

    @staticmethod
    def example(rng, batch=4, length=HIST):
        """Histories padded with 0 at the end: lengths from full to 1, one row empty where the
        batch allows (softmax over all -1e9: uniform weights on zero vectors)."""
        item = rng.integers(1, ITEMS, (batch, length)).astype(np.int64)
        lengths = np.maximum(length - np.arange(batch) * 2, 1)
        if batch > 3:
            lengths[3] = 0
        for b, n in enumerate(lengths):
            item[b, n:] = 0
        item[0, 0] = ITEMS - 1
        cat = np.where(item == 0, 0, item % (CATS - 1) + 1).astype(np.int64)
        target = rng.integers(1, ITEMS, batch).astype(np.int64)
        target[-1] = ITEMS - 1
        return {
            "hist_item": item,
            "hist_cat": cat,
            "target_item": target,
            "target_cat": (target % (CATS - 1) + 1).astype(np.int64),
        }


# --- DCN-v2 + MMoE (PaddleRec models/rank/dcn_v2, models/multitask/mmoe) -----------------------


class DCNv2MMoE(Rec):
    """The sparse fields' embeddings (sparse=True) and the dense features into DCN-v2's cross
    network (x_{l+1} = x0 * (W x_l + b) + x_l, 2 layers), then a multi-task MMoE over it: 3 ReLU
    experts stacked [B, E, H], per task a gate softmax over the experts mixing them (task 0 by
    `paddle.einsum('be,beh->bh')`, task 1 by `paddle.bmm`), a ReLU tower each; task 0 a sigmoid
    CTR, task 1 PaddleRec's MMoE 2-way softmax clipped to [1e-15, 1 - 1e-15]."""

    inputs = [("sparse_ids", [None, FIELDS], "int64"), ("dense", [None, DENSE], "float32")]
    second, trains = {"batch": 2}, True

    def __init__(self, sparse=True, cross=2, experts=3, expert_size=6, tower=4):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, EMB, sparse=sparse)
        d = FIELDS * EMB + DENSE
        self.cross = nn.LayerList(nn.Linear(d, d) for _ in range(cross))
        self.experts = nn.LayerList(nn.Linear(d, expert_size) for _ in range(experts))
        self.gates = nn.LayerList(nn.Linear(d, experts) for _ in range(2))
        self.towers = nn.LayerList(nn.Linear(expert_size, tower) for _ in range(2))
        self.ctr_out = nn.Linear(tower, 1)
        self.cvr_out = nn.Linear(tower, 2)
        self.n_experts, self.expert_size = experts, expert_size

    def forward(self, sparse_ids, dense):
        emb = paddle.flatten(self.embedding(sparse_ids), start_axis=1)
        x0 = paddle.concat([emb, dense], axis=1)
        x = x0
        for w in self.cross:
            x = x0 * w(x) + x
        experts = paddle.stack([F.relu(e(x)) for e in self.experts], axis=1)  # [B, E, H]
        g0 = F.softmax(self.gates[0](x), axis=-1)
        mix0 = paddle.einsum("be,beh->bh", g0, experts)
        g1 = F.softmax(self.gates[1](x), axis=-1)
        mix1 = paddle.squeeze(paddle.bmm(paddle.unsqueeze(g1, 1), experts), 1)
        ctr = F.sigmoid(self.ctr_out(F.relu(self.towers[0](mix0))))
        cvr = F.softmax(self.cvr_out(F.relu(self.towers[1](mix1))), axis=-1)
        return ctr, paddle.clip(cvr, min=1e-15, max=1.0 - 1e-15)

    example = staticmethod(DeepFM.example)


# --- a two-tower retrieval model (PaddleRec models/match: DSSM-like towers) -------------------

USERS, USER_FIELDS, ITEM_FEATS = 23, 3, 5


class TwoTower(Rec):
    """A user tower (the user's feature ids' embeddings sum-pooled, a tanh MLP, `F.normalize`)
    and an item tower over a fed candidate feature matrix [N, ITEM_FEATS] (tanh MLP,
    `F.normalize`); the cosine scores [B, N] by matmul of the normalized vectors, the same by
    `F.cosine_similarity` of the raw ones broadcast, and `paddle.topk` (k 3) of the scores."""

    inputs = [
        ("user_ids", [None, USER_FIELDS], "int64"),
        ("candidates", [None, ITEM_FEATS], "float32"),
    ]
    second, trains = {"batch": 5, "candidates": 13}, False

    def __init__(self, sparse=True, width=6):
        super().__init__()
        self.user_emb = nn.Embedding(USERS, EMB, sparse=sparse)
        self.user_fc = nn.LayerList([nn.Linear(EMB, width), nn.Linear(width, width)])
        self.item_fc = nn.LayerList([nn.Linear(ITEM_FEATS, width), nn.Linear(width, width)])

    def forward(self, user_ids, candidates):
        u = paddle.sum(self.user_emb(user_ids), axis=1)
        for layer in self.user_fc:
            u = paddle.tanh(layer(u))
        v = candidates
        for layer in self.item_fc:
            v = paddle.tanh(layer(v))
        scores = paddle.matmul(F.normalize(u, axis=1), F.normalize(v, axis=1), transpose_y=True)
        cos = F.cosine_similarity(paddle.unsqueeze(u, 1), paddle.unsqueeze(v, 0), axis=2)
        values, indices = paddle.topk(scores, k=3, axis=1)
        return scores, cos, values, indices

    @staticmethod
    def example(rng, batch=3, candidates=8):
        return {
            "user_ids": sparse_ids(rng, batch, USER_FIELDS, USERS),
            "candidates": rng.standard_normal((candidates, ITEM_FEATS)).astype(np.float32),
        }


# name: constructor. The fixtures pir/<name>.
REC_MODELS = {
    "rec_deepfm": DeepFM,
    "rec_wide_deep": WideDeep,
    "rec_dlrm": DLRM,
    "rec_din": DIN,
    "rec_dcn_mmoe": DCNv2MMoE,
    "rec_two_tower": TwoTower,
}


# --- the fixtures ------------------------------------------------------------------------------


def _outputs(net, feed):
    outs = net(**{k: paddle.to_tensor(v) for k, v in feed.items()})
    return list(outs) if isinstance(outs, (tuple, list)) else [outs]


def _dense_grad(p):
    g = p.grad
    if not g.is_selected_rows():
        return g.numpy()
    out = np.zeros(p.shape, np.float32)
    np.add.at(out, np.array(g.rows()), g.value().numpy())
    return out


def export(name, out_root, pe):
    """The model `name` to out_root/name; `pe`: tools/paddle_export.py (imported with --pir)."""
    import paddle.nn.functional as F  # noqa: N812

    out_dir = pe.fresh_dir(out_root, name)
    rng = np.random.default_rng(pe.SEED + sum(map(ord, name)))
    paddle.disable_static()
    paddle.seed(pe.SEED)
    net = REC_MODELS[name]()
    net.eval()
    net.randomize_weights(rng)
    spec = [paddle.static.InputSpec(s, d, n) for n, s, d in net.inputs]
    prefix = os.path.join(out_dir, "inference")
    paddle.jit.save(net, prefix, input_spec=spec)
    # The references: dense embedding gradients (the module docstring says why).
    for sub in net.sublayers():
        if isinstance(sub, nn.Embedding):
            sub._sparse = False
    if hasattr(net, "sparse"):
        net.sparse = False
    feed, feed2 = net.example(rng), net.example(rng, **net.second)
    outs = _outputs(net, feed)
    weights, loss = {}, 0
    for i, o in enumerate(outs):
        if o.dtype == paddle.float32:
            weights["R%d" % i] = rng.standard_normal(o.shape).astype(np.float32)
            loss = loss + paddle.sum(o * paddle.to_tensor(weights["R%d" % i]))
    loss.backward()
    grads = {"grad:" + p.name: _dense_grad(p) for p in net.parameters()}
    net.clear_gradients()
    np.savez(os.path.join(out_dir, "grads.npz"), **weights, **grads)
    with paddle.no_grad():
        dygraph = [o.numpy() for o in _outputs(net, feed)]
        second = [o.numpy() for o in _outputs(net, feed2)]
    np.savez(os.path.join(out_dir, "inputs2.npz"), **feed2)
    np.savez(
        os.path.join(out_dir, "expected2.npz"), **{"out%d" % i: o for i, o in enumerate(second)}
    )
    extra = {"sparse_embeddings": name != "rec_wide_deep", "second_feed": net.second}
    if getattr(net, "predictor_note", None):
        extra["paddle_onednn_predictor"] = net.predictor_note
    if net.trains:
        net.train()
        opt = paddle.optimizer.SGD(learning_rate=0.5, parameters=net.parameters())
        ref = {}
        losses = []
        for step in range(5):
            batch = net.example(rng, **net.second)
            out = _outputs(net, batch)[0]
            label = rng.integers(0, 2, out.shape).astype(np.float32)
            step_loss = F.binary_cross_entropy(out, paddle.to_tensor(label))
            step_loss.backward()
            opt.step()
            opt.clear_grad()
            ref.update({"%d/%s" % (step, k): v for k, v in batch.items()})
            ref["%d/label" % step] = label
            losses.append(float(step_loss))
        ref["loss"] = np.array(losses, np.float32)
        ref.update({"param:" + p.name: p.numpy() for p in net.parameters()})
        np.savez(os.path.join(out_dir, "train.npz"), **ref)
        extra["train"] = "SGD 0.5, mean binary cross entropy of out0, 5 steps"
    paddle.enable_static()
    if getattr(net, "predictor_note", None) and "fails" in net.predictor_note:
        pe.NO_ONEDNN_PREDICTOR.add(name)
    pe.record(name, "pir", out_dir, prefix, feed, extra=extra)
    # Paddle's executor on the saved files agrees with its dygraph, at both feeds.
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        prog, _, fetches = paddle.static.load_inference_model(prefix, exe)
        for f, want in ((feed, dygraph), (feed2, second)):
            got = exe.run(prog, feed=f, fetch_list=fetches)
            assert max(pe.rel_gap(g, w) for g, w in zip(got, want)) < 1e-6, name


def main():
    sys.argv.insert(1, "--pir")  # paddle_export reads it before it imports paddle
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import paddle_export as pe

    args = [a for a in sys.argv[1:] if a != "--pir"]
    if not args or paddle.__version__.startswith("2."):
        sys.exit("usage (Paddle 3.x): paddle_rec_models.py OUT [name ...]  (writes OUT/pir/<name>)")
    for name in args[1:] or list(REC_MODELS):
        export(name, os.path.join(args[0], "pir"), pe)


if __name__ == "__main__":
    main()
