"""本书的每一幅图，都在构建时画出。

画图前先调用一次 :func:`setup`：它注册 ``mplfonts`` 自带的中文字体（只在当前进程里，
不往 matplotlib 里安装任何东西），并应用本书的样式。每个画图函数都返回一个
``matplotlib.figure.Figure``；:func:`figure_svg` 把它写成本书网页所用的 SVG。
"""

from ._style import setup
from ._svg import figure_svg
from ._theme import CMAP
from .cost import rnn_vs_attention_time, variant_costs
from .flow import signal_flow
from .heatmaps import alignment_before_after, alignment_table, head_grid, mask_comparison, reversal_alignment, weights_heatmap
from .scaling import scaling_curves
from .wiring import attention_wiring

__all__ = [
    "CMAP", "setup", "figure_svg", "signal_flow", "weights_heatmap", "head_grid", "alignment_table", "alignment_before_after",
    "mask_comparison", "reversal_alignment", "scaling_curves", "attention_wiring",
    "rnn_vs_attention_time", "variant_costs",
]
