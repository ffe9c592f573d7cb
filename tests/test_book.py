"""Checks of the built book in _build/, as made by `make book`.

`make test` builds the book first (the same command as `make book`), so these tests
read that build. Run on their own without a build, they fail and say so.
"""

import re

import nbformat
import pytest
from bs4 import BeautifulSoup

import section_texts
from buildfiles import (ATTENTION, EXECUTED, HTML, MEASURED, ROOT, executed_pages, html_pages, search_index,
                        soup, text_outputs)

pytestmark = pytest.mark.book

# Start-up and progress noise that must never reach a page.
NOISE = ["oneDNN", "absl::InitializeLog", "cpu_feature_guard", "TF_CPP_MIN_LOG_LEVEL",
         "Traceback (most recent call last)", "━━━━", "UserWarning", "DeprecationWarning"]


# --- execution -------------------------------------------------------------------


def test_every_section_page_is_executed():
    assert {section.page for section in section_texts.SECTIONS} <= set(executed_pages())


@pytest.mark.parametrize("page", executed_pages())
def test_page_executed_without_errors_or_stderr(page):
    nb = nbformat.read(EXECUTED / f"{page}.ipynb", as_version=4)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert code_cells, f"{page} has no code cells"
    for i, cell in enumerate(code_cells):
        assert cell.execution_count is not None, f"{page}: code cell {i} did not run"
        for out in cell.outputs:
            assert out.output_type != "error", f"{page}: cell {i} raised {out.get('ename')}"
            assert out.get("name") != "stderr", f"{page}: cell {i} wrote to stderr: {out.text!r}"


@pytest.mark.parametrize("page", executed_pages())
def test_no_runtime_noise_in_html(page):
    text = (HTML / f"{page}.html").read_text(encoding="utf-8")
    found = [n for n in NOISE if n in text]
    assert not found, f"{page}.html contains log noise: {found}"


def test_every_img_file_exists():
    checked = 0
    for name in html_pages():
        page = HTML / name
        for img in BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").find_all("img"):
            src = img.get("src", "")
            assert not re.match(r"^[a-z]+://", src), f"{page}: external image {src}"
            if src.startswith("data:"):
                continue
            assert (page.parent / src.split("#")[0]).resolve().is_file(), f"{page}: missing {src}"
            checked += 1
    assert checked >= 1


# --- figures ---------------------------------------------------------------------
# (Each section's headings, boxes, lists, figure numbers and listings are held to its
# manuscript in tests/test_faithful.py.)


def test_figure_20_has_its_alt_text():
    figure = soup(ATTENTION).find(id="fig-signal-flow")
    assert "注意力打分的信号流" in figure.find("svg").get("aria-label", "")


@pytest.mark.parametrize("page", executed_pages())
def test_figures_are_inline_svg_with_their_alt_text(page):
    """book/_ext/resolving/figures.py puts every figure into the page: named, sized, no <img> left
    (but a manuscript's figure that waits for its drawing, which has no picture yet)."""
    for figure in soup(page).select("figure:not(.figure-slot)"):
        svg = figure.select_one("svg.attnbook-svg")
        assert svg is not None and not figure.find("img"), f"{page}#{figure.get('id')}: not an inline SVG"
        assert svg["role"] == "img" and len(svg.get("aria-label", "")) > 20, figure.get("id")
        assert all(svg.get(a) for a in ("width", "height", "viewbox")), figure.get("id")  # parsed lower-case


@pytest.mark.parametrize("page", executed_pages())
def test_downloadable_notebook_has_svg_figures(page):
    """A reader who downloads the .ipynb sees the same figures, as SVG on a white background."""
    notebook = nbformat.read(HTML / "_sources" / f"{page}.ipynb", as_version=4)
    images = [o["data"] for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if "image/svg+xml" in o.get("data", {}) or "image/png" in o.get("data", {})]
    assert all("image/png" not in d and 'id="attnbook"' in d["image/svg+xml"] for d in images), page
    assert len(images) == len(soup(page).select("figure svg.attnbook-svg")), page


# --- live outputs ------------------------------------------------------------------


def section_outputs():
    nb = nbformat.read(EXECUTED / f"{ATTENTION}.ipynb", as_version=4)
    return "\n".join("".join(cell) for cell in text_outputs(nb))


def test_walkthrough_prints_a_weight_row_that_sums_to_one():
    match = re.search(r"^\[([0-9.\s]+)\]\s+([0-9.]+)$", section_outputs(), re.M)
    assert match, "the weight row was not printed"
    row = [float(v) for v in match.group(1).split()]
    assert len(row) == 8
    assert abs(sum(row) - 1) <= 8 * 0.005  # each entry is rounded to 2 decimals
    assert float(match.group(2)) == 1.0


def test_layer_and_cross_attention_shapes_are_printed():
    out = section_outputs()
    assert "(2, 10, 32)" in out
    assert "(2, 6, 32)" in out
    assert "√32 = 5.66" in out


def test_literalinclude_shows_the_tested_classes():
    """The section page shows the author's class from the manuscript; the editor's from
    attnbook.attention is shown on the mechanism page, in its section on the package."""
    import inspect

    from attnbook import MiniMultiHeadAttention

    for page, classes in [(ATTENTION, [section_texts.layer_class()]),
                          ("book/ch04/mechanism", [inspect.getsource(MiniMultiHeadAttention).strip()])]:
        blocks = [pre.get_text() for pre in soup(page).find_all("pre")]
        shown = [code.strip() for code in blocks if "class MiniMultiHeadAttention" in code]
        assert shown == classes, page
    anchor = soup("book/ch04/mechanism").find(id="sec-package-layer")
    section = anchor if anchor is None or anchor.name == "section" else anchor.find_parent("section")
    assert section is not None and "class MiniMultiHeadAttention" in section.get_text()


def test_no_page_redefines_package_code():
    """Pages import the package; a definition in a code cell is only an exercise stub."""
    for md in (ROOT / "book").rglob("*.md"):
        text = md.read_text(encoding="utf-8")
        assert "sys.path" not in text, md
        for cell in re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S):
            for name in ("class MiniMultiHeadAttention", "def scaled_dot_product_attention"):
                if name in cell:
                    assert "raise NotImplementedError" in cell.split(name, 1)[1], (md, cell)


def test_searchindex_holds_chinese_terms():
    terms = search_index()["terms"]
    for word in ["注意力", "查询", "掩码", "交叉"]:
        assert word in terms, f"{word} not indexed"


# --- measured numbers ------------------------------------------------------------------


def test_measured_cells_say_so():
    """A number measured on the building machine is labelled so: every line a measured
    cell prints, the caption of the figure it draws, or the head of the column of the
    table it shows (the cost page's table of sources), says 本次构建实测."""
    tagged = 0
    for page in executed_pages():
        nb = nbformat.read(EXECUTED / f"{page}.ipynb", as_version=4)
        for cell in nb.cells:
            if MEASURED not in cell.get("metadata", {}).get("tags", []):
                continue
            tagged += 1
            text = "".join(o.get("text", "") for o in cell.outputs)
            lines = [line for line in text.splitlines() if line.strip()]
            caption = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption", "")
            tables = [BeautifulSoup(o.get("data", {}).get("text/html", ""), "html.parser") for o in cell.outputs]
            heads = [th.get_text() for table in tables for th in table.select("thead th")]
            assert lines or "本次构建实测" in caption or "本次构建实测" in heads, (page, cell.source[:60])
            assert all("本次构建实测" in line for line in lines), (page, text)
    assert tagged >= 2
