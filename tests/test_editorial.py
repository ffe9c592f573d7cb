"""The editor's layer, checked on the built site.

Everything the site adds sits inside an element of class ``editorial``, labelled (each
section page is held to its manuscript in tests/test_faithful.py). Figures the editor
added take numbers the printed book never uses; the claims ledger and the list of
editor's notes are complete and every link in them lands.
"""

import functools
import re
from urllib.parse import urlsplit

import nbformat
import pytest

from buildfiles import ATTENTION, EXECUTED, HTML, ROOT, chapter_pages, executed_pages, html_pages, soup
from section_texts import SECTIONS

pytestmark = pytest.mark.book

SECTION_PAGES = [section.page for section in SECTIONS]
COMPANIONS = [page for section in SECTIONS for page in section.companions]
CJK = r"\u3400-\u9fff"


def article(page):
    return soup(page).select_one("article.bd-article")


def test_the_authors_listing_cells_are_not_marked_as_the_editors():
    checked = 0
    for section in SECTIONS:
        listings = [block.runnable for block in section.text.listings]
        for cell in soup(section.page).select("div.cell"):
            code = cell.select_one(".cell_input")
            if code and code.get_text().strip() and any(code.get_text().strip() in l for l in listings):
                assert "editorial" not in cell["class"], f"{section.page}: an author's listing is marked as the editor's"
                checked += 1
    assert checked >= len(SECTIONS)


def test_editorial_blocks_are_labelled_and_not_inside_author_paragraphs():
    for page in chapter_pages():
        for box in soup(page).select(".editorial"):
            # one label for a block: a note and its cells, or a folded check, share their first
            if box.find_parent(class_="editorial") is None:
                assert box.select_one(".editorial-label"), f"{page}: an editorial block without its label"
            assert box.find_parent("p") is None, f"{page}: editorial text inside a paragraph"


def test_companion_pages_are_marked_as_the_editors():
    for page in COMPANIONS:
        first = article(page).select_one("section > .editorial, .editorial")
        assert first is not None and "editorial-page" in first["class"], page
        assert "编者撰写" in first.get_text()


def test_companion_pages_open_with_the_lesson_not_its_provenance():
    """The 编者撰写 block at the top says in a few sentences what the page teaches; its
    label already says who wrote it, so the text does not say so again."""
    for page in COMPANIONS:
        first = article(page).select_one("section > .editorial, .editorial")
        for label in first.select(".editorial-label"):
            label.decompose()
        text = first.get_text(" ", strip=True)
        sentences = [s for s in re.split(r"(?<=[。！？])", text) if s.strip()]
        assert 2 <= len(sentences) <= 4, (page, sentences)
        assert not re.search(r"编者撰写|不是原稿的一部分|由练习目录生成", text), (page, text)


# What a reader needs no more than the build does: recording values, drawing setup, the
# explorables' data. Such code goes in cells tagged remove-cell (or remove-input for figures).
BOOKKEEPING = [r"\bglue\(", r"attnbook\.glue", r"plots\.setup\(", r"\.explore_\w+\(", r"__version__"]


@pytest.mark.parametrize("page", COMPANIONS)
def test_companion_pages_show_no_bookkeeping_code(page):
    shown = [code.get_text() for code in article(page).select("div.cell div.cell_input")]
    assert shown, page
    found = [(pattern, code[:80]) for code in shown for pattern in BOOKKEEPING if re.search(pattern, code)]
    assert not found, f"{page}: bookkeeping in visible cells: {found}"


def test_the_switch_is_on_the_section_pages_only():
    for page in SECTION_PAGES:
        assert len(soup(page).select(".voice-switch input[type=radio]")) == 3, page
    for page in COMPANIONS:
        assert soup(page).select_one(".voice-switch") is None, page


# --- figure numbers ----------------------------------------------------------------------


def test_only_the_manuscripts_figures_take_printed_numbers():
    """A manuscript's figure keeps its printed number; every other figure is the editor's,
    numbered within the section of its page: 编者图 4.5-N on 4.5's pages."""
    printed = {f"图 {n}" for section in SECTIONS for n in section.figures}
    editors = {}
    for section in SECTIONS:
        for page in section.pages:
            for figure in soup(page).select("figure[id]"):
                number = figure.select_one(".caption-number").get_text(strip=True)
                if number not in printed:
                    editors[figure["id"]] = number
                    assert re.fullmatch(rf"编者图 {re.escape(section.number)}-\d+", number), (page, number)
    assert editors and len(set(editors.values())) == len(editors)


@pytest.mark.parametrize("page", html_pages())
def test_no_page_cites_a_printed_figure_number_no_manuscript_prints(page):
    text = soup(page).get_text(" ")
    printed = {int(n) for n in re.findall(r"(?<!编者)图\s*(\d+)", text)}
    known = {n for section in SECTIONS for n in section.figures}
    assert printed <= known, f"{page} names printed figure numbers {printed - known}"


# --- the editor's prose: terms and punctuation --------------------------------------------


def forbidden_terms():
    """Words the glossary says the book never writes (不写作“…”)."""
    glossary = soup("book/glossary").select_one("dl.glossary").get_text()
    return re.findall(r"不写作“([^”]+)”", glossary)


def test_glossary_names_forbidden_variants():
    assert "补零掩码" in forbidden_terms()


@pytest.mark.parametrize("page", html_pages())
def test_terms_follow_the_glossary(page):
    main = soup(page).select_one("article") or soup(page)
    text = main.get_text(" ")
    if page != "book/glossary.html":
        used = [term for term in forbidden_terms() if term in text]
        assert not used, f"{page} writes {used}, which the glossary rules out"


@pytest.mark.parametrize("page", executed_pages())
def test_printed_outputs_follow_the_glossary(page):
    """What the cells print is held to the same terms as the prose (tests/test_prose.py and
    tests/test_plots.py check the editor's other words and the figures' text)."""
    nb = nbformat.read(EXECUTED / f"{page}.ipynb", as_version=4)
    printed = " ".join(o.get("text") or o.get("data", {}).get("text/plain", "")
                       for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", []))
    used = [term for term in forbidden_terms() if term in printed]
    assert not used, f"{page} prints {used}, which the glossary rules out"


@pytest.mark.parametrize("page", html_pages())
def test_no_half_width_punctuation_next_to_chinese(page):
    main = soup(page).select_one("article")
    if main is None:
        return
    # Field names (参数:, 返回:) are Sphinx's own markup, not prose.
    for selector in ["pre", "code", "div.highlight", ".math", "div.cell", "kbd", "script",
                     "dl.field-list > dt"]:
        for node in main.select(selector):
            node.decompose()
    bad = re.findall(rf".{{0,8}}(?:[{CJK}][,;:!?()\"]|[,;:!?()\"][{CJK}]).{{0,8}}", main.get_text())
    assert not bad, f"{page}: {bad}"


# --- the claims ledger and the list of editor's notes --------------------------------------


def ledger_rows():
    return soup("book/claims").select("table.claims-ledger tbody tr")


def resolves(page, href):
    """Whether a link from a built page lands on an existing page and anchor."""
    split = urlsplit(href)
    if split.scheme:
        return True  # a link off the site (the repository): not checked here
    target = (HTML / page).parent / split.path if split.path else HTML / page
    if not target.resolve().is_file():
        return False
    return not split.fragment or split.fragment in ids(str(target.resolve().relative_to(HTML)))


@functools.lru_cache(maxsize=None)
def ids(page):
    """Every id on a built page (parsed once: the ledger links to a few pages many times)."""
    return frozenset(tag["id"] for tag in soup(page).find_all(id=True))


def test_the_ledger_has_twenty_claims_each_with_a_verdict_and_a_backing():
    """Columns: 编号, 原稿的论断, 本次构建的数值, 判定, 依据 (tests/test_claims.py checks the verdicts)."""
    rows = ledger_rows()
    assert len(rows) >= 20
    counts = {}
    for row in rows:
        cells = row.find_all("td")
        status, backing = cells[3].select_one(".claim-status").get_text(strip=True), cells[4].get_text(strip=True)
        assert status in {"成立（本次构建实测）", "部分成立", "不成立（本次构建实测）", "无法在本书中验证",
                          "成立（由代码决定）", "不成立（由代码决定）"}, row.get_text()
        assert backing, row.get_text()
        counts[status] = counts.get(status, 0) + 1
    print("claims by verdict:", counts)


def test_every_ledger_link_lands():
    links = [a["href"] for a in soup("book/claims").select("table.claims-ledger a[href]")]
    assert len(links) >= 20
    broken = [href for href in links if not resolves("book/claims.html", href)]
    assert not broken, broken


def test_cells_that_back_claims_carry_their_anchor():
    for page in executed_pages():
        for cell in soup(page).select("div.cell"):
            tags = [c[len("tag_claim-"):] for c in cell["class"] if c.startswith("tag_claim-")]
            for claim in tags:
                # docutils gives the element its first id and extra ids as <span id> inside it
                anchors = [cell.get("id", "")] + [span["id"] for span in cell.select("span[id]")]
                assert any(a.startswith(f"claim-{claim}") for a in anchors), (page, claim)


def test_the_notes_page_lists_every_titled_note_and_its_links_land():
    """Every titled note, every block or anchor that corrects or qualifies the manuscript."""
    listed = 0
    for page in html_pages():
        # the directives' own boxes (id editorial-N), not the containers that group them; a
        # one-line check's text is what it says, not a note's title
        for box in soup(page).select(".editorial[id^=editorial-]:not(.editorial-page, .editorial-aside), .editorial-anchor"):
            title = box.select_one(".editorial-title")
            kind = {"correction", "qualifies", "checks", "editorial-anchor"} & set(box["class"])
            listed += bool(kind) or (title is not None and title.get_text(strip=True) != "编者")
    links = [a["href"] for a in soup("book/errata").select("ul.editor-notes a[href]")]
    print(f"editor's notes: {len(links)}")
    assert len(links) == listed and listed >= 3
    assert all(resolves("book/errata.html", href) for href in links)
    corrections = soup("book/errata").get_text().count("更正原稿")
    assert corrections >= 1


def test_every_check_summary_heads_a_fold_or_line_of_its_own():
    """Each ``:summary:`` of a checking block is what a reader sees folded: the summary of
    its own ``<details>``, or its own one-line aside. Two checks in a row once shared one
    fold under the first one's summary, and the second summary was lost."""
    checked = 0
    for page in executed_pages():
        summaries = re.findall(r"^:kind: check\n:summary: (.+)$", (ROOT / f"{page}.md").read_text(encoding="utf-8"), re.M)
        shown = [h.get_text("", strip=True).replace(" ", "")
                 for h in soup(page).select("details.editorial-check > summary, .editorial-aside > .editorial-title")]
        for summary in summaries:
            plain = re.sub(r"\{[a-z:]+\}`([^`<]*)(<[^>]*>)?`", r"\1", summary)
            plain = re.sub(r"[`$\s]", "", plain.replace("\\sqrt", "√"))
            assert sum(plain in line for line in shown) == 1, (page, summary, shown)
            checked += 1
    assert checked >= 8


def test_a_listed_note_shows_its_title_where_its_link_lands():
    """A reader who follows a link from 编者注与勘误 or a ledger row finds a head line,
    「编者 · 更正|限定」 and the same title, at the anchor; not an empty marker."""
    pages = {"book/errata.html": soup("book/errata").select("ul.editor-notes li")}
    checked = 0
    for page, items in pages.items():
        for item in items:
            link = item.select_one("a[href]")
            path, _, fragment = link["href"].partition("#")
            target = soup(str(((HTML / page).parent / path).resolve().relative_to(HTML))).find(id=fragment)
            head = target.select_one(".editorial-title")
            assert head is not None, (link["href"], link.get_text())
            assert link.get_text(strip=True) in head.get_text(strip=True), (link["href"], head.get_text())
            listed_as = item.get_text(strip=True)
            for suffix, kind in (("（更正原稿）", "更正"), ("（限定原稿的说法）", "限定"), ("（核对原稿的说法）", "核对")):
                if listed_as.endswith(suffix):
                    assert f"编者 · {kind}" in head.get_text(), (link["href"], head.get_text())
            checked += 1
    assert checked >= 5
