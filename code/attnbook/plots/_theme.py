"""The figures' colours, by role, so that the web page can switch them between its light
and dark themes.

Every foreground colour of a figure comes from ``THEME_COLOURS``. Each entry's key is
the colour matplotlib draws with, chosen to look right on white, which is what a reader
sees in Jupyter; the value is its role. The book's build finds these exact colours in
the SVG and replaces each with the CSS custom property ``--fig-<role>``, whose light
and dark values live in ``book/_static/figures.css``. Nothing else in a figure may use
a fixed grey, black or white that would vanish on a dark page (the heat maps' own
colours and the outlined dashes drawn over them are the exceptions).

This module only names colours: ``_style`` applies them to matplotlib and ``_svg``
records their roles in each SVG.
"""

import matplotlib
import numpy as np
from matplotlib.colors import to_hex

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
