"""Composite layers (Fluid's fluid.nets): conv + pool groups as used by LeNet and VGG, and the
sequence conv + pool of the text models."""

from . import layers


def simple_img_conv_pool(
    input,
    num_filters,
    filter_size,
    pool_size,
    pool_stride,
    pool_padding=0,
    pool_type="max",
    global_pooling=False,
    conv_stride=1,
    conv_padding=0,
    conv_dilation=1,
    conv_groups=1,
    param_attr=None,
    bias_attr=None,
    act=None,
    use_cudnn=True,
):
    """conv2d (with act) then pool2d."""
    conv = layers.conv2d(
        input,
        num_filters,
        filter_size,
        stride=conv_stride,
        padding=conv_padding,
        dilation=conv_dilation,
        groups=conv_groups,
        param_attr=param_attr,
        bias_attr=bias_attr,
        act=act,
        use_cudnn=use_cudnn,
    )
    return layers.pool2d(
        conv, pool_size, pool_type, pool_stride, pool_padding, global_pooling, use_cudnn=use_cudnn
    )


def img_conv_group(
    input,
    conv_num_filter,
    pool_size,
    conv_padding=1,
    conv_filter_size=3,
    conv_act=None,
    param_attr=None,
    conv_with_batchnorm=False,
    conv_batchnorm_drop_rate=0.0,
    pool_stride=1,
    pool_type="max",
    use_cudnn=True,
):
    """VGG-style: one conv2d per entry of conv_num_filter (each optionally followed by
    batch_norm with act and dropout), then one pool2d. Per-conv settings may be lists."""
    n = len(conv_num_filter)

    def per_conv(v):
        if isinstance(v, (list, tuple)):
            if len(v) != n:
                raise ValueError("img_conv_group: %r must have %d entries, one per conv" % (v, n))
            return list(v)
        return [v] * n

    paddings, sizes = per_conv(conv_padding), per_conv(conv_filter_size)
    attrs, with_bn, drop = (
        per_conv(param_attr),
        per_conv(conv_with_batchnorm),
        per_conv(conv_batchnorm_drop_rate),
    )
    h = input
    for i in range(n):
        h = layers.conv2d(
            h,
            conv_num_filter[i],
            sizes[i],
            padding=paddings[i],
            param_attr=attrs[i],
            act=None if with_bn[i] else conv_act,
            use_cudnn=use_cudnn,
        )
        if with_bn[i]:
            h = layers.batch_norm(h, act=conv_act)
            if abs(drop[i]) > 1e-5:
                h = layers.dropout(h, dropout_prob=drop[i])
    return layers.pool2d(h, pool_size, pool_type, pool_stride, use_cudnn=use_cudnn)


def sequence_conv_pool(
    input, num_filters, filter_size, param_attr=None, act="sigmoid", pool_type="max", bias_attr=None
):
    """sequence_conv (with act) then sequence_pool: one row per sequence."""
    conv = layers.sequence_conv(
        input, num_filters, filter_size, param_attr=param_attr, bias_attr=bias_attr, act=act
    )
    return layers.sequence_pool(conv, pool_type)
