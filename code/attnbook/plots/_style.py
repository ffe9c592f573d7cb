"""The book's figure style: a CJK font from mplfonts, the colour map and the theme's
colours (``_theme``) applied to matplotlib, and figures shown inline as the book's SVG.
"""

from pathlib import Path

import matplotlib
import mplfonts
from matplotlib import font_manager

from ._theme import CMAP, INK, MUTED, PAPER

CJK_FONT_FILE = Path(mplfonts.__file__).parent / "fonts" / "NotoSansCJKsc-Regular.otf"
CJK_FONT = "Noto Sans CJK SC"


def setup():
    """注册中文字体并应用本书的 matplotlib 样式；重复调用也没有副作用。

    在 Jupyter 内核里，图以 SVG 显示：字形转成路径（读者不需要装任何字体），热图的数据
    随图一起写进 SVG（见 :func:`attnbook.plots.figure_svg`；网页上它放在图旁边的 JSON 里）。
    """
    if CJK_FONT not in {f.name for f in font_manager.fontManager.ttflist}:
        font_manager.fontManager.addfont(str(CJK_FONT_FILE))
    matplotlib.rcParams.update({
        # Per-glyph fallback: CJK from Noto, symbols such as ᵀ from DejaVu.
        # mplfonts ships regular weights only, so the book never asks for bold.
        "font.family": [CJK_FONT, "DejaVu Sans"],
        "axes.unicode_minus": False,
        "figure.dpi": 110,
        "savefig.dpi": 110,
        "image.cmap": CMAP,
        "axes.spines.top": False,
        "axes.spines.right": False,
        # Theme-aware colours (see THEME_COLOURS).
        **dict.fromkeys(("text.color", "axes.labelcolor", "axes.edgecolor", "xtick.color", "ytick.color",
                         "patch.edgecolor"), INK),
        **dict.fromkeys(("grid.color", "legend.edgecolor"), MUTED),
        **dict.fromkeys(("figure.facecolor", "savefig.facecolor"), PAPER),
        **dict.fromkeys(("axes.facecolor", "legend.facecolor"), "none"),
        # SVG: glyphs as paths, ids that do not change from one build to the next.
        "svg.fonttype": "path",
        "svg.hashsalt": "attnbook",
    })
    _show_inline_as_svg()


def _show_inline_as_svg():
    """In an IPython kernel with the inline backend, display figures as our SVG only."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    backend = str(matplotlib.get_backend(auto_select=False) or "")
    if shell is None or not backend.endswith("backend_inline"):
        return
    # Importing the backend configures the shell's formatters once (PNG by default);
    # that has to happen before ours replace them, not after.
    import matplotlib_inline.backend_inline  # noqa: F401
    from matplotlib.figure import Figure

    from ._svg import figure_svg

    formatters = shell.display_formatter.formatters
    for mime in ("image/png", "image/jpeg", "application/pdf"):
        formatters[mime].pop(Figure, None)
    formatters["image/svg+xml"].for_type(Figure, figure_svg)
