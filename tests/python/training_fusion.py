"""What the tests of the Executor's training rewrites (fuse_conv_bias_act, fuse_fc_bias_act)
share: comparing two trainings, and rewriting a freshly built program."""

import numpy as np

import tide


def assert_same_training(a, b, rtol=1e-5):
    """a, b: (per-step fetched values, {parameter: value}, kernels) of two trainings."""
    (ra, pa, _), (rb, pb, _) = a, b
    for step_a, step_b in zip(ra, rb):
        for va, vb in zip(step_a, step_b):
            np.testing.assert_allclose(va, vb, rtol=rtol, atol=1e-6)
    assert pa.keys() == pb.keys()
    for name in pa:
        np.testing.assert_allclose(pa[name], pb[name], rtol=rtol, atol=1e-6, err_msg=name)


def rewrite(fuse, build, skip=(), **kw):
    """build(**kw) -> (loss, {name: var}) in a new program, then fuse(program, skip_opt_set=the
    vars named in skip); returns (program, the vars, what fuse returned)."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup), tide.unique_name.guard():
        _, outs = build(**kw)
    fused = fuse(main, skip_opt_set=[outs[n] for n in skip])
    return main, outs, fused


def op_types(program):
    return [op.type for op in program.global_block().ops]
