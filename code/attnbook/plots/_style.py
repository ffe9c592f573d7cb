"""The book's figure style: a CJK font from mplfonts and a grey-safe colour map."""

from pathlib import Path

import matplotlib
import mplfonts
from matplotlib import font_manager

CJK_FONT_FILE = Path(mplfonts.__file__).parent / "fonts" / "NotoSansCJKsc-Regular.otf"
CJK_FONT = "Noto Sans CJK SC"

# viridis: perceptually uniform, monotonic in lightness (readable in grey) and
# distinguishable for the common forms of colour blindness.
CMAP = "viridis"


def setup():
    """注册中文字体并应用本书的 matplotlib 样式；重复调用也没有副作用。"""
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
        }
    )
