"""Two small fonts made at the end of the build from installed ones: icons and math.

Both are subsets, written to ``_static/fonts/`` once every page is on disk, with only the
glyphs the built pages use. book.css declares them; a browser fetches a font only for a
page that shows one of its glyphs, so a page without formulas loads nothing for math.

* ``book-icons.woff2``: pydata-sphinx-theme draws its icons with Font Awesome, by default
  through ``fontawesome.js`` (1.5 MB on every page; book/_templates/static/webpack-macros.html
  drops it) or else through the theme's CSS and its 150 KB solid icon font. This keeps
  the CSS route and cuts the theme's own font down to the icons the pages name in a
  ``fa-*`` class, plus the ones the CSS itself draws (admonition and exercise titles).
  book.css declares it under the theme's family name after the theme's CSS, so it wins.
* ``book-math.woff2``: STIX Two Math (the copy ziamath ships, SIL OFL 1.1), with its
  OpenType MATH table, cut down to the characters of the formulas (mathml.py renders
  them) and their stretched and script-size variants. One-letter identifiers are set in
  italic by the browser, which maps them to the Mathematical Alphanumeric Symbols
  (``d`` -> U+1D451), so those code points are kept as well.

An icon the theme's CSS cannot name, or a glyph missing from a font, is a build warning.
"""

import re
from importlib.util import find_spec
from pathlib import Path

from bs4 import BeautifulSoup
from fontTools import subset
from fontTools.ttLib import TTFont
from sphinx.util import logging

logger = logging.getLogger(__name__)

FONTS = "_static/fonts"
ICON_SOURCE = "_static/vendor/fontawesome/webfonts/fa-solid-900.ttf"
ICON_CSS = "_static/styles/pydata-sphinx-theme.css"
MATH_FEATURES = ["ssty", "dtls", "flac"]  # script-size forms, dotless and flat accent bases
FUNCTION_APPLICATION = "\u2061"
RADICAL = "\u221a"

_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_CONTENT = re.compile(r'"(\\[0-9a-fA-F]{4,5}|[\ue000-\uf8ff])"')
_ICON_SELECTOR = re.compile(r"\.(fa-[a-z0-9-]+)::?before")
_ICON_CLASS = re.compile(r"\bfa-[a-z0-9-]+")
# Classes that size or animate an icon rather than name one.
_NOT_ICONS = {"fa-lg", "fa-xs", "fa-sm", "fa-xl", "fa-2x", "fa-fw", "fa-spin", "fa-solid",
              "fa-regular", "fa-brands"}


# --- math ----------------------------------------------------------------------------

def math_source():
    """STIX Two Math as ziamath ships it, found without importing ziamath (which would
    load and parse the font)."""
    return Path(find_spec("ziamath").origin).parent / "fonts" / "STIXTwoMath-Regular.ttf"


# The italic h is Planck's constant, outside the block; then whole alphabets, first to last.
_ITALIC_SINGLES = {"h": 0x210E, "\u2202": 0x1D715, "\u03f5": 0x1D716, "\u03d1": 0x1D717, "\u03f0": 0x1D718,
                   "\u03d5": 0x1D719, "\u03f1": 0x1D71A, "\u03d6": 0x1D71B, "\u2207": 0x1D6FB}
_ITALIC_RUNS = (("A", "Z", 0x1D434), ("a", "z", 0x1D44E), ("\u0391", "\u03a9", 0x1D6E2), ("\u03b1", "\u03c9", 0x1D6FC))


def _italic(char):
    """The character MathML's automatic italic shows for a one-letter <mi>."""
    if char in _ITALIC_SINGLES:
        return chr(_ITALIC_SINGLES[char])
    return next((chr(start + ord(char) - ord(first)) for first, last, start in _ITALIC_RUNS
                 if first <= char <= last), char)


def math_text(html):
    """Every character the <math> elements of one page show, italics mapped."""
    shown = set()
    for math in BeautifulSoup(html, "html.parser").find_all("math"):
        if math.find(["msqrt", "mroot"]):
            shown.add(RADICAL)  # drawn with the font's radical glyph and its taller variants
        for element in math.find_all(string=True):
            text = element.strip()
            parent = element.parent
            if parent.name == "mi" and len(text) == 1 and parent.get("mathvariant") is None:
                text = _italic(text)
            shown.update(text)
    return shown


# --- icons ---------------------------------------------------------------------------

def _codepoint(token):
    return chr(int(token[1:], 16)) if token.startswith("\\") else token


def css_icons(css):
    """({fa-name: character} from the icon classes' rules, {characters the other rules draw})."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    by_class, drawn = {}, set()
    for selector, body in _RULE.findall(css):
        chars = [_codepoint(t) for t in _CONTENT.findall(body)]
        if not chars:
            continue
        parts = [s.strip() for s in selector.split(",")]
        if all(_ICON_SELECTOR.fullmatch(part) for part in parts):  # .fa-search:before, …
            for part in parts:
                by_class[_ICON_SELECTOR.fullmatch(part).group(1)] = chars[0]
        else:
            drawn.update(chars)
    return by_class, drawn


def page_icons(html):
    """The fa-* icon names the page's elements carry."""
    return {n for classes in re.findall(r'class="([^"]*)"', html)
            for n in _ICON_CLASS.findall(classes) if n not in _NOT_ICONS}


# --- writing the subsets -------------------------------------------------------------

def write_subset(source, target, chars, features=()):
    """Keep ``chars`` (those the font has) and what they need; return the missing ones."""
    font = TTFont(str(source))
    cmap = font.getBestCmap()
    missing = {c for c in chars if ord(c) not in cmap and not c.isspace()}
    options = subset.Options(flavor="woff2", layout_features=list(features), notdef_outline=True,
                             name_IDs=[0, 1, 2, 3, 4, 5, 6, 13, 14])  # names, copyright and licence
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(ord(c) for c in chars if ord(c) in cmap))
    subsetter.subset(font)
    font.flavor = "woff2"
    target.parent.mkdir(parents=True, exist_ok=True)
    font.save(str(target))
    return missing


def _make_fonts(app, exception):
    if exception or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    pages = [p for p in outdir.rglob("*.html") if "_static" not in p.relative_to(outdir).parts]
    html = {p: p.read_text(encoding="utf-8") for p in pages}

    by_class, drawn = css_icons((outdir / ICON_CSS).read_text(encoding="utf-8"))
    for sheet in outdir.joinpath("_static").rglob("*.css"):
        if sheet != outdir / ICON_CSS:
            drawn |= css_icons(sheet.read_text(encoding="utf-8"))[1]
    named = set()
    for page, text in html.items():
        for name in sorted(page_icons(text)):
            if name in by_class:
                named.add(by_class[name])
            else:
                logger.warning("icon class %s on %s is not in the theme's icon CSS", name,
                               page.relative_to(outdir), type="webfonts", subtype="icon")
    # The CSS also names brand icons (GitHub, GitLab) that live in another font and that
    # no page shows; what it draws from this font is kept, the rest is not this font's.
    source = outdir / ICON_SOURCE
    drawn = {c for c in drawn if ord(c) in TTFont(str(source)).getBestCmap()}
    _report(write_subset(source, outdir / FONTS / "book-icons.woff2", named | drawn), "the icon font")

    chars = set().union(*(math_text(t) for t in html.values() if "<math" in t))
    if chars:
        chars.add(FUNCTION_APPLICATION)
        _report(write_subset(math_source(), outdir / FONTS / "book-math.woff2", chars, MATH_FEATURES),
                "the math font")


def _report(missing, font):
    if missing:
        logger.warning("%s has no glyph for %s", font, " ".join(f"U+{ord(c):04X}" for c in sorted(missing)),
                       type="webfonts", subtype="glyph")


def setup(app):
    app.connect("build-finished", _make_fonts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
