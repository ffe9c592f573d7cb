"""The offline copy: `make dist`'s _build/attention-book-html.zip, unzipped and read from disk.

What the zip holds, and the preface's link to it, are checked in test_site.py. Unzipped into a temporary folder and opened with
file:// URLs in Chromium, the pages load without console errors, their images decode,
their formulas are laid out in the math font, every internal link of the section page
leads to a file (and anchor) of the copy, index.html leads on to the preface, and the
search page finds the section.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import pytest

from browsing import IMAGES_JS, fmt
from buildfiles import BUILD, ATTENTION

pytestmark = pytest.mark.browser

ZIP = BUILD / "attention-book-html.zip"
TOP = "attention-book"
DESKTOP = {"width": 1280, "height": 900}


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    if not ZIP.is_file():
        pytest.fail(f"{ZIP.relative_to(BUILD.parent)} does not exist: run `make dist`", pytrace=False)
    target = tmp_path_factory.mktemp("offline")
    with zipfile.ZipFile(ZIP) as zf:
        zf.extractall(target)
    return target / TOP


LINKS_JS = """() => [...document.querySelectorAll('a[href]')].map((a) => a.href)"""
# The 全部 view with every folded check open: each figure and formula of the page is shown.
ALL_SHOWN_JS = """() => {
    document.documentElement.dataset.voice = 'all';
    document.querySelectorAll('details').forEach((d) => { d.open = true; });
}"""
FIGURES_JS = """() => [...document.querySelectorAll('figure svg, .cell_output svg')].map((s) => {
    const r = s.getBoundingClientRect();
    return [r.width, r.height];
})"""
MATH_JS = """() => [...document.querySelectorAll('math')].filter((m) => !m.closest('.onlyprint')).map((m) => {
    const r = m.getBoundingClientRect();
    return [r.width, r.height];
})"""


def test_section_page_from_disk(copy, watch):
    w = watch(viewport=DESKTOP)
    page = copy / f"{ATTENTION}.html"
    w.open(page.as_uri())
    images = w.page.evaluate(IMAGES_JS)
    w.page.evaluate(ALL_SHOWN_JS)
    figures = w.page.evaluate(FIGURES_JS)
    math = w.page.evaluate(MATH_JS)
    fonts = w.page.evaluate("""() => [...document.fonts].filter((f) => f.status === 'loaded')
                                     .map((f) => f.family.replace(/"/g, ''))""")
    links = w.page.evaluate(LINKS_JS)

    failures = []
    if w.problems() or w.failed:
        failures.append(f"errors:{fmt(w.problems() + w.failed)}")
    if [i for i in images if not (i["complete"] and i["width"] > 0)]:
        failures.append(f"images that did not load:{fmt(images)}")
    if len(figures) < 3 or [f for f in figures if not (f[0] > 0 and f[1] > 0)]:
        failures.append(f"figures without a box: {figures}")
    if len(math) < 5 or [m for m in math if not (m[0] > 0 and m[1] > 0)]:
        failures.append(f"formulas without a box: {math}")
    if not {"Book Math", "Font Awesome 6 Free"} <= set(fonts):
        failures.append(f"fonts loaded: {fonts}")
    broken = [link for link in links if not resolves(link, copy)]
    if broken:
        failures.append(f"internal links that lead nowhere:{fmt(broken)}")
    if len([link for link in links if link.startswith("file:")]) < 20:
        failures.append(f"only {len(links)} links checked")
    assert not failures, "\n".join(failures)


def resolves(link: str, root: Path) -> bool:
    """An external link passes; a file: link must name a file of the copy, and its anchor."""
    split = urlsplit(link)
    if split.scheme != "file":
        return True
    path = Path(unquote(split.path))
    if root not in path.parents or not path.is_file():
        return False
    if split.fragment and path.suffix == ".html":
        anchor = re.escape(unquote(split.fragment))
        return bool(re.search(rf'id="{anchor}"', path.read_text(encoding="utf-8")))
    return True


def test_index_leads_to_the_preface_from_disk(copy, watch):
    w = watch(viewport=DESKTOP)
    w.page.goto((copy / "index.html").as_uri())  # a meta refresh to book/index.html
    w.page.wait_for_url("**/book/index.html", wait_until="load")
    assert w.page.locator("h1").first.inner_text().startswith("前言"), w.page.url
    assert not w.problems(), w.problems()


def test_search_from_disk(copy, watch):
    w = watch(viewport=DESKTOP)
    w.page.goto((copy / "search.html").as_uri() + f"?q={quote('注意力机制')}", wait_until="load")
    w.page.wait_for_function(
        "() => document.querySelectorAll('#search-results ul.search li > a').length > 0", timeout=30_000)
    hits = w.page.evaluate("() => [...document.querySelectorAll('#search-results ul.search li > a')].map((a) => a.href)")
    assert any(h.split("#")[0].endswith(f"{ATTENTION}.html") for h in hits), hits
    w.page.wait_for_timeout(500)  # a summary fetch would fail (and log) by now
    assert not w.problems() and not w.failed, w.problems() + w.failed
