"""The author's text and the editor's layer, checked on the built site.

The section page must read as the author's: its listings verbatim, its paragraphs whole
and in order, and everything the site adds inside an element of class ``editorial``.
Figures the editor added take numbers the printed book never uses; the claims ledger
and the list of editor's notes are complete and every link in them lands.
"""

import functools
import re
from urllib.parse import urlsplit

import nbformat
import pytest

import manuscript
from buildfiles import EXECUTED, HTML, ROOT, SECTION, executed_pages, html_pages, soup

pytestmark = pytest.mark.book

COMPANIONS = ["book/ch04/mechanism", "book/ch04/cost", "book/ch04/exercises", "book/ch04/exercises-starter"]
PROSE = ["p", "li", "h1", "h2", "h3", "dt", "dd", "th", "td", "figcaption"]
NOT_PROSE = [".editorial", "div.cell", "pre", "div.highlight", ".headerlink", ".voice-switch",
             "script", "style", ".math"]
CJK = r"\u3400-\u9fff"


def article(page):
    return soup(page).select_one("article.bd-article")


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


def manuscript_share(page):
    """The share of the page's non-editorial prose characters that are manuscript text."""
    source = manuscript.normalize(manuscript.text())
    blocks = [manuscript.normalize(block) for block in prose_blocks(page)]
    total = sum(len(block) for block in blocks)
    ours = sum(len(block) for block in blocks if block in source)
    return ours / total, [block for block in blocks if block not in source]


def test_section_prose_outside_the_editorial_layer_is_the_manuscript():
    share, foreign = manuscript_share(SECTION)
    print(f"manuscript share of non-editorial prose on {SECTION}: {share:.1%}")
    assert share >= 0.98, f"{share:.1%} manuscript; not from the manuscript: {foreign}"


def test_every_manuscript_sentence_is_on_the_page_in_order():
    text = manuscript.normalize(" ".join(prose_blocks(SECTION)))
    position = 0
    for sentence in manuscript.prose_sentences():
        for prefix in manuscript.BOX_PREFIXES:
            sentence = sentence.removeprefix(prefix)
        found = text.find(sentence, position)
        assert found >= 0, f"missing or out of order: {sentence}"
        position = found + len(sentence)


def test_no_manuscript_sentence_sits_in_the_editorial_layer():
    for page in [SECTION, *COMPANIONS]:
        editorial = manuscript.normalize(" ".join(e.get_text(" ") for e in soup(page).select(".editorial")))
        inside = [s for s in manuscript.prose_sentences() if s in editorial]
        assert not inside, f"{page}: manuscript sentences inside .editorial: {inside}"


def test_the_manuscripts_listings_run_verbatim():
    """Each listing is a cell of the section page as printed, its output lines replaced by
    live output; the class itself is shown from the manuscript (and run from attnbook.minimal)."""
    nb = nbformat.read(EXECUTED / f"{SECTION}.ipynb", as_version=4)
    sources = [cell.source.strip() for cell in nb.cells if cell.cell_type == "code"]
    walkthrough, layer, cross = manuscript.listings()
    usage = layer.split("\n\nattn = ")[1]
    for listing in (walkthrough, "attn = " + usage, cross):
        assert manuscript.runnable(listing) in sources, listing[:60]
    shown = [pre.get_text() for pre in soup(SECTION).select("pre")]
    assert manuscript.layer_class() in [code.strip() for code in shown]


def test_listings_are_the_authors_not_the_editors():
    for cell in soup(SECTION).select("div.cell"):
        code = cell.select_one(".cell_input")
        if code and "# 形状演练" in code.get_text() or code and "# 交叉注意力" in code.get_text():
            assert "editorial" not in cell["class"], "an author's listing is marked as the editor's"


def test_editorial_blocks_are_labelled_and_not_inside_author_paragraphs():
    for page in [SECTION, *COMPANIONS]:
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


def test_the_switch_is_on_the_section_page_only():
    assert len(soup(SECTION).select(".voice-switch input[type=radio]")) == 3
    for page in COMPANIONS:
        assert soup(page).select_one(".voice-switch") is None, page


def test_the_closing_pointer_keeps_the_authors_sentence_and_notes_the_site():
    text = article(SECTION).get_text()
    assert "下节把网格先验换成拓扑先验：图神经网络。" in text
    last = article(SECTION).select(".editorial")[-1].get_text()
    assert "不在本站" in last


# --- figure numbers ----------------------------------------------------------------------


def test_only_the_manuscripts_figure_takes_a_printed_number():
    numbers = {}
    for page in html_pages():
        for figure in soup(page).select("figure[id]"):
            caption = figure.select_one(".caption-number")
            numbers[figure["id"]] = caption.get_text(strip=True) if caption else ""
    assert numbers.pop("fig-signal-flow") == "图 20"
    assert numbers and all(re.fullmatch(r"编者图 4\.5-\d+", n) for n in numbers.values()), numbers
    assert len(set(numbers.values())) == len(numbers)


@pytest.mark.parametrize("page", html_pages())
def test_no_page_cites_a_printed_figure_number_other_than_20(page):
    text = soup(page).get_text(" ")
    printed = {int(n) for n in re.findall(r"(?<!编者)图\s*(\d+)", text)}
    assert printed <= {20}, f"{page} names printed figure numbers {printed}"


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
