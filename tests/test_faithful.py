"""Every section's page carries its manuscript faithfully (the built book; `pytest -m faithful`).

For each section of the section list (tests/section_texts.py), read from its manuscript, not
from a hand list:

* every sentence of its prose is on the page, in order, outside the editor's layer, and
  at least 98% of the page's non-editorial prose is the manuscript's;
* no sentence of any manuscript sits inside the editor's layer of any chapter page;
* its headings, boxes, lists and figures are the page's, in order, with their titles,
  admonition classes and printed figure numbers;
* its listings are the page's author cells verbatim (the parts the editor shows from the
  manuscript with ``literalinclude`` included), every cell of them executed without error,
  and a listing that printed output prints live output;
* each printed output comment stands, in order, under the live output of its listing.

And once: every chapter page is a listed section's page or wholly the editor's.
"""

import re

import nbformat
import pytest

import section_texts
from book._ext.shared.sections import next_sentence
from buildfiles import EXECUTED, ROOT, chapter_pages, soup
from section_texts import BOOK, SECTIONS, normalize
from tools.page import myst

pytestmark = [pytest.mark.book, pytest.mark.faithful]
BY_SECTION = pytest.mark.parametrize("section", SECTIONS, ids=section_texts.ids())

PROSE = ["p", "li", "h1", "h2", "h3", "dt", "dd", "th", "td", "figcaption"]
NOT_PROSE = [".editorial", "div.cell", "pre", "div.highlight", ".headerlink", ".voice-switch",
             "script", "style", ".math", ".caption-number"]


def article(page):
    return soup(page).select_one("article.bd-article")


def author_article(page):
    """The page's article without the editor's layer."""
    main = article(page)
    for node in main.select(".editorial"):
        node.decompose()
    return main


def prose_blocks(page):
    """Visible prose of a page outside the editor's layer and code, one block per element."""
    main = article(page)
    for selector in NOT_PROSE:
        for node in main.select(selector):
            node.decompose()
    blocks = []
    for element in main.find_all(PROSE):
        if element.find(PROSE):  # a list item holding paragraphs: count the paragraphs
            continue
        text = element.get_text(" ", strip=True)
        if text:
            blocks.append(text)
    return blocks


def manuscript_share(section):
    """The share of the page's non-editorial prose characters that are the manuscript's."""
    source = normalize(section.text.source)
    blocks = [normalize(block) for block in prose_blocks(section.page)]
    total = sum(len(block) for block in blocks)
    ours = sum(len(block) for block in blocks if block in source)
    return ours / total, [block for block in blocks if block not in source]


# --- the prose ---------------------------------------------------------------------------


@BY_SECTION
def test_at_least_98_percent_of_the_non_editorial_prose_is_the_manuscripts(section):
    share, foreign = manuscript_share(section)
    print(f"manuscript share of non-editorial prose on {section.page}: {share:.1%}")
    assert share >= 0.98, f"{share:.1%} manuscript; not from the manuscript: {foreign}"


@BY_SECTION
def test_every_sentence_is_on_the_page_in_order(section):
    text = normalize(" ".join(prose_blocks(section.page)))
    position = 0
    for sentence in section_texts.prose_sentences(section):
        found = text.find(sentence, position)
        assert found >= 0, f"{section.page}: missing or out of order: {sentence}"
        position = found + len(sentence)


@pytest.mark.parametrize("page", chapter_pages())
def test_no_manuscript_sentence_sits_in_the_editorial_layer(page):
    editorial = normalize(" ".join(e.get_text(" ") for e in soup(page).select(".editorial")))
    inside = [s for section in SECTIONS for s in section_texts.prose_sentences(section) if s in editorial]
    assert not inside, f"{page}: manuscript sentences inside .editorial: {inside}"


# --- the structure -----------------------------------------------------------------------


@BY_SECTION
def test_the_headings_are_the_manuscripts_in_order(section):
    main = author_article(section.page)
    for link in main.select(".headerlink"):
        link.decompose()
    title, *headings = [normalize(h.get_text()) for h in main.find_all(["h1", "h2", "h3"])]
    assert title == normalize(section.heading)
    assert headings == [normalize(h) for h in section.text.headings]


@BY_SECTION
def test_the_boxes_are_admonitions_with_the_manuscripts_titles(section):
    classes = {"summary": "note", "warning": "warning", "tip": "tip"}
    shown = [(next(c for c in box["class"] if c in classes.values()), box.select_one(".admonition-title").get_text(strip=True))
             for box in author_article(section.page).select("div.admonition")]
    assert shown == [(classes[style], title) for style, title in section.text.boxes]


@BY_SECTION
def test_the_lists_are_lists(section):
    items = [normalize(li.get_text(" ")) for li in author_article(section.page).select("ol > li, ul > li")]
    for block in section.text.of_kind("list"):
        wanted = [normalize(item) for item in block.items]
        assert any(items[i:i + len(wanted)] == wanted for i in range(len(items))), (block.line, wanted)


@BY_SECTION
def test_each_figure_line_is_a_figure_with_its_printed_number(section):
    shown = {}
    page = soup(section.page)
    for link in page.select(".headerlink"):
        link.decompose()
    for figure in page.select("figure"):
        number = figure.select_one(".caption-number")
        caption = figure.select_one("figcaption")
        if number and caption:
            text = caption.get_text(" ", strip=True).replace(number.get_text(strip=True), "", 1)
            shown[number.get_text(strip=True)] = normalize(text)
    for number, caption in section.figures.items():
        assert shown.get(f"图 {number}") == normalize(caption), (number, shown)


# --- the listings ------------------------------------------------------------------------


def page_listings(section):
    """The author's listing units of the section page's source (tools/page/myst.py)."""
    path = ROOT / f"{section.page}.md"
    units = myst.author_units(myst.split(path.read_text(encoding="utf-8")), path)
    return [unit.key for unit in units if unit.kind == "listing"]


@BY_SECTION
def test_the_listings_are_the_pages_author_cells_verbatim(section):
    assert [(key[1], key[2]) for key in page_listings(section)] == \
           [(b.runnable, b.outputs) for b in section.text.listings]


@BY_SECTION
def test_every_listing_ran_and_one_that_printed_prints_live_output(section):
    nb = nbformat.read(EXECUTED / f"{section.page}.ipynb", as_version=4)
    hidden = {"editorial", "remove-cell"}
    cells = [cell for cell in nb.cells if cell.cell_type == "code" and not hidden & set(cell.metadata.get("tags", []))]
    for block in section.text.listings:
        ran = [cell for cell in cells if cell.source.strip() and cell.source.strip() in block.runnable]
        assert ran, f"{section.page}: the listing at line {block.line} ran in no cell"
        for cell in ran:
            assert cell.execution_count is not None, cell.source[:60]
            assert not [o for o in cell.outputs if o.output_type == "error" or o.get("name") == "stderr"], cell.source[:60]
        if block.outputs:
            printed = "".join(o.get("text") or o.get("data", {}).get("text/plain", "") for o in ran[-1].outputs)
            assert printed.strip(), f"{section.page}: the listing at line {block.line} printed nothing live"


@BY_SECTION
def test_the_printed_outputs_stand_under_the_live_ones(section):
    """The manuscript's ``# 输出：…`` comments, in its order, in the author's layer (every view
    and the PDF show them), right under the live output of their listing's cell (a listing
    that printed twice: both, one after the other), each labelled as what the manuscript printed."""
    shown = soup(section.page).select("div.listing-printed-output")
    wanted = [text for block in section.text.listings for text in block.outputs]
    assert [normalize(block.get_text()) for block in shown] == [normalize(text) for text in wanted]
    for block in shown:
        assert not block.find_parent(class_="editorial"), block
        box = block.find_parent(class_="printed-output")
        assert box and re.search(r"原稿印的输出", box.select_one(".printed-output-label").get_text()), block
        before = box.find_previous_sibling(lambda tag: "printed-output" not in tag.get("class", []))
        assert before is not None and "cell" in before.get("class", []) and before.select_one(".cell_output"), block


@BY_SECTION
def test_no_output_comment_is_left_in_a_cell(section):
    for cell in soup(section.page).select("div.cell_input"):
        assert not re.search(r"# 输出(示例)?：", cell.get_text()), cell.get_text()[:80]


# --- the book as a whole -------------------------------------------------------------------


@pytest.mark.parametrize("page", chapter_pages())
def test_a_chapter_page_is_a_sections_or_wholly_the_editors(page):
    if any(page == section.page for section in SECTIONS):
        return
    first = article(page).select_one(".editorial")
    assert first is not None and "editorial-page" in first["class"], \
        f"{page} is neither a listed section's page (manuscript/ and _toc.yml) nor marked {{editorial-page}}"


@BY_SECTION
def test_the_closing_pointer_follows_the_section_list(section):
    sentence = next_sentence(BOOK, section.page)
    expected = re.sub(r"《\{ref\}`([^`]+)`》", lambda m: "《" + BOOK.sections[[s.label for s in BOOK.sections].index(m[1])].heading + "》", sentence)
    assert normalize(expected) in normalize(article(section.page).select(".editorial")[-1].get_text())


def test_every_manuscript_is_a_section_of_the_book():
    """A manuscript in manuscript/ without its page in the toc is a section `make page` has not made."""
    assert not BOOK.unlisted, f"run make page SECTION=N for: {sorted(BOOK.unlisted)}"
