"""Boxes and arrows shared by the book's diagrams (figure 20 and the wiring figure)."""

from matplotlib.colors import to_rgb
from matplotlib.patches import FancyBboxPatch

from ._theme import INK, accent

BOX_H = 1.0


def box(ax, x, y, width, title, subtitle, step):
    """A rounded box centred at (x, y) with a title and a smaller subtitle, edged and
    tinted with accent colour ``step``."""
    colour = accent(step)
    ax.add_patch(FancyBboxPatch((x - width / 2, y - BOX_H / 2), width, BOX_H,
                                boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor=(*to_rgb(colour), 0.25), edgecolor=colour, linewidth=1.8))
    ax.text(x, y + 0.2, title, ha="center", va="center", fontsize=14)
    ax.text(x, y - 0.22, subtitle, ha="center", va="center", fontsize=11)


def arrow(ax, start, end, label=None, where=(0.5, 0.12), ha="center"):
    """An arrow from start to end; ``label`` (a shape) sits at ``where`` along/above it."""
    ax.annotate("", xy=end, xytext=start,
                arrowprops=dict(arrowstyle="-|>", color=INK, lw=1.4, shrinkA=0, shrinkB=0))
    if label:
        t, dy = where
        x = start[0] + t * (end[0] - start[0]) + (0.12 if ha == "left" else 0.0)
        y = start[1] + t * (end[1] - start[1]) + dy
        ax.text(x, y, label, ha=ha, va="bottom", fontsize=10.5, linespacing=1.1)
