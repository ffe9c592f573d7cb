"""Figure 20: the signal flow of scaled dot-product attention, with shapes."""

import matplotlib.pyplot as plt

from ._diagram import BOX_H, arrow, box


def signal_flow(batch=2, n=8, d_in=16, d_k=8):
    """画出 X → Q、K、V → 点积 → 缩放 ÷√d_k → softmax → 加权求和 → 输出。

    箭头上标着它所传递的张量的形状：输入 ``(batch, n, d_in)`` 投影到 ``d_k`` 维
    （正文的形状演练用的是 2、8、16 和 8）。返回这幅图。
    """
    seq = f"({batch}, {n}, {d_k})"
    table = f"({batch}, {n}, {n})"
    fig, ax = plt.subplots(figsize=(9.6, 4.6))
    y_q, y_k, y_v = 2.6, 1.3, 0.0
    y_mid = (y_q + y_k) / 2
    x_in, x_qkv, x_dot, x_scale, x_soft = 0.9, 4.0, 7.0, 9.9, 12.8
    w_in, w_qkv, w_op = 1.8, 2.5, 1.9

    box(ax, x_in, y_k, w_in, "输入 X", f"({batch}, {n}, {d_in})", 0)
    for y, name, role in [(y_q, "Q", "查询：我想找什么"), (y_k, "K", "键：我是什么"),
                          (y_v, "V", "值：我带来什么")]:
        box(ax, x_qkv, y, w_qkv, name, role, 2)
        arrow(ax, (x_in + w_in / 2, y_k), (x_qkv - w_qkv / 2, y))
    ax.text(x_in, y_q + 0.15, f"三个 Dense({d_k}) 投影\n各得 {seq}",
            ha="center", va="center", fontsize=10.5)

    box(ax, x_dot, y_mid, w_op, "点积", "Q · Kᵀ", 3)
    arrow(ax, (x_qkv + w_qkv / 2, y_q), (x_dot - w_op / 2, y_mid + 0.25))
    arrow(ax, (x_qkv + w_qkv / 2, y_k), (x_dot - w_op / 2, y_mid - 0.25))
    box(ax, x_scale, y_mid, w_op, "缩放", rf"÷ $\sqrt{{d_k}}$ = ÷ $\sqrt{{{d_k}}}$", 4)
    arrow(ax, (x_dot + w_op / 2, y_mid), (x_scale - w_op / 2, y_mid), f"分数\n{table}")
    box(ax, x_soft, y_mid, w_op, "softmax", "每行和为 1", 5)
    arrow(ax, (x_scale + w_op / 2, y_mid), (x_soft - w_op / 2, y_mid), table)

    box(ax, x_soft, y_v, w_op, "加权求和", "权重 · V", 6)
    arrow(ax, (x_soft, y_mid - BOX_H / 2), (x_soft, y_v + BOX_H / 2), f"权重\n{table}",
           where=(0.5, -0.3), ha="left")
    arrow(ax, (x_qkv + w_qkv / 2, y_v), (x_soft - w_op / 2, y_v), f"V {seq}")
    arrow(ax, (x_soft, y_v - BOX_H / 2), (x_soft, y_v - 1.3))
    ax.text(x_soft, y_v - 1.38, f"输出 {seq}", ha="center", va="top", fontsize=12)

    ax.set_xlim(-0.4, 14.0)
    ax.set_ylim(-1.85, 3.25)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.subplots_adjust(0, 0, 1, 1)
    return fig
