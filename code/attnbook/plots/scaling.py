"""The √d_k figure: how the scale of the scores moves the softmax as d_k grows."""

import matplotlib.pyplot as plt
import numpy as np

from ._theme import MUTED, accent

# Colour, marker and line style all differ, so the curves stay apart in grey too.
_CURVES = {
    "unscaled": dict(label="不缩放", marker="o", linestyle="-", step=0),
    "head_depth": dict(label=r"除以 $\sqrt{d_k}$（每头维度）", marker="s", linestyle="--", step=3),
    "d_model": dict(label=r"除以 $\sqrt{d_{\mathrm{model}}}$（错误做法）", marker="^", linestyle=":",
                    step=6),
}
_METRICS = {
    "max_weight": ("每行最大权重（均值）", "softmax 是否饱和"),
    "entropy": ("每行熵（nat，均值）", "权重有多分散"),
    "grad_norm": ("softmax 输入处的梯度范数（均值）", "梯度是否消失"),
}


def scaling_curves(result, metrics=("max_weight", "grad_norm")):
    """画出 :func:`attnbook.scaling.measure_scaling` 的结果，每个统计量一幅子图。

    横轴是每头维度 d_k（对数刻度），每种缩放方式一条曲线。最大权重与熵的子图还画出
    ``n_keys`` 个键上均匀分布的 softmax 对应的值作参照。返回这幅图。
    """
    d_k = np.asarray(result["d_k"])
    fig, axes = plt.subplots(1, len(metrics), figsize=(5.0 * len(metrics), 4.3),
                             layout="constrained", squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        ylabel, title = _METRICS[metric]
        for name, style in _CURVES.items():
            ax.plot(d_k, result[name][metric], marker=style["marker"], linestyle=style["linestyle"],
                    color=accent(style["step"]), markersize=6, linewidth=1.8,
                    label=style["label"], gid=f"curve-{name}-{metric}")  # a page can find it
        reference = {"max_weight": 1.0 / result["n_keys"], "entropy": np.log(result["n_keys"])}.get(metric)
        if reference is not None:
            ax.axhline(reference, color=MUTED, linewidth=1.2, linestyle=(0, (1, 2)),
                       label=f"均匀分布（{result['n_keys']} 个键）")
        ax.set_xscale("log", base=2)
        ax.set_xticks(d_k, [str(d) for d in d_k])
        ax.minorticks_off()
        ax.set_xlabel("每头维度 $d_k$")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False,
               title=f"打分的缩放方式（$d_{{\\mathrm{{model}}}}$ = {result['heads']} 个头 × $d_k$）")
    return fig
