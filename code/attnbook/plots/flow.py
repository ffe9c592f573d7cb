"""Figure 20: the signal flow of scaled dot-product attention, with shapes."""

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from ._style import CMAP

_BOX_H = 1.0


def _box(ax, x, y, width, title, subtitle, shade):
    """A rounded box centred at (x, y) with a title and a smaller subtitle."""
    colour = plt.get_cmap(CMAP)(shade)
    ax.add_patch(
        FancyBboxPatch(
            (x - width / 2, y - _BOX_H / 2), width, _BOX_H,
            boxstyle="round,pad=0.02,rounding_size=0.12",
            facecolor=(*colour[:3], 0.25), edgecolor=colour, linewidth=1.8,
        )
    )
    ax.text(x, y + 0.2, title, ha="center", va="center", fontsize=14)
    ax.text(x, y - 0.22, subtitle, ha="center", va="center", fontsize=11)


def _arrow(ax, start, end, label=None, where=(0.5, 0.12), ha="center"):
    """An arrow from start to end; ``label`` (a shape) sits at ``where`` along/above it."""
    ax.annotate("", xy=end, xytext=start,
                arrowprops=dict(arrowstyle="-|>", color="0.25", lw=1.4, shrinkA=0, shrinkB=0))
    if label:
        t, dy = where
        x = start[0] + t * (end[0] - start[0]) + (0.12 if ha == "left" else 0.0)
        y = start[1] + t * (end[1] - start[1]) + dy
        ax.text(x, y, label, ha=ha, va="bottom", fontsize=10.5, color="0.1", linespacing=1.1)


def signal_flow(batch=2, n=8, d_in=16, d_k=8):
    """Draw X → Q, K, V → 点积 → 缩放 ÷√d_k → softmax → 加权求和 → 输出.

    Arrows carry the shape of the tensor they transport, for inputs
    ``(batch, n, d_in)`` projected to ``d_k`` features (the manuscript's walkthrough
    uses 2, 8, 16 and 8). Returns the figure.
    """
    seq = f"({batch}, {n}, {d_k})"
    table = f"({batch}, {n}, {n})"
    fig, ax = plt.subplots(figsize=(9.6, 4.6))
    y_q, y_k, y_v = 2.6, 1.3, 0.0
    y_mid = (y_q + y_k) / 2
    x_in, x_qkv, x_dot, x_scale, x_soft = 0.9, 4.0, 7.0, 9.9, 12.8
    w_in, w_qkv, w_op = 1.8, 2.5, 1.9

    _box(ax, x_in, y_k, w_in, "输入 X", f"({batch}, {n}, {d_in})", 0.15)
    for y, name, role in [(y_q, "Q", "查询：我想找什么"), (y_k, "K", "键：我是什么"),
                          (y_v, "V", "值：我带来什么")]:
        _box(ax, x_qkv, y, w_qkv, name, role, 0.45)
        _arrow(ax, (x_in + w_in / 2, y_k), (x_qkv - w_qkv / 2, y))
    ax.text(x_in, y_q + 0.15, f"三个 Dense({d_k}) 投影\n各得 {seq}",
            ha="center", va="center", fontsize=10.5, color="0.1")

    _box(ax, x_dot, y_mid, w_op, "点积", "Q · Kᵀ", 0.65)
    _arrow(ax, (x_qkv + w_qkv / 2, y_q), (x_dot - w_op / 2, y_mid + 0.25))
    _arrow(ax, (x_qkv + w_qkv / 2, y_k), (x_dot - w_op / 2, y_mid - 0.25))
    _box(ax, x_scale, y_mid, w_op, "缩放", rf"÷ $\sqrt{{d_k}}$ = ÷ $\sqrt{{{d_k}}}$", 0.75)
    _arrow(ax, (x_dot + w_op / 2, y_mid), (x_scale - w_op / 2, y_mid), f"分数\n{table}")
    _box(ax, x_soft, y_mid, w_op, "softmax", "每行和为 1", 0.85)
    _arrow(ax, (x_scale + w_op / 2, y_mid), (x_soft - w_op / 2, y_mid), table)

    _box(ax, x_soft, y_v, w_op, "加权求和", "权重 · V", 0.95)
    _arrow(ax, (x_soft, y_mid - _BOX_H / 2), (x_soft, y_v + _BOX_H / 2), f"权重\n{table}",
           where=(0.5, -0.3), ha="left")
    _arrow(ax, (x_qkv + w_qkv / 2, y_v), (x_soft - w_op / 2, y_v), f"V {seq}")
    _arrow(ax, (x_soft, y_v - _BOX_H / 2), (x_soft, y_v - 1.3))
    ax.text(x_soft, y_v - 1.38, f"输出 {seq}", ha="center", va="top", fontsize=12)

    ax.set_xlim(-0.4, 14.0)
    ax.set_ylim(-1.85, 3.25)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.subplots_adjust(0, 0, 1, 1)
    return fig
