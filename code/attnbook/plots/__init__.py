"""Every figure of the book, drawn at build time.

Call :func:`setup` once before drawing: it registers the CJK font that ships with
``mplfonts`` (in this process only; nothing is installed into matplotlib) and applies
the book's style. Each figure function returns a ``matplotlib.figure.Figure``.
"""

from ._style import CMAP, setup
from .cost import rnn_vs_attention_time, variant_costs
from .flow import signal_flow
from .heatmaps import alignment_table, head_grid, mask_comparison, reversal_alignment, weights_heatmap
from .scaling import scaling_curves
from .wiring import attention_wiring

__all__ = [
    "CMAP", "setup", "signal_flow", "weights_heatmap", "head_grid", "alignment_table",
    "mask_comparison", "reversal_alignment", "scaling_curves", "attention_wiring",
    "rnn_vs_attention_time", "variant_costs",
]
