"""Heat maps of attention weights: one table, a masked/unmasked pair, a head grid,
the cross-attention table and a learned alignment.

Every function takes weights as NumPy-like arrays (rows = queries, columns = keys) and
returns a ``matplotlib.figure.Figure`` with one shared colour bar. Each panel's table,
axis names and tick labels travel with the figure (``_svg.record_heatmap``), so the
web page can show the exact weight of the cell under the pointer.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import patheffects

from ._svg import heatmap_panels, record_heatmap
from ._theme import CMAP, MUTED, OUTLINE_EDGE, OUTLINE_LINE

QUERY_LABEL = "查询位置"
KEY_LABEL = "键位置"
WEIGHT_LABEL = "注意力权重"
DECODER_LABEL = "解码器位置（查询）"
ENCODER_LABEL = "编码器位置（键、值）"
_OUTLINED = [patheffects.withStroke(linewidth=3.2, foreground=OUTLINE_EDGE)]


def _as_table(weights, name="weights", rank=2):
    """The weights as an array of rank ``rank``; float dtypes are kept, so the page can
    show each weight exactly as it was computed."""
    weights = np.asarray(weights)
    if weights.dtype not in (np.float16, np.float32, np.float64):
        weights = weights.astype(float)
    if weights.ndim != rank:
        raise ValueError(f"{name} must have rank {rank}, got shape {weights.shape}.")
    return weights


def _ticks(n, step=None):
    """Tick positions for n cells: all of them up to 12, else every few."""
    step = step or (1 if n <= 12 else int(np.ceil(n / 10)))
    return np.arange(0, n, step)


def _draw(fig, ax, weights, vmax, title, rows=(QUERY_LABEL, None), cols=(KEY_LABEL, None), name=None):
    """Draw one (n_q, n_k) table on ax with its title, and record it under ``name`` (default
    the title); ``rows``/``cols`` are (axis name, tick labels or None for every few
    positions). Return the image for the colour bar."""
    image = ax.imshow(weights, cmap=CMAP, vmin=0.0, vmax=vmax, aspect="equal")
    n_q, n_k = weights.shape
    if rows[1] is None:
        ax.set_xticks(_ticks(n_k))
        ax.set_yticks(_ticks(n_q))
    else:
        ax.set_xticks(np.arange(len(cols[1])), cols[1])
        ax.set_yticks(np.arange(len(rows[1])), rows[1])
    ax.set_xlabel(cols[0])
    ax.set_ylabel(rows[0])
    ax.tick_params(length=0)
    # A thin frame keeps the map's edge visible where its cells are as dark as the page.
    for spine in ax.spines.values():
        spine.set(visible=True, color=MUTED, linewidth=0.6)
    ax.set_title(title)
    record_heatmap(fig, image, weights, name or title, rows, cols)
    return image


def _digit_axes(inputs, outputs):
    """Rows and columns ``(axis name, labels "位置:数字")`` of the reversal task; the
    outputs default to the inputs reversed."""
    inputs = [int(t) for t in np.asarray(inputs).ravel()]
    outputs = inputs[::-1] if outputs is None else [int(t) for t in np.asarray(outputs).ravel()]
    return (("输出位置：数字（查询）", [f"{i}:{t}" for i, t in enumerate(outputs)]),
            ("输入位置：数字（键、值）", [f"{i}:{t}" for i, t in enumerate(inputs)]))


def _colorbar(fig, image, axes):
    bar = fig.colorbar(image, ax=axes, shrink=0.85, pad=0.03)
    bar.set_label(WEIGHT_LABEL)
    return bar


def _vmax(*tables):
    return max(float(np.max(t)) for t in tables) or 1.0


def weights_heatmap(weights, title="权重表", vmax=None):
    """一张权重表 ``(n_q, n_k)``：第 i 行是查询 i 怎样分配它的注意力。

    ``vmax`` 是颜色条顶端的权重，默认取表中最大的权重。
    """
    weights = _as_table(weights)
    fig, ax = plt.subplots(figsize=(5.2, 4.4), layout="constrained")
    _colorbar(fig, _draw(fig, ax, weights, vmax or _vmax(weights), title), ax)
    return fig


def _mark_padding(ax, length, n_q, n_k, panel):
    """Dashed lines before the first padded key (column) and query (row); their SVG ids
    go into the panel's ``padding`` entry, so a page can move them."""
    line = dict(color=OUTLINE_LINE, linestyle="--", linewidth=1.6, path_effects=_OUTLINED)
    marks = {"length": length}
    if length < n_k:
        marks["cols"] = f"padding-cols-{panel}"
        ax.axvline(length - 0.5, gid=marks["cols"], **line)
    if length < n_q:
        marks["rows"] = f"padding-rows-{panel}"
        ax.axhline(length - 0.5, gid=marks["rows"], **line)
    ax.set_xlabel(f"{KEY_LABEL}（虚线后为填充）")
    ax.set_ylabel(f"{QUERY_LABEL}（虚线下为填充）")
    return marks


def mask_comparison(unmasked, masked, length=None, vmax=None):
    """并排画出同一序列不加与加填充掩码时的注意力权重，各为 ``(n_q, n_k)``。

    左图标题为“无掩码”，右图为“有掩码”。``length`` 是序列的真实长度，从这个位置起
    都是填充，用虚线标出。``vmax`` 是颜色条顶端的权重，默认取两表中最大的权重。
    """
    unmasked, masked = _as_table(unmasked, "unmasked"), _as_table(masked, "masked")
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.8), layout="constrained")
    vmax = vmax or _vmax(unmasked, masked)
    for p, (ax, weights, title) in enumerate([(axes[0], unmasked, "无掩码"), (axes[1], masked, "有掩码")]):
        image = _draw(fig, ax, weights, vmax, title)
        if length is not None:
            heatmap_panels(fig)[-1]["padding"] = _mark_padding(ax, length, *weights.shape, p)
    _colorbar(fig, image, axes)
    return fig


def head_grid(weights, title=None, vmax=None):
    """每个头一张权重表：``weights`` 为 ``(heads, n_q, n_k)``，每行至多两张。

    例如 :class:`attnbook.MiniMultiHeadAttention` 以 ``return_attention_scores=True``
    调用时返回的权重 ``w``，取第一个样本 ``w[0]``。``vmax`` 是颜色条顶端的权重，
    默认取各表中最大的权重。
    """
    weights = _as_table(weights, rank=3)
    heads = weights.shape[0]
    # Two panels a row at most: in the page's column four in a row have unreadable labels.
    cols = min(heads, 2)
    rows = int(np.ceil(heads / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(2.9 * cols + 1.0, 3.0 * rows + 0.4),
                             layout="constrained", squeeze=False)
    vmax = vmax or _vmax(weights)
    for h, ax in enumerate(axes.flat):
        if h >= heads:
            ax.remove()
            continue
        image = _draw(fig, ax, weights[h], vmax, f"头 {h + 1}")
        if h % cols:
            ax.set_ylabel("")
    if title:
        fig.suptitle(title)
    _colorbar(fig, image, axes[:, :].ravel().tolist()[:heads])
    return fig


def alignment_table(weights, title="对齐就是这张权重表"):
    """交叉注意力权重 ``(n_dec, n_enc)``：每个解码器位置（查询）把注意力分给各个
    编码器位置（键与值）。"""
    weights = _as_table(weights)
    n_q, n_k = weights.shape
    fig, ax = plt.subplots(figsize=(0.3 * n_k + 1.9, 0.3 * n_q + 1.3), layout="constrained")
    image = _draw(fig, ax, weights, _vmax(weights), title, (DECODER_LABEL, None), (ENCODER_LABEL, None))
    ax.set_xticks(np.arange(n_k))
    ax.set_yticks(np.arange(n_q))
    _colorbar(fig, image, ax)
    return fig


def reversal_alignment(weights, inputs, outputs=None,
                       title="学到的对齐：输出第 $i$ 位读取输入第 $n-1-i$ 位"):
    """倒序模型在一个序列上的交叉注意力。

    ``weights`` 为 ``(n_out, n_in)``；``inputs`` 是 ``n_in`` 个输入数字；``outputs``
    是 ``n_out`` 个预测数字（默认为输入的倒序）。刻度标签同时给出位置和数字，反对角线
    便于直接读出。
    """
    weights = _as_table(weights)
    fig, ax = plt.subplots(figsize=(6.0, 5.2), layout="constrained")
    rows, cols = _digit_axes(inputs, outputs)
    _colorbar(fig, _draw(fig, ax, weights, 1.0, title, rows, cols, name="学到的对齐"), ax)
    return fig


def alignment_before_after(untrained, learned, inputs, outputs=None):
    """未经训练的交叉注意力权重表与倒序模型学到的对齐，并排，共用 0 到 1 的颜色条。

    ``untrained`` 为 ``(n_dec, n_enc)``，例如正文交叉注意力清单的 ``weights[0]``；
    ``learned`` 为 ``(n_out, n_in)``，``inputs`` 与 ``outputs`` 同 :func:`reversal_alignment`。
    """
    untrained, learned = _as_table(untrained, "untrained"), _as_table(learned, "learned")
    fig, axes = plt.subplots(1, 2, figsize=(10.4, 3.4), layout="constrained",
                             gridspec_kw={"width_ratios": [untrained.shape[1] / untrained.shape[0] * 0.75, 1.2]})
    _draw(fig, axes[0], untrained, 1.0, "未经训练：还看不出对齐", (DECODER_LABEL, None),
          (ENCODER_LABEL, None))
    image = _draw(fig, axes[1], learned, 1.0, "训练之后：学到的对齐", *_digit_axes(inputs, outputs))
    _colorbar(fig, image, list(axes))
    return fig
