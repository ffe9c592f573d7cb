"""The editor's prose, held to the build: numbers glued in, quotes verbatim, links that read.

Read on the built site (marker ``book``), over every page the editor wrote and every
editorial block of the section page:

- a sentence with a digit, or with a comparison of measured values, is either glued
  (myst-nb's ``{glue:text}`` puts the value in a ``span.pasted-text``), or its digits are
  code constants, references or quotations, or it is bound to an assertion that the test
  finds in the page's code;
- every 「quotation」 is the manuscript's text, word for word, and every sentence that says
  what 原稿 or 正文 says carries one; no editor's figure is called the author's;
- no in-sentence link drops a whole heading with ： or ， into the sentence unless it sits
  in 《》;
- the glossary's terms hold in the prose, in what the cells print (the figures' text is
  checked by tests/test_plots.py).

The scanners take parsed HTML, so the tests at the bottom feed them hand-written snippets
and show that each one fails on what it is meant to catch.
"""

import re

import nbformat
import pytest
from bs4 import BeautifulSoup

import section_texts
from book._ext.shared.scripts import STATIC
from terms import term_problems, without_quotes
from buildfiles import EXECUTED, ROOT, executed_pages, html_pages, soup

SECTION_PAGES = [section.page for section in section_texts.SECTIONS]
EDITOR_PAGES = ["book/ch04/mechanism", "book/ch04/cost", "book/ch04/exercises", "index", "book/index",
                "book/glossary", "book/api"]
GLUED = "⟦值⟧"  # stands for a glued value once the prose is flattened to text
# Not prose: code, formulas, outputs, the API's docstrings (they are the package's), links'
# anchors and the numbers of figures (references, not values).
NOT_PROSE = ["pre", "code", "div.cell_input", "div.cell_output", ".math", "math", ".headerlink", "script",
             "style", "dl.py", ".caption-number", "a[href*='references.html']", ".editorial-label"]
PROSE = ["p", "li", "figcaption", "td", "th", "dd", "dt", "h1", "h2", "h3"]

# Numbers that are names, not values: the sections' numbers (and the exercises' and the
# editor's figures' numbers made from them), the manuscripts' printed figure numbers, goal numbers.
_NUMBERS = "|".join(re.escape(s.number) for s in section_texts.SECTIONS)
_FIGURES = "|".join(str(n) for s in section_texts.SECTIONS for n in s.figures) or "$^"
REFERENCE_NUMBERS = [r"b?float(?:16|32|64)", r"int(?:32|64)", r"（\d）", rf"编者[图表]\s*(?:{_NUMBERS})-\d+",
                     rf"(?<![\d.])图\s*(?:{_FIGURES})(?!\d)", rf"练习\s*(?:{_NUMBERS})\.\d+", rf"(?:{_NUMBERS})(?:\.\d+)?",
                     r"学习目标\s*\d", r"Python\s*3\.11", r"Keras\s*3", r"O\([^)]*\)", r"[nd]²", r"\d+\s*×\s*\d+"]
# A number with one of these units is a measurement, whatever the code says.
UNITS = r"\d+(?:\.\d+)?\s*(?:ms|MiB|GiB|KiB|TiB|%|倍)"
# Words that compare measured values; a sentence using one must be glued or bound.
COMPARATIVES = ["更快", "更慢", "快得多", "慢得多", "平行", "逐位相同", "完全相同", "逐位不变", "一路",
                "碾压", "很近", "大致", "近乎", "通常比", "明显", "显著", "几乎不"]
# Sentences bound to an assertion in a page's code: (page, words, page with the code, assertion).
BOUND = [
    ("book/ch04/mechanism", "逐位不变", "book/ch04/mechanism", "assert leak.change_masked == 0"),
    ("book/ch04/attention", "逐位不变", "book/ch04/mechanism", "assert leak.change_masked == 0"),
]
# Definitions the pages state about slopes and sums (not measurements): 斜率为 1 是线性增长.
DEFINITIONS = [r"斜率(?:约)?为\s*[12]", r"斜率是\s*2", r"斜率为\s*0", r"斜率接近\s*1"]
# Hypothetical numbers a question gives and its solution reads back.
QUESTION_NUMBERS = {"book/ch04/exercises": [r"第\s*2\s*行第\s*5\s*列是\s*0\.4", r"第\s*2\s*个查询",
                                             r"把\s*40%\s*的权重", r"第\s*5\s*个位置"]}
# 「编者」 is the label of the editor's blocks, not a quotation.
NOT_QUOTES = {"编者"}


def editorial_roots(page, html=None):
    """The elements holding the editor's prose: the section page's editorial blocks, or the
    whole article of a page the editor wrote."""
    parsed = BeautifulSoup(html, "html.parser") if html is not None else soup(page)
    article = parsed.select_one("article.bd-article") or parsed
    return article.select(".editorial") if page in SECTION_PAGES else [article]


def flatten(root):
    """(prose blocks, alt texts) of an element: glued values become GLUED, code and
    formulas are dropped."""
    root = BeautifulSoup(str(root), "html.parser")
    for span in root.select("span.pasted-text"):
        span.replace_with(GLUED)
    alts = [img["alt"] for img in root.select("img[alt]")]
    for selector in NOT_PROSE:
        for node in root.select(selector):
            node.decompose()
    blocks = []
    for element in root.find_all(PROSE):
        if element.find(PROSE):  # a container of paragraphs: count the paragraphs
            continue
        text = re.sub(r"\s+", " ", element.get_text(" ", strip=True))
        if text:
            blocks.append(text)
    return blocks, alts


def split_sentences(text):
    """Sentences of ``text``, ending at 。！？； outside 「quotations」."""
    parts, current, depth = [], "", 0
    for char in text:
        current += char
        depth += (char == "「") - (char == "」")
        if depth <= 0 and char in "。！？；":
            parts.append(current)
            current, depth = "", 0
    return [p.strip() for p in parts + [current] if p.strip()]


def sentences(blocks):
    return [s for block in blocks for s in split_sentences(block)]


def code_literals(page):
    """The numbers written in the code cells of a page ('' for a page that is not executed)."""
    path = EXECUTED / f"{page}.ipynb"
    if not path.exists():
        return set()
    nb = nbformat.read(path, as_version=4)
    source = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    return set(re.findall(r"\d+(?:\.\d+)?", source.replace("_", "")))


def code_of(page):
    path = EXECUTED / f"{page}.ipynb"
    nb = nbformat.read(path, as_version=4)
    return "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")


def unglued(page, text_sentences, literals, bound=()):
    """The sentences with a hand-typed number or an unbound comparison of measurements."""
    flagged = []
    allowed = REFERENCE_NUMBERS + DEFINITIONS + QUESTION_NUMBERS.get(page, [])
    for sentence in text_sentences:
        text = without_quotes(sentence)
        if re.search(UNITS, re.sub("|".join(QUESTION_NUMBERS.get(page, ["$^"])), "", text)):
            flagged.append(sentence)
            continue
        rest = re.sub("|".join(allowed), "", text)
        numbers = re.findall(r"\d+(?:\.\d+)?", rest.replace(GLUED, ""))
        if any(n not in literals and n not in ("0", "1") for n in numbers):
            flagged.append(sentence)
            continue
        words = [w for w in COMPARATIVES if w in text]
        if words and GLUED not in text and not all(any(w == b for b in bound) for w in words):
            flagged.append(sentence)
    return flagged


def bound_words(page):
    """The comparatives of ``page`` whose assertion is in the code (checked here)."""
    words = []
    for where, word, code_page, assertion in BOUND:
        if where == page:
            assert assertion in code_of(code_page), f"{where}: “{word}” is bound to a missing assertion"
            words.append(word)
    return words


def editorial_sentences(page):
    blocks, alts = [], []
    for root in editorial_roots(page):
        b, a = flatten(root)
        blocks += b
        alts += a
    return sentences(blocks), alts


# --- numbers come from the build -----------------------------------------------------------


@pytest.mark.book
@pytest.mark.parametrize("page", [*SECTION_PAGES, *EDITOR_PAGES])
def test_numbers_in_the_editors_prose_are_glued(page):
    text_sentences, alts = editorial_sentences(page)
    flagged = unglued(page, text_sentences + sentences(alts), code_literals(page), bound_words(page))
    assert not flagged, f"{page}: numbers or comparisons typed by hand:\n" + "\n".join(flagged)


@pytest.mark.book
def test_the_pages_glue_values_into_their_prose():
    counts = {page: sum(len(root.select("span.pasted-text")) for root in editorial_roots(page))
              for page in [*SECTION_PAGES, *EDITOR_PAGES[:3]]}
    print("glued values in the prose:", counts, "total", sum(counts.values()))
    assert all(counts.values()), counts


@pytest.mark.book
@pytest.mark.parametrize("page", executed_pages())
def test_no_cell_shows_a_glued_value_as_its_result(page):
    """A cell that ends with ``glue(...)`` would print the value again as its result."""
    nb = nbformat.read(EXECUTED / f"{page}.ipynb", as_version=4)
    shown = [cell.source.strip().splitlines()[-1] for cell in nb.cells
             if cell.cell_type == "code" and cell.source.strip()
             and cell.source.strip().splitlines()[-1].lstrip().startswith("glue(")
             and any(o.get("output_type") == "execute_result" for o in cell.get("outputs", []))]
    assert not shown, f"{page}: {shown}"


@pytest.mark.book
@pytest.mark.parametrize("page", [*SECTION_PAGES, *EDITOR_PAGES])
def test_alt_texts_state_no_measured_value(page):
    """Alt text cannot hold a glued value, so it only points at the output."""
    _, alts = editorial_sentences(page)
    flagged = unglued(page, sentences(alts), code_literals(page))
    assert not flagged, flagged


# --- quoting the author ----------------------------------------------------------------------


def quotes(text):
    return [q for q in re.findall(r"「([^」]+)」", text) if q not in NOT_QUOTES]


def misquotes(text_sentences):
    """Quotations that are not the manuscript's words, and sentences that report what the
    manuscript says without quoting it, or give the editor's figure to the author."""
    sources = [section_texts.normalize(text) for text in section_texts.all_texts()]
    wrong = [f"not in the manuscript: 「{q}」" for s in text_sentences for q in quotes(s)
             if not any(section_texts.normalize(q) in source for source in sources)]
    says = re.compile(r"(原稿|正文|作者)[^。！？；「]{0,12}?(说|写道|写着|印着|称|提到|指出|认为)")
    wrong += [f"reports the manuscript without quoting it: {s}" for s in text_sentences
              if says.search(s) and not quotes(s)]
    wrong += [f"the editor's figure given to the author: {s}" for s in text_sentences
              if re.search(r"(原稿|正文|作者)的?\s*编者图", s)]
    return wrong


@pytest.mark.book
@pytest.mark.parametrize("page", [*SECTION_PAGES, *EDITOR_PAGES])
def test_the_editor_quotes_the_manuscript_word_for_word(page):
    text_sentences, _ = editorial_sentences(page)
    wrong = misquotes(text_sentences)
    assert not wrong, f"{page}:\n" + "\n".join(wrong)


# --- cross-references ------------------------------------------------------------------------


def headings():
    titles = set()
    for page in html_pages():
        for h in soup(page).select("article h1, article h2, article h3"):
            for link in h.select(".headerlink"):
                link.decompose()
            titles.add(h.get_text(strip=True))
    return titles


def heading_links(parsed, titles):
    """In-sentence links whose text is a whole heading with ： or ，, not set in 《》."""
    bad = []
    article = parsed.select_one("article.bd-article") or parsed
    for link in article.select("p a.reference.internal, li a.reference.internal"):
        text = link.get_text(strip=True)
        if text not in titles or not re.search("[：，]", text):
            continue
        before, after = link.previous_sibling, link.next_sibling
        before = str(before.get_text() if hasattr(before, "get_text") else before or "")
        after = str(after.get_text() if hasattr(after, "get_text") else after or "")
        if not (before.endswith("《") and after.startswith("》")):
            bad.append(f"…{before[-12:]}[{text}]{after[:12]}…")
    return bad


@pytest.mark.book
def test_in_sentence_links_do_not_drop_in_a_whole_heading():
    titles = headings()
    bad = {page: heading_links(soup(page), titles) for page in [*SECTION_PAGES, *EDITOR_PAGES]}
    bad = {page: links for page, links in bad.items() if links}
    assert not bad, bad


# --- terms -----------------------------------------------------------------------------------


@pytest.mark.book
@pytest.mark.parametrize("page", [*SECTION_PAGES, *EDITOR_PAGES])
def test_the_editors_prose_uses_the_glossarys_terms(page):
    text_sentences, alts = editorial_sentences(page)
    problems = [(s, term_problems(s)) for s in text_sentences + alts if term_problems(s)]
    assert not problems, f"{page}: {problems}"


@pytest.mark.book
@pytest.mark.parametrize("page", executed_pages())
def test_what_the_cells_print_uses_the_glossarys_terms(page):
    nb = nbformat.read(EXECUTED / f"{page}.ipynb", as_version=4)
    printed = [o.get("text") or o.get("data", {}).get("text/plain", "")
               for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    problems = [(line, term_problems(line)) for text in printed for line in text.splitlines()
                if term_problems(line)]
    assert not problems, f"{page}: {problems}"


@pytest.mark.book
@pytest.mark.parametrize("script", sorted(p.name for p in STATIC.glob("*.js")))
def test_what_the_widgets_write_uses_the_glossarys_terms(script):
    """The explorables write their summaries in the browser, so no built page holds them:
    their Chinese strings are read from the scripts themselves."""
    source = (STATIC / script).read_text(encoding="utf-8")
    strings = re.findall(r"[`\"][^`\"\n]*[\u3400-\u9fff][^`\"\n]*[`\"]", source)
    problems = [(text, term_problems(text)) for text in strings if term_problems(text)]
    assert not problems, f"{script}: {problems}"


# --- the scanners can fail -------------------------------------------------------------------


def _page(body):
    return f'<article class="bd-article">{body}</article>'


def _sentences_of(body):
    (blocks, alts), = [flatten(root) for root in editorial_roots("book/x", _page(body))]
    return sentences(blocks) + sentences(alts)


def test_a_hand_typed_number_is_caught():
    typed = _sentences_of("<p>分块注意力的相对误差是 3.9e-07，与完整注意力一致。</p>")
    assert unglued("book/x", typed, literals=set()) == typed
    glued = _sentences_of('<p>相对误差是 <span class="pasted-text">3.9e-07</span>。</p>')
    assert unglued("book/x", glued, literals=set()) == []


def test_a_timing_or_unit_is_caught_even_when_the_code_has_the_number():
    typed = _sentences_of("<p>n = 512 时注意力用了 30 ms。</p>")
    assert unglued("book/x", typed, literals={"512", "30"}) == typed
    constant = _sentences_of("<p>下面在 n = 512 上计时。</p>")
    assert unglued("book/x", constant, literals={"512"}) == []


def test_an_unglued_comparison_is_caught():
    typed = _sentences_of("<p>两条时间曲线大致平行。</p>")
    assert unglued("book/x", typed, literals=set()) == typed
    bound = _sentences_of("<p>加了掩码，输出逐位不变。</p>")
    assert unglued("book/x", bound, literals=set(), bound=["逐位不变"]) == []


def test_alt_text_is_scanned():
    typed = _sentences_of('<p>图。</p><img alt="曲线从约 0.3 升到 0.9 以上" src="x.svg">')
    assert unglued("book/x", typed, literals=set()) == ["曲线从约 0.3 升到 0.9 以上"]


def test_a_misquote_and_an_unquoted_report_are_caught():
    assert misquotes(["原稿说「训练吞吐随序列长度近乎线性扩展」。"]) == []
    assert misquotes(["原稿说「训练吞吐随序列长度线性扩展」。"])
    assert misquotes(["原稿说的是并行硬件上的情形。"])
    assert misquotes(["正文的编者图 4.5-4 说，编码器的 K、V 只算一次。"])


def test_a_heading_dropped_into_a_sentence_is_caught():
    titles = {"对齐是学出来的：一个会倒序的小模型"}
    link = '<a class="reference internal" href="#x">对齐是学出来的：一个会倒序的小模型</a>'
    bad = BeautifulSoup(_page(f"<p>{link}训练了一个会倒序的小模型。</p>"), "html.parser")
    assert heading_links(bad, titles)
    good = BeautifulSoup(_page(f"<p>《{link}》一节训练了一个小模型。</p>"), "html.parser")
    assert heading_links(good, titles) == []


def test_term_problems_leave_the_authors_quotations_alone():
    assert term_problems("把补零位置的权重压成 0") == ["补零（应写“填充”）"]
    assert term_problems("原稿说「串行的低显存反而是优点」") == []
    assert term_problems("这里较真一下") == ["较真（口语）"]


def test_no_page_source_holds_a_tab():
    """A tab in a page is almost always an escape gone wrong: ``\\times`` written in a
    Python string becomes a tab and ``imes``, and the formula shows the broken word."""
    tabbed = [str(p.relative_to(ROOT)) for p in (ROOT / "book").rglob("*.md") if "\t" in p.read_text(encoding="utf-8")]
    assert not tabbed, f"tabs in: {tabbed}"
