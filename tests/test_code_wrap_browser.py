"""Every chapter page fits a 390 px phone and a 1280 px desktop: code, outputs, figures, tables (Chromium).

book/_ext/writing/code_lines.py puts each line of a code input and of a cell's text output
in a ``span.line``; the last section of book.css wraps those lines at any screen width,
hangs the continuation rows under the line's indentation and draws a ⤷ mark on each
continuation row (a mask, no character). Figures (book/_ext/static/zoom.js) too small to
read where they are get a button that opens them full size; tables
(book/_ext/writing/tables.py) become cards on a phone. One load of each chapter page (the
pages of _toc.yml's chapter parts), with every view and fold open, is measured at 390 px
and then at 1280 px, and checks that

* no code block (a code input, an output, the manuscript's printed output) is wider than
  its box or cut at the window's edge, and each shown one's text is the text as printed (its
  innerText has no line break the text does not have); the page does not scroll sideways;
* every figure's smallest text is drawn at a font size of at least ``MIN_TEXT_PX`` CSS px,
  or the figure has a button under it that Enter or Space opens into a dialog where its
  smallest text is that size, that Escape closes, focus then back on the button;
* no table cell is narrower than two characters (unless its whole text is), and no table
  runs past the box that holds it;
* at 390 px, a wrapped line shows the mark: the gap its continuation row hangs in is empty
  but for the mark (a screenshot of it with and without the mark), for a code input and
  for an output, and a line that did not wrap has no mark;
* on the section page, the copy button of the author's class listing, which wraps,
  copies the class exactly as the manuscript has it.

``test_the_measurements_see_what_they_look_for`` runs the same measurements on a small
hand-written page (tests/fixtures/fit-controls.html) with an output that scrolls, a
figure whose labels are 2.5 px, a table cell one letter wide and a code input that runs
past the window, and checks that each is found, and nothing else. The per-page counts go
to test-artifacts/browser/fit.json.
"""

from __future__ import annotations

import io

import pytest

import section_texts
from browsing import ARTIFACTS, fmt, record_metrics
from buildfiles import ATTENTION, ROOT, chapter_pages

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
PAGES = [f"{page}.html" for page in chapter_pages()] or ["<no chapter part in _toc.yml>"]
AUTHORS_CLASS = "MiniMultiHeadAttention"  # literalinclude'd from manuscript/4.5-attention.txt
MIN_TEXT_PX = 9
CONTROLS = ROOT / "tests" / "fixtures" / "fit-controls.html"

# Every view and every fold open (<details>, a folded solution): what a reader can bring
# on screen is measured.
OPEN_ALL_JS = """() => {
    document.documentElement.dataset.voice = 'all';
    document.querySelectorAll('details').forEach((d) => { d.open = true; });
    document.querySelectorAll('button.toggle-button-hidden').forEach((b) => b.click());
}"""
# After a resize: the theme's sidebars slide (CSS transitions) before the column settles.
SETTLE_JS = """async () => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await frame();
    await Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null)));
    await frame();
}"""

# Every code block (div.highlight pre: a code input, a cell's output, the manuscript's
# printed output): whether it is cut, whether its text is what is printed, which lines
# wrapped and whether a line that did not wrap has a mark box with a height.
CODE_JS = """() => {
    const kind = (p) => p.closest('.cell_output, .listing-printed-output') ? 'output' : 'input';
    const blocks = [...document.querySelectorAll('div.highlight pre')].filter((p) => p.getClientRects().length);
    const rows = (line) => line.getBoundingClientRect().height / parseFloat(getComputedStyle(line).lineHeight);
    const lines = blocks.flatMap((p) => [...p.querySelectorAll(':scope > span.line')]);
    const markHeight = (line) => parseFloat(getComputedStyle(line, '::before').height) || 0;
    const describe = (p) => `${kind(p)} ${JSON.stringify(p.textContent.slice(0, 60))}`;
    return {
        inputs: blocks.filter((p) => kind(p) === 'input').length,
        outputs: blocks.filter((p) => kind(p) === 'output').length,
        cut: blocks.filter((p) => p.checkVisibility({visibilityProperty: true})
                           && (p.scrollWidth > p.clientWidth + 1 || p.getBoundingClientRect().right > innerWidth + 1))
            .map((p) => `${describe(p)}: ${p.scrollWidth} px wide in ${p.clientWidth}`),
        // innerText is empty where a collapsed solution hides the block (visibility: hidden)
        text_changed: blocks.filter((p) => p.checkVisibility({visibilityProperty: true}) && p.innerText !== p.textContent)
            .map(describe),
        wrapped: Object.fromEntries(['input', 'output'].map((k) =>
            [k, lines.filter((l) => kind(l) === k && rows(l) > 1.5).length])),
        marked_unwrapped: lines.filter((l) => l.checkVisibility() && rows(l) < 1.5 && markHeight(l) > 0.5)
            .map((l) => l.textContent.slice(0, 60)),
    };
}"""

# The font size, in CSS px as drawn now, of the smallest text of an SVG: of each <text>, and
# of each glyph that matplotlib drew as a path (a <use> without x, defined 100 units to
# the em; a marker's <use> has x and y).
SMALLEST_TEXT = """const smallestText = (svg) => {
    const scale = (m) => Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
    const glyphs = [...svg.querySelectorAll('use:not([x])')].map((u) => 100 * scale(u.getScreenCTM()));
    const texts = [...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale(t.getScreenCTM()));
    return Math.min(...glyphs, ...texts);
};"""

# Figures, tables and the page's width. A figure whose smallest text is under the minimum
# is numbered (data-fit-figure) so that its button can be found; a table cell is measured
# unless a visually hidden ancestor (a 1 px box that clips) hides it, and it is narrow
# when its text box is under two characters (2em) and under its text's one-line width.
FIT_JS = f"""(minText) => {{
    {SMALLEST_TEXT}
    const shown = (el) => el.getClientRects().length > 0 && el.checkVisibility({{visibilityProperty: true}});
    const snippet = (el) => el.textContent.trim().replace(/\\s+/g, ' ').slice(0, 40);
    const clippedAway = (el) => {{
        for (let a = el; a; a = a.parentElement) {{
            const r = a.getBoundingClientRect();
            if (getComputedStyle(a).overflow !== 'visible' && (r.width <= 1 || r.height <= 1)) return true;
        }}
        return false;
    }};
    document.querySelectorAll('[data-fit-figure]').forEach((b) => {{ delete b.dataset.fitFigure; }});
    const figures = [...document.querySelectorAll('.attnbook-fig')].filter(shown).map((box, i) => {{
        const smallest = smallestText(box.querySelector('svg'));
        const next = box.nextElementSibling;
        const button = next && next.matches('button') && shown(next) ? next : null;
        if (smallest < minText && button) button.dataset.fitFigure = i;
        const caption = box.closest('figure') && box.closest('figure').querySelector('figcaption');
        const name = caption ? snippet(caption).replace(/#$/, '') : (box.querySelector('svg').getAttribute('aria-label') || '').slice(0, 40);
        return {{figure: i, name, smallest: Math.round(smallest * 10) / 10, button: !!button}};
    }});
    const cells = [...document.querySelectorAll('table th, table td')].filter((c) => shown(c) && !clippedAway(c));
    const oneLine = (cell) => {{
        const probe = document.createElement('span');
        probe.style.cssText = 'position: absolute; visibility: hidden; white-space: nowrap; width: max-content';
        probe.append(...[...cell.childNodes].map((n) => n.cloneNode(true)));
        cell.append(probe);
        const width = probe.getBoundingClientRect().width;
        probe.remove();
        return width;
    }};
    const narrow = cells.flatMap((cell) => {{
        const s = getComputedStyle(cell), em = parseFloat(s.fontSize);
        const width = cell.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
        if (width >= 2 * em - 0.5 || width >= oneLine(cell) - 0.5) return [];
        return [`${{JSON.stringify(snippet(cell))}}: ${{width.toFixed(1)}} px wide, font ${{em}} px`];
    }});
    const holder = (table) => {{
        for (let a = table.parentElement; a; a = a.parentElement) if (getComputedStyle(a).overflowX !== 'visible') return a;
        return document.documentElement;
    }};
    const tablesPast = [...document.querySelectorAll('table')].filter(shown).filter((t) => {{
        const r = t.getBoundingClientRect(), box = holder(t).getBoundingClientRect();
        return r.right > Math.min(box.right, innerWidth) + 1 || r.left < Math.max(box.left, 0) - 1;
    }}).map((t) => JSON.stringify(snippet(t)));
    return {{figures, cells: cells.length, narrow, tables_past: tablesPast,
             page_width: document.documentElement.scrollWidth, window_width: innerWidth}};
}}"""

# The open dialog: its figure's smallest text, and whether focus is inside it.
ZOOMED_JS = f"""() => {{
    {SMALLEST_TEXT}
    const dialog = document.querySelector('dialog[open]');
    if (!dialog) return null;
    const svg = dialog.querySelector('svg');
    return {{smallest: svg ? smallestText(svg) : null, focused: dialog.contains(document.activeElement)}};
}}"""

# The first shown wrapped line of a code input or an output, scrolled to: where its mark
# must be (the box of its ::before on the second row, one line high).
FIRST_WRAPPED_JS = """(outputs) => {
    const line = [...document.querySelectorAll('div.highlight pre > span.line')]
        .find((l) => !!l.closest('.cell_output, .listing-printed-output') === outputs
                     && l.checkVisibility({visibilityProperty: true})
                     && l.getBoundingClientRect().height > 1.5 * parseFloat(getComputedStyle(l).lineHeight));
    if (!line) return null;
    line.scrollIntoView({block: 'center'});
    const r = line.getBoundingClientRect(), mark = getComputedStyle(line, '::before');
    const text = line.textContent.slice(0, 60);
    if (mark.content === 'none' || isNaN(parseFloat(mark.left)) || isNaN(parseFloat(mark.top))) return {text, x: null};
    return {text, x: r.left + parseFloat(mark.left), y: r.top + parseFloat(mark.top),
            width: parseFloat(mark.width), height: parseFloat(getComputedStyle(line).lineHeight)};
}"""

HIDE_MARKS = "div.highlight pre > span.line::before { visibility: hidden !important; }"


def inked(png: bytes) -> float:
    """The share of a clip's pixels that differ clearly from its commonest colour."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=int)
    values, counts = np.unique(pixels, return_counts=True)
    return float((np.abs(pixels - values[counts.argmax()]) > 40).mean())


def settle(page):
    page.evaluate(SETTLE_JS)


def code_failures(code: dict) -> list[str]:
    failures = []
    if code["cut"]:
        failures.append(f"code blocks wider than their box or the window (they scroll or are cut):{fmt(code['cut'])}")
    if code["text_changed"]:
        failures.append(f"code blocks whose innerText is not their text:{fmt(code['text_changed'])}")
    if code["marked_unwrapped"]:
        failures.append(f"a continuation mark on lines that did not wrap:{fmt(code['marked_unwrapped'][:10])}")
    return failures


def zoom_failures(page, figure: dict, key: str) -> list[str]:
    """Open a figure too small to read with its button by ``key``; measure it; close it by Escape."""
    name = f"figure {figure['figure']} ({figure['name']!r}, smallest text {figure['smallest']} px)"
    if not figure["button"]:
        return [f"{name}: no button opens it larger"]
    button = page.locator(f'[data-fit-figure="{figure["figure"]}"]')
    button.focus()
    page.keyboard.press(key)
    zoomed = page.evaluate(ZOOMED_JS)
    if zoomed is None:
        return [f"{name}: {key} on its button opens no dialog"]
    page.keyboard.press("Escape")
    failures = []
    if zoomed["smallest"] is None or zoomed["smallest"] < MIN_TEXT_PX:
        failures.append(f"{name}: opened, its smallest text is {zoomed['smallest'] and round(zoomed['smallest'], 1)} px")
    if not zoomed["focused"]:
        failures.append(f"{name}: opened, focus is not in the dialog")
    if page.evaluate("() => !!document.querySelector('dialog[open]')"):
        failures.append(f"{name}: Escape does not close the dialog")
    elif not button.evaluate("(b) => document.activeElement === b"):
        failures.append(f"{name}: closed, focus is not back on its button")
    return failures


def fit_failures(page, fit: dict) -> list[str]:
    failures = []
    if fit["page_width"] > fit["window_width"] + 1:
        failures.append(f"the page scrolls sideways: {fit['page_width']} px wide in {fit['window_width']}")
    small = [f for f in fit["figures"] if f["smallest"] < MIN_TEXT_PX]
    for i, figure in enumerate(small):
        failures += zoom_failures(page, figure, "Enter" if i % 2 == 0 else "Space")
    if fit["narrow"]:
        failures.append(f"table cells narrower than two characters:{fmt(fit['narrow'])}")
    if fit["tables_past"]:
        failures.append(f"tables past the box that holds them:{fmt(fit['tables_past'])}")
    return failures


def mark_failures(w, outputs: bool) -> list[str]:
    """A wrapped line's mark, seen: the gap on its second row, with and without marks."""
    what = "output" if outputs else "code input"
    line = w.page.evaluate(FIRST_WRAPPED_JS, outputs)
    if line is None:
        return [f"no wrapped {what} line on screen to look at"]
    if line["x"] is None:
        return [f"no ::before box for the continuation mark of the {what} line {line['text']!r}"]
    clip = {k: line[k] for k in ("x", "y", "width", "height")}
    ink = inked(w.page.screenshot(clip=clip))
    hidden = w.page.add_style_tag(content=HIDE_MARKS)
    bare = inked(w.page.screenshot(clip=clip))
    hidden.evaluate("(style) => style.remove()")
    if ink < 0.03 or bare > 0.01:
        return [f"the gap on the second row of the {what} line {line['text']!r} ({clip}) is {bare:.1%} inked "
                f"without the mark and {ink:.1%} with it: it should be empty, and show the mark"]
    return []


def copy_failures(w) -> list[str]:
    pre = w.page.locator("div.highlight pre", has_text=f"class {AUTHORS_CLASS}(").first
    wraps = pre.evaluate("(p) => [...p.querySelectorAll(':scope > span.line')].some("
                         "(l) => l.getBoundingClientRect().height > 1.5 * parseFloat(getComputedStyle(l).lineHeight))")
    pre.scroll_into_view_if_needed()
    pre.hover()
    w.page.locator(f'button.copybtn[data-clipboard-target="#{pre.get_attribute("id")}"]').click()
    copied = w.page.evaluate("() => navigator.clipboard.readText()")
    failures = []
    if not wraps:
        failures.append(f"the {AUTHORS_CLASS} listing does not wrap: the copy check proves nothing")
    if copied != section_texts.layer_class():
        failures.append(f"the copy button copied {copied[:200]!r}…, not {AUTHORS_CLASS} as the manuscript has it")
    return failures


def record(page: str, width: int, code: dict, fit: dict):
    """What was measured, for the record: test-artifacts/browser/fit.json."""
    measured = {k: code[k] for k in ("inputs", "outputs", "wrapped", "cut")}
    measured |= {k: fit[k] for k in ("figures", "cells", "narrow", "tables_past")}
    record_metrics(f"{page} at {width} px", measured, into=ARTIFACTS / "fit.json")


@pytest.mark.parametrize("page", PAGES)
def test_every_chapter_page_fits_a_phone_and_a_desktop(page, server, watch):
    if page.startswith("<"):
        pytest.fail(page)
    w = watch(viewport=PHONE, permissions=["clipboard-read", "clipboard-write"])
    w.open(server.url + page)
    w.page.evaluate(OPEN_ALL_JS)
    settle(w.page)
    failures = []
    for viewport in (PHONE, DESKTOP):
        if viewport is DESKTOP:
            w.page.set_viewport_size(DESKTOP)
            settle(w.page)
        code = w.page.evaluate(CODE_JS)
        fit = w.page.evaluate(FIT_JS, MIN_TEXT_PX)
        record(page, viewport["width"], code, fit)
        where = f"at {viewport['width']} px: "
        if code["inputs"] == 0:
            failures.append(where + "no code input: nothing to check")
        failures += [where + f for f in code_failures(code) + fit_failures(w.page, fit)]
        if viewport is PHONE:
            # A plain section's short lines may not wrap at all; 4.5's do, so there the
            # marks are always looked at.
            if page == f"{ATTENTION}.html" and not all(code["wrapped"].values()):
                failures.append(where + f"wrapped lines {code['wrapped']}: nothing to check")
            for kind, outputs in (("input", False), ("output", True)):
                if code["wrapped"][kind]:
                    failures += [where + f for f in mark_failures(w, outputs=outputs)]
            if page == f"{ATTENTION}.html":
                failures += [where + f for f in copy_failures(w)]
    if w.problems():
        failures.append(f"console/page errors:{fmt(w.problems())}")
    assert not failures, f"{page}:\n" + "\n".join(failures)


def test_the_measurements_see_what_they_look_for(watch):
    """The controls: on a hand-written page, each measurement finds what it must, and only that."""
    w = watch(viewport=PHONE)
    w.page.set_content(CONTROLS.read_text(encoding="utf-8"))
    code = w.page.evaluate(CODE_JS)
    fit = w.page.evaluate(FIT_JS, MIN_TEXT_PX)
    assert len(code["cut"]) == 2 and code["cut"][0].startswith('output "CUT-OUTPUT') \
        and code["cut"][1].startswith('input "CUT-INPUT'), code["cut"]
    assert code["text_changed"] == [] and code["marked_unwrapped"] == [], code
    small = {f["name"]: f for f in fit["figures"]}
    assert small["tiny-glyphs"]["smallest"] == pytest.approx(2.5, abs=0.1), fit["figures"]
    assert small["tiny-text"]["smallest"] == pytest.approx(2.5, abs=0.1), fit["figures"]
    assert small["full-size"]["smallest"] == pytest.approx(10, abs=0.1), fit["figures"]
    failures = fit_failures(w.page, fit)
    figures = sorted((f.split(" (")[0], f.split(": ", 1)[1]) for f in failures if f.startswith("figure"))
    assert figures == [("figure 0", "no button opens it larger"), ("figure 1", "no button opens it larger"),
                       ("figure 3", "opened, its smallest text is 2.5 px")], failures
    assert [n.split(":")[0] for n in fit["narrow"]] == ['"RNN"'], fit["narrow"]
    assert fit["tables_past"] == ['"WIDE-TABLE"'], fit["tables_past"]
    assert any("scrolls sideways" in f for f in failures), failures
