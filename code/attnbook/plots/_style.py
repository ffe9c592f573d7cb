"""The book's figure style: a CJK font from mplfonts, a grey-safe colour map, and colours
that the web page can switch between its light and dark themes.

Every foreground colour of a figure comes from ``THEME_COLOURS``. Each entry's key is
the colour matplotlib draws with, chosen to look right on white, which is what a reader
sees in Jupyter; the value is its role. The book's build finds these exact colours in
the SVG and replaces each with the CSS custom property ``--fig-<role>``, whose light
and dark values live in ``book/_static/figures.css``. Nothing else in a figure may use
a fixed grey, black or white that would vanish on a dark page (the heat maps' own
colours and the outlined dashes drawn over them are the exceptions).
"""

from pathlib import Path

import matplotlib
import mplfonts
import numpy as np
from matplotlib import font_manager
from matplotlib.colors import to_hex

CJK_FONT_FILE = Path(mplfonts.__file__).parent / "fonts" / "NotoSansCJKsc-Regular.otf"
CJK_FONT = "Noto Sans CJK SC"

# viridis: perceptually uniform, monotonic in lightness (readable in grey) and
# distinguishable for the common forms of colour blindness.
CMAP = "viridis"

INK = "#222832"  # text, spines, ticks, arrows: the page's text colour in the light theme
MUTED = "#48566b"  # grid, reference lines, dashed frames: the theme's muted text colour
PAPER = "#fffffe"  # the figure's background: transparent on the page

# Lines and diagram boxes: 7 steps of viridis. On white the dark end (0 to 0.55) keeps
# at least 3:1 against the page; the dark theme shifts each step by DARK_SHIFT to the
# light end (0.45 to 1). Both ranges grow monotonically lighter, so the order of the
# steps reads the same in grey and for colour-blind readers in either theme.
ACCENT_SHADES = tuple(float(s) for s in np.linspace(0.0, 0.55, 7).round(4))
DARK_SHIFT = 0.45
ACCENTS = tuple(to_hex(matplotlib.colormaps[CMAP](s)) for s in ACCENT_SHADES)

THEME_COLOURS = {INK: "ink", MUTED: "muted", PAPER: "paper",
                 **{colour: f"accent-{i}" for i, colour in enumerate(ACCENTS)}}

# A white line with a black edge stays visible on every colour of the map, also in grey.
OUTLINE_LINE, OUTLINE_EDGE = "white", "black"


def accent(step):
    """第 ``step`` 个强调色（0 到 6，越大越亮），用于折线与框图。"""
    return ACCENTS[step]


def setup():
    """注册中文字体并应用本书的 matplotlib 样式；重复调用也没有副作用。

    在 Jupyter 内核里，图以 SVG 显示：字形转成路径（读者不需要装任何字体），热图的数据
    随图一起写进 SVG（见 :func:`attnbook.plots.figure_svg`）。
    """
    if CJK_FONT not in {f.name for f in font_manager.fontManager.ttflist}:
        font_manager.fontManager.addfont(str(CJK_FONT_FILE))
    matplotlib.rcParams.update(
        {
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
            "text.color": INK,
            "axes.labelcolor": INK,
            "axes.edgecolor": INK,
            "xtick.color": INK,
            "ytick.color": INK,
            "grid.color": MUTED,
            "figure.facecolor": PAPER,
            "savefig.facecolor": PAPER,
            "axes.facecolor": "none",
            "legend.facecolor": "none",
            "legend.edgecolor": MUTED,
            "patch.edgecolor": INK,
            # SVG: glyphs as paths, ids that do not change from one build to the next.
            "svg.fonttype": "path",
            "svg.hashsalt": "attnbook",
        }
    )
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
