"""Every figure of the book, drawn at build time.

Call :func:`setup` once before drawing: it registers the CJK font that ships with
``mplfonts`` (in this process only; nothing is installed into matplotlib) and applies
the book's style. Each figure function returns a ``matplotlib.figure.Figure``.
"""

from ._style import CMAP, setup
from .flow import signal_flow

__all__ = ["CMAP", "setup", "signal_flow"]
