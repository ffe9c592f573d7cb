"""Two wirings of the same attention: self-attention and cross-attention.

The mathematics is identical; only the sources of Q and of K, V differ. In an
encoder–decoder the encoder's K and V are computed once and reused at every decoder step.
"""

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from ._diagram import BOX_H, arrow, box
from ._theme import MUTED

_ROWS = {"Q": 2.6, "K": 1.3, "V": 0.0}
_X = {"source": 1.15, "qkv": 4.35, "attention": 7.55, "output": 10.55}
_W = {"source": 2.3, "qkv": 2.3, "attention": 2.5, "output": 2.0}


def _left(part):
    return _X[part] - _W[part] / 2


def _right(part):
    return _X[part] + _W[part] / 2


def _qkv_to_output(ax, weights_shape, out_shape, sources):
    """Q, K, V boxes, the attention box and the output box, with arrows between them."""
    y_mid = _ROWS["K"]
    for name, subtitle in sources.items():
        box(ax, _X["qkv"], _ROWS[name], _W["qkv"], name, subtitle, 2)
        arrow(ax, (_right("qkv"), _ROWS[name]), (_left("attention"), y_mid + (_ROWS[name] - y_mid) * 0.3))
    box(ax, _X["attention"], y_mid, _W["attention"], "注意力", f"权重 {weights_shape}", 5)
    box(ax, _X["output"], y_mid, _W["output"], "输出", out_shape, 0)
    arrow(ax, (_right("attention"), y_mid), (_left("output"), y_mid))


def _frame(ax, title):
    ax.set_title(title, fontsize=13)
    ax.set_xlim(-0.15, 11.7)
    ax.set_ylim(-1.45, 3.2)
    ax.set_aspect("equal")
    ax.axis("off")


def attention_wiring(batch=2, n=10, n_enc=20, n_dec=6, d_model=32):
    """上图：``(batch, n, d_model)`` 上的自注意力。下图：交叉注意力，查询来自
    ``n_dec`` 个解码器位置，键与值来自 ``n_enc`` 个编码器位置。

    形状取自正文的例子（权重按单头画）。返回这幅图。
    """
    # Stacked, not side by side: the page column is narrow, and each panel stays legible.
    fig, (left, right) = plt.subplots(2, 1, figsize=(8.4, 6.9))

    box(left, _X["source"], _ROWS["K"], _W["source"], "序列 X", f"({batch}, {n}, {d_model})", 0)
    for name in _ROWS:
        arrow(left, (_right("source"), _ROWS["K"]), (_left("qkv"), _ROWS[name]))
    _qkv_to_output(left, f"({batch}, {n}, {n})", f"({batch}, {n}, {d_model})",
                   {"Q": "来自 X", "K": "来自 X", "V": "来自 X"})
    left.text(_X["attention"], -1.2, "序列内部互相看", ha="center", fontsize=11)
    _frame(left, "自注意力：Q、K、V 同出一源")

    dec_y, enc_y = _ROWS["Q"], (_ROWS["K"] + _ROWS["V"]) / 2
    box(right, _X["source"], dec_y, _W["source"], "解码器状态", f"({batch}, {n_dec}, {d_model})", 0)
    box(right, _X["source"], enc_y, _W["source"], "编码器输出", f"({batch}, {n_enc}, {d_model})", 0)
    arrow(right, (_right("source"), dec_y), (_left("qkv"), dec_y))
    for name in ("K", "V"):
        arrow(right, (_right("source"), enc_y), (_left("qkv"), _ROWS[name]))
    _qkv_to_output(right, f"({batch}, {n_dec}, {n_enc})", f"({batch}, {n_dec}, {d_model})",
                   {"Q": "每步新算", "K": "来自编码器", "V": "来自编码器"})
    # The K/V cache: one dashed frame around K and V.
    pad = 0.12
    right.add_patch(FancyBboxPatch(
        (_left("qkv") - pad, _ROWS["V"] - BOX_H / 2 - pad), _W["qkv"] + 2 * pad,
        _ROWS["K"] - _ROWS["V"] + BOX_H + 2 * pad, boxstyle="round,pad=0,rounding_size=0.15",
        facecolor="none", edgecolor=MUTED, linestyle="--", linewidth=1.2))
    right.text(_X["qkv"], _ROWS["V"] - BOX_H / 2 - pad - 0.12,
               "K、V 只算一次，解码每一步都复用", ha="center", va="top", fontsize=11)
    _frame(right, "交叉注意力：Q 来自解码器，K、V 来自编码器")
    fig.tight_layout()
    return fig
