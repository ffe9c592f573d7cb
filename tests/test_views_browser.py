"""The section page's three views, and the layout budgets of its default view (Chromium).

The views (book/_ext/reading/editorial.py): 原文 (the author alone), 原文 + 讲解 (the author and
the editor's teaching; a new reader's default) and 全部 (with the editor's checking,
folded into ``<details>`` elsewhere). Each test loads the page once and makes several
checks on that load.

The budgets hold the default view at 1280 px to a lesson first: the article at most
``HEIGHT_BUDGET`` times its height with every ``.editorial`` element hidden, at most
``BLOCKS_BUDGET`` editor blocks between two consecutive author prose blocks, and no
visible code line that only serves the site (``BOOKKEEPING``).
"""

from __future__ import annotations

import re

import pytest

from buildfiles import ATTENTION

pytestmark = pytest.mark.browser

ATTENTION_HTML = f"{ATTENTION}.html"
DESKTOP = {"width": 1280, "height": 800}
HEIGHT_BUDGET = 2.0
BLOCKS_BUDGET = 2
# A visible code line that exists for the site's machinery: recording values, version
# prints, the explorable figures' data, seeds and styles, or an assert that holds the
# package against itself. The shape tests' asserts are the lesson and match none.
BOOKKEEPING = re.compile(r"\bglue\b|__version__|\bexplore_\w+\(|\bset_seed\(|\bplots\.setup\("
                         r"|^\s*assert\b.*\b(max_diff|diff|_pkg)\b")

VIEW_JS = "() => document.documentElement.dataset.voice"
CHOOSE_JS = "(view) => document.querySelector(`.voice-switch input[value=${view}]`).click()"
# The editor's words on an author's block (a printed output's label, a figure slot's frame)
# are part of that block and show in every view: they are not editor blocks.
ANNOTATIONS = ".printed-output-label, .figure-slot-waiting"
LAYERS_JS = """() => {
    const shown = (e) => e.getClientRects().length > 0;
    const notes = [...document.querySelectorAll('ANNOTATIONS_PLACEHOLDER')];
    const outer = [...document.querySelectorAll('.editorial')].filter((e) =>
        !e.parentElement.closest('.editorial') && !notes.includes(e));
    const checks = outer.filter((e) => e.classList.contains('editorial-check'));
    return {blocks: outer.length, shown: outer.filter(shown).length,
            checks: checks.length, checksShown: checks.filter(shown).length,
            checksOpen: checks.filter((e) => e.tagName !== 'DETAILS' || e.open).length,
            notes: notes.length, notesShown: notes.filter(shown).length};
}""".replace("ANNOTATIONS_PLACEHOLDER", ANNOTATIONS)
# The article's height now, and with every .editorial element hidden.
HEIGHTS_JS = """() => {
    const article = document.querySelector('article.bd-article');
    const now = article.getBoundingClientRect().height;
    const style = document.createElement('style');
    style.textContent = '.editorial { display: none !important; }';
    document.head.append(style);
    const author = article.getBoundingClientRect().height;
    style.remove();
    return {now, author};
}"""
# For each pair of consecutive author prose blocks, the visible editor blocks between them.
GAPS_JS = """() => {
    const article = document.querySelector('article.bd-article');
    const shown = (e) => e.getClientRects().length > 0;
    const prose = [...article.querySelectorAll('p, ul, ol, div.admonition')].filter((e) =>
        shown(e) && !e.closest('.editorial, div.cell, figure, .voice-switch, table, nav, footer')
        && !e.parentElement.closest('p, ul, ol, div.admonition'));
    const blocks = [...article.querySelectorAll('.editorial')].filter((e) =>
        shown(e) && !e.parentElement.closest('.editorial') && !e.matches('ANNOTATIONS_PLACEHOLDER'));
    const before = (a, b) => a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING;
    const gaps = [];
    for (let i = 0; i + 1 < prose.length; i++) {
        const inside = blocks.filter((b) => before(prose[i], b) && before(b, prose[i + 1]));
        gaps.push({after: prose[i].textContent.trim().slice(0, 24), count: inside.length});
    }
    return {prose: prose.length, gaps};
}""".replace("ANNOTATIONS_PLACEHOLDER", ANNOTATIONS)
VISIBLE_CODE_JS = """() => [...document.querySelectorAll('article div.cell_input pre, article div.highlight pre')]
    .filter((e) => e.getClientRects().length > 0 && !e.closest('.cell_output'))
    .map((e) => e.textContent)"""


def test_the_default_view_is_a_lesson_within_its_budgets(server, watch):
    w = watch(viewport=DESKTOP)
    w.open(server.url + ATTENTION_HTML)
    assert w.page.evaluate(VIEW_JS) == "lesson", "fresh storage must give the 原文 + 讲解 view"
    layers = w.page.evaluate(LAYERS_JS)
    assert layers["checks"] >= 5 and layers["checksShown"] == 0, layers

    heights = w.page.evaluate(HEIGHTS_JS)
    ratio = heights["now"] / heights["author"]
    print(f"default view: {heights['now'] / 800:.1f} screens, author only {heights['author'] / 800:.1f}: {ratio:.3f}x")
    assert ratio <= HEIGHT_BUDGET, f"the default view is {ratio:.2f}x the author's height (budget {HEIGHT_BUDGET}x)"

    found = w.page.evaluate(GAPS_JS)
    counts = [g["count"] for g in found["gaps"]]
    print("editor blocks between consecutive author prose blocks:", counts)
    assert found["prose"] >= 12, found
    over = [g for g in found["gaps"] if g["count"] > BLOCKS_BUDGET]
    assert not over, f"more than {BLOCKS_BUDGET} editor blocks after: {over}"

    lines = [line for block in w.page.evaluate(VISIBLE_CODE_JS) for line in block.splitlines()]
    bookkeeping = [line for line in lines if BOOKKEEPING.search(line)]
    print(f"{len(lines)} visible code lines, {len(bookkeeping)} bookkeeping")
    assert not bookkeeping, f"visible lines that only serve the site: {bookkeeping}"
    assert not w.problems(), w.problems()


def test_three_views_switch_by_keyboard_and_are_remembered(server, watch):
    w = watch(viewport=DESKTOP)
    w.open(server.url + ATTENTION_HTML)
    lesson = w.page.get_by_role("radio", name="原文 + 讲解")
    assert lesson.is_checked(), "the default view's radio is not checked"
    lesson.focus()
    w.page.keyboard.press("ArrowRight")
    assert w.page.get_by_role("radio", name="全部（连同核对）").is_checked()
    assert w.page.evaluate(VIEW_JS) == "all"
    every = w.page.evaluate(LAYERS_JS)
    assert every["shown"] == every["blocks"] and every["checksOpen"] == every["checks"], every

    w.page.reload(wait_until="load")
    assert w.page.evaluate(VIEW_JS) == "all", "the choice was not remembered"
    w.page.get_by_role("radio", name="全部（连同核对）").focus()
    w.page.keyboard.press("ArrowLeft")
    w.page.keyboard.press("ArrowLeft")
    assert w.page.evaluate(VIEW_JS) == "author"
    author = w.page.evaluate(LAYERS_JS)
    assert author["shown"] == 0 and author["notes"] and author["notesShown"] == author["notes"], author
    author_output = w.page.locator("div.cell:not(.editorial) .cell_output", has_text="(2, 10, 32)")
    assert author_output.is_visible(), "the author's listing lost its live output"
    w.page.evaluate(CHOOSE_JS, "lesson")
    assert w.page.evaluate(LAYERS_JS)["checksShown"] == 0
    assert not w.problems(), w.problems()


def test_a_link_to_a_check_opens_it_in_the_default_view(server, watch):
    w = watch(viewport=DESKTOP)
    w.open(server.url + ATTENTION_HTML + "#claim-stackable")
    target = w.page.locator("#claim-stackable")
    assert target.is_visible(), "the ledger's link lands on a hidden cell"
    assert "第 60 步" in target.text_content(), "the linked cell shows no output"
    assert w.page.evaluate(LAYERS_JS)["checksShown"] == 1, "only the linked check should open"
    assert not w.problems(), w.problems()


def test_without_javascript_the_checks_are_folded_not_lost(server, watch):
    w = watch(viewport=DESKTOP, java_script_enabled=False)
    w.open(server.url + ATTENTION_HTML)
    assert w.page.locator(".voice-switch").is_hidden(), "a switch that cannot work is shown"
    folded = w.page.locator("details.editorial-check")
    assert folded.count() >= 5
    first = folded.first
    assert first.locator("summary").is_visible() and first.get_attribute("open") is None
    first.locator("summary").click()
    assert first.locator("div.cell, p").nth(1).is_visible(), "a folded check does not open"
    assert w.page.locator(".editorial:not(.editorial-check)").first.is_visible()
