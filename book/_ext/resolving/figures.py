"""Figures that belong to the page: inline SVG in the page's colours, heat maps read cell by cell.

The book's figures reach Sphinx as SVG files written by ``attnbook.plots.figure_svg``
(the kernel displays figures as SVG only). Each carries ``<metadata id="attnbook">``
with JSON: the colour roles and, for a heat map, every panel's table. When a page is
written (``doctree-resolved``), this replaces each such image with the SVG itself:

* **Theme colours.** Every colour named in ``colours`` becomes ``var(--fig-<role>)``;
  ``book/_static/figures.css`` gives each role a light and a dark value that follow
  pydata-sphinx-theme's ``html[data-theme]``, so the switch is instant and the figure's
  background is the page's own (``paper`` is transparent).
* **Small.** matplotlib's metadata, comments, unused ids and indentation go; numbers keep
  two decimals (a hundredth of a point); glyphs and markers, which figures share, are
  defined once per page in a hidden ``<svg>`` at the top of the page and referenced
  with ``<use>``. The other ids get a per-figure prefix, so none repeats.
* **Accessible.** The SVG has ``role="img"`` and the figure's alt text as its name, and
  keeps ``width``, ``height`` and ``viewBox``, so it scales like an image and nothing
  moves while the page loads. Glyphs are paths: printing needs no font and stays vector.
* **Heat maps.** Their tables go next to the SVG as JSON (``script.attnbook-heatmap-data``);
  ``heatmap.js``, added inline to the pages that have heat maps only, shows the query
  position, the key position and the exact weight of the cell under the pointer, the
  finger or the keyboard cursor. The static figure is unchanged by it.
* **Readable on a phone.** ``zoom.js``, inline on every page with a figure, puts a
  「放大查看」 button under each figure whose smallest label is drawn under 11 CSS px at the
  page's width (the tests' floor is 9); it opens the figure at its own size in a dialog
  (tests/test_code_wrap_browser.py measures both).
* **Explorable figures.** A heat map that ``attnbook.pages.explorable`` made explorable
  also carries its inputs (``script.attnbook-explorable-data``); ``twin.js`` (the
  package's math in JavaScript), ``explore.js`` (the controls) and ``explore-<kind>.js``
  (each kind's own), inline and compacted on those pages only, recompute it when the
  reader moves a control. The package's values for every
  setting go to ``_build/fixtures/explorable/<figure>.json`` instead of the page, for
  tests/test_explorable_browser.py.
"""

import hashlib
import html
import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

from book._ext.shared.nodes import ancestors
from book._ext.shared.scripts import script

logger = logging.getLogger(__name__)

def compact_js(text):
    """The script as the page carries it: no indentation, no comment lines, no blank lines."""
    lines = (line.strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


def _script(name):
    return compact_js(script(name))


SCRIPT = _script("heatmap.js")
ZOOM_SCRIPT = _script("zoom.js")
# Explorable figures (attnbook.pages.explorable): the twin of the package's math, the
# controls, and each kind of figure's own, inline on the pages that have such a figure only.
EXPLORE_SCRIPTS = (_script("twin.js"), _script("explore.js"))
KIND_SCRIPTS = {kind: _script(f"explore-{kind}.js") for kind in ("scaling", "masks", "heads", "saturation")}
#: Where the build writes the fixtures of tests/test_twin_browser.py (under _build/).
FIXTURES = "fixtures"
_METADATA = re.compile(r'<metadata id="attnbook">(.*?)</metadata>', re.S)
_POSITIONS = re.compile(r'\b(d|x|y|width|height|viewBox)="([^"]*)"|translate\(([^)]*)\)')
_LONG_DECIMAL = re.compile(r"(-?\d+\.\d\d)\d+")
# matplotlib writes glyph outlines with 6400 units to the em, scaled by 1/64; 1/800
# of an em is still far below a pixel, and the numbers get a digit shorter.
GLYPH_SCALE, GLYPH_STEP = 'transform="scale(0.015625)"', 8


def figure_metadata(svg):
    """The JSON that ``figure_svg`` put into the SVG, or None for any other SVG."""
    match = _METADATA.search(svg)
    return json.loads(html.unescape(match.group(1))) if match else None


def inline_figure(svg, alt, prefix, shared):
    """The SVG of one figure as HTML to place in the page, and its heat-map panels.

    ``prefix`` makes its ids unique in the page; ``shared`` maps the id of each glyph or
    marker seen so far on the page to ``(short id, definition)`` and gains this figure's.
    """
    data = figure_metadata(svg)
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata\b.*?</metadata>|<!--.*?-->|<style\b.*?</style>", "", svg, flags=re.S)
    svg = _theme_colours(svg, data["colours"])
    svg = _share_definitions(svg, shared)
    panels = data["heatmaps"]
    marks = {p["padding"][k] for p in panels for k in ("rows", "cols") if k in p.get("padding", {})}
    marks |= set((data.get("explorable") or {}).get("ids", {}).values())  # what explore.js moves
    svg = _prefix_ids(svg, prefix, keep={p["image"] for p in panels} | marks)
    svg = _compact(svg)
    svg = _root(svg, alt)
    for panel in panels:
        panel["image"] = prefix + panel["image"]
        for k in ("rows", "cols"):
            if k in panel.get("padding", {}):
                panel["padding"][k] = prefix + panel["padding"][k]
    return svg, panels


def _theme_colours(svg, colours):
    """Each colour of ``colours`` in a style attribute becomes its role's CSS property."""
    roles = {colour.lower(): f"var(--fig-{role})" for colour, role in colours.items()}

    def swap(match):
        return roles.get(match.group(0).lower(), match.group(0))

    return re.sub(r'style="[^"]*"', lambda m: re.sub(r"#[0-9a-fA-F]{6}\b", swap, m.group(0)), svg)


def _share_definitions(svg, shared):
    """Move the definitions that ``<use>`` elements point at into ``shared``."""
    used = set(re.findall(r'<use xlink:href="#([^"]+)"', svg))

    def take(match):
        old = match.group(1)
        if old not in used:
            return match.group(0)
        if old not in shared:
            # Named after the glyph's outline, not its place on the page: the PDF joins the
            # pages into one document, where a per-page number would mean another glyph.
            glyph = _compact(_coarser_glyph(match.group(0).replace(f'id="{old}"', 'id="GLYPH"', 1)))
            new = "fgl" + hashlib.sha1(glyph.encode()).hexdigest()[:10]
            shared[old] = (new, glyph.replace('id="GLYPH"', f'id="{new}"', 1))
        return ""

    svg = re.sub(r'<path id="([^"]+)"[^>]*/>', take, svg)
    svg = re.sub(r'<use xlink:href="#([^"]+)"', lambda m: f'<use href="#{shared[m.group(1)][0]}"', svg)
    return re.sub(r"<defs>\s*</defs>", "", svg)


def _coarser_glyph(path):
    if GLYPH_SCALE not in path:
        return path
    path = re.sub(r'\bd="([^"]*)"', lambda m: 'd="{}"'.format(re.sub(
        r"-?\d+(?:\.\d+)?", lambda n: str(round(float(n.group(0)) / GLYPH_STEP)), m.group(1))), path)
    return path.replace(GLYPH_SCALE, f'transform="scale({GLYPH_STEP / 64})"')


def _prefix_ids(svg, prefix, keep):
    """Prefix the ids that something refers to (clip paths, the heat maps); drop the rest."""
    keep = keep | set(re.findall(r"url\(#([^)]+)\)", svg))
    svg = re.sub(r' id="([^"]+)"', lambda m: f' id="{prefix}{m.group(1)}"' if m.group(1) in keep else "", svg)
    return re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", svg)


def _compact(svg):
    svg = re.sub(r">\s+<", "><", svg)
    svg = re.sub(r'(xlink:href="data:[^"]*")', lambda m: re.sub(r"\s+", "", m.group(1)), svg)
    svg = svg.replace("xlink:href=", "href=")
    return _POSITIONS.sub(_round_positions, svg)


def _round_positions(match):
    """Coordinates to a hundredth of a point; scale factors (matrix, scale) stay exact."""
    name, value, translate = match.groups()
    value = _LONG_DECIMAL.sub(r"\1", " ".join((value if name else translate).split()))
    if name == "d":  # no spaces around commands or before a minus sign
        value = re.sub(r" ?([MLCQZmlcqz]) ?", r"\1", value).replace(" -", "-")
    return f'{name}="{value}"' if name else f"translate({value})"


def _root(svg, alt):
    """The root element: size and viewBox kept, the SVG-only namespace and style dropped."""
    tag, body = svg.split(">", 1)
    size = dict(re.findall(r'\b(width|height|viewBox)="([^"]*)"', tag))
    width, height = (size[k].removesuffix("px") for k in ("width", "height"))
    root = (f'<svg class="attnbook-svg" width="{width}" height="{height}" viewBox="{size["viewBox"]}" '
            f'role="img" aria-label="{html.escape(alt, quote=True)}" '
            'stroke-linejoin="round" stroke-linecap="butt">')
    return root + body


def shared_definitions(shared):
    """The hidden SVG that holds the page's glyphs and markers (empty string if none)."""
    if not shared:
        return ""
    paths = "".join(dict(shared.values()).values())   # one definition per glyph, however many names it had
    return ('<svg class="attnbook-defs" width="0" height="0" aria-hidden="true" focusable="false">'
            f"<defs>{paths}</defs></svg>")


def _json(data):
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def figure_html(svg, panels, explorable=None):
    """The figure's wrapper: the SVG, for a heat map its tables as JSON, and for an
    explorable figure its inputs (``explorable``, without the package's ``expected`` values)."""
    if not panels and not explorable:
        return f'<div class="attnbook-fig">{svg}</div>'
    extra, classes = "", "attnbook-fig attnbook-heatmap" if panels else "attnbook-fig"
    if explorable:
        classes += " attnbook-explorable"
        extra = f'<script type="application/json" class="attnbook-explorable-data">{_json(explorable)}</script>'
    tables = f'<script type="application/json" class="attnbook-heatmap-data">{_json(panels)}</script>' if panels else ""
    return f'<div class="{classes}">{svg}{tables}{extra}</div>'


def write_fixture(build_dir, name, explorable, panels):
    """The package's values for every setting of one explorable figure, for the browser test."""
    folder = Path(build_dir, FIXTURES, "explorable")
    folder.mkdir(parents=True, exist_ok=True)
    data = {"figure": name, "kind": explorable["kind"], "initial": explorable["initial"],
            "settings": explorable["settings"], "expected": explorable["expected"],
            "drawn": [p["values"] for p in panels]}
    (folder / f"{name}.json").write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")


# --- Sphinx -----------------------------------------------------------------------------


def _svg_file(app, node):
    uri = node.get("candidates", {}).get("*") or node["uri"]
    path = Path(app.srcdir, uri.lstrip("/"))
    return path if path.suffix == ".svg" and path.is_file() else None


def _inline_figures(app, doctree, docname):
    if app.builder.format != "html":
        return
    shared, heatmaps, explorables, count = {}, False, set(), 0
    for node in list(doctree.findall(nodes.image)):
        path = _svg_file(app, node)
        svg = path.read_text(encoding="utf-8") if path else ""
        if not (data := figure_metadata(svg)):
            continue
        inline, panels = inline_figure(svg, node.get("alt", ""), f"fig{count}-", shared)
        explorable = data.get("explorable")
        if explorable:
            figure = next((a for a in ancestors(node) if isinstance(a, nodes.figure) and a["ids"]), None)
            if figure is None:
                raise ValueError(f"{docname}: an explorable figure must be a named figure (mystnb figure name)")
            write_fixture(Path(app.outdir).parent, figure["ids"][0], explorable, panels)
            explorable = {k: v for k, v in explorable.items() if k != "expected"}
            explorable["ids"] = {k: f"fig{count}-{v}" for k, v in explorable.get("ids", {}).items()}
        node.replace_self(nodes.raw("", figure_html(inline, panels, explorable), format="html"))
        heatmaps, count = heatmaps or bool(panels), count + 1
        if explorable:
            if explorable["kind"] not in KIND_SCRIPTS:
                raise ValueError(f"{docname}: no explore-{explorable['kind']}.js for this explorable figure")
            explorables.add(explorable["kind"])
    if shared:
        doctree.insert(0, nodes.raw("", shared_definitions(shared), format="html"))
    doctree["attnbook_figures"] = count
    doctree["attnbook_heatmaps"] = heatmaps
    doctree["attnbook_explorable"] = sorted(explorables)


def _add_script(app, pagename, templatename, context, doctree):
    if doctree is not None and doctree.get("attnbook_heatmaps"):
        app.add_js_file(None, body=SCRIPT)
    if doctree is not None and doctree.get("attnbook_explorable"):
        for body in EXPLORE_SCRIPTS + tuple(KIND_SCRIPTS[k] for k in doctree["attnbook_explorable"]):
            app.add_js_file(None, body=body)
    # Last: its button goes right under the figure, above explore.js's controls.
    if doctree is not None and doctree.get("attnbook_figures"):
        app.add_js_file(None, body=ZOOM_SCRIPT)


def _drop_stale_fixtures(app, exception):
    """A figure's fixture outlives an incremental build that did not write its page, but
    not the figure: one that no built page shows any more is removed."""
    if exception is not None or app.builder.format != "html":
        return
    pages = [p.read_text(encoding="utf-8") for p in Path(app.outdir).rglob("*.html")]
    for fixture in (Path(app.outdir).parent / FIXTURES / "explorable").glob("*.json"):
        if not any(f'id="{fixture.stem}"' in page for page in pages):
            fixture.unlink()


def setup(app):
    app.connect("doctree-resolved", _inline_figures)
    app.connect("html-page-context", _add_script)
    app.connect("build-finished", _drop_stale_fixtures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
