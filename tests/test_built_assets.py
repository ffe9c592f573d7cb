"""The built site's assets, read from _build (no browser): what makes pages light.

The two subset fonts (book/_ext/after/webfonts.py) have a glyph for every formula character
and every icon the pages show, and stay small; every <img> carries its size and loads
lazily (book/_ext/writing/images.py); search titles show no TeX (book/_ext/writing/mathml.py); and the
offline copy (`make dist`) holds the whole site, next to it, where the preface links.
The browser checks of the same things are in test_first_load.py, test_formulas.py,
test_controls.py and test_offline.py.
"""

import re
import zipfile

import pytest

from book._ext.after import webfonts
from buildfiles import BUILD, HTML, html_pages, search_index, soup

pytestmark = pytest.mark.book


def test_the_fonts_have_every_glyph_the_pages_show():
    from fontTools.ttLib import TTFont

    fonts = HTML / "_static" / "fonts"
    math_font, icon_font = TTFont(fonts / "book-math.woff2"), TTFont(fonts / "book-icons.woff2")
    math_cmap, icon_cmap = math_font.getBestCmap(), icon_font.getBestCmap()
    by_class, _ = webfonts.css_icons((HTML / webfonts.ICON_CSS).read_text(encoding="utf-8"))
    missing = {}
    for page in html_pages():
        text = (HTML / page).read_text(encoding="utf-8")
        chars = webfonts.math_text(text) if "<math" in text else set()
        chars |= {by_class[name] for name in webfonts.page_icons(text)}
        cmap = {**math_cmap, **icon_cmap}
        lost = sorted(f"U+{ord(c):04X}" for c in chars if ord(c) not in cmap and not c.isspace())
        if lost:
            missing[page] = lost
    assert not missing, missing
    # Subsets, with the MATH table that lays out roots, fractions and stretched fences.
    assert "MATH" in math_font and len(math_font.getGlyphOrder()) < 400
    assert len(icon_font.getGlyphOrder()) < 60
    assert (fonts / "book-math.woff2").stat().st_size < 60_000
    assert (fonts / "book-icons.woff2").stat().st_size < 10_000


@pytest.mark.parametrize("page", html_pages())
def test_images_have_their_size_and_load_lazily(page):
    for img in soup(page).select("main img"):
        assert img.get("width", "").isdigit() and img.get("height", "").isdigit(), img
        if "toggler" not in img.get("class", []):  # the module index's 11-pixel toggles
            assert img.get("loading") == "lazy" and img.get("decoding") == "async", img


def test_search_titles_show_no_tex():
    index = search_index()
    titles = list(index["titles"]) + list(index["alltitles"])
    assert not [t for t in titles if re.search(r"\\[A-Za-z]", t)]
    assert any("√d_k" in t for t in titles), "the title with a formula is not in the index"


# --- the offline copy (make dist) ----------------------------------------------------------

ZIP = BUILD / "attention-book-html.zip"
TOP = "attention-book"


def test_the_zip_is_the_whole_site():
    with zipfile.ZipFile(ZIP) as zf:
        names = set(zf.namelist())
    assert all(n.startswith(f"{TOP}/") for n in names), sorted(names)[:5]
    missing = [p for p in html_pages() if f"{TOP}/{p}" not in names]
    assert not missing, f"pages missing from the zip: {missing}"
    for asset in ("searchindex.js", "_static/book.css", "_static/fonts/book-math.woff2",
                  "_static/fonts/book-icons.woff2"):
        assert f"{TOP}/{asset}" in names, asset
    assert not [n for n in names if n.endswith((".zip", ".map"))]
    assert (HTML / ZIP.name).read_bytes() == ZIP.read_bytes(), "the copy next to the site is stale"


def test_preface_links_to_the_zip_at_the_site_root():
    page = (HTML / "book" / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="([^"]*attention-book-html\.zip)"', page)
    assert links == ["../attention-book-html.zip"], links
    assert (HTML / "book" / links[0]).resolve() == (HTML / ZIP.name).resolve()


def test_a_glyph_id_means_one_glyph_across_the_site():
    """The PDF joins every page into one document: a glyph's id must name the same outline
    on every page, or a figure prints with another page's glyphs."""
    outlines = {}
    for page in html_pages():
        text = (HTML / page).read_text(encoding="utf-8")
        for glyph_id, definition in re.findall(r'<path id="(fgl[^"]+)"([^>]*)/>', text):
            outlines.setdefault(glyph_id, set()).add(definition)
    assert outlines, "no shared glyph on any page"
    assert not {g: d for g, d in outlines.items() if len(d) > 1}
