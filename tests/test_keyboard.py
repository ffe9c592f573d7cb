"""What axe cannot see, scripted: the keyboard, focus, the switch's state, figures' names, lang.

* **Every control by keyboard.** On the pages with the most controls, Tab is pressed until
  focus comes round again; every visible control of the page (links, buttons, form
  fields, <summary>, tab stops) must have been reached, and no focused element may sit
  hidden under the sticky header or any other fixed layer (WCAG 2.4.11), on a desktop
  and on a phone.
* **Every heat-map value by keyboard.** On each heat map the arrow keys, run as a snake
  through every row, visit every cell of every panel.
* **Figures.** Every <svg> in a page is either hidden from assistive technology or an
  image (``role="img"``) with a name.
* **lang="en".** A Latin-letter word in the prose of these Chinese pages (two letters or
  more, outside code and formulas) sits in an element with ``lang="en"``, so that a
  screen reader reads it with an English voice instead of spelling it out.
"""

from __future__ import annotations

import re

import pytest

from buildfiles import ATTENTION, html_pages, soup

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
MECHANISM = "book/ch04/mechanism"
EXERCISES = "book/ch04/exercises"
MAX_TABS = 1500

# Every element a reader should be able to Tab to: what the browser treats as focusable
# and sequentially reachable, shown (not hidden, not in a closed <details>, not inert).
CONTROLS_JS = """() => {
    const sel = 'a[href], button, input, select, textarea, summary, [tabindex], [contenteditable="true"]';
    const describe = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
        + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).slice(0, 2).join('.') : '')
        + ' ' + JSON.stringify((el.getAttribute('aria-label') || el.textContent || '').trim().slice(0, 40));
    window.__controls = [...document.querySelectorAll(sel)].filter((el) =>
        el.tabIndex >= 0 && !el.disabled && !el.closest('[inert]')
        && el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})
        && el.getClientRects().length > 0
        && getComputedStyle(el).visibility === 'visible');
    window.__seen = new Set();
    window.__hidden = [];
    window.__describe = describe;
    return window.__controls.length;
}"""

# After one Tab, once the page has scrolled and its transitions that can move or cover
# something (the skip link sliding in) have ended: note the focused element, and whether
# it is entirely hidden (WCAG 2.4.11): out of the viewport, or with none of five points of
# its visible part (centre and corners) showing it rather than something laid over it (the
# sticky header, a fixed bar). A fade of opacity or colour alone (a code block's copy
# button, 0.3 s, whatever the reduced motion) neither moves a box nor changes what the
# points hit, so the walk does not wait for it.
FOCUS_JS = """async () => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await frame();
    const fadeOnly = (a) => a.effect && a.effect.getKeyframes().every((k) => Object.keys(k).every((p) =>
        ['offset', 'easing', 'composite', 'computedOffset', 'opacity'].includes(p) || /[cC]olor$/.test(p)));
    const moving = document.getAnimations().filter((a) => !fadeOnly(a));
    await Promise.race([Promise.all(moving.map((a) => a.finished.catch(() => null))),
                        new Promise((r) => setTimeout(r, 1000))]);
    const el = document.activeElement;
    if (!el || el === document.body) return {body: true, count: window.__seen.size};
    const again = window.__seen.has(el);
    window.__seen.add(el);
    // A <summary> of the sidebar is 0 px high: its focus ring is drawn on its chevron.
    const boxes = [el, ...el.querySelectorAll('*')].map((e) => e.getBoundingClientRect());
    const r = boxes.find((b) => b.width * b.height > 0) || boxes[0];
    const left = Math.max(r.left, 0), right = Math.min(r.right, innerWidth);
    const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, innerHeight);
    if (right - left < 1 || bottom - top < 1) {
        window.__hidden.push(window.__describe(el) + ` out of view (top ${Math.round(r.top)}px)`);
        return {again, count: window.__seen.size};
    }
    const inset = (a, b) => [a + Math.min(2, (b - a) / 2), b - Math.min(2, (b - a) / 2)];
    const [x0, x1] = inset(left, right), [y0, y1] = inset(top, bottom);
    const points = [[(x0 + x1) / 2, (y0 + y1) / 2], [x0, y0], [x1, y0], [x0, y1], [x1, y1]];
    const hits = points.map(([x, y]) => document.elementFromPoint(x, y));
    if (!hits.some((h) => h && (h === el || el.contains(h) || h.contains(el)))) {
        window.__hidden.push(window.__describe(el) + ' under ' + hits.filter(Boolean).map(window.__describe)[0]);
    }
    return {again, count: window.__seen.size};
}"""

# A group of radio buttons is one tab stop (arrow keys move inside it): reached when one
# of its buttons was.
MISSED_JS = """() => {
    const group = (el) => el.type === 'radio' && el.name ? `${el.form ? el.form.id : ''}/${el.name}` : null;
    const groups = new Set([...window.__seen].map(group).filter(Boolean));
    return window.__controls.filter((el) => !window.__seen.has(el) && !(group(el) && groups.has(group(el))))
        .map((el) => window.__describe(el) + (el.type ? ` (${el.type} ${el.name || ''})` : ''));
}"""


def tab_through(page, key="Tab") -> dict:
    """Press ``key`` (Tab or Shift+Tab) until focus comes back to an element already seen;
    what was missed and what was hidden."""
    total = page.evaluate(CONTROLS_JS)
    presses = 0
    for presses in range(1, MAX_TABS + 1):
        page.keyboard.press(key)
        got = page.evaluate(FOCUS_JS)
        if got.get("again"):
            break
    return {"controls": total, "presses": presses, "missed": page.evaluate(MISSED_JS),
            "hidden": page.evaluate("() => window.__hidden")}


@pytest.mark.browser
# Forward, a focused element comes in at the bottom of the window; backward (Shift+Tab) it
# comes in at the top, where the sticky header is.
@pytest.mark.parametrize("page,viewport,key", [(ATTENTION, DESKTOP, "Tab"), (ATTENTION, PHONE, "Shift+Tab"),
                                               (MECHANISM, DESKTOP, "Shift+Tab"), (EXERCISES, PHONE, "Tab")],
                         ids=["section-desktop", "section-phone-back", "mechanism-desktop-back", "exercises-phone"])
def test_every_control_is_reached_by_tab_and_never_hidden(page, viewport, key, server, watch):
    w = watch(viewport=viewport, reduced_motion="reduce")
    w.open(server.url + f"{page}.html")
    walk = tab_through(w.page, key)
    assert walk["controls"] >= 20, f"only {walk['controls']} controls found on {page}: the walk proves nothing"
    assert walk["presses"] < MAX_TABS, f"focus never came round after {MAX_TABS} presses of Tab"
    failures = []
    if walk["missed"]:
        failures.append(f"{len(walk['missed'])} of {walk['controls']} controls never reached by Tab:\n  "
                        + "\n  ".join(walk["missed"][:30]))
    if walk["hidden"]:
        failures.append(f"{len(walk['hidden'])} focused elements hidden:\n  " + "\n  ".join(walk["hidden"][:30]))
    assert not failures, f"{page} at {viewport['width']}px:\n" + "\n".join(failures)
    assert not w.problems(), w.problems()


# Every cell of every panel, by arrow keys only: right along row 0 through every panel,
# down, left back through row 1, and so on; each step's cell is recorded as it changes.
WATCH_CELLS_JS = """(box) => {
    const cells = new Set([box.dataset.cell]);
    new MutationObserver(() => box.dataset.cell && cells.add(box.dataset.cell))
        .observe(box, {attributes: true, attributeFilter: ['data-cell']});
    box.__cells = cells;
    const panels = JSON.parse(box.querySelector('script.attnbook-heatmap-data').textContent);
    return panels.map((p) => [p.values.length, p.values[0].length]);
}"""


@pytest.mark.browser
@pytest.mark.parametrize("page", [ATTENTION, MECHANISM], ids=["section", "mechanism"])
def test_every_heatmap_value_is_reached_by_arrow_keys(page, server, watch):
    w = watch(viewport=DESKTOP)
    w.open(server.url + f"{page}.html")
    boxes = w.page.locator(".attnbook-heatmap")
    assert boxes.count() >= 1, f"{page} has no heat map"
    for i in range(boxes.count()):
        box = boxes.nth(i)
        box.focus()
        sizes = box.evaluate(WATCH_CELLS_JS)
        for p, (rows, cols) in enumerate(sizes):  # panels may differ in height: one snake each
            for key, times in [("ArrowUp", max(r for r, _ in sizes)), ("ArrowLeft", sum(c for _, c in sizes)),
                               ("ArrowRight", sum(c for _, c in sizes[:p]))]:
                for _ in range(times):
                    w.page.keyboard.press(key)
            for row in range(rows):
                if row:
                    w.page.keyboard.press("ArrowDown")
                for _ in range(cols - 1):
                    w.page.keyboard.press("ArrowRight" if row % 2 == 0 else "ArrowLeft")
        seen = set(box.evaluate("(b) => [...b.__cells]"))
        every = {f"{p},{r},{c}" for p, (rows, cols) in enumerate(sizes) for r in range(rows) for c in range(cols)}
        missed = sorted(every - seen)
        name = box.get_attribute("aria-label")
        assert not missed, f"{page}, heat map {name!r}: {len(missed)} of {len(every)} cells never reached: {missed[:20]}"
        assert "权重" in box.locator("[aria-live]").text_content(), "the last cell was not announced"
    assert not w.problems(), w.problems()


# --- read from the built pages ---------------------------------------------------------

PAGES = [p for p in html_pages(include_404=False) if p != "index.html"] or ["<no build>"]


def _hidden(el) -> bool:
    return any(a.get("aria-hidden") == "true" or a.name == "defs" for a in [el, *el.parents] if a.name)


def _svg_name(svg, page_soup) -> str:
    if svg.get("aria-label", "").strip():
        return svg["aria-label"].strip()
    ids = svg.get("aria-labelledby", "").split()
    named = " ".join(page_soup.find(id=i).get_text(" ", strip=True) for i in ids if page_soup.find(id=i))
    title = svg.find("title", recursive=False)
    return named or (title.get_text(strip=True) if title else "")


@pytest.mark.book
@pytest.mark.parametrize("page", PAGES)
def test_every_svg_is_an_image_with_a_name_or_hidden(page):
    if page.startswith("<"):
        pytest.fail("no build in _build/html: run `make book` first")
    s = soup(page)
    bad = []
    for svg in s.find_all("svg"):
        if _hidden(svg) or (svg.get("width") == "0" and svg.get("height") == "0"):
            continue
        if svg.get("role") != "img" or not _svg_name(svg, s):
            bad.append(str(svg)[:160])
    assert not bad, f"{page}: {len(bad)} <svg> neither hidden nor role=\"img\" with a name:\n  " + "\n  ".join(bad)


@pytest.mark.book
def test_the_figure_check_sees_figures():
    """The check above must not pass because a page has no figure at all."""
    figures = [svg for svg in soup(MECHANISM).find_all("svg") if svg.get("role") == "img"]
    assert len(figures) >= 3, f"{MECHANISM} has {len(figures)} figures with role=img"


LATIN_WORD = re.compile(r"[A-Za-z]{2}")
NOT_PROSE = {"code", "pre", "kbd", "samp", "math", "script", "style", "svg", "var", "tt"}
# Code set in prose: API signatures (dt.sig) and literal words (span.pre).
CODE_CLASSES = {"highlight", "sig", "pre"}
# The indexes and the search page are lists of identifiers written by Sphinx's templates,
# not prose: what the translator writes is checked, on every page of the book.
PROSE_PAGES = [p for p in PAGES if p.startswith("book/")] or ["<no build>"]


def english_outside_lang(page_soup) -> list[str]:
    """Latin words in the article's text not inside an element whose lang is English."""
    article = page_soup.select_one("article.bd-article") or page_soup.body
    out = []
    for text in article.find_all(string=LATIN_WORD):
        parents = [p for p in text.parents if p.name]
        if any(p.name in NOT_PROSE or CODE_CLASSES & set(p.get("class") or []) for p in parents):
            continue
        lang = next((p.get("lang") for p in parents if p.get("lang")), "")
        if not lang.lower().startswith("en"):
            out.append(f"{text.strip()[:60]!r} in <{text.parent.name}>")
    return out


@pytest.mark.book
@pytest.mark.parametrize("page", PROSE_PAGES)
def test_english_terms_in_chinese_text_carry_lang_en(page):
    if page.startswith("<"):
        pytest.fail("no build in _build/html: run `make book` first")
    s = soup(page)
    assert (s.html.get("lang") or "").startswith("zh"), f"{page}: <html lang={s.html.get('lang')!r}>"
    missing = english_outside_lang(s)
    assert not missing, f"{page}: {len(missing)} English words without lang=\"en\":\n  " + "\n  ".join(missing[:25])
