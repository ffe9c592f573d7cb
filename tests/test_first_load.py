"""One cold load of every page at desktop width, as a reader first gets it.

Each page is opened in a fresh browser context (cold cache) from tools/serve.py, with
every request that would leave 127.0.0.1 recorded and failed at a proxy that does not
exist, then scrolled through so that every lazy image loads. That one load is checked for
four things:

* **Clean.** HTTP 200, no console or page error, no failed request, no request off the
  machine.
* **Complete.** Every <img> decoded; every formula is MathML made at build time, with a
  rendered box, and no raw TeX shows anywhere on the page.
* **Light.** Everything shown, it transfers at most 1.5 MB; it asks for no math engine
  and no fontawesome.js, fetches the math font only when it shows a formula, and never
  the theme's full icon font. The weight, the number of requests and the load time go to
  test-artifacts/browser/metrics.json and are printed at the end of the run.
* **Images sized and lazy.** Every <img> carries width and height equal to its file's
  pixels and keeps its aspect ratio on screen, every image below the first screen says
  loading="lazy", and an image far below has not been fetched before the reader scrolls.

The 404 page, under the prefix it was built for, is loaded at a missing URL: its own
status is 404 by design; it is clean otherwise, light, and links back to the start page.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from browsing import IMAGES_JS, MEASURE_JS, RAW_TEX_JS, Server, fmt, prefix_of_404, record_metrics
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

# Every formula: its <math> element and rendered box. Closed <details> (collapsed
# solutions) are opened first so that their formulas are laid out too; the print-only
# table of contents is never shown on screen.
MATH_JS = """() => {
    document.documentElement.dataset.voice = 'all';  // the checking layer too: every formula shown
    document.querySelectorAll('details').forEach((d) => { d.open = true; });
    return [...document.querySelectorAll('span.math, div.math')]
        .filter((el) => !el.closest('.onlyprint'))
        .map((el) => {
            const math = el.querySelector(':scope > math');
            const r = math ? math.getBoundingClientRect() : {width: 0, height: 0};
            return {display: el.tagName === 'DIV', mathml: !!math,
                    width: r.width, height: r.height,
                    text: el.textContent.trim().slice(0, 80)};
        });
}"""

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

LARGEST_JS = """() => performance.getEntriesByType('resource')
    .map((r) => [r.transferSize, r.name]).sort((a, b) => b[0] - a[0]).slice(0, 8)"""


def first_load(w, url: str) -> dict:
    """Open ``url`` in the fresh context ``w``; what the first screen fetched and how its
    images stand, then everything once every image has loaded."""
    response = w.open(url, settle=True)
    first = w.page.evaluate(MEASURE_JS)
    lazy = w.page.evaluate(IMG_STATE_JS)
    images = w.page.evaluate(IMAGES_JS)
    w.settle(3_000)
    full = w.page.evaluate(MEASURE_JS)
    load = {"status": response and response.status, "first": first, "lazy": lazy, "images": images,
            "full": full, "shown": w.page.evaluate(IMG_SHOWN_JS), "largest": w.page.evaluate(LARGEST_JS),
            "formulas": w.page.evaluate("() => document.querySelectorAll('math').length")}
    return load | {"math": w.page.evaluate(MATH_JS), "raw_tex": w.page.evaluate(RAW_TEX_JS)}


def record(page: str, load: dict):
    full, first = dict(load["full"]), load["first"]
    del full["urls"]
    record_metrics(page, {**full, "first_screen_bytes": first["transfer_bytes"],
                          "first_screen_requests": first["requests"]})


def weight_failures(page: str, load: dict) -> list[str]:
    full, urls, failures = load["full"], load["full"]["urls"], []
    budget = BUDGETS.get(page, BUDGET_BYTES)
    if full["transfer_bytes"] > budget:
        failures.append(f"transfers {full['transfer_bytes'] / 1e6:.2f} MB, over its "
                        f"{budget / 1e6:.2f} MB budget; the largest:"
                        + fmt(f"{size / 1e3:7.1f} KB  {name}" for size, name in load["largest"]))
    if [u for u in urls if NEVER.search(u)]:
        failures.append(f"asks for a math engine or fontawesome:{fmt(u for u in urls if NEVER.search(u))}")
    if [u for u in urls if "/vendor/fontawesome/" in u]:
        failures.append("fetches the theme's full icon font (an icon is missing from book-icons.woff2):"
                        + fmt(u for u in urls if "/vendor/fontawesome/" in u))
    fetched_math_font = any(MATH_FONT in u for u in urls)
    if load["formulas"] and not fetched_math_font:
        failures.append(f"shows {load['formulas']} formulas but did not fetch {MATH_FONT}")
    if not load["formulas"] and fetched_math_font:
        failures.append(f"shows no formula but fetched {MATH_FONT}")
    return failures


def complete_failures(load: dict) -> list[str]:
    images, math, raw_tex, failures = load["images"], load["math"], load["raw_tex"], []
    broken = [f"{i['src']} (alt={i['alt']!r}, complete={i['complete']}, naturalWidth={i['width']})"
              for i in images if not (i["complete"] and i["width"] > 0)]
    unrendered = [("display: " if m["display"] else "inline: ") + m["text"]
                  + ("" if m["mathml"] else " (no <math>)") + f" [{m['width']:.0f}x{m['height']:.0f}]"
                  for m in math if not (m["mathml"] and m["width"] > 0 and m["height"] > 0)]
    if broken:
        failures.append(f"{len(broken)} of {len(images)} images not decoded:{fmt(broken)}")
    if unrendered:
        failures.append(f"{len(unrendered)} of {len(math)} formulas without a rendered MathML box:"
                        f"{fmt(unrendered[:15])}"
                        + (f"\n  ... and {len(unrendered) - 15} more" if len(unrendered) > 15 else ""))
    if raw_tex:
        failures.append(f"raw TeX on the page:{fmt(raw_tex[:15])}")
    return failures


def image_failures(load: dict) -> list[str]:
    failures = []
    for img, after in zip(load["lazy"], load["shown"]):
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
    return failures


@pytest.mark.parametrize("page", PAGES)
def test_first_load(page, server, watch):
    w = watch(viewport=DESKTOP)
    load = first_load(w, server.url + page)
    record(page, load)
    failures = [] if load["status"] == 200 else [f"HTTP {load['status']}"]
    if w.problems():
        failures.append(f"console/page errors:{fmt(w.problems())}")
    if w.off_host:
        failures.append(f"requests for other hosts (blocked):{fmt(sorted(set(w.off_host)))}")
    if w.failed or w.http_errors:
        failures.append(f"failed requests:{fmt(w.failed + w.http_errors)}")
    failures += complete_failures(load) + weight_failures(page, load)
    failures += [f"image {f}" for f in image_failures(load)]
    assert not failures, f"{page}:\n" + "\n".join(failures)


def test_404_page(site, watch):
    prefix = prefix_of_404(site)
    srv = Server(site, prefix)
    try:
        w = watch(viewport=DESKTOP)
        missing = srv.url + MISSING
        load = first_load(w, missing)
        assert load["status"] == 404, f"{missing}: status {load['status']}, expected 404"
        record("404.html", load)
        sheets = w.page.evaluate(
            """() => [...document.querySelectorAll('link[rel="stylesheet"]')]
                     .map((l) => ({href: l.href, loaded: !!l.sheet}))""")
        starts = {srv.prefix, srv.prefix + "index.html", srv.prefix + "book/index.html"}
        links = w.page.evaluate("() => [...document.querySelectorAll('a[href]')].map((a) => a.href)")
        home = [h for h in links if urlsplit(h).path in starts and urlsplit(h).netloc == urlsplit(srv.url).netloc]

        failures = weight_failures("404.html", load)
        if not sheets:
            failures.append("no stylesheets at all")
        not_loaded = [s["href"] for s in sheets if not s["loaded"]]
        if not_loaded:
            failures.append(f"stylesheets not loaded:{fmt(not_loaded)}")
        # The document itself is a 404 by design (Chromium logs that as a console error);
        # any other error or failed request is a fault.
        problems = [m for m in w.problems() if not ("status of 404" in m and f"({missing}:" in m)]
        if problems:
            failures.append(f"console/page errors:{fmt(problems)}")
        if w.off_host:
            failures.append(f"requests that left 127.0.0.1:{fmt(sorted(set(w.off_host)))}")
        others = [e for e in w.http_errors if not e.endswith(missing)] + w.failed
        if others:
            failures.append(f"failed requests:{fmt(others)}")
        if not home:
            failures.append(f"no link back to the start page ({' or '.join(sorted(starts))}); links:{fmt(links)}")
        else:
            back = w.page.goto(home[0], wait_until="load")
            if back is None or back.status != 200:
                failures.append(f"the link back {home[0]} answers {back and back.status}")
        assert not failures, f"404 page (built for prefix {prefix}):\n" + "\n".join(failures)
    finally:
        srv.stop()
