"""Explorable heat maps: the data a page needs to recompute a figure in the browser.

Each function takes a heat-map figure that this package drew and the inputs it came
from, and attaches to it (``attnbook.plots.figure_svg`` writes it into the SVG's metadata):

* ``inputs``: the input rows and the projections' kernels and biases, each as base64 of
  little-endian float32 with its shape. The page's JavaScript twin of the package's math
  (``book/_ext/static/twin.js``) recomputes the weights from them; nothing is precomputed.
* ``settings``: what the reader's controls can choose, and ``initial``, the settings of
  the figure as drawn, so the page starts from the build's figure.
* ``expected``: the package's own weights for every setting (float32). The build moves
  them out of the page into the fixtures that the browser test compares the page with.
* ``cmap``: the colour map's 256 colours, so a recomputed table is drawn as matplotlib
  draws it.

The figures are drawn with ``vmax=1``: the colour bar then holds for every setting.
"""

import base64

import matplotlib
import numpy as np

from .._tf import tf
from ..attention import MiniMultiHeadAttention, masked_softmax, scaled_dot_product_attention
from ..masks import causal_mask, combine_masks, padding_mask
from ..plots._svg import heatmap_panels
from ..plots._theme import CMAP

_ATTRIBUTE = "_attnbook_explorable"
#: Scaling: the reader's choices of divisor for Q Kᵀ (names as the page's controls use them).
SCALINGS = ("d_k", "d_model", "none")


def explorable_data(fig):
    """The data :func:`explore_scaling` or :func:`explore_masks` attached to ``fig``, or None."""
    return getattr(fig, _ATTRIBUTE, None)


def _array(values):
    """float32 as ``{"shape": [...], "data": base64}`` (little-endian), exactly."""
    a = np.ascontiguousarray(np.asarray(values, dtype="<f4"))
    return {"shape": list(a.shape), "data": base64.b64encode(a.tobytes()).decode("ascii")}


def _dense(layer, name):
    """A built Dense layer's kernel ``(d_in, d_out)`` and bias ``(d_out,)``, as data."""
    if not getattr(layer, "built", False):
        raise ValueError(f"{name} must be a built Dense layer (call it once first), got {layer!r}.")
    kernel, bias = (np.asarray(w) for w in layer.get_weights())
    return {f"w{name}": _array(kernel), f"b{name}": _array(bias)}


def _attach(fig, kind, inputs, settings, initial, expected):
    if not heatmap_panels(fig):
        raise ValueError(f"fig must be a heat map drawn by attnbook.plots, got {fig!r}.")
    rgb = (matplotlib.colormaps[CMAP](np.arange(256))[:, :3] * 255).round().astype(np.uint8)
    setattr(fig, _ATTRIBUTE, {"kind": kind, "inputs": inputs, "settings": settings, "initial": initial,
                              "expected": expected, "cmap": base64.b64encode(rgb.tobytes()).decode("ascii")})


def explore_scaling(fig, x, query, key):
    """让 :func:`weights_heatmap` 画的权重表在网页上可调：缩放分母可选三种。

    ``x`` 是输入 ``(n, d_model)``，``query``、``key`` 是已经调用过的两个 Dense 投影层
    （输出 ``d_k`` 维）。三种分母：``"d_k"`` 除以 √d_k（正确），``"d_model"`` 除以输入
    宽度的平方根（一个偏大的分母；单头时它不是原稿说的按全维度缩放），``"none"`` 不缩放。
    图上画的应是 ``"d_k"`` 的权重。数据记在 ``fig`` 上，不返回值。
    """
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"x must be (n, d_model), got shape {x.shape}.")
    inputs = {"x": _array(x), **_dense(query, "q"), **_dense(key, "k")}
    q, k = query(x[None]), key(x[None])  # (1, n, d_k)
    d_k, d_model = int(q.shape[-1]), int(x.shape[-1])
    scores = tf.matmul(q, k, transpose_b=True)
    weights = {"d_k": scaled_dot_product_attention(q, k, k)[1],  # the package's own function: √d_k
               "d_model": masked_softmax(scores / tf.constant(np.sqrt(d_model), q.dtype)),
               "none": masked_softmax(scores)}
    expected = {name: {"weights": w.numpy()[0].tolist()} for name, w in weights.items()}
    inputs.update(d_k=d_k, d_model=d_model)
    _attach(fig, "scaling", inputs, {"scale": list(SCALINGS), "row": list(range(len(x)))},
                   {"scale": "d_k", "row": 0}, expected)


def explore_masks(fig, x, layer, length):
    """让 :func:`mask_comparison` 画的一对权重表在网页上可调：填充个数与因果掩码。

    ``x`` 是一个序列填充之前的全部 ``(n, features)`` 个位置；填充 ``p`` 个位置时，后
    ``p`` 个位置换成零向量（与 :func:`attnbook.toy.padded_batch` 一样），并被填充掩码
    遮住。``layer`` 是已经调用过的 :class:`attnbook.MiniMultiHeadAttention`，图上画的是
    它各头权重的平均。左表不加掩码，右表加填充掩码（可再加因果掩码）。图上画的应是
    真实长度 ``length``、不加因果掩码时的两张表。数据记在 ``fig`` 上，不返回值。
    """
    x = np.asarray(x, dtype=np.float32)
    n = len(x)
    if x.ndim != 2 or not 0 <= length <= n:
        raise ValueError(f"x must be (n, features) and 0 <= length <= n, got shape {x.shape}, length {length}.")
    expected = {}
    for padding in range(n + 1):
        real = n - padding
        padded = np.where(np.arange(n)[:, None] < real, x, 0.0).astype(np.float32)[None]
        unmasked = layer(padded, return_attention_scores=True)[1]
        for causal in (False, True):
            mask = padding_mask([real], max_len=n)
            mask = combine_masks(mask, causal_mask(n)) if causal else mask
            masked = layer(padded, attention_mask=mask, return_attention_scores=True)[1]
            expected[f"{padding},{int(causal)}"] = {
                "weights": [unmasked.numpy()[0].mean(0).tolist(), masked.numpy()[0].mean(0).tolist()]}
    inputs = {"x": _array(x), **_dense(layer.wq, "q"), **_dense(layer.wk, "k"), "heads": layer.h}
    _attach(fig, "masks", inputs, {"padding": list(range(n + 1)), "causal": [False, True]},
                   {"padding": n - length, "causal": False}, expected)


def explore_heads(fig, x, layer, heads=(1, 2, 4, 8)):
    """让 :func:`head_grid` 画的各头权重表在网页上可调：同一输入、同一组投影，换头数。

    ``x`` 是一个样本 ``(n, features)``，``layer`` 是已经调用过的
    :class:`attnbook.MiniMultiHeadAttention`。头数换成 ``h`` 时，查询与键的投影不变，
    只是切成 ``h`` 个头，每头维度 ``d_model / h``，各除以自己每头维度的平方根；每个头一张表。
    图上画的应是 ``layer.h`` 个头的表。数据记在 ``fig`` 上，不返回值。
    """
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"x must be (n, features), got shape {x.shape}.")
    heads = [int(h) for h in heads]
    if layer.h not in heads or any(h <= 0 or layer.d_model % h for h in heads):
        raise ValueError(f"heads must divide d_model={layer.d_model} and include the layer's "
                         f"{layer.h}, got {heads}.")
    expected = {}
    for h in heads:
        other = MiniMultiHeadAttention(layer.d_model, h)  # the package's layer, one per head count
        other(x[None])
        for name in ("wq", "wk", "wv", "wo"):
            getattr(other, name).set_weights(getattr(layer, name).get_weights())
        expected[str(h)] = {"weights": other(x[None], return_attention_scores=True)[1].numpy()[0].tolist()}
    inputs = {"x": _array(x), **_dense(layer.wq, "q"), **_dense(layer.wk, "k")}
    _attach(fig, "heads", inputs, {"heads": heads}, {"heads": layer.h}, expected)


def saturation_sample(n_queries=32, n_keys=32, max_depth=512, seed=0):
    """:func:`explore_saturation` 用的一组小样本：每个分量取 ±1（均值 0、方差 1）。

    返回字典：``query`` ``(n_queries, max_depth)``、``key`` ``(n_keys, max_depth)`` 与上游
    梯度 ``upstream`` ``(n_queries, n_keys)``，元素都是 ±1（float32）。维度为 ``d_k`` 时
    取前 ``d_k`` 列，所以各个维度共用同一批样本；整组样本只占几 KB，网页可以带上它。
    """
    rng = np.random.default_rng([seed, max_depth])
    signs = lambda *shape: rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=shape)  # noqa: E731
    return {"query": signs(n_queries, max_depth), "key": signs(n_keys, max_depth),
            "upstream": signs(n_queries, n_keys)}


def _bits(signs):
    """±1 as bits (1 for +1), packed eight to a byte, lowest bit first, base64, with the shape."""
    a = np.asarray(signs)
    packed = np.packbits((a > 0).astype(np.uint8), axis=None, bitorder="little")
    return {"shape": list(a.shape), "bits": base64.b64encode(packed.tobytes()).decode("ascii")}


def explore_saturation(fig, sample, result, step=4):
    """让 :func:`scaling_curves` 画的 ``result`` 在网页上可调：拖动 ``d_k`` 重做同样的测量。

    ``result`` 是图上画的 :func:`attnbook.scaling.measure_scaling` 的结果，网页据它的曲线
    定位；``sample`` 来自 :func:`saturation_sample`。读者把 ``d_k`` 从 ``step`` 拖到样本的
    最大维度（步长 ``step``）时，浏览器取样本的前 ``d_k`` 列，按
    :func:`attnbook.scaling.softmax_stats` 的定义重算三种缩放下每行最大权重与梯度范数的
    均值，用圆圈标在图上。数据记在 ``fig`` 上，不返回值。
    """
    from ..scaling import SCALINGS, softmax_stats

    q, k, upstream = (np.asarray(sample[n], dtype=np.float64) for n in ("query", "key", "upstream"))
    if not all(np.all(np.abs(a) == 1) for a in (q, k, upstream)):
        raise ValueError("sample's query, key and upstream must hold ±1 only (see saturation_sample).")
    heads, metrics = result["heads"], ("max_weight", "grad_norm")
    depths = list(range(step, q.shape[1] + 1, step))
    expected = {}
    for d_k in depths:
        scores = q[:, :d_k] @ k[:, :d_k].T
        expected[str(d_k)] = {name: {m: v for m, v in softmax_stats(scores / scale(d_k, heads), upstream).items()
                                     if m in metrics} for name, scale in SCALINGS.items()}
    ids = {f"{n}-{m}": f"curve-{n}-{m}" for n in SCALINGS for m in metrics}
    # Where the drawn curves' points lie: the page places its rings between them.
    curves = {"d_k": result["d_k"], **{f"{n}-{m}": result[n][m] for n in SCALINGS for m in metrics}}
    inputs = {"query": _bits(q), "key": _bits(k), "upstream": _bits(upstream), "heads": heads}
    setattr(fig, _ATTRIBUTE, {"kind": "saturation", "inputs": inputs,
                              "settings": {"d_k": {"from": step, "to": depths[-1], "step": step}},
                              "initial": {"d_k": 64 if 64 in depths else depths[0]},
                              "expected": expected, "ids": ids, "curves": curves})
