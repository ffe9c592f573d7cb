"""Accessibility: axe-core on every page, in every state a reader can put it in.

Each page is loaded once (desktop, light) and then walked through up to twelve states without a
reload: light and dark (the system's colour scheme, which the theme follows), desktop and
phone width, and, on pages with the view switch, in each of its three views.
In each state axe-core (the copy bundled in the pinned axe-playwright-python wheel; no
CDN) checks the WCAG 2.0/2.1/2.2 A and AA rules, and one violation of any impact fails
the test, named by rule, element, page and state (color-contrast checks two elements of
each look, and on a phone only what reads otherwise than on a desktop: CONTRAST_TODO_JS). axe's
best-practice rules run too:
their findings go to test-artifacts/a11y/, and each one the book leaves is explained in
BEST_PRACTICE_LEFT below; a finding not explained there fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browsing import Server, prefix_of_404
from buildfiles import ROOT, html_pages

pytestmark = pytest.mark.browser

ARTIFACTS = ROOT / "test-artifacts" / "a11y"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
# A Gray code through the states: one thing changes from one state to the next.
# The default view (原文 + 讲解) first; 全部 and 原文 only where the page has the switch.
STATES = [("desktop", "light", "lesson"), ("desktop", "dark", "lesson"), ("desktop", "dark", "all"),
          ("desktop", "light", "all"), ("desktop", "light", "author"), ("desktop", "dark", "author"),
          ("phone", "dark", "author"), ("phone", "light", "author"), ("phone", "light", "all"),
          ("phone", "dark", "all"), ("phone", "dark", "lesson"), ("phone", "light", "lesson")]

# Best-practice findings the book leaves, each with the reason. axe runs these rules in
# the first state of every page only (they do not depend on theme or width).
BEST_PRACTICE_LEFT: dict[str, str] = {
    # The book's title link at the top of the primary sidebar (pydata-sphinx-theme's
    # navbar-logo component) sits outside the sidebar's <nav aria-label="全书目录">. It
    # links to the preface, as the nav's first item does; a screen reader still reads it
    # first, and the landmarks (header, nav, main) all have names.
    "region": "the sidebar's title link, outside the nav landmark; the nav repeats it",
    # The corner cell of the editor's self- vs cross-attention table on the section page:
    # the rows are named in the first column, the columns in the header row, so the
    # corner names nothing. Screen readers announce both headers right. The table is page
    # prose, which this part of the work leaves as it is.
    "empty-table-header": "the corner cell of a two-way table in the page prose",
}

# index.html only redirects to book/index.html (a meta refresh).
PAGES = [p for p in html_pages(include_404=True) if p != "index.html"] or ["<no build>"]


def axe_source() -> str:
    """axe.min.js from the pinned axe-playwright-python wheel (requirements.txt)."""
    import axe_playwright_python

    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text(encoding="utf-8")


# The 原文 and 原文 + 讲解 views only hide elements (book.css) and change no colour, and
# every element they leave was checked in the same theme and width in 全部, which shows
# everything, so on a page with the view switch those states skip color-contrast; and
# since the theme changes only colours, those two views are not checked in dark at all.
# color-contrast itself looks only at the elements CONTRAST_TODO_JS marked.
RUN_AXE_JS = """async ([tags, skip]) => {
    axe.configure({rules: [{id: 'color-contrast', selector: '[data-a11y-contrast]'}]});
    const rules = Object.fromEntries(skip.map((id) => [id, {enabled: false}]));
    const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}, rules, resultTypes: ['violations']});
    return r.violations.map((v) => ({id: v.id, impact: v.impact, tags: v.tags, help: v.help,
        nodes: v.nodes.map((n) => ({target: n.target.join(' '), html: n.html.slice(0, 160),
                                    summary: n.failureSummary}))}));
}"""

# color-contrast is most of axe's time (3.4 of 4.4 s on the mechanism page): it works out
# the background behind each of some 2,700 elements with text, though they come in a few
# hundred looks. What the rule reads of an element is its look: its colour, text fill and
# stroke, text size and weight (large text needs 3:1, other text 4.5:1), text shadow, the
# backgrounds behind it (its own and its ancestors', down to the first opaque one), the
# opacity of it and its ancestors, their filters and blend modes, and whether its own text
# has anything axe reads (axe skips punctuation and symbols). Two elements of one look
# read alike unless something else lies over or under one of them, so an element is its
# own look when it or an ancestor is taken out of the flow (absolute, fixed, sticky, a
# relative offset, a transform, a float), when its box or its text meets the box of an
# element with a background of its own or out of the flow that is neither its ancestor
# nor its descendant, when it is SVG, or when it is a form field. Per theme and view, axe
# then checks two elements of each look not yet checked (the first and the last), marked
# data-a11y-contrast; on a phone, only what reads otherwise than on the desktop (or was
# not shown there) is left. Returns how many elements with text there are, how many new
# looks, and how many elements are marked. (A fresh reviewer's 31 injected failures, from
# negative margins and shared grid cells to text strokes, blend modes and shadow DOM: each
# that axe's full run reports, the marked run reports too.)
CONTRAST_TODO_JS = """(key) => {
    const all = function* (root) {  // open shadow roots too
        for (const el of root.querySelectorAll('*')) { yield el; if (el.shadowRoot) yield* all(el.shadowRoot); }
    };
    // What axe's color-contrast leaves out of an element's text (its removeUnicode): a look
    // whose first and last have only this text would never be checked.
    const AXE_SKIPS = /[\\s\\u2000-\\u206F\\u2E00-\\u2E7F'!"#$%&£¢¥§€()*+,\\-.\\/:;<=>?@\\[\\]^_`{|}~±]|\\p{Extended_Pictographic}|[\\u{10000}-\\u{10FFFF}]/gu;
    const top = {bg: '', opacity: 1, fx: '', placed: false};
    const info = new Map([[document.documentElement, top]]);
    const backdrops = [], texts = [], fields = 'input, select, textarea, button';
    for (const el of [document.body, ...all(document.body)]) {
        const s = getComputedStyle(el), up = info.get(el.parentElement || el.getRootNode().host) || top;
        const own = s.backgroundColor !== 'rgba(0, 0, 0, 0)' || s.backgroundImage !== 'none';
        const opaque = s.backgroundImage === 'none' && s.backgroundColor.startsWith('rgb(');
        const bg = own ? `${s.backgroundColor} ${s.backgroundImage}${opaque ? '' : ' over ' + up.bg}` : up.bg;
        const effects = [s.filter, s.backdropFilter, s.mixBlendMode].join(' ');
        const fx = effects === 'none none normal' ? up.fx : `${up.fx} ${effects}`;
        const offset = ['top', 'right', 'bottom', 'left'].some((side) => !['auto', '0px'].includes(s[side]));
        const here = ['absolute', 'fixed', 'sticky'].includes(s.position) || (s.position === 'relative' && offset)
            || s.transform !== 'none' || s.float !== 'none';
        info.set(el, {bg, opacity: up.opacity * s.opacity, fx, placed: up.placed || here});
        if (own || here) backdrops.push(el);
        if (!el.getClientRects().length || s.visibility !== 'visible') continue;
        let words = '';
        for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 3) words += n.data;
        if (!words.trim() && !el.matches(fields)) continue;
        texts.push([el, [s.color, s.webkitTextFillColor, s.webkitTextStrokeWidth, s.webkitTextStrokeColor,
                         s.fontSize, s.fontWeight, s.textShadow, bg, info.get(el).opacity, fx,
                         words.replace(AXE_SKIPS, '') !== ''].join('|'),
                    up.placed || here || el.matches(fields) || el instanceof SVGElement]);
    }
    // The boxes in bands of 256 px down the page, so that each text meets only its neighbours.
    const bands = new Map();
    for (const o of backdrops) {
        const b = o.getBoundingClientRect();
        if (!b.width || !b.height) continue;
        for (let i = Math.floor(b.top / 256); i <= Math.floor(b.bottom / 256); i++) {
            bands.has(i) ? bands.get(i).push([o, b]) : bands.set(i, [[o, b]]);
        }
    }
    const range = document.createRange();
    const meets = (el) => {
        range.selectNodeContents(el);
        const a = el.getBoundingClientRect(), t = range.getBoundingClientRect();
        const [left, top, right, bottom] = [Math.min(a.left, t.left), Math.min(a.top, t.top),
                                            Math.max(a.right, t.right), Math.max(a.bottom, t.bottom)];
        for (let i = Math.floor(top / 256); i <= Math.floor(bottom / 256); i++) {
            if ((bands.get(i) || []).some(([o, b]) => Math.min(right, b.right) - Math.max(left, b.left) > 0.5
                && Math.min(bottom, b.bottom) - Math.max(top, b.top) > 0.5 && !o.contains(el) && !el.contains(o))) return true;
        }
        return false;
    };
    const ids = (window.__contrastIds ||= new WeakMap());
    let next = (window.__contrastNext ||= 0);
    const done = ((window.__contrastDone ||= {})[key] ||= new Set());
    const looks = new Map();
    for (const [el, look, alone] of texts) {
        if (!ids.has(el)) ids.set(el, next++);
        const id = alone || meets(el) ? `#${ids.get(el)} ${look}` : look;
        if (done.has(id)) continue;
        looks.set(id, [(looks.get(id) || [el])[0], el]);
    }
    window.__contrastNext = next;
    looks.forEach((_, id) => done.add(id));
    (window.__contrastMarked || []).forEach((el) => el.removeAttribute('data-a11y-contrast'));
    const marked = (window.__contrastMarked = new Set([...looks.values()].flat()));
    marked.forEach((el) => el.setAttribute('data-a11y-contrast', ''));
    return {texts: texts.length, looks: looks.size, checked: marked.size};
}"""

# A transition that has run to its end stays in getAnimations() with playState "finished".
ANIMATIONS_DONE_JS = "() => document.getAnimations().every((a) => a.playState === 'finished')"

# pydata-sphinx-theme makes a code block or output that scrolls focusable (tabindex 0),
# 300 ms after a resize: wait until every one of them is, so that axe sees the page a
# reader who loaded it at this width sees.
TAB_STOPS_SETTLED_JS = """() => [...document.querySelectorAll(
        'pre, .cell_output > .output, .pst-scrollable-table-container')]
    .every((el) => (el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight) === (el.tabIndex === 0))"""

# The view switch set as a reader sets it; null on a page without one.
SET_VOICE_JS = """(voice) => {
    const radio = document.querySelector(`.voice-switch input[value=${voice}]`);
    if (radio && !radio.checked) radio.click();
    return radio ? document.documentElement.dataset.voice : null;
}"""


def settle(page, theme):
    """Wait until the page shows ``theme``, its colours have stopped fading (axe would
    measure a contrast halfway) and the theme's tab stops are set; a wait that times out
    leaves the page to axe as it is, and axe reports what is wrong."""
    page.wait_for_function("(t) => document.documentElement.dataset.theme === t", arg=theme)
    for condition in (ANIMATIONS_DONE_JS, TAB_STOPS_SETTLED_JS):
        try:
            page.wait_for_function(condition, timeout=3000)
        except Exception:  # noqa: BLE001 - see the docstring
            pass


def report(violations, page, state) -> list[str]:
    lines = []
    for v in violations:
        for n in v["nodes"]:
            lines.append(f"{page} [{state}] {v['id']} ({v['impact']}): {v['help']}\n"
                         f"    element {n['target']}: {n['html']}\n    {n['summary'] or ''}".rstrip())
    return lines


@pytest.fixture(scope="module")
def axe_js():
    return axe_source()


@pytest.fixture(scope="module")
def server_404(site):
    """The 404 page links its assets under the prefix it was built for: serve it there."""
    srv = Server(site, prefix_of_404(site))
    yield srv
    srv.stop()


@pytest.mark.parametrize("page", PAGES)
def test_axe_finds_no_wcag_violation(page, request, watch, axe_js):
    if page.startswith("<"):
        pytest.fail("no build in _build/html: run `make book` first")
    srv = request.getfixturevalue("server_404" if page == "404.html" else "server")
    w = watch(viewport=DESKTOP, color_scheme="light")
    w.page.add_init_script(axe_js)
    w.open(srv.url + page)
    failures, best, seen, contrast = [], [], set(), {}
    for width, theme, voice in STATES:
        w.page.set_viewport_size(DESKTOP if width == "desktop" else PHONE)
        w.page.emulate_media(color_scheme=theme)
        switch = w.page.evaluate(SET_VOICE_JS, voice) is not None
        if not switch and voice != "lesson":
            continue  # no view switch on this page: it has one view
        if switch and voice != "all" and theme == "dark":
            continue  # those views only hide: 全部 in dark has met every colour rule (see below)
        settle(w.page, theme)
        state = f"{width}, {theme}, {voice} view"
        skip = ["color-contrast"] if switch and voice != "all" else []
        if not skip:  # color-contrast on the looks not yet checked (CONTRAST_TODO_JS)
            contrast[state] = w.page.evaluate(CONTRAST_TODO_JS, f"{theme} {voice}")
        # Best-practice rules in the first state only: they depend on neither theme nor width.
        found = w.page.evaluate(RUN_AXE_JS, [WCAG_TAGS + ["best-practice"] * (not seen), skip])
        failures += report([v for v in found if set(v["tags"]) & set(WCAG_TAGS)], page, state)
        best += [dict(v, page=page, state=state, explained=BEST_PRACTICE_LEFT.get(v["id"]))
                 for v in found if not set(v["tags"]) & set(WCAG_TAGS)]
        seen.add(state)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = ARTIFACTS / (page.replace("/", "__").removesuffix(".html") + ".json")
    out.write_text(json.dumps({"page": page, "states": sorted(seen), "wcag_violations": failures,
                               "color_contrast": contrast, "best_practice": best},
                              ensure_ascii=False, indent=1), encoding="utf-8")
    unexplained = [b for b in best if not b["explained"]]
    assert not failures, f"{len(failures)} WCAG A/AA violations:\n" + "\n".join(failures)
    assert not unexplained, ("best-practice findings not explained in BEST_PRACTICE_LEFT:\n"
                             + "\n".join(report(unexplained, page, unexplained[0]["state"])))


def contrast_found(w) -> set[str]:
    return {v["id"] for v in w.page.evaluate(RUN_AXE_JS, [WCAG_TAGS, []])}


# One element of many alike made to fail color-contrast, each in a way its look must see.
CHANGES = {
    "pale paragraph": ("article p", "el.style.setProperty('color', '#ddd', 'important')"),
    "pale glossary entry": ("article dl.glossary dd", "el.style.setProperty('color', '#ddd', 'important')"),
    "pale text stroke": ("article p", "el.style.setProperty('-webkit-text-stroke', '0.1em #f4f4f4')"),
    "pulled over a dark block": ("article p", """const dark = document.createElement('div');
        dark.style.cssText = 'height: 120px; background: #111'; el.before(dark); el.style.marginTop = '-120px'"""),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_one_element_among_many_of_its_kind_is_still_checked(change, server, watch, axe_js):
    """The control for CONTRAST_TODO_JS on a desktop: once the page's looks are checked,
    one element of many alike (a paragraph, a glossary entry) made to fail color-contrast
    has a look of its own, and fails."""
    selector, script = CHANGES[change]
    w = watch(viewport=DESKTOP, color_scheme="light")
    w.page.add_init_script(axe_js)
    w.open(server.url + "book/glossary.html")
    settle(w.page, "light")
    first = w.page.evaluate(CONTRAST_TODO_JS, "light")
    assert 0 < first["checked"] < first["texts"] / 3, first  # a page where looks repeat
    assert contrast_found(w) == set(), "the unchanged glossary page already fails color-contrast"
    assert w.page.evaluate(CONTRAST_TODO_JS, "light")["checked"] == 0  # nothing new
    many = w.page.evaluate(f"""(sel) => {{ const all = document.querySelectorAll(sel);
        const el = all[Math.floor(all.length / 2)]; {script}; return all.length; }}""", selector)
    assert many >= 5, f"only {many} of {selector}: the control needs many alike"
    assert w.page.evaluate(CONTRAST_TODO_JS, "light")["looks"] >= 1
    assert contrast_found(w) == {"color-contrast"}


def test_a_colour_only_a_phone_shows_is_still_checked(server, watch, axe_js):
    """The control for CONTRAST_TODO_JS on a phone: text made pale at phone width only must fail."""
    w = watch(viewport=DESKTOP, color_scheme="light")
    w.page.add_init_script(axe_js)
    w.open(server.url + "book/glossary.html")
    w.page.add_style_tag(content="@media (max-width: 500px) { article p { color: #eee !important; } }")
    settle(w.page, "light")
    assert w.page.evaluate(CONTRAST_TODO_JS, "control")["checked"] > 0  # the desktop's looks
    w.page.set_viewport_size(PHONE)
    settle(w.page, "light")
    assert w.page.evaluate(CONTRAST_TODO_JS, "control")["checked"] > 0
    assert contrast_found(w) == {"color-contrast"}
