"""On a phone every line of code can be read without scrolling sideways (headless Chromium).

book/_ext/writing/code_lines.py puts each source line of a code input in a ``span.line``; the
last section of book.css wraps those lines at a phone's width, hangs the continuation
rows under the line's indentation and draws a ⤷ mark on each continuation row (a mask,
no character). One load of each chapter page at 390 px checks that

* no code input (a cell's code, a literalinclude: ``div.highlight pre`` outside
  ``.cell_output``) is wider than its box, and each shown one's text is the code as
  written (its innerText has no line break the code does not have);
* a wrapped line shows the mark: the gap its continuation row hangs in is empty but for
  the mark (a screenshot of it with and without the mark), and a line that did not wrap
  has no mark;
* on the section page, the copy button of the author's class listing, which wraps,
  copies the class exactly as the manuscript has it.

Outputs (``.cell_output pre``) may still scroll; tests/test_browser.py checks that
nothing else makes the page scroll sideways.
"""

from __future__ import annotations

import io

import pytest

import section_texts
from browsing import fmt
from buildfiles import ATTENTION

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
PAGES = [f"book/ch04/{name}.html" for name in ("attention", "mechanism", "cost", "exercises", "exercises-starter")]
AUTHORS_CLASS = "MiniMultiHeadAttention"  # literalinclude'd from manuscript/4.5-attention.txt

# Every code input: whether it scrolls, whether its text is the code, which lines wrapped
# and whether a line that did not wrap has a mark box with a height.
CODE_JS = """() => {
    const inputs = [...document.querySelectorAll('div.highlight pre')].filter((p) => !p.closest('.cell_output'));
    const rows = (line) => line.getBoundingClientRect().height / parseFloat(getComputedStyle(line).lineHeight);
    const lines = inputs.flatMap((p) => [...p.querySelectorAll(':scope > span.line')]);
    const markHeight = (line) => parseFloat(getComputedStyle(line, '::before').height) || 0;
    return {
        inputs: inputs.length,
        scrolling: inputs.filter((p) => p.scrollWidth > p.clientWidth + 1)
            .map((p) => `${p.scrollWidth} > ${p.clientWidth}: ${p.textContent.slice(0, 60)}`),
        // innerText is empty where a collapsed solution hides the block (visibility: hidden)
        text_changed: inputs.filter((p) => p.checkVisibility({visibilityProperty: true}) && p.innerText !== p.textContent)
            .map((p) => p.textContent.slice(0, 60)),
        wrapped: lines.filter((l) => rows(l) > 1.5).length,
        marked_unwrapped: lines.filter((l) => l.checkVisibility() && rows(l) < 1.5 && markHeight(l) > 0.5)
            .map((l) => l.textContent.slice(0, 60)),
    };
}"""

# The first wrapped line that is shown, scrolled to: where its mark must be (the box of
# its ::before on the second row, one line high).
FIRST_WRAPPED_JS = """() => {
    const line = [...document.querySelectorAll('div.highlight pre > span.line')]
        .find((l) => !l.closest('.cell_output') && l.checkVisibility()
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


@pytest.mark.parametrize("page", PAGES)
def test_code_wraps_on_a_phone_with_a_mark(page, server, watch):
    w = watch(viewport=PHONE, permissions=["clipboard-read", "clipboard-write"])
    w.open(server.url + page)
    code = w.page.evaluate(CODE_JS)
    failures = []
    if code["inputs"] == 0 or code["wrapped"] == 0:
        failures.append(f"{code['inputs']} code inputs, {code['wrapped']} wrapped lines: nothing to check")
    if code["scrolling"]:
        failures.append(f"code inputs wider than their box (they scroll sideways):{fmt(code['scrolling'])}")
    if code["text_changed"]:
        failures.append(f"code inputs whose innerText is not their code:{fmt(code['text_changed'])}")
    if code["marked_unwrapped"]:
        failures.append(f"a continuation mark on lines that did not wrap:{fmt(code['marked_unwrapped'][:10])}")

    line = w.page.evaluate(FIRST_WRAPPED_JS)
    if line is None:
        failures.append("no wrapped line on screen to look at")
    elif line["x"] is None:
        failures.append(f"no ::before box for the continuation mark of {line['text']!r}")
    else:
        clip = {k: line[k] for k in ("x", "y", "width", "height")}
        ink = inked(w.page.screenshot(clip=clip))
        w.page.add_style_tag(content=HIDE_MARKS)
        bare = inked(w.page.screenshot(clip=clip))
        if ink < 0.03 or bare > 0.01:
            failures.append(f"the gap on the second row of {line['text']!r} ({clip}) is {bare:.1%} inked "
                            f"without the mark and {ink:.1%} with it: it should be empty, and show the mark")

    if page == f"{ATTENTION}.html":
        pre = w.page.locator("div.highlight pre", has_text=f"class {AUTHORS_CLASS}(").first
        wraps = pre.evaluate("(p) => [...p.querySelectorAll(':scope > span.line')].some("
                             "(l) => l.getBoundingClientRect().height > 1.5 * parseFloat(getComputedStyle(l).lineHeight))")
        pre.scroll_into_view_if_needed()
        pre.hover()
        w.page.locator(f'button.copybtn[data-clipboard-target="#{pre.get_attribute("id")}"]').click()
        copied = w.page.evaluate("() => navigator.clipboard.readText()")
        if not wraps:
            failures.append(f"the {AUTHORS_CLASS} listing does not wrap: the copy check proves nothing")
        if copied != section_texts.layer_class():
            failures.append(f"the copy button copied {copied[:200]!r}…, not {AUTHORS_CLASS} as the manuscript has it")
    if w.problems():
        failures.append(f"console/page errors:{fmt(w.problems())}")
    assert not failures, f"{page} at {PHONE['width']}x{PHONE['height']}:\n" + "\n".join(failures)
