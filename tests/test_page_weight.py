"""What a page costs a reader, measured in Chromium: at most 1.5 MB, cold, everything shown.

Each page, the search page and the 404 page included, is opened in a fresh browser
context (cold cache) from tools/serve.py, then scrolled through so that every lazy image
loads as well; what it transferred then is the page's weight. Per page, the weight,
the number of requests and the load time go to test-artifacts/browser/metrics.json and
are printed at the end of the run. The page fails when it weighs more than the budget,
when it asks for a math engine or fontawesome.js, when it fetches the math font without
showing a formula, or when it fetches the theme's full icon font.

Images keep their size and load lazily: every <img> carries width and height equal to
its file's pixels and keeps its aspect ratio on screen, every image below the first
screen says loading="lazy", and an image far below has not been fetched before the
reader scrolls.
"""

from __future__ import annotations

import re

import pytest

from browsing import IMAGES_JS, MEASURE_JS, Server, fmt, prefix_of_404, record_metrics
from buildfiles import html_pages

pytestmark = pytest.mark.browser

BUDGET_BYTES = 1_500_000  # 1.5 MB
# The section page carries the most figures and formulas, and still stays well under.
BUDGETS = {"book/ch04/attention.html": 1_200_000}
DESKTOP = {"width": 1280, "height": 900}
PAGES = html_pages(include_404=False) or ["index.html"]  # no build: one test that fails on CI
MISSING = "no/such/page.html"  # any missing URL gets the 404 page
# Chromium fetches a lazy image once it is within 1250-2500 px of the viewport.
BEYOND_LAZY_MARGIN = 3000

NEVER = re.compile(r"mathjax|katex|fontawesome", re.I)  # math engines, the theme's icon script
MATH_FONT = "/_static/fonts/book-math.woff2"
ICON_FONT = "/_static/fonts/book-icons.woff2"


@pytest.mark.parametrize("page", PAGES + ["404.html"])
def test_page_weight(page, site, server, watch):
    srv = Server(site, prefix_of_404(site)) if page == "404.html" else server
    try:
        w = watch(viewport=DESKTOP)
        url = srv.url + (MISSING if page == "404.html" else page)
        w.open(url, settle=True)
        first = w.page.evaluate(MEASURE_JS)
        w.page.evaluate(IMAGES_JS)
        w.settle(3_000)
        full = w.page.evaluate(MEASURE_JS)
        formulas = w.page.evaluate("() => document.querySelectorAll('math').length")
    finally:
        if srv is not server:
            srv.stop()
    urls = full.pop("urls")
    first.pop("urls")
    record_metrics(page, {**full, "first_screen_bytes": first["transfer_bytes"],
                          "first_screen_requests": first["requests"]})

    failures = []
    budget = BUDGETS.get(page, BUDGET_BYTES)
    if full["transfer_bytes"] > budget:
        failures.append(f"transfers {full['transfer_bytes'] / 1e6:.2f} MB, over its "
                        f"{budget / 1e6:.2f} MB budget; the largest:" + fmt(largest(w)))
    if [u for u in urls if NEVER.search(u)]:
        failures.append(f"asks for a math engine or fontawesome:{fmt(u for u in urls if NEVER.search(u))}")
    if [u for u in urls if "/vendor/fontawesome/" in u]:
        failures.append("fetches the theme's full icon font (an icon is missing from book-icons.woff2):"
                        + fmt(u for u in urls if "/vendor/fontawesome/" in u))
    fetched_math_font = any(MATH_FONT in u for u in urls)
    if formulas and not fetched_math_font:
        failures.append(f"shows {formulas} formulas but did not fetch {MATH_FONT}")
    if not formulas and fetched_math_font:
        failures.append(f"shows no formula but fetched {MATH_FONT}")
    assert not failures, f"{page}:\n" + "\n".join(failures)


def largest(w) -> list[str]:
    entries = w.page.evaluate("""() => performance.getEntriesByType('resource')
        .map((r) => [r.transferSize, r.name]).sort((a, b) => b[0] - a[0]).slice(0, 8)""")
    return [f"{size / 1e3:7.1f} KB  {name}" for size, name in entries]


# --- images: sized, lazy ---------------------------------------------------------------

IMG_STATE_JS = """() => [...document.querySelectorAll('main img')].map((img) => {
    const r = img.getBoundingClientRect();
    const src = img.currentSrc || img.src;
    return {src: src.split('/').pop(), loading: img.getAttribute('loading'),
            width: img.getAttribute('width'), height: img.getAttribute('height'),
            top: r.top + window.scrollY, viewport: window.innerHeight,
            requested: performance.getEntriesByName(new URL(img.getAttribute('src'), location.href).href).length > 0};
})"""

IMG_SHOWN_JS = """() => [...document.querySelectorAll('main img')].map((img) => {
    const r = img.getBoundingClientRect();
    return {src: (img.currentSrc || img.src).split('/').pop(), natural: [img.naturalWidth, img.naturalHeight],
            shown: [r.width, r.height]};
})"""


@pytest.mark.parametrize("page", PAGES)
def test_images_keep_their_size_and_load_lazily(page, server, watch):
    w = watch(viewport=DESKTOP)
    w.open(server.url + page)
    before = w.page.evaluate(IMG_STATE_JS)
    w.page.evaluate(IMAGES_JS)
    shown = w.page.evaluate(IMG_SHOWN_JS)

    failures = []
    for img, after in zip(before, shown):
        name = img["src"][:24]
        if not (img["width"] and img["height"] and img["width"].isdigit() and img["height"].isdigit()):
            failures.append(f"{name}: width={img['width']!r} height={img['height']!r}")
            continue
        if [int(img["width"]), int(img["height"])] != after["natural"]:
            failures.append(f"{name}: width/height {img['width']}x{img['height']} but the file is "
                            f"{after['natural'][0]}x{after['natural'][1]}")
        (nw, nh), (sw, sh) = after["natural"], after["shown"]
        if not (sw > 0 and sh > 0 and abs(sw / sh - nw / nh) <= 0.01 * nw / nh):
            failures.append(f"{name}: shown {sw:.0f}x{sh:.0f}, not the file's aspect ratio {nw}x{nh}")
        if img["top"] >= img["viewport"] and img["loading"] != "lazy":
            failures.append(f"{name}: below the first screen (top {img['top']:.0f}) without loading=lazy")
        if img["top"] > img["viewport"] + BEYOND_LAZY_MARGIN and img["requested"]:
            failures.append(f"{name}: {img['top']:.0f} px down, fetched before the reader scrolled")
    assert not failures, f"{page}:" + fmt(failures)
