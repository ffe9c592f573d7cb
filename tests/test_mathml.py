"""book/_ext/writing/mathml.py: TeX to MathML Core at build time, and the math font's characters.

Unit tests, no build: every TeX form the book uses converts to MathML a browser lays out
as the formula, and TeX the converter cannot handle is refused instead of reaching the
page as raw TeX. The browser checks of the rendered formulas are in test_formulas.py.
"""

import re
import xml.etree.ElementTree as ET

import pytest

from book._ext.after import webfonts
from book._ext.writing import mathml
from buildfiles import ROOT

SECTION_FORMULA = (r"\operatorname{Attention}(Q, K, V) = "
                   r"\operatorname{softmax}\!\left(\frac{QK^{\top}}{\sqrt{d_k}}\right) V")


def tree(tex, display=False):
    return ET.fromstring(mathml.tex_to_mathml(tex, display))


def shown(math):
    """The MathML elements inside <math>."""
    return list(math.iter())[1:]


def book_tex():
    """Every $…$ and $$…$$ formula in the book's pages."""
    found = []
    for md in sorted((ROOT / "book").rglob("*.md")):
        text = md.read_text(encoding="utf-8")
        text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks
        text = re.sub(r"`[^`\n]*`", "", text)  # inline code
        found += [(md.name, m.strip()) for m in re.findall(r"\$\$(.+?)\$\$", text, flags=re.S)]
        text = re.sub(r"\$\$.+?\$\$", "", text, flags=re.S)
        found += [(md.name, m) for m in re.findall(r"(?<![\\$])\$([^$\n]+?)\$", text)]
    return found


def test_the_book_has_formulas():
    tex = [t for _, t in book_tex()]
    assert len(tex) >= 20
    for form in (r"\sqrt{d_k}", r"\sqrt{d_\text{model}}", r"n_\text{dec}", r"\phi(K)^\top V", "e^0", "d_k"):
        assert form in tex, form


@pytest.mark.parametrize("page, tex", book_tex())
def test_every_formula_of_the_book_converts(page, tex):
    math = tree(tex)
    texts = [e.text for e in shown(math) if e.text]
    assert texts, f"{page}: {tex} converts to an empty formula"
    assert not any("\\" in t for t in texts), f"{page}: raw TeX in {texts}"
    assert math.get("alttext") == tex


def test_section_formula():
    math = tree(SECTION_FORMULA, display=True)
    assert math.get("display") == "block"
    (row,) = list(math)
    names = [e for e in row.iter("mi") if len(e.text) > 1]
    assert [e.text for e in names] == ["Attention", "softmax"]
    # Each name is one upright identifier, followed by the invisible function application.
    children = list(row)
    for name in names:
        after = children[children.index(name) + 1]
        assert (after.tag, after.text) == ("mo", "\u2061")
    assert not any(e.tag == "mspace" for e in row.iter()), r"\! is dropped, not a named space"
    sqrt = next(row.iter("msqrt"))
    assert [(e.tag, e.text) for e in sqrt.iter() if e.text] == [("mi", "d"), ("mi", "k")]
    fences = [e for e in row.iter("mo") if e.get("stretchy") == "true"]
    assert [e.text for e in fences] == ["(", ")"], r"\left( and \right) stretch"


@pytest.mark.parametrize("tex, name", [(r"\mathrm{elu}(x)", "elu"), (r"\mathrm{out}_i", "out"),
                                       (r"\max_i x_i", "max")])
def test_upright_names_are_one_identifier(tex, name):
    mis = [e.text for e in shown(tree(tex)) if e.tag == "mi"]
    assert name in mis and not set(name) & {m for m in mis if len(m) == 1} - {"i", "x"}


def test_spaces_are_mathml_core():
    widths = [e.get("width") for e in shown(tree(r"a\,b\;c\!d\quad e")) if e.tag == "mspace"]
    assert widths == ["0.167em", "0.278em", "1em"]


def test_special_characters_are_escaped():
    html = mathml.tex_to_mathml(r"a < b \& c")
    assert "<mo>&lt;</mo>" in html and "<mi>&amp;</mi>" in html
    ET.fromstring(html)  # well formed


@pytest.mark.parametrize("tex, reason", [
    (r"\foo{x}", "unknown command"),
    (r"\begin{aligned}a&=b\\c&=d\end{aligned}", "alignment"),
    (r"a \\ b", "line breaks"),
])
def test_what_cannot_be_rendered_is_refused(tex, reason):
    with pytest.raises(mathml.UnsupportedTeX, match=reason):
        mathml.tex_to_mathml(tex)


def test_math_font_characters_include_the_italics_the_browser_shows():
    html = mathml.tex_to_mathml(r"\sqrt{d_k} + \phi(h) + \mathrm{d}x + \text{model}")
    chars = webfonts.math_text(f"<p>{html}</p>")
    assert "\U0001d451" in chars and "d" in chars  # italic d from <mi>d</mi>, upright from \mathrm{d}
    assert "\U0001d458" in chars and "\u210e" in chars and "\U0001d719" in chars  # k, h, ϕ
    assert set("model") <= chars and "\u221a" in chars  # msqrt draws the font's radical
    assert "\\" not in chars and "{" not in chars  # the TeX in alttext is not shown


@pytest.mark.parametrize("tex, text", [(r"\sqrt{d_k}", "√d_k"), (r"\sqrt{d_\text{model}}", "√d_model"),
                                       (r"\phi(K)^\top V", "ϕ(K)^⊤V"), (r"x_{i+1}", "x_(i+1)"),
                                       (r"\frac{a+b}{c}", "(a+b)/c"), (r"\operatorname{softmax}(x)", "softmax(x)")])
def test_plain_text_for_search_titles(tex, text):
    assert mathml.plain_text(tex) == text
