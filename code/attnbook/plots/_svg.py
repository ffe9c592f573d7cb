"""A figure as the book's SVG: sized like the PNG it replaces, with its data inside.

:func:`figure_svg` writes one ``<metadata id="attnbook">`` element with JSON into the
SVG: the colour roles of ``_theme.THEME_COLOURS`` and, for a heat map, every panel's
table (rows = queries, columns = keys), axis names, tick labels and the ``id`` of the
``<image>`` that draws it. The book's build reads it to make the figure theme-aware and
the heat map readable cell by cell; a notebook simply ignores it.
"""

import io
import json
import re

import numpy as np

from ._theme import THEME_COLOURS

METADATA_ID = "attnbook"
_PANELS = "_attnbook_heatmaps"


def exact(value):
    """The shortest decimal that gives back ``value`` in its own dtype (float32 stays float32)."""
    return float(np.format_float_scientific(value, unique=True))


def record_heatmap(fig, image, weights, title, rows, cols):
    """Attach one heat-map panel's data to ``fig``; ``rows``/``cols`` are (name, labels).

    ``weights`` is the ``(n_rows, n_cols)`` table that ``image`` draws; labels of None
    mean the positions 0, 1, … ``vmax`` is the weight drawn in the colour map's top colour.
    """
    panels = getattr(fig, _PANELS, [])
    image.set_gid(f"heatmap-{len(panels)}")
    panels.append({
        "image": image.get_gid(), "title": title, "vmax": exact(image.get_clim()[1]),
        "rows": _axis(*rows), "cols": _axis(*cols),
        "values": [[exact(v) for v in row] for row in weights],
    })
    setattr(fig, _PANELS, panels)


def _axis(name, labels):
    return {"name": name} if labels is None else {"name": name, "labels": [str(t) for t in labels]}


def heatmap_panels(fig):
    """``fig`` 上登记的热图数据：每个子图一项，见 :func:`figure_svg`。"""
    return getattr(fig, _PANELS, [])


def figure_svg(fig):
    """把一幅图写成本书网页所用的 SVG 文本。

    字形是路径，宽和高按 ``fig.dpi`` 换算成像素（与同一幅图的 PNG 一样大）。SVG 里的
    ``<metadata id="attnbook">`` 以 JSON 记下各前景色的角色（``colours``），热图还记下
    每个子图的数据（``heatmaps``）：``values`` 是 ``(n_rows, n_cols)`` 的权重，行为
    查询、列为键，数值与原数组在它自己的精度下完全相同；``vmax`` 是颜色条顶端的权重。
    构建网页时，这份数据从 SVG 里移到图旁边一个存放 JSON 的脚本元素里，热图交给浏览器重画。

    Args:
        fig: 一幅 ``matplotlib.figure.Figure``。

    Returns:
        SVG 文本（``str``）。
    """
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = _pixel_size(buffer.getvalue(), fig.dpi)
    data = {"colours": THEME_COLOURS, "heatmaps": heatmap_panels(fig)}
    if getattr(fig, "_attnbook_explorable", None):  # attnbook.pages.explorable
        data["explorable"] = fig._attnbook_explorable
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    element = f'<metadata id="{METADATA_ID}">{text}</metadata>'
    return re.sub(r"(<svg\b[^>]*>)", lambda m: m.group(1) + "\n " + element, svg, count=1)


def _pixel_size(svg, dpi):
    """width/height in pixels at ``dpi`` instead of points, so the figure keeps its size."""
    head, rest = svg.split("<svg", 1)
    tag, body = rest.split(">", 1)
    tag = re.sub(r'\b(width|height)="([\d.]+)pt"', lambda m: f'{m[1]}="{float(m[2]) * dpi / 72:.1f}px"', tag)
    return f"{head}<svg{tag}>{body}"
