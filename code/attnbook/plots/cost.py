"""Figures of the cost ledger (成本账), drawn from measured data passed in as arguments.

The functions only draw: the numbers come from :mod:`attnbook.measurements` (or any
source of the same shape), so the drawing can be tested with made-up data. Call
:func:`attnbook.plots.setup` first. Each series has its own colour, marker and line
style, so the figures read in grey as well.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogFormatter, NullFormatter

from ._theme import accent

# name -> (Chinese label, marker, line style, accent step)
VARIANT_STYLE = {
    "full": ("完整注意力（n×n 打分表）", "o", "-", 0),
    "chunked": ("分块注意力", "s", "--", 2),
    "window": ("滑动窗口", "^", "-.", 4),
    "linear": ("线性注意力", "D", ":", 6),
}


def _series(ax, x, y, label, marker, linestyle, step):
    """One measured series; ``None`` or NaN entries (not measured) are skipped."""
    x = np.asarray(x, dtype=float)
    y = np.asarray([np.nan if v is None else v for v in y], dtype=float)
    keep = np.isfinite(y)
    ax.plot(x[keep], y[keep], marker=marker, linestyle=linestyle, color=accent(step),
            label=label, linewidth=1.8, markersize=6.5)


def _log_axes(ax, lengths, xlabel, ylabel):
    """Log-log axes whose ticks read as plain numbers (512, 1024, …; 0.5, 10, 20, …)."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted({float(n) for n in lengths})
    ax.set_xticks(ticks, [f"{n:g}" for n in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    # Within a decade or two matplotlib also labels a few minor ticks: plainly, like the
    # major ones (20, 30, 40), not as 2 × 10¹.
    ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)


def _check_lengths(**columns):
    sizes = {name: len(values) for name, values in columns.items()}
    if len(set(sizes.values())) != 1 or 0 in sizes.values():
        raise ValueError(f"the data columns must be non-empty and equally long, got lengths {sizes}.")


def rnn_vs_attention_time(lengths, rnn_ms, attention_ms, rnn_train_ms=None, attention_train_ms=None,
                          rnn_label="GRU（逐步递推）", attention_label="多头注意力（一次算完全部位置）"):
    """循环层与注意力的前向时间（以及训练步时间）随序列长度的变化。

    ``lengths``、``rnn_ms`` 与 ``attention_ms`` 是等长的数字序列（时间以毫秒计），
    例如来自 :func:`attnbook.measurements.measure_rnn_vs_attention`。给出 ``rnn_train_ms`` 与
    ``attention_train_ms`` 时，下方再画一幅训练步（前向加反向）的时间。返回这幅图。
    """
    panels = [("前向时间（毫秒）", rnn_ms, attention_ms, "前向")]
    if rnn_train_ms is not None and attention_train_ms is not None:
        panels.append(("训练步时间（毫秒）", rnn_train_ms, attention_train_ms, "训练步：前向加反向"))
    fig, axes = plt.subplots(len(panels), 1, figsize=(6.4, 4.0 * len(panels)), squeeze=False)
    for ax, (ylabel, rnn, attention, title) in zip(axes[:, 0], panels):
        _check_lengths(lengths=lengths, rnn=rnn, attention=attention)
        _series(ax, lengths, rnn, rnn_label, "o", "-", 0)
        _series(ax, lengths, attention, attention_label, "s", "--", 5)
        _log_axes(ax, lengths, "序列长度 n", ylabel)
        if len(panels) > 1:
            ax.set_title(title)
    axes[0][0].legend(frameon=False)
    fig.tight_layout()
    return fig


def variant_costs(results):
    """各种注意力变体的时间与峰值内存增长随 n 的变化，画在双对数坐标上。

    ``results`` 把变体名（``full``、``chunked``、``window``、``linear``；其他名字用中性
    样式画）映射到 ``{"n": [...], "time_ms": [...], "peak_mib": [...]}``，例如来自
    :func:`attnbook.measurements.measure_variants`；``peak_mib`` 可以是 None。缺失的值
    （``None``）不画；完全没有内存数据时只画时间一幅子图。返回这幅图。
    """
    if not results:
        raise ValueError("results must name at least one variant, got an empty mapping.")
    panels = [("time_ms", "前向时间（毫秒）", "时间")]
    if any(rows.get("peak_mib") is not None for rows in results.values()):
        panels.append(("peak_mib", "峰值内存增长（MiB）", "峰值内存增长"))
    # Panels stacked, not side by side: each keeps a legible size in the page column.
    fig, axes = plt.subplots(len(panels), 1, figsize=(6.6, 8.0 if len(panels) > 1 else 4.2), squeeze=False)
    for ax, (column, ylabel, title) in zip(axes[:, 0], panels):
        for name, rows in results.items():
            values = rows.get(column)
            if values is not None:
                _check_lengths(n=rows["n"], **{column: values})
                _series(ax, rows["n"], values, *VARIANT_STYLE.get(name, (name, "x", "-", 3)))
        lengths = [n for rows in results.values() for n in rows["n"]]
        _log_axes(ax, lengths, "序列长度 n", ylabel)
        ax.set_title(title)
    axes[0][0].legend(frameon=False, fontsize=9)
    fig.tight_layout()
    return fig
