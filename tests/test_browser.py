"""Real-browser checks of the built site in _build/html (headless Chromium, Playwright).

The site is served by tools/serve.py under a sub-path that is not the one it is
published under, which proves every link and asset works from any sub-path. Each
page is opened in a fresh browser context (cold cache), with every request that
would leave 127.0.0.1 recorded and failed at a proxy that does not exist; then:

* no console errors or page errors, no request off the machine;
* every <img> decoded; every formula is MathML made at build time, with a rendered box,
  and no raw TeX shows anywhere on the page;
* on a 390x844 phone viewport nothing but code scrolls sideways;
* in dark mode the theme is dark and the text light.

The Sphinx (jieba) search finds the section for its key terms and finds every
glossary term; the 404 page works under the prefix it was built for. Screenshots
and per-page metrics (transfer size, requests, load time) go to
test-artifacts/browser/; the per-page metrics (test_page_weight.py) are printed at the
end of the run.

Without Chromium or without a build these tests are skipped locally, and fail when
the environment variable CI is set.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from urllib.parse import quote, urlsplit

import pytest

from browsing import ARTIFACTS, IMAGES_JS, Server, Watched, fmt, prefix_of_404, screenshot_problems
from buildfiles import HTML, SECTION, glossary_entries, html_pages

pytestmark = pytest.mark.browser

SECTION_HTML = f"{SECTION}.html"
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

# Text on the page that looks like TeX: a control word, $…$, \( \) or \[ \]. Code is left
# out: an API signature shows a default value as written, a matplotlib label included.
RAW_TEX_JS = r"""() => {
    const skip = 'pre, code, kbd, .highlight, .sig, script, style, textarea';
    const pattern = /\\[A-Za-z]{2,}|\\[()[\]]|\$[^$\s][^$]{0,80}\$/;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const hits = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const el = n.parentElement;
        if (!el || el.closest(skip)) continue;
        const m = n.textContent.match(pattern);
        if (m) hits.push(`${m[0]} in "${n.textContent.trim().slice(0, 80)}"`);
    }
    return hits;
}"""

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


# --- per page: clean load, images, math -------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_cleanly(page, server, watch):
    w = watch(viewport=DESKTOP)
    response = w.open(server.url + page, settle=True)
    assert response is not None and response.status == 200, f"{page}: HTTP {response and response.status}"

    images = w.page.evaluate(IMAGES_JS)
    broken = [f"{i['src']} (alt={i['alt']!r}, complete={i['complete']}, naturalWidth={i['width']})"
              for i in images if not (i["complete"] and i["width"] > 0)]
    math = w.page.evaluate(MATH_JS)
    unrendered = [("display: " if m["display"] else "inline: ") + m["text"]
                  + ("" if m["mathml"] else " (no <math>)") + f" [{m['width']:.0f}x{m['height']:.0f}]"
                  for m in math if not (m["mathml"] and m["width"] > 0 and m["height"] > 0)]
    raw_tex = w.page.evaluate(RAW_TEX_JS)

    failures = []
    if w.problems():
        failures.append(f"console/page errors:{fmt(w.problems())}")
    if w.off_host:
        failures.append(f"requests for other hosts (blocked):{fmt(sorted(set(w.off_host)))}")
    if w.failed or w.http_errors:
        failures.append(f"failed requests:{fmt(w.failed + w.http_errors)}")
    if broken:
        failures.append(f"{len(broken)} of {len(images)} images not decoded:{fmt(broken)}")
    if unrendered:
        failures.append(f"{len(unrendered)} of {len(math)} formulas without a rendered MathML box:"
                        f"{fmt(unrendered[:15])}"
                        + (f"\n  ... and {len(unrendered) - 15} more" if len(unrendered) > 15 else ""))
    if raw_tex:
        failures.append(f"raw TeX on the page:{fmt(raw_tex[:15])}")
    assert not failures, f"{page}:\n" + "\n".join(failures)


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
    text = (site / SECTION_HTML).read_text(encoding="utf-8")
    count = len(re.findall(r'<(?:span|div) class="math notranslate"[^>]*>(?:<span class="eqno">.*?</span>)?<math', text))
    assert count >= 5, f"{SECTION} has {count} formulas: the math checks are not being exercised"


# --- per page: phone viewport -------------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_page_fits_phone(page, server, watch):
    w = watch(viewport=PHONE)
    w.open(server.url + page)
    widths = w.page.evaluate(
        "() => ({scroll: document.documentElement.scrollWidth, inner: window.innerWidth})")
    offenders = w.page.evaluate(OVERFLOW_JS, CODE_BLOCKS)
    failures = []
    if widths["scroll"] > widths["inner"] + 1:
        failures.append(f"page scrolls sideways: scrollWidth {widths['scroll']} > innerWidth {widths['inner']}")
    if offenders:
        failures.append("elements past the right edge (outside code blocks):" + fmt(
            f"{o['selector']}: left {o['left']}, right {o['right']}, width {o['width']} "
            f"(viewport {widths['inner']}; clipped/scrolled by {o['scroller'] or 'nothing: the page'}) "
            f"{o['text']!r}" for o in offenders))
    assert not failures, f"{page} at {PHONE['width']}x{PHONE['height']}:\n" + "\n".join(failures)


# --- per page: dark mode ---------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_page_dark_mode(page, server, watch):
    w = watch(viewport=DESKTOP, color_scheme="dark")
    w.open(server.url + page)
    c = w.page.evaluate(COLORS_JS)
    failures = []
    if c["theme"] != "dark":
        failures.append(f"<html data-theme> is {c['theme']!r} (data-mode {c['mode']!r}), not 'dark'")
    if c["background_luminance"] is None or c["background_luminance"] >= 0.2:
        failures.append(f"background {c['background']} is not dark (luminance {c['background_luminance']})")
    if c["text_luminance"] <= 0.4:
        failures.append(f"main text colour {c['text']} is not light (luminance {c['text_luminance']:.3f})")
    if w.problems():
        failures.append(f"console/page errors:{fmt(w.problems())}")
    assert not failures, f"{page} in dark mode:\n" + "\n".join(failures)


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
    target = server.prefix + SECTION_HTML
    hits = [r for r in results if urlsplit(r["href"]).path == target]
    summary = search_page.page.inner_text("#search-results .search-summary")
    assert hits, (f"search for {term!r} does not link to {SECTION}; "
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


# --- 404 page under its own prefix -------------------------------------------------------


def test_404_page(site, browser, watch):
    prefix = prefix_of_404(site)
    srv = Server(site, prefix)
    try:
        w = watch(viewport=DESKTOP)
        missing = srv.url + "no/such/page.html"
        response = w.open(missing, settle=True)
        assert response is not None and response.status == 404, \
            f"{missing}: status {response and response.status}, expected 404"
        sheets = w.page.evaluate(
            """() => [...document.querySelectorAll('link[rel="stylesheet"]')]
                     .map((l) => ({href: l.href, loaded: !!l.sheet}))""")
        starts = {srv.prefix, srv.prefix + "index.html", srv.prefix + "book/index.html"}
        links = w.page.evaluate("() => [...document.querySelectorAll('a[href]')].map((a) => a.href)")
        home = [h for h in links if urlsplit(h).path in starts and urlsplit(h).netloc == urlsplit(srv.url).netloc]

        failures = []
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
        w.open(server.url + SECTION_HTML)
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
