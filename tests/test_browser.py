"""Real-browser checks of the built site in _build/html (headless Chromium, Playwright).

The site is served by tools/serve.py under a sub-path that is not the one it is
published under, which proves every link and asset works from any sub-path. Each
page is opened in a fresh browser context (cold cache), with every request that
would leave 127.0.0.1 recorded and failed at a proxy that does not exist; then:

* on a 390x844 phone viewport, with the system in dark mode, nothing but code scrolls
  sideways, and the theme is dark, the text light.

What one cold load at desktop width shows (clean, complete, light, images sized and
lazy) is checked in test_first_load.py, the 404 page there too. The Sphinx (jieba)
search finds the section for its key terms and finds every glossary term; the harness
records and blocks requests for other hosts. Screenshots go to test-artifacts/browser/.

Without Chromium or without a build these tests are skipped locally, and fail when
the environment variable CI is set.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from urllib.parse import quote, urlsplit

import pytest

from browsing import ARTIFACTS, IMAGES_JS, RAW_TEX_JS, Server, Watched, fmt, screenshot_problems
from buildfiles import HTML, ATTENTION, glossary_entries, html_pages

pytestmark = pytest.mark.browser

ATTENTION_HTML = f"{ATTENTION}.html"
SEARCH_TERMS = ["注意力机制", "缩放点积", "多头注意力", "交叉注意力", "自注意力", "掩码", "位置编码"]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
CODE_BLOCKS = "pre, div.highlight, .cell_output, .output"


# --- what to test (read at collection time; placeholders when there is no build) --

PAGES = html_pages(include_404=False) or ["index.html"]  # no build: one test that fails on CI


def glossary_terms() -> list[str]:
    if not (HTML / "book" / "glossary.html").exists():
        return ["<no glossary page in the build>"]
    return [term for term, _ in glossary_entries()] or ["<no dl.glossary dt in the glossary page>"]


# Elements sticking out past the right edge of the viewport, outside code blocks;
# outermost ones only. A theme container with overflow-x: auto keeps the page itself
# from scrolling, but what sticks out of the viewport is still cut off or needs a
# sideways swipe, so it counts; the report names the ancestor that scrolls.
OVERFLOW_JS = """(codeBlocks) => {
    const vw = window.innerWidth;
    const describe = (el) => {
        const parts = [];
        for (let e = el; e && e !== document.body && parts.length < 4; e = e.parentElement) {
            let s = e.tagName.toLowerCase();
            if (e.id) s += '#' + e.id;
            else if (e.classList.length) s += '.' + [...e.classList].slice(0, 3).join('.');
            parts.unshift(s);
        }
        return parts.join(' > ');
    };
    const scroller = (el) => {
        for (let a = el.parentElement; a && a !== document.documentElement; a = a.parentElement) {
            if (getComputedStyle(a).overflowX !== 'visible') return describe(a).split(' > ').pop() + ' (overflow-x: ' + getComputedStyle(a).overflowX + ')';
        }
        return null;
    };
    const offenders = [];
    for (const el of document.body.querySelectorAll('*')) {
        if (el.closest(codeBlocks)) continue;
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0 || r.right <= vw + 1) continue;
        if (!el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
        offenders.push(el);
    }
    const set = new Set(offenders);
    return offenders
        .filter((el) => { for (let a = el.parentElement; a; a = a.parentElement) if (set.has(a)) return false; return true; })
        .map((el) => { const r = el.getBoundingClientRect();
            return {selector: describe(el), left: Math.round(r.left), right: Math.round(r.right),
                    width: Math.round(r.width), scroller: scroller(el),
                    text: (el.textContent || '').trim().slice(0, 60)}; });
}"""

# Relative luminance of any CSS colour (rendered through a canvas, so any syntax works),
# composited over white when translucent is not needed: we walk up to an opaque background.
COLORS_JS = """() => {
    const ctx = document.createElement('canvas').getContext('2d', {willReadFrequently: true});
    const rgba = (css) => {
        ctx.clearRect(0, 0, 1, 1);
        ctx.fillStyle = '#000'; ctx.fillStyle = css;
        ctx.fillRect(0, 0, 1, 1);
        return [...ctx.getImageData(0, 0, 1, 1).data];
    };
    const lum = ([r, g, b]) => {
        const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    };
    let bgEl = document.body, bg = getComputedStyle(bgEl).backgroundColor;
    if (rgba(bg)[3] === 0) { bgEl = document.documentElement; bg = getComputedStyle(bgEl).backgroundColor; }
    const textEl = document.querySelector('article.bd-article p, main p, article p, main') || document.body;
    const fg = getComputedStyle(textEl).color;
    return {theme: document.documentElement.dataset.theme || null,
            mode: document.documentElement.dataset.mode || null,
            background: bg, background_luminance: rgba(bg)[3] === 0 ? null : lum(rgba(bg)),
            text: fg, text_luminance: lum(rgba(fg))};
}"""


# --- the harness ---------------------------------------------------------------------


def test_requests_for_other_hosts_are_recorded_and_never_leave(server, watch):
    """The harness itself: a request for another host, by name or by address, is
    recorded and fails inside the machine; one for the local server goes through."""
    w = watch(viewport=DESKTOP)
    w.open(server.url + "book/glossary.html")
    outcomes = w.page.evaluate("""async (urls) => Promise.all(urls.map((u) =>
        fetch(u, {mode: 'no-cors'}).then(() => 'fetched', (e) => 'failed')))""",
                               ["https://example.com/x.js", "http://93.184.216.34/y", server.url + "book/glossary.html"])
    assert outcomes == ["failed", "failed", "fetched"], outcomes
    assert sorted(w.off_host) == ["http://93.184.216.34/y", "https://example.com/x.js"], w.off_host
    assert all("ERR_PROXY_CONNECTION_FAILED" in m for m in w.problems()), w.problems()


def test_section_page_has_math(site):
    """The math check above must not pass vacuously everywhere."""
    text = (site / ATTENTION_HTML).read_text(encoding="utf-8")
    count = len(re.findall(r'<(?:span|div) class="math notranslate"[^>]*>(?:<span class="eqno">.*?</span>)?<math', text))
    assert count >= 5, f"{ATTENTION} has {count} formulas: the math checks are not being exercised"


# --- per page: a phone in the dark -------------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_page_fits_a_phone_in_dark_mode(page, server, watch):
    """Loaded at phone width with the system in dark mode: nothing but code scrolls
    sideways (the theme changes no width), and the theme is dark, its text light."""
    w = watch(viewport=PHONE, color_scheme="dark")
    w.open(server.url + page)
    widths = w.page.evaluate(
        "() => ({scroll: document.documentElement.scrollWidth, inner: window.innerWidth})")
    offenders = w.page.evaluate(OVERFLOW_JS, CODE_BLOCKS)
    c = w.page.evaluate(COLORS_JS)
    failures = []
    if widths["scroll"] > widths["inner"] + 1:
        failures.append(f"page scrolls sideways: scrollWidth {widths['scroll']} > innerWidth {widths['inner']}")
    if offenders:
        failures.append("elements past the right edge (outside code blocks):" + fmt(
            f"{o['selector']}: left {o['left']}, right {o['right']}, width {o['width']} "
            f"(viewport {widths['inner']}; clipped/scrolled by {o['scroller'] or 'nothing: the page'}) "
            f"{o['text']!r}" for o in offenders))
    if c["theme"] != "dark":
        failures.append(f"<html data-theme> is {c['theme']!r} (data-mode {c['mode']!r}), not 'dark'")
    if c["background_luminance"] is None or c["background_luminance"] >= 0.2:
        failures.append(f"background {c['background']} is not dark (luminance {c['background_luminance']})")
    if c["text_luminance"] <= 0.4:
        failures.append(f"main text colour {c['text']} is not light (luminance {c['text_luminance']:.3f})")
    if w.problems():
        failures.append(f"console/page errors:{fmt(w.problems())}")
    assert not failures, f"{page} at {PHONE['width']}x{PHONE['height']}, dark:\n" + "\n".join(failures)


# --- search (Sphinx searchtools + jieba index) -----------------------------------------


@pytest.fixture(scope="module")
def search_page(browser, server):
    """One context for all searches: the index is the same for each."""
    w = Watched(browser, viewport=DESKTOP)
    yield w
    w.close()


def run_search(w: Watched, server: Server, term: str) -> list[dict]:
    w.page.goto(f"{server.url}search.html?q={quote(term)}", wait_until="load")
    w.page.wait_for_function(
        """() => {
            const s = document.querySelector('#search-results .search-summary');
            return s && s.innerText.trim().length > 0;
        }""",
        timeout=30_000,
    )
    return w.page.evaluate(
        """() => [...document.querySelectorAll('#search-results ul.search li > a')]
                 .map((a) => ({href: a.href, text: a.textContent.trim()}))""")


def show(results) -> str:
    return fmt(f"{r['text']} -> {r['href']}" for r in results)


@pytest.mark.parametrize("term", SEARCH_TERMS)
def test_search_finds_section(term, search_page, server):
    results = run_search(search_page, server, term)
    target = server.prefix + ATTENTION_HTML
    hits = [r for r in results if urlsplit(r["href"]).path == target]
    summary = search_page.page.inner_text("#search-results .search-summary")
    assert hits, (f"search for {term!r} does not link to {ATTENTION}; "
                  f"summary {summary!r}; results:{show(results)}")


@pytest.mark.parametrize("term", glossary_terms())
def test_search_finds_glossary_term(term, search_page, server):
    if term.startswith("<"):
        pytest.fail(f"cannot read the glossary terms from the glossary page: {term}")
    results = run_search(search_page, server, term)
    summary = search_page.page.inner_text("#search-results .search-summary")
    assert results, f"search for glossary term {term!r} returns nothing; summary {summary!r}"


def test_search_results_show_no_raw_tex(search_page, server):
    """A section title with a formula is a search result title: plain text, never TeX."""
    results = run_search(search_page, server, "除以 √d_k：实测")  # a title match needs half the title
    titles = [r["text"] for r in results]
    assert any("√d_k" in t for t in titles), f"no result titled with √d_k:{show(results)}"
    raw = search_page.page.evaluate(RAW_TEX_JS)
    assert not raw, f"raw TeX on the search page:{fmt(raw)}"


def test_server_redirects_and_404s(server, site):
    """tools/serve.py: '/' redirects to the prefix; a missing file is a 404 with 404.html."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as info:
        opener.open(server.origin + "/")
    assert info.value.code in (301, 302) and info.value.headers["Location"] == server.prefix
    with urllib.request.urlopen(server.url) as r:
        assert r.status == 200 and r.read() == (site / "index.html").read_bytes()
    for missing in (server.url + "no/such/page.html", server.origin + "/elsewhere/index.html"):
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(missing)
        assert info.value.code == 404
        if (site / "404.html").exists():
            assert info.value.read() == (site / "404.html").read_bytes()


# --- screenshots ----------------------------------------------------------------------------


def test_screenshots(server, watch):
    """Artefacts for a person to look at, each checked for what it must show: the whole
    page at the viewport's width, in its theme, every image drawn, no console error; the
    search page with its results."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shots = [
        ("section-desktop.png", dict(viewport=DESKTOP), "light"),
        ("section-phone.png", dict(viewport=PHONE), "light"),
        ("section-dark.png", dict(viewport=DESKTOP, color_scheme="dark"), "dark"),
    ]
    failures = []
    for name, options, theme in shots:
        w = watch(**options)
        w.open(server.url + ATTENTION_HTML)
        images = w.page.evaluate(IMAGES_JS)
        png = w.page.screenshot(path=str(ARTIFACTS / name), full_page=True)
        failures += [f"{name}: {p}" for p in screenshot_problems(png, options["viewport"]["width"], theme, images)]
        failures += [f"{name}: {p}" for p in w.problems()]
    w = watch(viewport=DESKTOP)
    w.page.goto(f"{server.url}search.html?q={quote(SEARCH_TERMS[0])}", wait_until="load")
    try:
        w.page.wait_for_function(
            "() => (document.querySelector('#search-results .search-summary')?.innerText || '').trim()",
            timeout=30_000)
    finally:
        png = w.page.screenshot(path=str(ARTIFACTS / "search.png"), full_page=True)
    failures += [f"search.png: {p}" for p in screenshot_problems(png, DESKTOP["width"], "light")]
    found = w.page.locator("#search-results ul.search li").count()
    if not found:
        failures.append(f"search.png: no result for {SEARCH_TERMS[0]}")
    assert not failures, "screenshots:" + fmt(failures)
