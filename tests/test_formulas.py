"""The formulas as a reader sees them: MathML laid out by Chromium in the book's math font.

For every page with formulas: the math font (book-math.woff2) is loaded and used; every
square root is drawn as a radical taller and wider than what it covers; every name set
upright (softmax, Attention, elu, model) is one identifier whose glyphs are as wide as
the same letters in upright text, not a row of italic letters. On the section page, the
formula of scaled dot-product attention can be selected and copied as text. Screenshots
of the section page's formula and of the mechanism page go to test-artifacts/browser/.
Every page's formulas are also checked for a rendered box and for raw TeX in
test_first_load.py.
"""

from __future__ import annotations

import pytest

from browsing import ARTIFACTS, IMAGES_JS, fmt
from buildfiles import HTML, ATTENTION, html_pages

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 900}


def math_pages() -> list[str]:
    pages = [p for p in html_pages() if "<math" in (HTML / p).read_text(encoding="utf-8")]
    return pages or ["<no page of the build has a <math> element>"]


GEOMETRY_JS = """() => {
    document.querySelectorAll('details').forEach((d) => { d.open = true; });
    const shown = (el) => el.checkVisibility() && !el.closest('.onlyprint');
    const box = (el) => el.getBoundingClientRect();
    const roots = [...document.querySelectorAll('msqrt')].filter(shown).map((root) => {
        const r = box(root);
        const kids = [...root.children].map(box);
        const inner = {left: Math.min(...kids.map((k) => k.left)), top: Math.min(...kids.map((k) => k.top)),
                       bottom: Math.max(...kids.map((k) => k.bottom)), right: Math.max(...kids.map((k) => k.right))};
        return {tex: root.closest('math').getAttribute('alttext'),
                height: r.height, inner_height: inner.bottom - inner.top,
                left_gap: inner.left - r.left, over: inner.top - r.top};
    });
    // A multi-letter <mi> next to the same letters in an upright <mtext> of the same formula.
    const names = [...document.querySelectorAll('mi')].filter(shown)
        .filter((mi) => mi.textContent.trim().length > 1).map((mi) => {
            const twin = document.createElementNS('http://www.w3.org/1998/Math/MathML', 'mtext');
            twin.textContent = mi.textContent;
            mi.after(twin);
            const width = box(twin).width;
            twin.remove();
            const style = getComputedStyle(mi);
            return {name: mi.textContent, width: box(mi).width, upright_width: width,
                    font: style.fontFamily, style: style.fontStyle};
        });
    const fonts = [...document.fonts].filter((f) => f.family.replace(/"/g, '') === 'Book Math')
        .map((f) => f.status);
    return {roots, names, fonts, formulas: document.querySelectorAll('math').length};
}"""


@pytest.mark.parametrize("page", math_pages())
def test_formulas_look_right(page, server, watch):
    if page.startswith("<"):
        pytest.fail(page)
    w = watch(viewport=DESKTOP)
    w.open(server.url + page)
    g = w.page.evaluate(GEOMETRY_JS)

    failures = []
    if g["fonts"] != ["loaded"]:
        failures.append(f"the Book Math face is {g['fonts'] or 'not declared'}, not loaded")
    for r in g["roots"]:
        if not (r["height"] > r["inner_height"] + 1 and r["over"] > 0.5 and r["left_gap"] > 3):
            failures.append(f"√ of {r['tex']!r}: box {r['height']:.1f} px high over content "
                            f"{r['inner_height']:.1f} px, {r['over']:.1f} px above it, "
                            f"radical {r['left_gap']:.1f} px wide")
    for n in g["names"]:
        if abs(n["width"] - n["upright_width"]) > 0.5 or n["style"] != "normal" or "Book Math" not in n["font"]:
            failures.append(f"<mi>{n['name']}</mi>: {n['width']:.1f} px wide, upright text "
                            f"{n['upright_width']:.1f} px; font-style {n['style']}, font {n['font']}")
    assert not failures, f"{page} ({g['formulas']} formulas):" + fmt(failures)


# The section page's display formula, the one with softmax (an expression in JavaScript).
FIND_SOFTMAX = ("[...document.querySelectorAll('div.math math')]"
                ".find((m) => m.getAttribute('alttext').includes('softmax'))")


def test_section_formula_is_one_name_per_operator_and_a_real_root(server, watch):
    """The section page's own formula: softmax and Attention as names, a radical over d_k."""
    w = watch(viewport=DESKTOP)
    w.open(server.url + f"{ATTENTION}.html")
    found = w.page.evaluate("() => { const math = " + FIND_SOFTMAX + """;
        if (!math) return null;
        return {names: [...math.querySelectorAll('mi')].map((mi) => mi.textContent),
                roots: [...math.querySelectorAll('msqrt')].map((r) => r.textContent)};
    }""")
    assert found is not None, "no display formula with softmax on the section page"
    assert "softmax" in found["names"] and "Attention" in found["names"], found
    assert not {"s", "o", "f", "t", "m", "a", "x"} & set(found["names"]), found
    assert found["roots"] == ["dk"], found


def test_section_formula_can_be_selected_and_copied(server, watch):
    w = watch(viewport=DESKTOP)
    w.open(server.url + f"{ATTENTION}.html")
    copied = w.page.evaluate("() => { const math = " + FIND_SOFTMAX + """;
        const range = document.createRange();
        range.selectNodeContents(math.closest('div.math'));
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        return selection.toString();
    }""")
    assert "softmax" in copied and "Attention" in copied, copied
    assert "\\" not in copied, f"the copied text carries raw TeX: {copied!r}"


def test_formula_screenshots(server, watch):
    """For a person to look at: the section formula, large, in both themes; the mechanism page."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        w = watch(viewport=DESKTOP, device_scale_factor=2, color_scheme=scheme)
        w.open(server.url + f"{ATTENTION}.html")
        formula = w.page.locator("div.math", has=w.page.locator("mi", has_text="softmax")).first
        formula.scroll_into_view_if_needed()
        formula.screenshot(path=str(ARTIFACTS / f"formula-section-{scheme}.png"))
    w = watch(viewport=DESKTOP)
    w.open(server.url + "book/ch04/mechanism.html")
    w.page.evaluate(IMAGES_JS)
    w.page.screenshot(path=str(ARTIFACTS / "mechanism-desktop.png"), full_page=True)
    for name in ("formula-section-light.png", "formula-section-dark.png", "mechanism-desktop.png"):
        assert (ARTIFACTS / name).stat().st_size > 1000, name
