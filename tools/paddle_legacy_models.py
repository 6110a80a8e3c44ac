#!/usr/bin/env python3
"""Today's model families saved by PaddlePaddle 2.6.2 in its legacy program format
(`inference.pdmodel` + `inference.pdiparams`, what every PaddleOCR / PaddleDetection / PaddleSeg
release model before Paddle 3.0 is): the LLM, segmentation / diffusion, speech / seq2seq,
detection, generative / point-cloud / T5, recommendation and vision-backbone models of
tools/paddle_{llm,seg,speech,det,gen,rec,vis}_models.py (written for Paddle 3.3.1 PIR fixtures),
built under Paddle 2.6 as they are (where a model needs an API Paddle 2.6 lacks, LEGACY_FIXES
below says what stands in), randomised as their families do and saved by Paddle 2.6's
`paddle.jit.save`.

    python3.11 -m venv /tmp/paddle26 && /tmp/paddle26/bin/pip install paddlepaddle==2.6.2 \
        "numpy<2" "protobuf<=3.20.3"
    /tmp/paddle26/bin/python tools/paddle_legacy_models.py OUT [NAME ...]

writes OUT/legacy_<name>/ (NAME: the family's name, e.g. `llm_llama`, or legacy_llm_llama; OUT
tests/fixtures/paddle for the fixtures), each model in a process of its own, with
  inference.pdmodel + inference.pdiparams  (paddle.jit.save, Paddle 2.6: the legacy ProgramDesc,
  + inference.pdiparams.info               its op_callstack debug attributes stripped; the .info
                                           pickle marks buffers and frozen parameters),
  inputs.npz / input.npy, expected.npy / .npz, info.json   (tools/paddle_export.py's record:
                                           Paddle 2.6's executor on the reloaded files),
  others.npz                               (feed<i>_<name>, out<i>_<k>: another batch / length /
                                           image size, Paddle 2.6's executor on the same files),
  grads.npz                                (R, grad/<parameter>: Paddle 2.6's dygraph gradients
                                           of sum(out0 * R) at the example, as saved: eval mode).
Paddle 2.6.2's executor fails now and then on the reloaded llm_generate (a broadcast of stale
loop shapes, [2, 4, 3, 12] + [3, 11]); run that one again.
Without NAMEs it exports FIXTURES (those saved as tests/fixtures/paddle/legacy_*); `--all`
tries every model of the seven families and prints what Paddle 2.6 could not save."""

import argparse
import json
import os
import sys
import traceback

# The legacy ProgramDesc (Paddle 2.6's default; its experimental PIR flag off), before any module
# that sets it is imported (tools/paddle_llm_models.py asks for PIR by default).
os.environ["FLAGS_enable_pir_api"] = "0"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.nn.functional as F  # noqa: E402
import paddle_det_models as det  # noqa: E402
import paddle_export as pe  # noqa: E402
import paddle_gen_models as gen  # noqa: E402
import paddle_llm_models as llm  # noqa: E402
import paddle_rec_models as rec  # noqa: E402
import paddle_seg_models as seg  # noqa: E402
import paddle_speech_models as speech  # noqa: E402
import paddle_vis_models as vis  # noqa: E402
from paddle import nn  # noqa: E402

MODELS = {
    **llm.LLM_MODELS,
    **seg.SEG_MODELS,
    **speech.SPEECH_MODELS,
    **det.DET_MODELS,
    **gen.GEN_MODELS,
    **rec.REC_MODELS,
    **vis.VIS_MODELS,
}
# The models saved as tests/fixtures/paddle/legacy_<name> (tests/python/test_paddle_legacy_families.py).
FIXTURES = [
    "llm_generate",  # a while loop whose last logits the body only writes (while's X)
    "speech_gru_attn_dyn",  # lod_array_length; two loop variables of one name (two assigns)
    "gen_cyclegan",  # instance_norm without SavedMean / SavedVariance
    "seg_unet",  # conv2d_transpose's output_size bound to variables (a VAR attribute)
    "vis_patchtst",  # share_data (Tensor.detach)
    "det_rtdetr",  # reduce_all's dim written as int64s; share_data
    "det_two_stage",  # roi_align 3, generate_proposals_v2 1, distribute_fpn_proposals 2; RpnRoisNum
    "gen_stylegan2",  # buffers (blur kernels) stop_gradient by inference.pdiparams.info
]
# What stands in for an API Paddle 2.6 lacks: name -> a note.
LEGACY_FIXES = {}


def sdpa_math(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, training=True, name=None
):
    """F.scaled_dot_product_attention as Paddle 2.6 users wrote it for the CPU (PaddleNLP's
    scaled_dot_product_attention without flash attention): Paddle 2.6's own runs only on a GPU
    (is_causal: fused_softmax_mask_upper_triangle; an attn_mask: flash_attn) and has no grouped
    heads. Paddle 3.x's CPU path, written out: the KV heads repeated (enable_gqa), softmax(q k^T
    / sqrt(d) + mask) v, the causal mask Paddle's get_triangle_upper_mask (-1e4 above the
    diagonal)."""
    from paddle.nn.functional.flash_attention import get_triangle_upper_mask

    if key.shape[2] != query.shape[2]:
        rep = query.shape[2] // key.shape[2]
        key = paddle.repeat_interleave(key, rep, axis=2)
        value = paddle.repeat_interleave(value, rep, axis=2)
    q, k, v = (paddle.transpose(t, [0, 2, 1, 3]) for t in (query, key, value))
    product = paddle.matmul(q * (query.shape[-1] ** -0.5), k, transpose_y=True)
    if is_causal:
        product = product + get_triangle_upper_mask(product)
    elif attn_mask is not None:
        if attn_mask.dtype == paddle.bool:
            attn_mask = paddle.where(
                attn_mask, paddle.zeros_like(product), paddle.full_like(product, -1e4)
            )
        product = product + attn_mask
    out = paddle.matmul(paddle.nn.functional.softmax(product), v)
    return paddle.transpose(out, [0, 2, 1, 3])


paddle.nn.functional.scaled_dot_product_attention = sdpa_math


def swiglu(x, y=None):
    """paddle.incubate.nn.functional.swiglu, which Paddle 2.6 lacks, as PaddleNLP wrote it
    without the fused op: silu of the first half times the second."""
    if y is None:
        x, y = paddle.chunk(x, chunks=2, axis=-1)
    return F.silu(x) * y


paddle.incubate.nn.functional.swiglu = swiglu
_multiclass_nms3 = paddle._C_ops.multiclass_nms3


def multiclass_nms3(
    bboxes,
    scores,
    rois_num,
    score_threshold,
    nms_top_k,
    keep_top_k,
    nms_threshold,
    normalized,
    nms_eta,
    background_label,
):
    """paddle._C_ops.multiclass_nms3 in dygraph; in Paddle 2.6's static graph (which its
    _C_ops refuse) the op appended as PaddleDetection 2.6's ops.multiclass_nms does."""
    args = (score_threshold, nms_top_k, keep_top_k, nms_threshold, normalized, nms_eta)
    if paddle.in_dynamic_mode():
        return _multiclass_nms3(bboxes, scores, rois_num, *args, background_label)
    from paddle.base.layer_helper import LayerHelper

    helper = LayerHelper("multiclass_nms3")
    out = helper.create_variable_for_type_inference(dtype=bboxes.dtype)
    index = helper.create_variable_for_type_inference(dtype="int32")
    nms_rois_num = helper.create_variable_for_type_inference(dtype="int32")
    inputs = {"BBoxes": bboxes, "Scores": scores}
    if rois_num is not None:
        inputs["RoisNum"] = rois_num
    helper.append_op(
        type="multiclass_nms3",
        inputs=inputs,
        attrs={
            "background_label": background_label,
            "score_threshold": score_threshold,
            "nms_top_k": nms_top_k,
            "nms_threshold": nms_threshold,
            "keep_top_k": keep_top_k,
            "nms_eta": nms_eta,
            "normalized": normalized,
        },
        outputs={"Out": out, "Index": index, "NmsRoisNum": nms_rois_num},
    )
    out.stop_gradient = index.stop_gradient = nms_rois_num.stop_gradient = True
    return out, index, nms_rois_num


paddle._C_ops.multiclass_nms3 = multiclass_nms3
_nms = paddle.vision.ops.nms


def nms_by_category(
    boxes, iou_threshold=0.3, scores=None, category_idxs=None, categories=None, top_k=None
):
    """paddle.vision.ops.nms by category as torchvision's batched_nms does it (each category's
    boxes shifted beyond the others', one NMS over all in score order): Paddle 2.6's static graph
    cannot build its per-category loop (its nms op's shape inference fails on an empty slice)."""
    if category_idxs is None:
        return _nms(boxes, iou_threshold, scores, category_idxs, categories, top_k)
    span = boxes.max() - boxes.min() + 1.0
    shifted = boxes + category_idxs.astype(boxes.dtype).unsqueeze(-1) * span
    order = paddle.argsort(scores, descending=True)
    keep = paddle.gather(order, _nms(paddle.gather(shifted, order), iou_threshold))
    return keep if top_k is None else keep[:top_k]


paddle.vision.ops.nms = nms_by_category


class RTDETRTransformer(det.RTDETRTransformer):
    """det's RTDETRTransformer with its decoder loop run to eval_idx and the return after it:
    Paddle 2.6's dynamic-to-static makes a `return` inside the loop return None."""

    def forward(self, feats):
        memory, spatial_shapes, level_start_index = self._get_encoder_input(feats)
        bs = memory.shape[0]
        anchors, valid_mask = self._generate_anchors(spatial_shapes)
        output_memory = paddle.where(valid_mask, memory, paddle.to_tensor(0.0))
        output_memory = self.enc_output(output_memory)
        enc_outputs_class = self.enc_score_head(output_memory)
        enc_outputs_coord_unact = self.enc_bbox_head(output_memory) + anchors
        _, topk_ind = paddle.topk(enc_outputs_class.max(-1), self.num_queries, axis=1)
        batch_ind = paddle.arange(end=bs, dtype=topk_ind.dtype)
        batch_ind = batch_ind.unsqueeze(-1).tile([1, self.num_queries])
        topk_ind = paddle.stack([batch_ind, topk_ind], axis=-1)
        reference_points_unact = paddle.gather_nd(enc_outputs_coord_unact, topk_ind)
        target = paddle.gather_nd(output_memory, topk_ind).detach()
        ref_points_unact = reference_points_unact.detach()
        output = target
        ref_points_detach = F.sigmoid(ref_points_unact)
        for i in range(self.eval_idx + 1):
            ref_points_input = ref_points_detach.unsqueeze(2)
            query_pos_embed = self.query_pos_head(ref_points_detach)
            output = self.layers[i](
                output,
                ref_points_input,
                memory,
                spatial_shapes,
                level_start_index,
                query_pos_embed,
            )
            inter_ref_bbox = F.sigmoid(
                self.dec_bbox_head[i](output) + det.inverse_sigmoid(ref_points_detach)
            )
            ref_points_detach = inter_ref_bbox
        return inter_ref_bbox, self.dec_score_head[self.eval_idx](output)


def rtdetr():
    net = det.RTDETR()
    net.transformer.__class__ = RTDETRTransformer
    return net


def qwen2():
    """llm's Qwen2 with its RMSNorms written out: Paddle 2.6 has no CPU kernel for rms_norm."""
    net = llm.Qwen2()
    for sub in net.sublayers():
        if isinstance(sub, llm.RMSNorm):
            sub.fused = False
    return net


MODELS["det_rtdetr"] = rtdetr
MODELS["llm_qwen2"] = qwen2
LEGACY_FIXES.update(
    {
        "llm_llama": "F.scaled_dot_product_attention(is_causal) written out (sdpa_math)",
        "llm_qwen2": "F.scaled_dot_product_attention with a mask and grouped KV heads written out "
        "(sdpa_math); paddle.incubate's swiglu and fused_rms_norm written out",
        "seg_diffusion_unet": "F.scaled_dot_product_attention written out (sdpa_math)",
        "det_ppyoloe": "multiclass_nms3 appended as PaddleDetection 2.6 does",
        "det_rtdetr": "the decoder loop without a return inside it",
        "det_two_stage": "nms by category by shifted boxes (nms_by_category)",
    }
)


def call(net, feed, names):
    """net's outputs (a list) on `feed` in dygraph: by keyword where the forward takes the feed
    names, else in the order of net.inputs."""
    tensors = {k: paddle.to_tensor(v) for k, v in feed.items()}
    try:
        outs = net(**tensors)
    except TypeError:
        outs = net(*[tensors[n] for n in names])
    return list(outs) if isinstance(outs, (list, tuple)) else [outs]


def other_feed(net, rng):
    """A feed of another batch / length / size than the example's, as the family names it."""
    if hasattr(net, "alt_examples"):
        return net.alt_examples(rng)[0]
    if hasattr(net, "cases"):
        return net.cases(rng)[0]
    if getattr(net, "shapes", None):
        return net.example(rng, **net.shapes[0])
    if hasattr(net, "second"):
        return net.example(rng, **net.second)
    return None


def dense_grad(g):
    if hasattr(g, "is_selected_rows") and g.is_selected_rows():
        raise AssertionError("sparse gradient")
    return g.numpy()


def dygraph_grads(net, feed, names, rng):
    """Paddle 2.6's dygraph gradients of sum(out0 * R) w.r.t. each trainable parameter (eval
    mode, as saved; an RNN seq2seq in train mode, as tools/paddle_speech_models.py says), and
    for a weight-normed layer w.r.t. its effective `weight`, which paddle.jit.save saves as the
    parameter. Sparse embeddings take dense gradients. Returns ({"R": R, "grad/<name>": g},
    Paddle's out0)."""
    for sub in net.sublayers():
        if isinstance(sub, nn.Embedding):
            sub._sparse = False
    if hasattr(net, "sparse"):
        net.sparse = False
    fused = [s for s in net.sublayers() if isinstance(s, llm.RMSNorm) and s.fused]
    for s in fused:  # Paddle has no CPU kernel for fused_rms_norm's gradient (paddle_llm_models)
        s.fused = False
    if getattr(net, "grads_in_train_mode", False):
        net.train()
    out = call(net, feed, names)[0]
    net.eval()
    for s in fused:
        s.fused = True
    r = rng.standard_normal(out.shape).astype(np.float32)
    loss = (out * paddle.to_tensor(r)).sum()
    normed = [s for s in net.sublayers() if hasattr(s, "weight_g")]
    params = [p for p in net.parameters() if not p.stop_gradient]
    targets = params + [s.weight for s in normed]
    got = paddle.grad(loss, targets, allow_unused=True)
    res = {"R": r}
    for p, g in zip(targets, got):
        if g is not None:
            res["grad/" + p.name] = dense_grad(g)
    return res, out.numpy()


def strip_callstacks(model):
    """Drops the op_callstack attributes (the Python stack of every op at tracing: debug text,
    three quarters of a program's bytes) from the saved program, so the fixtures stay small.
    Paddle reads the program without them; Tide ignores them."""
    from paddle.base.proto import framework_pb2

    desc = framework_pb2.ProgramDesc()
    with open(model, "rb") as f:
        desc.ParseFromString(f.read())
    for block in desc.blocks:
        for op in block.ops:
            keep = [a for a in op.attrs if a.name != "op_callstack"]
            del op.attrs[:]
            op.attrs.extend(keep)
    with open(model, "wb") as f:
        f.write(desc.SerializeToString())


def saved_parameters(prefix):
    """The persistable variables of the saved program's block 0 that no op writes (its
    parameters and buffers; not a weight-normed layer's weight, which Paddle 2.6 traces the
    hook of: the program computes it from weight_g and weight_v)."""
    with open(prefix + ".pdmodel", "rb") as f:
        desc = paddle.framework.core.ProgramDesc(f.read())
    written = set()
    for b in range(desc.num_blocks()):
        block = desc.block(b)
        for i in range(block.op_size()):
            written.update(block.op(i).output_arg_names())
    return {
        v.name()
        for v in desc.block(0).all_vars()
        if v.persistable() and v.name() not in ("feed", "fetch") and v.name() not in written
    }


def export(name, out_root):
    """MODELS[name] built and saved by Paddle 2.6 to out_root/<dir>; returns a summary line."""
    model = name[len("legacy_") :] if name.startswith("legacy_") else name
    out_dir = pe.fresh_dir(out_root, "legacy_" + model)
    rng = np.random.default_rng(pe.SEED + sum(map(ord, model)))
    paddle.disable_static()
    paddle.seed(pe.SEED)
    net = MODELS[model]()
    net.eval()
    net.randomize_weights(rng)
    names = [n for n, _, _ in net.inputs]
    feed = net.example(rng)
    alt = other_feed(net, rng)
    grads, dygraph = dygraph_grads(net, feed, names, rng)
    spec = [paddle.static.InputSpec(s, d, n) for n, s, d in net.inputs]
    prefix = os.path.join(out_dir, "inference")
    paddle.jit.save(net, prefix, input_spec=spec)
    paddle.enable_static()
    strip_callstacks(prefix + ".pdmodel")
    saved = saved_parameters(prefix)
    grads = {k: v for k, v in grads.items() if k == "R" or k[len("grad/") :] in saved}
    np.savez_compressed(os.path.join(out_dir, "grads.npz"), **grads)
    # Paddle's executor on the reloaded files (Paddle 2.6's predictor, paddle_export's
    # cross-check, crashes in its constant folding on some of these programs).
    outs, _ = reference_executor(prefix, feed)
    pe.record("legacy_" + model, "jit", out_dir, prefix, feed, outs=outs)
    expected = (
        np.load(os.path.join(out_dir, "expected.npy"))
        if os.path.exists(os.path.join(out_dir, "expected.npy"))
        else np.load(os.path.join(out_dir, "expected.npz"))["out0"]
    )
    gap = pe.rel_gap(dygraph.astype(np.float64), expected.astype(np.float64))
    others = {}
    if alt is not None:
        outs, _ = reference_executor(prefix, alt)
        others.update({"feed0_%s" % k: v for k, v in alt.items()})
        others.update({"out0_%d" % k: o for k, o in enumerate(outs)})
        np.savez(os.path.join(out_dir, "others.npz"), **others)
    with open(os.path.join(out_dir, "info.json")) as f:
        info = json.load(f)
    info["dygraph_rel_gap"] = gap
    info["op_callstack"] = "stripped (debug text)"
    info["model"] = "%s.%s" % (MODELS[model].__module__, getattr(MODELS[model], "__name__", model))
    if model in LEGACY_FIXES:
        info["legacy_fix"] = LEGACY_FIXES[model]
    with open(os.path.join(out_dir, "info.json"), "w") as f:
        json.dump(info, f, indent=1)
    size = sum(os.path.getsize(os.path.join(out_dir, n)) for n in os.listdir(out_dir))
    return "%-24s ok  %7.1f KiB  dygraph gap %.1e  %d grads  other feed %s" % (
        model,
        size / 1024,
        gap,
        len(grads) - 1,
        "yes" if alt is not None else "no",
    )


def reference_executor(prefix, feed):
    """Paddle's executor on the reloaded files: (outputs, None)."""
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        prog, feeds, fetches = paddle.static.load_inference_model(prefix, exe)
        return exe.run(prog, feed={k: feed[k] for k in feeds}, fetch_list=fetches), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="output directory (tests/fixtures/paddle)")
    ap.add_argument("names", nargs="*", help="models (default: FIXTURES)")
    ap.add_argument("--all", action="store_true", help="every model of the seven families")
    args = ap.parse_args()
    if not paddle.__version__.startswith("2."):
        sys.exit("run with Paddle 2.x (its legacy program format)")
    names = list(MODELS) if args.all else args.names or FIXTURES
    if len(names) > 1:  # each in a process of its own: a crash of Paddle's stops only that one
        import subprocess

        failed = [
            n
            for n in names
            if subprocess.run([sys.executable, __file__, args.out, n]).returncode != 0
        ]
        print("failed:", failed)
        return
    try:
        print(export(names[0], args.out))
    except Exception as e:  # noqa: BLE001 (reported: what Paddle 2.6 could not save)
        traceback.print_exc()
        lines = [ln for ln in str(e).strip().split("\n") if ln.strip()]
        print(
            "%-24s FAILED %s: %s" % (names[0], type(e).__name__, lines[-1][:300] if lines else "")
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
